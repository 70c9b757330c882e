package report_test

import (
	"encoding/json"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// No tenant object changes another tenant's pool in any report: each case
// adds tenant-evil's objects, imitating another tenant's pool, to the example
// fleet, beside the real pool they imitate.

const (
	v135 = "talos-worker-ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515-v1.13.5"
	v136 = "talos-worker-ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515-v1.13.6"
)

// forgedRecord is a record Secret in tenant-evil, with Helm's type, name and
// labels for release labelRelease, whose body names release bodyRelease in
// bodyNamespace, of the pool chart, with values.
func forgedRecord(t *testing.T, labelRelease, bodyRelease, bodyNamespace string, values map[string]any) *unstructured.Unstructured {
	t.Helper()
	body, err := json.Marshal(map[string]any{
		"name": bodyRelease, "namespace": bodyNamespace, "version": 1,
		"info": map[string]any{"status": "deployed"}, "chart": map[string]any{"metadata": map[string]any{"name": "kubernetes-nodes"}},
		"config": values,
	})
	require.NoError(t, err)
	obj, err := fleet.EncodeRecordBody(labelRelease, "tenant-evil", 1, "deployed", body)
	require.NoError(t, err)
	return &unstructured.Unstructured{Object: obj}
}

func reports(t *testing.T, objs []*unstructured.Unstructured) (*report.PinsFacts, report.PinsReport, *report.AdoptReport) {
	t.Helper()
	chrt, err := report.LoadPoolChart("")
	require.NoError(t, err)
	target := report.Target{Provider: render.NewState(objs...), Desc: "state"}
	f, err := report.ReadPins(chrt, target, fleet.Options{Chart: chrt.Metadata.Name})
	require.NoError(t, err)
	adopt, err := report.Adopt(chrt, target, f)
	require.NoError(t, err)
	return f, report.Pins(f, "state", chrt.Metadata.Name), adopt
}

func adoptPools(r *report.AdoptReport) map[string][]report.AdoptPool {
	out := map[string][]report.AdoptPool{}
	for _, f := range r.Flavors {
		for _, c := range f.Classes {
			for _, p := range c.Pools {
				out[p.Namespace+"/"+p.Release] = append(out[p.Namespace+"/"+p.Release], p)
			}
		}
	}
	return out
}

// A record in tenant-evil whose body names acme's HTTP pool: pins and adopt
// show acme's pool once, computed from acme's own values, as without it;
// the record is listed as not read.
func TestAForgedRecordChangesNoReport(t *testing.T) {
	_, pinsBefore, adoptBefore := reports(t, support.ExampleObjects(t))
	forged := forgedRecord(t, "kubernetes-nodes-acme-workers", "kubernetes-nodes-acme-workers", "tenant-acme",
		map[string]any{"cluster": "acme", "talos": map[string]any{"schematicID": "evil", "version": "v1.13.6"}})
	_, pins, adopt := reports(t, append(support.ExampleObjects(t), forged))

	require.Len(t, adopt.Ignored, 1)
	assert.Equal(t, "Secret tenant-evil/sh.helm.release.v1.kubernetes-nodes-acme-workers.v1", adopt.Ignored[0].Object)
	adopt.Ignored, pins.Ignored = nil, nil
	assert.Equal(t, adoptBefore, adopt, "adopt is as without the record")
	assert.Equal(t, pinsBefore, pins, "pins is as without the record")
	acme := adoptPools(adopt)["tenant-acme/kubernetes-nodes-acme-workers"]
	require.Len(t, acme, 1, "acme's pool, once")
	assert.Equal(t, map[string]any{"osImage": map[string]any{"builtin": map[string]any{}}}, acme[0].ValuesChange, "its own flavor, not the forged schematic")
}

// A HelmRelease of another chart in tenant-evil whose releaseName and
// storageNamespace name a plain helm pool of tenant-old does not hide it: the
// golden that pool clones stays in use. Without the pool, it is safe.
func TestAHelmReleaseElsewhereHidesNoPool(t *testing.T) {
	rec, err := fleet.EncodeRecord("kubernetes-nodes-old-w", "tenant-old", "kubernetes-nodes", 1, "deployed",
		map[string]any{"cluster": "old", "talos": map[string]any{"version": "v1.13.5"}, "osImage": map[string]any{"builtin": map[string]any{}}})
	require.NoError(t, err)
	hider := []*unstructured.Unstructured{{Object: map[string]any{
		"apiVersion": fleet.HelmReleaseAPI, "kind": "HelmRelease",
		"metadata": map[string]any{"name": "db", "namespace": "tenant-evil"},
		"spec": map[string]any{
			"chartRef":    map[string]any{"kind": "ExternalArtifact", "name": "cozystack-postgres-application-default-postgres", "namespace": "cozy-system"},
			"valuesFrom":  []any{map[string]any{"kind": "Secret", "name": "cozystack-values"}},
			"releaseName": "kubernetes-nodes-old-w", "storageNamespace": "tenant-old",
		},
	}}}
	_, pins, _ := reports(t, support.ExampleObjects(t))
	assert.Contains(t, pins.Unused, v135, "the neighbour: nothing uses v1.13.5")

	for name, objs := range map[string][]*unstructured.Unstructured{
		"the pool alone":          append(support.ExampleObjects(t), &unstructured.Unstructured{Object: rec}),
		"the pool beside a hider": append(append(support.ExampleObjects(t), &unstructured.Unstructured{Object: rec}), hider...),
	} {
		_, pins, _ := reports(t, objs)
		assert.NotContains(t, pins.Unused, v135, name)
		var pools []string
		for _, g := range pins.Goldens {
			if g.Name == v135 {
				for _, p := range g.Pools {
					pools = append(pools, p.HelmRelease)
				}
			}
		}
		assert.Equal(t, []string{"tenant-old/kubernetes-nodes-old-w"}, pools, name)
	}
}

// With no HelmRelease readable, a record forged in tenant-evil does not
// disarm the guard: nothing is readable, so pins will not report; a record of
// evil's own pool makes evil's namespace read, and every other namespace is
// listed unread: no golden is safe to delete.
func TestAForgedRecordDisarmsNoGuard(t *testing.T) {
	objs := support.ExampleObjects(t, "HelmRelease")
	forged := forgedRecord(t, "kubernetes-nodes-acme-workers", "kubernetes-nodes-acme-workers", "tenant-acme", map[string]any{"cluster": "acme"})
	chrt, err := report.LoadPoolChart("")
	require.NoError(t, err)
	_, err = report.ReadPins(chrt, report.Target{Provider: render.NewState(append(objs, forged)...), Desc: "state"}, fleet.Options{Chart: "kubernetes-nodes"})
	require.ErrorContains(t, err, "could not read the pools")

	own := forgedRecord(t, "kubernetes-nodes-evil-w", "kubernetes-nodes-evil-w", "tenant-evil", map[string]any{"cluster": "evil"})
	_, pins, _ := reports(t, append(objs, forged, own))
	assert.False(t, pins.Concludes())
	var unread []string
	for _, u := range pins.UnreadNamespaces {
		unread = append(unread, u.Namespace)
	}
	assert.Equal(t, []string{"tenant-acme", "tenant-beta", "tenant-gamma"}, unread)
	assert.Empty(t, pins.Unused)
	for _, g := range pins.Goldens {
		assert.False(t, g.SafeToDelete, g.Name)
	}
	assert.Contains(t, pins.WhyNotConcluded(), "the pools of 3 namespaces could not be read (tenant-acme, tenant-beta, tenant-gamma)")
}

// rollcheck lists the forged record, checks acme's pool once, and lists a
// namespace whose pools it could not read as not checked.
func TestRollcheckListsWhatItDidNotRead(t *testing.T) {
	chrt, err := report.LoadPoolChart("")
	require.NoError(t, err)
	forged := forgedRecord(t, "kubernetes-nodes-acme-workers", "kubernetes-nodes-acme-workers", "tenant-acme", map[string]any{"cluster": "acme"})
	md := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineDeployment",
		"metadata": map[string]any{"name": "kubernetes-zeta-w", "namespace": "tenant-zeta"}}}
	target := report.Target{Provider: render.NewState(append(support.ExampleObjects(t), forged, md)...), Desc: "state"}
	in, err := report.RollInputsFromCluster(target, fleet.Options{Chart: "kubernetes-nodes"}, "")
	require.NoError(t, err)
	rep, err := report.Rollcheck(chrt, chrt, target, "base", "head", in)
	require.NoError(t, err)
	require.Len(t, rep.Ignored, 1)
	assert.Equal(t, "Secret tenant-evil/sh.helm.release.v1.kubernetes-nodes-acme-workers.v1", rep.Ignored[0].Object)
	seen := map[string]int{}
	for _, p := range rep.Pools {
		seen[p.Values]++
	}
	assert.Equal(t, 1, seen["helmrelease tenant-acme/kubernetes-nodes-acme-workers"])
	last := rep.Pools[len(rep.Pools)-1]
	assert.Equal(t, "namespace tenant-zeta", last.Values)
	assert.Equal(t, "it holds 1 pool object (tenant-zeta/MachineDeployment/kubernetes-zeta-w) and none of its pools could be read", last.Unresolved)
	assert.True(t, rep.Attention())
	assert.Equal(t, 1, rep.Summary.Unresolved)
}
