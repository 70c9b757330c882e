package render

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Retiring a golden (docs/design.md "Retiring a golden"): two flavors, A retires, B stays.
const (
	retireA = "talos-worker-abc-v1.13.5"
	retireB = "talos-worker-abc-v1.13.6"
)

const (
	retireKeepBoth = "images: [{schematicID: abc, version: v1.13.5}, {schematicID: abc, version: v1.13.6}]"
	retireA135     = "images: [{schematicID: abc, version: v1.13.5, retire: true}, {schematicID: abc, version: v1.13.6}]"
	retireLabelA   = `images[0] (schematicID "abc", version "v1.13.5")`
	retiringKey    = "kubernetes-worker-image.cozystack.io/retiring"
)

// diskUser is a DataVolume or PVC in a tenant namespace annotated with the golden it cloned.
func diskUser(kind, namespace, name, golden string) string {
	apiVersion := "cdi.kubevirt.io/v1beta1"
	if kind == "PersistentVolumeClaim" {
		apiVersion = "v1"
	}
	return fmt.Sprintf(`---
apiVersion: %s
kind: %s
metadata:
  name: %s
  namespace: %s
  annotations: {kubernetes-worker-image.cozystack.io/golden: %s}
`, apiVersion, kind, name, namespace, golden)
}

// poolDisk is a worker disk as a pool makes it: annotated with its golden and
// its pool (kubernetes-<cluster>-<pool>), in the namespace that holds the
// pool's MachineDeployment (machineDeployment adds one).
func poolDisk(kind, namespace, name, golden, pool string) string {
	return strings.Replace(diskUser(kind, namespace, name, golden), "annotations: {", "annotations: {kubernetes-worker-image.cozystack.io/pool: "+pool+", ", 1)
}

func machineDeployment(namespace, name string) string {
	return fmt.Sprintf(`---
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata: {name: %s, namespace: %s}
`, name, namespace)
}

// templateUser is a KubevirtMachineTemplate whose second disk clones
// sourceNamespace/golden (the check looks at every disk, not only the first).
func templateUser(namespace, name, sourceNamespace, golden string) string {
	return fmt.Sprintf(`---
apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1
kind: KubevirtMachineTemplate
metadata: {name: %s, namespace: %s}
spec:
  template:
    spec:
      virtualMachineTemplate:
        spec:
          dataVolumeTemplates:
            - metadata: {name: disk-data}
              spec: {source: {blank: {}}}
            - metadata: {name: disk-system}
              spec: {source: {pvc: {namespace: %s, name: %s}}}
`, name, namespace, sourceNamespace, golden)
}

// retireCluster holds both goldens as the catalog left them, plus objects.
func retireCluster(t testing.TB, objects ...string) *support.Cluster {
	t.Helper()
	cluster := support.NewCluster()
	m := mustRenderCatalog(t, vals(t, retireKeepBoth), nil)
	require.NoError(t, cluster.Apply(m, catalogNamespace))
	if len(objects) > 0 {
		objs, err := render.ParseObjects([]byte(strings.Join(objects, "")))
		require.NoError(t, err)
		require.NoError(t, cluster.Add(objs...))
	}
	return cluster
}

func TestCatalogRetireIsRefusedWhileTheGoldenIsUsed(t *testing.T) {
	fix := []string{retireLabelA, "sets retire: true", "cozy-public/" + retireA, "Move those pools to another golden (osImage.builtin with another flavor) or to HTTP", "or remove retire to keep the golden"}
	for _, tc := range []struct {
		name, user, neighbour, shown string
	}{
		{"a worker disk's DataVolume", diskUser("DataVolume", "tenant-acme", "vm-1-disk-system", retireA), diskUser("DataVolume", "tenant-acme", "vm-1-disk-system", retireB), "tenant-acme/DataVolume/vm-1-disk-system"},
		{"a worker disk's PVC", diskUser("PersistentVolumeClaim", "tenant-beta", "vm-2-disk-system", retireA), diskUser("PersistentVolumeClaim", "tenant-beta", "vm-2-disk-system", retireB), "tenant-beta/PersistentVolumeClaim/vm-2-disk-system"},
		{"a pool's machine template", templateUser("tenant-acme", "kubernetes-acme-workers-1a2b3c", "cozy-public", retireA), templateUser("tenant-acme", "kubernetes-acme-workers-1a2b3c", "tenant-acme", retireA), "tenant-acme/KubevirtMachineTemplate/kubernetes-acme-workers-1a2b3c"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := renderCatalog(t, vals(t, retireA135), retireCluster(t, tc.user))
			requireRefusal(t, err, append(fix, "still used by 1 object(s): "+tc.shown+".")...)
			// The same object using another golden, or cloning a same-named PVC
			// outside cozy-public, does not hold A back.
			_, err = renderCatalog(t, vals(t, retireA135), retireCluster(t, tc.neighbour))
			require.NoError(t, err)
		})
	}
}

