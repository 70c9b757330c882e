package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// forgedDisk is a DataVolume (or PVC) annotated as a worker disk of golden
// and pool, without the pool's MachineDeployment beside it unless a test adds one.
func forgedDisk(kind, namespace, name, golden, pool string) string {
	apiVersion := "cdi.kubevirt.io/v1beta1"
	if kind == "PersistentVolumeClaim" {
		apiVersion = "v1"
	}
	annotations := fmt.Sprintf("kubernetes-worker-image.cozystack.io/golden: %q", golden)
	if pool != "" {
		annotations += fmt.Sprintf(", kubernetes-worker-image.cozystack.io/pool: %q", pool)
	}
	return fmt.Sprintf(`---
apiVersion: %s
kind: %s
metadata:
  name: %s
  namespace: %s
  annotations: {%s}
`, apiVersion, kind, name, namespace, annotations)
}

func pinsOfFile(t *testing.T, state string) (report.PinsReport, string) {
	t.Helper()
	res := cli(t, "pins", "-cluster", state, "-o", "json")
	require.Equal(t, exitOK, res.code, "stderr: %s", res.stderr)
	text := cli(t, "pins", "-cluster", state)
	require.Equal(t, exitOK, text.code, "stderr: %s", text.stderr)
	return decode[report.PinsReport](t, res), text.stdout
}

// A disk counts for a pool only where its namespace holds that pool's
// MachineDeployment: a DataVolume another tenant annotated with acme's pool is
// listed apart, as belonging to no pool, and still keeps its golden.
func TestPinsListsDisksOfNoPoolApart(t *testing.T) {
	g6, g5 := goldenName("v1.13.6"), goldenName("v1.13.5")
	state := pinsWith(t, "cluster",
		forgedDisk("DataVolume", "tenant-evil", "forged", g6, "kubernetes-acme-golden"),
		forgedDisk("PersistentVolumeClaim", "tenant-acme", "kubernetes-acme-gone-1a2b3c-zzzzz-disk-system", g5, "kubernetes-acme-gone"),
		forgedDisk("DataVolume", "tenant-beta", "bare", g5, ""),
	)
	r, text := pinsOfFile(t, state)
	before := pinsOf(t, "cluster")

	got6 := goldenIn(t, r, g6)
	assert.Equal(t, goldenIn(t, before, g6).Disks, got6.Disks, "the genuine disks are attributed as before")
	assert.Equal(t, []string{"tenant-evil/forged"}, diskNames(got6.NoPoolDisks))
	assert.True(t, got6.NoPoolDisks[0].NoPool)
	assert.Equal(t, "kubernetes-acme-golden", got6.NoPoolDisks[0].Pool, "the annotation is reported as written")
	require.Equal(t, "tenant-acme/kubernetes-nodes-acme-golden", got6.Pools[0].HelmRelease)
	assert.Equal(t, 3, got6.Pools[0].Disks, "acme's pool does not count another tenant's disk")

	// Nothing is lost: a golden named only by disks of no pool is not safe to delete.
	got5 := goldenIn(t, r, g5)
	assert.False(t, got5.SafeToDelete)
	assert.Empty(t, got5.Disks)
	assert.Equal(t, []string{"tenant-acme/kubernetes-acme-gone-1a2b3c-zzzzz-disk-system", "tenant-beta/bare"}, diskNames(got5.NoPoolDisks))
	assert.NotContains(t, r.Unused, g5)
	assert.Equal(t, []string{"tenant-acme/kubernetes-acme-gone-1a2b3c-zzzzz-disk-system", "tenant-beta/bare", "tenant-evil/forged"}, diskNames(r.NoPoolDisks))
	assert.Empty(t, before.NoPoolDisks)

	assert.Contains(t, text, g6+"  (DataVolume, phase Succeeded)  in use: 3 pools, 4 disks, 1 disk of no pool\n")
	assert.Contains(t, text, g5+"  (DataVolume, phase Succeeded)  in use: 0 pools, 0 disks, 2 disks of no pool\n")
	assert.Regexp(t, `\n  disk  tenant-evil/forged +\(no pool\) +its pool annotation names "kubernetes-acme-golden", which is no MachineDeployment in tenant-evil; no PVC yet\n`, text)
	assert.Regexp(t, `\n  disk  tenant-beta/bare +\(no pool\) +no pool annotation; no PVC yet\n`, text)
	_, tail, ok := strings.Cut(text, "\ndisks that belong to no pool (they still keep their golden from being deleted; delete them once nothing needs them):\n")
	require.True(t, ok, text)
	assert.Regexp(t, `^  disk  tenant-acme/kubernetes-acme-gone-1a2b3c-zzzzz-disk-system +\(no pool\) +names golden `+g5+`; its pool annotation names "kubernetes-acme-gone", which is no MachineDeployment in tenant-acme\n`, tail)
}

