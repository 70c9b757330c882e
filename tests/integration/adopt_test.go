//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"
)

// What this test reads of `workerimage adopt -o json`.
type liveAdopt struct {
	Flavors []struct {
		Version string `json:"version"`
		Classes []struct {
			Class string `json:"class"`
			Pools []struct {
				HelmRelease     string                 `json:"helmRelease"`
				Workers         int64                  `json:"workers"`
				Outcome         string                 `json:"outcome"`
				Golden          string                 `json:"golden"`
				Refusal         string                 `json:"refusal"`
				ValuesChange    map[string]interface{} `json:"valuesChange"`
				MachineTemplate struct {
					Current string `json:"current"`
					New     string `json:"new"`
				} `json:"machineTemplate"`
				ImportsAvoidedNow int64 `json:"importsAvoidedNow"`
			} `json:"pools"`
		} `json:"classes"`
	} `json:"flavors"`
	Catalog struct {
		Changed bool   `json:"changed"`
		Values  string `json:"values"`
		Images  []struct {
			Change string `json:"change"`
		} `json:"images"`
	} `json:"catalog"`
}

type liveAdoptPool struct {
	class, outcome, golden, refusal, current, next string
	workers, avoided                               int64
	change                                         map[string]interface{}
}

// pools indexes the report's HTTP pools of one namespace by HelmRelease name.
func (r liveAdopt) pools(namespace string) map[string]liveAdoptPool {
	out := map[string]liveAdoptPool{}
	for _, f := range r.Flavors {
		for _, c := range f.Classes {
			for _, p := range c.Pools {
				ns, name, _ := strings.Cut(p.HelmRelease, "/")
				if ns == namespace {
					out[name] = liveAdoptPool{c.Class, p.Outcome, p.Golden, p.Refusal, p.MachineTemplate.Current, p.MachineTemplate.New, p.Workers, p.ImportsAvoidedNow, p.ValuesChange}
				}
			}
		}
	}
	return out
}