func TestCatalogRetireRefusalNamesFiveUsersSortedAndCountsAll(t *testing.T) {
	var users []string
	for i := 7; i >= 1; i-- {
		ns := fmt.Sprintf("tenant-%d", i)
		users = append(users, poolDisk("DataVolume", ns, "disk", retireA, "kubernetes-c-w"), machineDeployment(ns, "kubernetes-c-w"))
	}
	users = append(users, templateUser("tenant-1", "tpl", "cozy-public", retireA))
	_, err := renderCatalog(t, vals(t, retireA135), retireCluster(t, users...))
	requireRefusal(t, err, "still used by 8 object(s): tenant-1/DataVolume/disk, tenant-1/KubevirtMachineTemplate/tpl, tenant-2/DataVolume/disk, tenant-3/DataVolume/disk, tenant-4/DataVolume/disk and 3 more.")
	assert.NotContains(t, err.Error(), "tenant-5/")
	assert.NotContains(t, err.Error(), "belong to no pool", "every disk is its pool's")
}

// A disk belongs to a pool only where that pool's MachineDeployment is: a
// DataVolume any tenant annotated still blocks the retirement (nothing is
// lost), and the refusal says which blockers belong to no pool using the golden.
func TestCatalogRetireRefusalNamesTheUsersThatBelongToNoPool(t *testing.T) {
	genuine := poolDisk("DataVolume", "tenant-acme", "kubernetes-acme-w-1a2b3c-aaaaa-disk-system", retireA, "kubernetes-acme-w") + machineDeployment("tenant-acme", "kubernetes-acme-w")
	forged := poolDisk("DataVolume", "tenant-evil", "forged", retireA, "kubernetes-acme-w")
	gone := poolDisk("PersistentVolumeClaim", "tenant-acme", "kubernetes-acme-old-9z8y7x-bbbbb-disk-system", retireA, "kubernetes-acme-old")
	bare := diskUser("DataVolume", "tenant-beta", "bare", retireA)
	note := "belong to no pool using the golden"

	_, err := renderCatalog(t, vals(t, retireA135), retireCluster(t, genuine, forged, gone, bare))
	requireRefusal(t, err, retireLabelA, "still used by 4 object(s): tenant-acme/DataVolume/kubernetes-acme-w-1a2b3c-aaaaa-disk-system, tenant-acme/PersistentVolumeClaim/kubernetes-acme-old-9z8y7x-bbbbb-disk-system, tenant-beta/DataVolume/bare, tenant-evil/DataVolume/forged.",
		"Of those, 3 "+note+": tenant-acme/PersistentVolumeClaim/kubernetes-acme-old-9z8y7x-bbbbb-disk-system, tenant-beta/DataVolume/bare, tenant-evil/DataVolume/forged (a worker disk whose namespace holds no MachineDeployment named by its kubernetes-worker-image.cozystack.io/pool annotation",
		"delete them if nothing needs them")

	// The forged disk alone still blocks: deleting the golden would take its source.
	_, err = renderCatalog(t, vals(t, retireA135), retireCluster(t, forged))
	requireRefusal(t, err, "still used by 1 object(s): tenant-evil/DataVolume/forged.", "Of those, 1 "+note+": tenant-evil/DataVolume/forged (")
	// ... even with the named pool's MachineDeployment in another namespace.
	_, err = renderCatalog(t, vals(t, retireA135), retireCluster(t, forged, machineDeployment("tenant-acme", "kubernetes-acme-w")))
	requireRefusal(t, err, "Of those, 1 "+note+": tenant-evil/DataVolume/forged (")

	// The genuine disk alone: refused, with no such note.
	_, err = renderCatalog(t, vals(t, retireA135), retireCluster(t, genuine))
	requireRefusal(t, err, "still used by 1 object(s): tenant-acme/DataVolume/kubernetes-acme-w-1a2b3c-aaaaa-disk-system.")
	assert.NotContains(t, err.Error(), note)

	// The window between the two upgrades says the same.
	_, err = renderCatalog(t, vals(t, retireDropped), retiredCluster(t, forged))
	requireRefusal(t, err, "is marked retiring and this render no longer lists its entry", "Of those, 1 "+note+": tenant-evil/DataVolume/forged (")

	// The neighbour: once the forged disk is gone, A retires.
	_, err = renderCatalog(t, vals(t, retireA135), retireCluster(t, strings.ReplaceAll(forged, retireA, retireB)))
	require.NoError(t, err)
}