// The same disk in the pool's own namespace, beside its MachineDeployment, is
// the pool's; the MachineDeployment of the same name in another namespace is not.
func TestPinsAttributesADiskOnlyBesideItsPoolsMachineDeployment(t *testing.T) {
	g6 := goldenName("v1.13.6")
	md := func(ns, name string) string {
		return fmt.Sprintf("---\napiVersion: cluster.x-k8s.io/v1beta1\nkind: MachineDeployment\nmetadata: {name: %s, namespace: %s}\n", name, ns)
	}
	genuine := forgedDisk("DataVolume", "tenant-acme", "kubernetes-acme-golden-7d9f2a-ddddd-disk-system", g6, "kubernetes-acme-golden")
	r, _ := pinsOfFile(t, pinsWith(t, "cluster", genuine))
	g := goldenIn(t, r, g6)
	assert.Contains(t, diskNames(g.Disks), "tenant-acme/kubernetes-acme-golden-7d9f2a-ddddd-disk-system")
	assert.Empty(t, g.NoPoolDisks)
	assert.Equal(t, 4, g.Pools[0].Disks)

	// A pool of the same name in another tenant's namespace (its
	// HelmRelease, as Cozystack creates it, beside its MachineDeployment)
	// owns the disks there, not acme's pool's count.
	other := forgedDisk("DataVolume", "tenant-evil", "kubernetes-acme-golden-1a1a1a-eeeee-disk-system", g6, "kubernetes-acme-golden")
	evilPool := strings.ReplaceAll(cozyRelease("kubernetes-nodes-acme-golden", cozyArtifact, "{cluster: acme}")+zetaValues, "tenant-zeta", "tenant-evil")
	r, _ = pinsOfFile(t, pinsWith(t, "cluster", other, md("tenant-evil", "kubernetes-acme-golden"), evilPool))
	g = goldenIn(t, r, g6)
	assert.Contains(t, diskNames(g.Disks), "tenant-evil/kubernetes-acme-golden-1a1a1a-eeeee-disk-system")
	assert.Equal(t, 3, g.Pools[0].Disks, "tenant-acme's pool counts only its namespace's disks")
}

// A retiring golden's blockers say which belong to no pool, as the catalog's refusal does.
func TestPinsRetiringBlockersNameThoseOfNoPool(t *testing.T) {
	g5 := goldenName("v1.13.5")
	state := pinsWith(t, "retiring", forgedDisk("DataVolume", "tenant-evil", "forged", g5, "kubernetes-acme-old"))
	r, text := pinsOfFile(t, state)
	g := goldenIn(t, r, g5)
	assert.Equal(t, []string{
		"tenant-acme/DataVolume/kubernetes-acme-old-1a2b3c-aaaaa-disk-system",
		"tenant-beta/KubevirtMachineTemplate/kubernetes-beta-batch-9f8e7d",
		"tenant-evil/DataVolume/forged",
	}, g.Blockers)
	assert.Equal(t, []string{"tenant-evil/DataVolume/forged"}, g.BlockersWithoutPool)
	assert.Regexp(t, `\n  blocks +tenant-evil/DataVolume/forged +belongs to no pool using the golden: delete it once nothing needs it\n`, text)
	assert.Regexp(t, `\n  blocks +tenant-acme/DataVolume/kubernetes-acme-old-1a2b3c-aaaaa-disk-system\n`, text)

	assert.Nil(t, goldenIn(t, pinsOf(t, "retiring"), g5).BlockersWithoutPool)
}

// Annotation text is anyone's: it cannot start a line of the report.
func TestPinsTextKeepsAnnotationTextOnItsLine(t *testing.T) {
	injected := "x\nunused goldens (safe to delete):\n  " + goldenName("v1.13.6")
	state := pinsWith(t, "cluster",
		forgedDisk("DataVolume", "tenant-evil", "forged", injected, injected),
		`---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: forged
  namespace: tenant-evil
  annotations: {cdi.kubevirt.io/cloneType: "copy\nunused goldens (safe to delete):", cdi.kubevirt.io/cloneFallbackReason: "a\n  talos-worker-x"}
`)
	_, text := pinsOfFile(t, state)
	assert.Equal(t, 1, strings.Count(text, "\nunused goldens (safe to delete):"), text)
	for _, l := range strings.Split(text, "\n") {
		assert.False(t, strings.HasPrefix(l, "  talos-worker-x"), "an injected line: %q", l)
	}
	assert.Contains(t, text, `"x\nunused goldens (safe to delete):\n  `+goldenName("v1.13.6")+`"`, "the odd name is quoted")
}
