package main

import (
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func pinsOf(t *testing.T, fixture string) report.PinsReport {
	t.Helper()
	res := cli(t, "pins", "-cluster", td("pins", fixture+".yaml"), "-o", "json")
	require.Equal(t, exitOK, res.code, "stderr: %s", res.stderr)
	assert.Empty(t, res.stderr)
	return decode[report.PinsReport](t, res)
}

func goldenIn(t *testing.T, r report.PinsReport, name string) report.GoldenPins {
	t.Helper()
	for _, g := range r.Goldens {
		if g.Name == name {
			return g
		}
	}
	t.Fatalf("golden %s not in the report", name)
	return report.GoldenPins{}
}

func helmReleases(pools []report.PoolPin) []string {
	out := []string{}
	for _, p := range pools {
		out = append(out, p.HelmRelease)
	}
	return out
}

func diskNames(disks []report.DiskPin) []string {
	out := []string{}
	for _, d := range disks {
		out = append(out, d.Namespace+"/"+d.Name)
	}
	return out
}

func TestPinsSafeToDeleteOnlyWhenNoPoolAndNoDisk(t *testing.T) {
	cases := []struct {
		fixture      string
		safe         map[string]bool
		unused       []string
		hostAssisted []string
	}{
		{"empty", map[string]bool{}, []string{}, []string{}},
		{"pool-only", map[string]bool{goldenName("v1.13.6"): false}, []string{}, []string{}},
		{"disk-only", map[string]bool{goldenName("v1.13.5"): false}, []string{}, []string{"tenant-acme/kubernetes-acme-old-1a2b3c-aaaaa-disk-system"}},
		{"cluster", map[string]bool{
			goldenName("v1.13.3"): false,
			goldenName("v1.13.4"): false,
			goldenName("v1.13.5"): true,
			goldenName("v1.13.6"): false,
		}, []string{goldenName("v1.13.5")}, []string{"tenant-acme/kubernetes-acme-golden-7d9f2a-bbbbb-disk-system"}},
	}
	for _, c := range cases {
		t.Run(c.fixture, func(t *testing.T) {
			r := pinsOf(t, c.fixture)
			got := map[string]bool{}
			for _, g := range r.Goldens {
				got[g.Name] = g.SafeToDelete
				assert.Equal(t, len(g.Pools) == 0 && len(g.Disks) == 0, g.SafeToDelete, g.Name)
			}
			assert.Equal(t, c.safe, got)
			assert.Equal(t, c.unused, r.Unused)
			assert.Equal(t, c.hostAssisted, diskNames(r.HostAssisted))
		})
	}
}

func TestPinsFindsEveryPoolAndDiskOfAGolden(t *testing.T) {
	r := pinsOf(t, "cluster")
	assert.Equal(t, "kubernetes-nodes", r.Chart)

	// The default flavor: the pool that inherits it from talos.*, one that
	// names it explicitly, and every disk with the golden annotation.
	g6 := goldenIn(t, r, goldenName("v1.13.6"))
	assert.Equal(t, "DataVolume", g6.FoundAs)
	assert.Equal(t, "Succeeded", g6.Phase)
	assert.Equal(t, []string{"tenant-acme/kubernetes-nodes-acme-golden", "tenant-delta/kubernetes-nodes-delta-big", "tenant-old/kubernetes-nodes-old-legacy"}, helmReleases(g6.Pools))
	assert.Equal(t, 3, g6.Pools[0].Disks)
	assert.Equal(t, "kubernetes-acme-golden", g6.Pools[0].Pool)
	assert.Equal(t, 0, g6.Pools[1].Disks)
	// A pool installed with plain helm install: read from its release record.
	assert.Equal(t, "Helm release record tenant-old/sh.helm.release.v1.kubernetes-nodes-old-legacy.v2 (no HelmRelease)", g6.Pools[2].FoundBy)
	assert.Equal(t, 1, g6.Pools[2].Disks)
	require.Equal(t, []string{
		"tenant-acme/kubernetes-acme-golden-7d9f2a-aaaaa-disk-system",
		"tenant-acme/kubernetes-acme-golden-7d9f2a-bbbbb-disk-system",
		"tenant-acme/kubernetes-acme-golden-7d9f2a-ccccc-disk-system",
		"tenant-old/kubernetes-old-legacy-1a2b3c-zzzzz-disk-system",
	}, diskNames(g6.Disks))
	csi, fallback, pending, pvcOnly := g6.Disks[0], g6.Disks[1], g6.Disks[2], g6.Disks[3]
	assert.True(t, csi.CSIClone)
	assert.False(t, csi.HostAssisted)
	assert.Equal(t, "csi-clone", csi.CloneType)
	assert.False(t, fallback.CSIClone)
	assert.True(t, fallback.HostAssisted)
	assert.Equal(t, "copy", fallback.CloneType)
	assert.Equal(t, "The volume expansion is disabled for the target StorageClass", fallback.FallbackReason)
	assert.Equal(t, "no PVC yet", pending.Clone)
	assert.False(t, pending.CSIClone || pending.HostAssisted)
	assert.Equal(t, "kubernetes-old-legacy", pvcOnly.Pool, "a disk kept only as its PVC still names the golden")
	assert.True(t, pvcOnly.CSIClone)

	// A pool at zero workers that inherits its golden from talos.version,
	// installed under spec.releaseName; the golden survives only as its PVC.
	g4 := goldenIn(t, r, goldenName("v1.13.4"))
	assert.Equal(t, "PersistentVolumeClaim", g4.FoundAs)
	require.Len(t, g4.Pools, 1)
	// Its class is the chart's default, replicated, which the golden's PVC is on.
	assert.Equal(t, report.PoolPin{HelmRelease: "tenant-beta/beta-batch", FoundBy: "spec.chart kubernetes-nodes from HelmRepository cozy-public/cozystack-apps", Release: "kubernetes-nodes-beta-batch", Namespace: "tenant-beta", Pool: "kubernetes-beta-batch", Golden: goldenName("v1.13.4"), Class: "replicated", GoldenChoice: "plain"}, g4.Pools[0])
	assert.Empty(t, g4.Disks)

	// A pool naming a golden that is not there: its render is refused, and
	// the golden is still reported as declared.
	g3 := goldenIn(t, r, goldenName("v1.13.3"))
	assert.Equal(t, "absent", g3.FoundAs)
	require.Len(t, g3.Pools, 1)
	assert.Contains(t, g3.Pools[0].Refusal, "is absent from cozy-public")
	assert.NotContains(t, r.Unused, g3.Name, "an absent golden is never offered for deletion")

	g5 := goldenIn(t, r, goldenName("v1.13.5"))
	assert.True(t, g5.SafeToDelete)

	assert.Len(t, r.Goldens, 4, "vm-image-ubuntu in cozy-public is not a golden")
	assert.Equal(t, []string{"tenant-acme/kubernetes-nodes-acme-workers"}, helmReleases(r.HTTPPools))
	require.Equal(t, []string{"tenant-acme/kubernetes-nodes-acme-broken"}, helmReleases(r.Unresolved))
	assert.Contains(t, r.Unresolved[0].Refusal, `"Not_Valid"`)
	for _, g := range r.Goldens {
		assert.NotContains(t, helmReleases(g.Pools), "tenant-acme/postgres-main", "another chart's release is not a pool")
	}
}

func TestPinsTextListsUnusedAndFallbacksAtTheEnd(t *testing.T) {
	res := cli(t, "pins", "-cluster", td("pins", "cluster.yaml"))
	require.Equal(t, exitOK, res.code, res.stderr)
	text := res.stdout
	assert.Contains(t, text, goldenName("v1.13.5")+"  (DataVolume, phase Succeeded)  safe to delete: no pool declares it, no disk or template uses it\n")
	assert.Contains(t, text, goldenName("v1.13.6")+"  (DataVolume, phase Succeeded)  in use: 3 pools, 4 disks\n")
	assert.Contains(t, text, "\nunused goldens (safe to delete):\n  "+goldenName("v1.13.5")+"\n")
	_, tail, ok := strings.Cut(text, "\ndisks that fell back to a host-assisted copy:\n")
	require.True(t, ok, text)
	first, _, _ := strings.Cut(tail, "\n")
	assert.Contains(t, first, "tenant-acme/kubernetes-acme-golden-7d9f2a-bbbbb-disk-system")
	assert.Contains(t, first, "fallback: The volume expansion is disabled for the target StorageClass")
	assert.Less(t, strings.Index(text, "unused goldens"), strings.Index(text, "disks that fell back"), "unused first, then fallbacks")

	// Pool and disk rows share their columns across the whole report.
	col := -1
	for _, l := range strings.Split(text, "\n") {
		if !strings.HasPrefix(l, "  pool  ") && !strings.HasPrefix(l, "  disk  ") {
			continue
		}
		fields := strings.Fields(l)
		if len(fields) < 3 {
			continue
		}
		at := strings.Index(l, "  "+fields[2]) + 2
		if col < 0 {
			col = at
		}
		assert.Equal(t, col, at, "third column aligned: %q", l)
	}
	require.Positive(t, col)

	empty := cli(t, "pins", "-cluster", td("pins", "empty.yaml"))
	require.Equal(t, exitOK, empty.code)
	assert.Contains(t, empty.stdout, "no golden in cozy-public\n")
	assert.Contains(t, empty.stdout, "unused goldens (safe to delete): none\n")
	assert.Contains(t, empty.stdout, "disks that fell back to a host-assisted copy: none\n")
}

func TestPinsThroughTheKubeconfigSeam(t *testing.T) {
	state := td("pins", "cluster.yaml")
	viaSeam := cliWith(t, fakeDial(nil), "pins", "-kubeconfig", state, "-o", "json")
	require.Equal(t, exitOK, viaSeam.code, viaSeam.stderr)
	a, b := pinsOf(t, "cluster"), decode[report.PinsReport](t, viaSeam)
	assert.Equal(t, "kubeconfig "+state, b.Cluster)
	b.Cluster = a.Cluster
	assert.Equal(t, a, b)

	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "helm.toolkit.fluxcd.io", Resource: "helmreleases"}, "", nil)
	res := cliWith(t, fakeDial(map[string]error{"HelmRelease": forbidden}), "pins", "-kubeconfig", state)
	requireProblem(t, res, "listing HelmRelease", "forbidden")

	// An API error during a pool's render (a StorageClass, which only the render
	// reads) is a problem too, never a pool silently left out of the count.
	res = cliWith(t, fakeDial(map[string]error{"StorageClass": apierrors.NewServiceUnavailable("try later")}), "pins", "-kubeconfig", state)
	requireProblem(t, res, "the cluster answered a lookup with an error", "try later")
}