// The MachineDeployments are listed once, cluster-wide, and only when a disk
// uses a golden being checked: a fixed number of requests however many disks.
func TestCatalogRetireListsMachineDeploymentsOnceOnlyForDiskUsers(t *testing.T) {
	var users []string
	for i := 0; i < 20; i++ {
		users = append(users, diskUser("DataVolume", fmt.Sprintf("tenant-%d", i), "disk", retireA))
	}
	cluster := retireCluster(t, users...)
	cluster.ResetCalls()
	_, err := renderCatalog(t, vals(t, retireA135), cluster)
	require.Error(t, err)
	assert.Equal(t, map[string]int{"datavolumes": 1, "persistentvolumeclaims": 1, "machinedeployments": 1, "kubevirtmachinetemplates": 1}, cluster.ClusterWideLists())

	tpl := retireCluster(t, templateUser("tenant-acme", "tpl", "cozy-public", retireA))
	tpl.ResetCalls()
	_, err = renderCatalog(t, vals(t, retireA135), tpl)
	requireRefusal(t, err, "still used by 1 object(s): tenant-acme/KubevirtMachineTemplate/tpl.")
	assert.NotContains(t, err.Error(), "belong to no pool", "a template is not a disk")
	assert.Equal(t, map[string]int{"datavolumes": 1, "persistentvolumeclaims": 1, "kubevirtmachinetemplates": 1}, tpl.ClusterWideLists(), "no disk user: no MachineDeployment list")
}

func TestCatalogRetiredGoldenLosesKeepAndItsCloneGrant(t *testing.T) {
	for _, cluster := range []*support.Cluster{nil, retireCluster(t, diskUser("DataVolume", "tenant-acme", "disk", retireB))} {
		m := mustRenderCatalog(t, vals(t, retireA135), cluster)
		a := catalogGolden(t, m, retireA)
		assert.Equal(t, map[string]interface{}{
			retiringKey: "true",
			"cdi.kubevirt.io/storage.bind.immediate.requested":        "true",
			"cdi.kubevirt.io/storage.deleteAfterCompletion":           "false",
			"kubernetes-worker-image.cozystack.io/talos-schematic-id": "abc",
			"kubernetes-worker-image.cozystack.io/talos-minor":        "v1.13",
			"kubernetes-worker-image.cozystack.io/talos-patch":        "5",
		}, render.Get(a.Object, "metadata.annotations"))
		b := catalogGolden(t, m, retireB)
		assert.Equal(t, "keep", render.Get(b.Object, "metadata.annotations[helm.sh/resource-policy]"))
		assert.Nil(t, render.Get(b.Object, "metadata.annotations["+retiringKey+"]"))
		role := doc(t, m, "Role")
		assert.Equal(t, []interface{}{retireB}, render.Get(role.Object, "rules.0.resourceNames"))
		assert.True(t, catalogRoleAllows(role, catalogCloneAccess(retireB)))
		assert.False(t, catalogRoleAllows(role, catalogCloneAccess(retireA)))
		// The spec is the one the golden had: retiring is no edit.
		kept := mustRenderCatalog(t, vals(t, retireKeepBoth), nil)
		assert.Equal(t, render.Get(catalogGolden(t, kept, retireA).Object, "spec"), render.Get(a.Object, "spec"))
	}
}