// testCLIAdoptLive: `workerimage adopt -kubeconfig` against a live fleet of
// HTTP pools installed with Helm's SDK and declared by Flux HelmReleases: one
// whose golden exists on its class (ready), one on another class (needs a
// per-class golden), one on a flavor the catalog lacks (needs a catalog
// entry). The catalog values adopt prints are applied to the catalog release,
// then one pool's values change: that pool renders the very template adopt
// named and clones its golden, and every other pool's KubevirtMachineTemplate
// keeps its name and UID through its own unchanged upgrade.
func testCLIAdoptLive(t *testing.T, e *env) {
	schematicID, _ := poolDefaults(t)
	const (
		tenant  = "tenant-adopt"
		catalog = "kubernetes-worker-image-adopt"
		// Flavors no other subtest uses.
		entryVersion, newVersion = "v1.13.7", "v1.13.8"
		class                    = "adopt-class"
		ready, perClass, entry   = "kubernetes-nodes-acme-adoptready", "kubernetes-nodes-acme-adoptclass", "kubernetes-nodes-acme-adoptentry"
	)
	golden := support.GoldenName(schematicID, entryVersion)
	newGolden := support.GoldenName(schematicID, newVersion)

	if _, served := e.get(t, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "helmreleases.helm.toolkit.fluxcd.io"); !served {
		e.installCRDFile(t, helmReleaseCRDFile)
	}
	e.createNamespace(t, catalogNamespace)
	e.createNamespace(t, tenant)
	state := e.applyYAML(t, `
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: `+class+`}
provisioner: adopt.csi.example
allowVolumeExpansion: true
---
# Its CSI driver: without one CDI takes the class for in-tree storage (refusal 12).
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: adopt.csi.example}
spec: {attachRequired: true}
`)
	t.Cleanup(func() { e.remove(t, state...) })

	// The catalog with one entry, on the default class; its golden imported.
	cat := e.helm(t, catalogNamespace)
	cat.mustInstall(catalog, render.CatalogChart, map[string]interface{}{"images": []interface{}{
		map[string]interface{}{"schematicID": schematicID, "version": entryVersion},
	}})
	t.Cleanup(func() {
		e.uninstallCatalog(t, cat, catalog)
		e.waitGone(t, []objectRef{{"rbac.authorization.k8s.io/v1", "Role", catalogNamespace, "kubernetes-worker-image-clone"}})
	})
	e.setPhase(t, catalogNamespace, golden, "Succeeded")

	// The fleet: installed by Helm, declared by HelmReleases (Flux is not
	// running here; adopt reads what it would), with workers in status.
	values := map[string]map[string]interface{}{
		ready:    {"cluster": poolCluster, "talos": map[string]interface{}{"version": entryVersion}},
		perClass: {"cluster": poolCluster, "storageClass": class, "talos": map[string]interface{}{"version": entryVersion}},
		entry:    {"cluster": poolCluster, "talos": map[string]interface{}{"version": newVersion}},
	}
	pools := e.helm(t, tenant)
	workers := map[string]int{ready: 2, perClass: 1, entry: 3}
	for _, name := range []string{ready, perClass, entry} {
		pools.mustInstall(name, render.PoolChart, values[name])
		t.Cleanup(func() { pools.mustUninstall(name) })
		raw, err := json.Marshal(values[name])
		if err != nil {
			t.Fatal(err)
		}
		refs := e.applyYAML(t, fmt.Sprintf(`
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: %s, namespace: %s}
spec:
  interval: 10m
  chart: {spec: {chart: kubernetes-nodes, sourceRef: {kind: HelmRepository, name: cozystack-apps, namespace: cozy-public}}}
  values: %s
`, name, tenant, raw))
		t.Cleanup(func() { e.remove(t, refs...) })
		md := "kubernetes-" + poolCluster + "-" + strings.TrimPrefix(name, "kubernetes-nodes-"+poolCluster+"-")
		patch := []byte(fmt.Sprintf(`{"status":{"replicas":%d,"readyReplicas":%d}}`, workers[name], workers[name]))
		if _, err := e.client(t, capiAPIVersion, "MachineDeployment", tenant).Patch(context.Background(), md, types.MergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
			t.Fatalf("set the workers of MachineDeployment %s/%s: %v", tenant, md, err)
		}
	}
	templates := func() map[string]types.UID { return e.uids(t, kmtAPIVersion, kmtKind, tenant) }
	before := templates()

	adopt := func(step string) liveAdopt {
		t.Helper()
		out, _, code := e.workerimage(t, "adopt", "-kubeconfig", e.kubeconfig, "-o", "json")
		if code != 0 {
			t.Fatalf("%s: adopt -kubeconfig: exit %d:\n%s", step, code, out)
		}
		var r liveAdopt
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%s: adopt -o json: %v\n%s", step, err, out)
		}
		return r
	}

	// 1. adopt against the live fleet.
	r := adopt("before")
	got := r.pools(tenant)
	want := map[string]struct{ class, outcome string }{
		ready:    {"replicated", "ready"},
		perClass: {class, "needs-per-class-golden"},
		entry:    {"replicated", "needs-catalog-entry"},
	}
	for name, w := range want {
		p, ok := got[name]
		switch {
		case !ok:
			t.Fatalf("adopt does not report %s/%s: %+v", tenant, name, got)
		case p.class != w.class || p.outcome != w.outcome:
			t.Errorf("%s: class %q, outcome %q; want %q, %q (refusal: %s)", name, p.class, p.outcome, w.class, w.outcome, p.refusal)
		case p.workers != int64(workers[name]):
			t.Errorf("%s: %d workers, want %d", name, p.workers, workers[name])
		}
		if _, ok := before[p.current]; !ok {
			t.Errorf("%s: adopt names the current template %s, the server holds %v", name, p.current, before)
		}
	}
	if p := got[ready]; p.golden != golden || p.next == "" || p.next == p.current || p.avoided != 2 {
		t.Errorf("%s: golden %q, template %s -> %s, %d imports avoided; want %s, a new name, 2", ready, p.golden, p.current, p.next, p.avoided, golden)
	}
	if !r.Catalog.Changed {
		t.Fatalf("adopt asks for no catalog change:\n%s", r.Catalog.Values)
	}
	text, _, code := e.workerimage(t, "adopt", "-kubeconfig", e.kubeconfig)
	if code != 0 || !strings.Contains(text, "\napiVersion: cozystack.io/v1alpha1\nkind: Package\nmetadata:\n  name: cozystack.kubernetes-worker-image\n") || !strings.Contains(text, "needs a per-class golden: add \""+class+"\"") {
		t.Errorf("adopt -kubeconfig (text): exit %d, want 0 with the catalog's Package and the per-class fix:\n%s", code, text)
	}

	// 2. The pasted catalog change, applied: no release of this repository's
	// platform chart holds the catalog's values here, so it is the catalog's
	// Package, its images in its values. Other subtests' catalog releases
	// left their goldens in cozy-public, and adopt lists each as a kept entry
	// (a cluster has one catalog; here each golden is another release's, which
	// Helm would refuse to take over): they must all be kept entries of
	// goldens that exist; this catalog takes the entries of its two flavors.
	var pasted struct {
		Kind string `json:"kind"`
		Spec struct {
			Components map[string]struct {
				Values struct {
					Images []map[string]interface{} `json:"images"`
				} `json:"values"`
			} `json:"components"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal([]byte(r.Catalog.Values), &pasted); err != nil || pasted.Kind != "Package" {
		t.Fatalf("the catalog change is not the catalog's Package (%v):\n%s", err, r.Catalog.Values)
	}
	pastedImages := pasted.Spec.Components["kubernetes-worker-image"].Values.Images
	if len(pastedImages) != len(r.Catalog.Images) {
		t.Fatalf("%d pasted entries, %d in the JSON", len(pastedImages), len(r.Catalog.Images))
	}
	var images []interface{}
	for i, img := range pastedImages {
		version, _ := img["version"].(string)
		if version == entryVersion || version == newVersion {
			images = append(images, img)
			continue
		}
		name := support.GoldenName(fmt.Sprint(img["schematicID"]), version)
		_, dv := e.get(t, dataVolumeVersion, "DataVolume", catalogNamespace, name)
		_, pvc := e.get(t, "v1", "PersistentVolumeClaim", catalogNamespace, name)
		if r.Catalog.Images[i].Change != "kept" || !(dv || pvc) {
			t.Errorf("pasted entry %v: change %q; want only kept entries of goldens in cozy-public besides this test's", img, r.Catalog.Images[i].Change)
		}
	}
	if len(images) != 2 {
		t.Fatalf("the pasted values hold %d entries of this test's flavors, want 2:\n%s", len(images), r.Catalog.Values)
	}
	t.Logf("applying the pasted entries %v", images)
	cat.mustUpgrade(catalog, render.CatalogChart, map[string]interface{}{"images": images})
	for _, g := range []string{golden + "--" + class, newGolden} {
		if _, ok := e.get(t, dataVolumeVersion, "DataVolume", catalogNamespace, g); !ok {
			t.Fatalf("the catalog upgrade with the pasted values created no golden %s", g)
		}
		e.setPhase(t, catalogNamespace, g, "Succeeded")
	}

	// 3. adopt again: the pools that waited are ready, each with its new template.
	r = adopt("after the catalog change")
	got = r.pools(tenant)
	for _, name := range []string{ready, perClass, entry} {
		if got[name].outcome != "ready" || got[name].next == "" {
			t.Errorf("%s after the catalog change: outcome %q (refusal %s), new template %q; want ready with a name", name, got[name].outcome, got[name].refusal, got[name].next)
		}
	}
	if r.Catalog.Changed {
		t.Errorf("after the pasted values applied adopt still asks for a catalog change:\n%s", r.Catalog.Values)
	}

	// 4. One pool's values change: it renders the template adopt named and clones its golden.
	switched := withValues(values[perClass], "osImage", got[perClass].change["osImage"])
	rel := pools.mustUpgrade(perClass, render.PoolChart, switched)
	m := manifestOf(t, rel)
	if name := machineTemplateOf(t, m); name != got[perClass].next {
		t.Errorf("%s switched: Helm installed template %s, adopt named %s", perClass, name, got[perClass].next)
	}
	checkDisk(t, e, tenant, m, golden+"--"+class, class)

	// 5. Every other pool, upgraded unchanged as Flux would after the catalog
	// change, keeps its template: same name, same object.
	for _, name := range []string{ready, entry} {
		pools.mustUpgrade(name, render.PoolChart, values[name])
	}
	after := templates()
	for _, name := range []string{ready, entry} {
		cur := got[name].current
		if after[cur] != before[cur] || after[cur] == "" {
			t.Errorf("%s: template %s has UID %q after the other pool's switch and its own unchanged upgrade, %q before", name, cur, after[cur], before[cur])
		}
	}
	if _, ok := after[got[perClass].current]; ok {
		t.Errorf("the switched pool's old template %s is still there: %v", got[perClass].current, after)
	}
	if len(after) != 3 {
		t.Errorf("templates in %s after the switch: %v, want the two unchanged and the switched pool's new one", tenant, after)
	}
}
