//go:build integration

package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// testCatalogRetire runs docs/design.md "Retiring a golden" with Helm's SDK against
// the real API server: golden A is retired and deleted while golden B is never
// touched. Its own release and flavors, so it shares nothing with testCatalog
// (the clone Role's name is fixed: that test's release is gone by now).
func testCatalogRetire(t *testing.T, e *env) {
	if _, err := os.Stat(filepath.Join(support.RepoRoot(), render.CatalogChart, "Chart.yaml")); err != nil {
		t.Skipf("%s has not landed", render.CatalogChart)
	}
	const (
		release   = "kubernetes-worker-image-retire"
		tenant    = "tenant-retire"
		poolRel   = "kubernetes-nodes-acme-retire"
		idA, verA = "retire-a", "v1.13.5"
		idB, verB = "retire-b", "v1.13.6"
		retiring  = "kubernetes-worker-image.cozystack.io/retiring"
		keep      = "helm.sh/resource-policy"
	)
	goldenA, goldenB := support.GoldenName(idA, verA), support.GoldenName(idB, verB)
	entry := func(id, ver string, retire bool) map[string]interface{} {
		m := map[string]interface{}{"schematicID": id, "version": ver}
		if retire {
			m["retire"] = true
		}
		return m
	}
	values := func(entries ...map[string]interface{}) map[string]interface{} {
		l := make([]interface{}, len(entries))
		for i, en := range entries {
			l[i] = en
		}
		return map[string]interface{}{"images": l}
	}
	both := values(entry(idA, verA, false), entry(idB, verB, false))
	retireA := values(entry(idA, verA, true), entry(idB, verB, false))
	dropA := values(entry(idB, verB, false))
	annotations := func(name string) map[string]string {
		t.Helper()
		dv, ok := e.get(t, dataVolumeVersion, "DataVolume", catalogNamespace, name)
		if !ok {
			t.Fatalf("golden %s is gone", name)
		}
		return dv.GetAnnotations()
	}
	goldens := func() []string {
		var out []string
		for n := range e.uids(t, dataVolumeVersion, "DataVolume", catalogNamespace) {
			if strings.HasPrefix(n, "talos-worker-retire-") {
				out = append(out, n)
			}
		}
		sort.Strings(out)
		return out
	}
	refused := func(step string, vals map[string]interface{}, wants ...string) {
		t.Helper()
		_, err := e.helm(t, catalogNamespace).upgrade(release, render.CatalogChart, vals)
		if err == nil {
			t.Fatalf("%s: the upgrade was not refused", step)
		}
		for _, w := range wants {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not contain %q", step, err, w)
			}
		}
		t.Logf("%s: refused: %v", step, err)
	}

	// 1. The catalog with two entries; both goldens kept.
	e.createNamespace(t, catalogNamespace)
	cat := e.helm(t, catalogNamespace)
	cat.mustInstall(release, render.CatalogChart, both)
	for _, g := range []string{goldenA, goldenB} {
		e.setPhase(t, catalogNamespace, g, "Succeeded")
		if annotations(g)[keep] != "keep" {
			t.Fatalf("golden %s installed without keep", g)
		}
	}
	uidB := e.uids(t, dataVolumeVersion, "DataVolume", catalogNamespace)[goldenB]
	t.Logf("step 1: installed %s with goldens %v", release, goldens())

	// 2. A pool clones A, and a bare worker-disk DataVolume in another namespace names A: retire is refused.
	e.createNamespace(t, tenant)
	pool := e.helm(t, tenant)
	prel := pool.mustInstall(poolRel, render.PoolChart, map[string]interface{}{
		"cluster": poolCluster, "osImage": map[string]interface{}{"builtin": map[string]interface{}{"schematicID": idA, "version": verA}},
	})
	kmtDoc, err := manifestOf(t, prel).One(kmtKind)
	if err != nil {
		t.Fatal(err)
	}
	e.createNamespace(t, "tenant-retire-disks")
	createDiskOf(t, e, "tenant-retire-disks", "worker-disk", goldenA)
	refused("step 2: retire A while used", retireA,
		`images[0] (schematicID "retire-a", version "v1.13.5") sets retire: true`,
		"still used by 2 object(s): tenant-retire-disks/DataVolume/worker-disk, "+tenant+"/KubevirtMachineTemplate/"+kmtDoc.Name()+".",
		// The bare disk sits beside no MachineDeployment: the refusal names it apart.
		"Of those, 1 belong to no pool using the golden: tenant-retire-disks/DataVolume/worker-disk (")
	if annotations(goldenA)[keep] != "keep" {
		t.Errorf("a refused retire changed golden %s", goldenA)
	}

	// 3. The users go away; retire renders and the live golden loses keep.
	pool.mustUninstall(poolRel)
	e.waitGone(t, e.refsOf(t, manifestOf(t, prel), tenant))
	e.deleteOne(t, dataVolumeVersion, "DataVolume", "tenant-retire-disks", "worker-disk")
	cat.mustUpgrade(release, render.CatalogChart, retireA)
	ann := annotations(goldenA)
	if _, ok := ann[keep]; ok || ann[retiring] != "true" {
		t.Errorf("retired golden %s: annotations %v, want no %s and %s: \"true\"", goldenA, ann, keep, retiring)
	}
	role, ok := e.get(t, "rbac.authorization.k8s.io/v1", "Role", catalogNamespace, "kubernetes-worker-image-clone")
	if !ok {
		t.Fatal("the clone Role is gone while B is kept")
	}
	// Today's entry first, then every other live golden of a catalog that
	// cozy-public holds (earlier subtests' releases keep theirs), sorted; A,
	// retiring, is no longer cloneable.
	want := []string{goldenB}
	list, err := e.client(t, dataVolumeVersion, "DataVolume", catalogNamespace).List(context.Background(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/part-of=kubernetes-worker-image"})
	if err != nil {
		t.Fatal(err)
	}
	var others []string
	for _, dv := range list.Items {
		if n := dv.GetName(); n != goldenA && n != goldenB && dv.GetAnnotations()[retiring] != "true" {
			others = append(others, n)
		}
	}
	sort.Strings(others)
	want = append(want, others...)
	if got := fmt.Sprint(role.Object["rules"].([]interface{})[0].(map[string]interface{})["resourceNames"]); got != fmt.Sprint(want) {
		t.Errorf("clone Role resourceNames %s, want %v: today's entry B, then the other live goldens in cozy-public, never the retiring A", got, want)
	}
	t.Logf("step 3: users removed; retire upgrade applied: %s annotations %v", goldenA, ann)

	// 4. In the window between the upgrades a new user appears: dropping A is refused.
	createDiskOf(t, e, "tenant-retire-disks", "late-disk", goldenA)
	refused("step 4: drop A while used", dropA,
		"the golden cozy-public/"+goldenA+" is marked retiring and this render no longer lists its entry",
		"still used by 1 object(s): tenant-retire-disks/DataVolume/late-disk.")
	e.deleteOne(t, dataVolumeVersion, "DataVolume", "tenant-retire-disks", "late-disk")

	// 5. Dropping the entry lets Helm delete A, and only A.
	before := goldens()
	cat.mustUpgrade(release, render.CatalogChart, dropA)
	e.waitGone(t, []objectRef{{dataVolumeVersion, "DataVolume", catalogNamespace, goldenA}})
	if after := goldens(); fmt.Sprint(after) != fmt.Sprint([]string{goldenB}) {
		t.Errorf("goldens %v before dropping A, %v after; want only %s left", before, after, goldenB)
	}
	t.Logf("step 5: entry dropped: goldens %v -> %v", before, goldens())

	// 6. B is untouched throughout, and survives the catalog's uninstall.
	e.uninstallCatalog(t, cat, release)
	if uid := e.uids(t, dataVolumeVersion, "DataVolume", catalogNamespace)[goldenB]; uid != uidB {
		t.Errorf("golden %s: UID %q after uninstall, %q at install", goldenB, uid, uidB)
	}
	if annotations(goldenB)[keep] != "keep" {
		t.Errorf("golden %s lost keep", goldenB)
	}
	t.Logf("step 6: catalog uninstalled; %s kept with UID %s", goldenB, uidB)
}

// deleteOne deletes an object and waits until it is gone.
func (e *env) deleteOne(t *testing.T, apiVersion, kind, namespace, name string) {
	t.Helper()
	if err := e.client(t, apiVersion, kind, namespace).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete %s %s/%s: %v", kind, namespace, name, err)
	}
	e.waitGone(t, []objectRef{{apiVersion, kind, namespace, name}})
}

// createDiskOf creates a worker-disk DataVolume annotated with the golden it clones.
func createDiskOf(t *testing.T, e *env, namespace, name, golden string) {
	t.Helper()
	e.createYAML(t, fmt.Sprintf(`apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata:
  name: %s
  namespace: %s
  annotations: {kubernetes-worker-image.cozystack.io/golden: %s}
spec:
  source: {pvc: {namespace: cozy-public, name: %s}}
  storage: {resources: {requests: {storage: 20Gi}}}
`, name, namespace, golden, golden))
}