func TestCatalogEveryGoldenRetiredLeavesNoCloneRBAC(t *testing.T) {
	m := mustRenderCatalog(t, vals(t, "images: [{schematicID: abc, version: v1.13.5, retire: true}, {schematicID: abc, version: v1.13.6, retire: true}]"), retireCluster(t))
	assert.Len(t, m.OfKind("DataVolume"), 2)
	assert.Empty(t, m.OfKind("Role"), "no Role rather than one with empty resourceNames")
	assert.Empty(t, m.OfKind("RoleBinding"))
}

func TestCatalogRetireFalseRendersAsNoRetire(t *testing.T) {
	want := mustRenderCatalog(t, vals(t, retireKeepBoth), nil).Text()
	for _, v := range []string{
		"images: [{schematicID: abc, version: v1.13.5, retire: false}, {schematicID: abc, version: v1.13.6}]",
		"images: [{schematicID: abc, version: v1.13.5, retire: null}, {schematicID: abc, version: v1.13.6}]",
	} {
		m, err := renderCatalogAs(t, catalogSchemaOff, vals(t, v), retireCluster(t))
		require.NoError(t, err)
		assert.Equal(t, want, m.Text(), v)
	}
}

// Cluster-wide lists are the price of retiring, paid only while something retires.
func TestCatalogReadsOutsideCozyPublicOnlyWhileRetiring(t *testing.T) {
	outage := errors.New("cluster-wide list")
	users := diskUser("DataVolume", "tenant-acme", "disk", retireB) + templateUser("tenant-acme", "tpl", "cozy-public", retireB)
	cluster := retireCluster(t, users)
	cluster.FailClusterWideLists = outage
	cluster.FailNamespacedLists = nil
	m, err := renderCatalog(t, vals(t, retireKeepBoth), cluster)
	require.NoError(t, err, "nothing retires: no cluster-wide list")
	assert.Equal(t, mustRenderCatalog(t, vals(t, retireKeepBoth), nil).Text(), m.Text())
	assert.Empty(t, cluster.ClusterWideLists())
	assert.Equal(t, map[string]int{"get datavolumes": 2, "list datavolumes": 1, "list persistentvolumeclaims": 1}, cluster.CallsByVerb(), "a GET per golden and the lists of cozy-public")

	_, err = renderCatalog(t, vals(t, retireA135), cluster)
	requireRefusal(t, err, outage.Error())

	cluster.FailClusterWideLists = nil
	cluster.ResetCalls()
	_, err = renderCatalog(t, vals(t, retireA135), cluster)
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"datavolumes": 1, "persistentvolumeclaims": 1, "kubevirtmachinetemplates": 1}, cluster.ClusterWideLists())
	assert.Equal(t, map[string]int{"get datavolumes": 2, "list datavolumes": 2, "list persistentvolumeclaims": 2, "list kubevirtmachinetemplates": 1}, cluster.CallsByVerb())
}

// retiredCluster holds golden B kept and golden A as the retiring render left it.
func retiredCluster(t testing.TB, objects ...string) *support.Cluster {
	t.Helper()
	cluster := retireCluster(t, objects...)
	m := mustRenderCatalog(t, vals(t, retireA135), nil)
	require.NoError(t, cluster.Apply(m, catalogNamespace))
	a, err := cluster.Get("cdi.kubevirt.io/v1beta1", "DataVolume", catalogNamespace, retireA)
	require.NoError(t, err)
	require.Equal(t, "true", a.GetAnnotations()[retiringKey])
	return cluster
}

const retireDropped = "images: [{schematicID: abc, version: v1.13.6}]"

// Dropping a retiring entry lets Helm delete its golden: refused while it is used.
func TestCatalogDroppingARetiringEntryIsRefusedWhileItsGoldenIsUsed(t *testing.T) {
	for _, user := range []string{
		diskUser("DataVolume", "tenant-acme", "disk", retireA),
		diskUser("PersistentVolumeClaim", "tenant-acme", "disk", retireA),
		templateUser("tenant-acme", "tpl", "cozy-public", retireA),
	} {
		_, err := renderCatalog(t, vals(t, retireDropped), retiredCluster(t, user))
		requireRefusal(t, err, "the golden cozy-public/"+retireA+" is marked retiring and this render no longer lists its entry, so Helm would delete it",
			"still used by 1 object(s): tenant-acme/", "keep its entry in images with retire: true")
		// The neighbour: the same user on B, which is not retiring.
		_, err = renderCatalog(t, vals(t, retireDropped), retiredCluster(t, strings.ReplaceAll(user, retireA, retireB)))
		require.NoError(t, err)
	}
	// Still listed with retire: true, the entry's own message.
	_, err := renderCatalog(t, vals(t, retireA135), retiredCluster(t, diskUser("DataVolume", "tenant-acme", "disk", retireA)))
	requireRefusal(t, err, retireLabelA, "sets retire: true")
}

func TestCatalogDroppedRetiringEntryRendersOnlyTheOthers(t *testing.T) {
	cluster := retiredCluster(t, diskUser("DataVolume", "tenant-acme", "disk", retireB))
	m := mustRenderCatalog(t, vals(t, retireDropped), cluster)
	assert.Equal(t, mustRenderCatalog(t, vals(t, retireDropped), nil).Text(), m.Text())
	assert.Equal(t, map[string]int{"datavolumes": 1, "persistentvolumeclaims": 1, "kubevirtmachinetemplates": 1}, cluster.ClusterWideLists(), "a live retiring golden is checked")
}

// Listing the entry again without retire takes the golden back: keep returns and
// nothing is checked, so the cluster-wide lists stop.
func TestCatalogRetiringGoldenTakenBackIsNotChecked(t *testing.T) {
	cluster := retiredCluster(t, diskUser("DataVolume", "tenant-acme", "disk", retireA))
	cluster.FailClusterWideLists = errors.New("cluster-wide list")
	m := mustRenderCatalog(t, vals(t, retireKeepBoth), cluster)
	assert.Equal(t, "keep", render.Get(catalogGolden(t, m, retireA).Object, "metadata.annotations[helm.sh/resource-policy]"))
	_, err := renderCatalog(t, vals(t, retireDropped), cluster)
	requireRefusal(t, err, "cluster-wide list")
}

func TestCatalogRetiringGoldensListErrorFailsTheRender(t *testing.T) {
	cluster := retireCluster(t)
	cluster.FailNamespacedLists = errors.New("etcdserver: request timed out")
	_, err := renderCatalog(t, vals(t, retireKeepBoth), cluster)
	requireRefusal(t, err, "etcdserver: request timed out")
}

func TestCatalogRetireLookupErrorsFailTheRender(t *testing.T) {
	apiErr := errors.New("etcdserver: request timed out")
	for _, kind := range []string{"KubevirtMachineTemplate", "PersistentVolumeClaim", "MachineDeployment"} {
		cluster := retireCluster(t, diskUser("DataVolume", "tenant-acme", "disk", retireA))
		cluster.FailWith = map[string]error{kind: apiErr}
		_, err := renderCatalog(t, vals(t, retireA135), cluster)
		requireRefusal(t, err, apiErr.Error())
	}
}

// BenchmarkCatalogRetireCheck: the refused retirement of a golden that n worker
// disks use (half of them in a namespace holding their pool's MachineDeployment,
// half belonging to no pool), at 250 and 4,000 disks. x-per-disk is the time per
// disk at 4,000 over the time per disk at 250: near 1 when the check grows
// linearly with the disks it reads.
func BenchmarkCatalogRetireCheck(b *testing.B) {
	perDisk := map[int]float64{}
	for _, n := range []int{250, 4000} {
		var objects []string
		for i := 0; i < n; i++ {
			ns := fmt.Sprintf("tenant-%d", i)
			objects = append(objects, poolDisk("DataVolume", ns, "kubernetes-c-w-1a2b3c-aaaaa-disk-system", retireA, "kubernetes-c-w"))
			if i%2 == 0 {
				objects = append(objects, machineDeployment(ns, "kubernetes-c-w"))
			}
		}
		cluster := retireCluster(b, objects...)
		values := vals(b, retireA135)
		b.Run(fmt.Sprintf("disks=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				if _, err := renderCatalog(b, values, cluster); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("still used by %d object(s)", n)) {
					b.Fatalf("want the refusal naming %d users, got %v", n, err)
				}
			}
			perDisk[n] = float64(time.Since(start).Nanoseconds()) / float64(b.N) / float64(n)
			b.ReportMetric(perDisk[n], "ns/disk")
		})
	}
	if perDisk[250] > 0 && perDisk[4000] > 0 {
		b.Run("ratio", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
			}
			b.ReportMetric(perDisk[4000]/perDisk[250], "x-per-disk")
		})
	}
}
