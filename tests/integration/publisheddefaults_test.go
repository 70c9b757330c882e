//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"
)

const (
	tenantDefaultsName = "kubernetes-worker-image-tenant-defaults"
	catalogPkg         = "cozystack.kubernetes-worker-image"
	createdWith        = "kubernetes-worker-image.cozystack.io/created-with"
)

// testPublishedDefaults: the catalog's published platform defaults for
// tenant workers, on the cluster as the install page leaves it (inside
// CozystackInstall), with no _cluster.talos or _cluster.osImage anywhere: the
// tenant's cozystack-values holds only what Cozystack's platform writes.
//
// The walkthrough's catalog values (examples/stock-cozystack/catalog-values.yaml)
// go into the page's catalog Package, and the catalog release is installed
// with the Package's stored values, as helm-controller would once CDI's
// Package is ready: the chart writes the ConfigMap. New pools are installed
// as Cozystack's HelmRelease would have them (chartRef the ApplicationDefinition's,
// values from cozystack-values then its own, resolved as Flux resolves
// them), through Helm's real lookup: one imports from the published mirror,
// records it with fromCatalog, and its TalosConfigTemplate carries the
// published installer repository and mirrors; with osImage published, one
// clones the golden. The published defaults then change (another factory
// URL, then no tenantWorkers): the running pools' upgrades keep their
// KubevirtMachineTemplates byte for byte, and a pool created after the change
// takes the new URL. `workerimage plan` against the cluster names the
// catalog's channel for the pool created from it.
func testPublishedDefaults(t *testing.T, e *env) {
	start := time.Now()
	ctx := context.Background()
	const ns = "tenant-published"
	e.createNamespace(t, ns)
	catalogValues, err := render.ReadValues(support.Path("examples", "stock-cozystack", "catalog-values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	mirror := fmt.Sprint(render.Get(catalogValues, "tenantWorkers.talos.imageFactoryURL"))
	installer := fmt.Sprint(render.Get(catalogValues, "tenantWorkers.talos.installerRepository"))
	mirrors, _ := render.Get(catalogValues, "registries.mirrors").(map[string]any)
	if !strings.HasPrefix(mirror, "https://") || installer == "<nil>" || len(mirrors) == 0 {
		t.Fatalf("examples/stock-cozystack/catalog-values.yaml sets no factory mirror, installer repository and registry mirrors (%s, %s, %v): the subtest would prove nothing", mirror, installer, mirrors)
	}
	const other = "https://factory.other.internal"
	schematicID, version := poolDefaults(t)
	golden := support.GoldenName(schematicID, version)

	// What this subtest leaves is what it found: no published ConfigMap (as
	// every catalog subtest leaves it) and the golden as it was.
	_, hadGolden := e.get(t, dataVolumeVersion, "DataVolume", catalogNamespace, golden)
	cat := e.helm(t, catalogNamespace)
	pools := e.helm(t, ns)
	var releases []string
	catalogInstalled := false
	t.Cleanup(func() {
		for _, r := range releases {
			if err := pools.uninstall(r); err != nil {
				t.Errorf("helm uninstall %s/%s: %v", ns, r, err)
			}
			e.remove(t, objectRef{helmReleaseAPI, "HelmRelease", ns, r})
		}
		e.remove(t, objectRef{"v1", "Secret", ns, "cozystack-values"})
		if catalogInstalled {
			e.uninstallCatalog(t, cat, catalogRelease)
		}
		if !hadGolden {
			e.remove(t, objectRef{dataVolumeVersion, "DataVolume", catalogNamespace, golden})
		}
	})

	// The catalog, from its Package's values: the walkthrough's merged in
	// (a JSON merge patch, as `kubectl patch --type merge` writes; null
	// removes a key), then installed or upgraded with what the API stored.
	catalogRevision := func(what string, values map[string]any) map[string]any {
		t.Helper()
		patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"components": map[string]any{catalogRelease: map[string]any{"values": values}}}})
		pkg, err := e.client(t, cozystackAPI, "Package", "").Patch(ctx, catalogPkg, types.MergePatchType, patch, metav1.PatchOptions{FieldValidation: metav1.FieldValidationStrict})
		if err != nil {
			t.Fatalf("%s: patch the values of Package %s: %v", what, catalogPkg, err)
		}
		stored, _ := render.Get(pkg.Object, "spec.components."+catalogRelease+".values").(map[string]any)
		run, verb := cat.upgrade, "upgrade"
		if !catalogInstalled {
			run, verb = cat.install, "install"
		}
		if _, err := run(catalogRelease, render.CatalogChart, e.valuesFrom(t, catalogNamespace, stored)); err != nil {
			t.Fatalf("%s: helm %s of the catalog %s/%s with the Package's values %v: %v", what, verb, catalogNamespace, catalogRelease, stored, err)
		}
		catalogInstalled = true
		cm, ok := e.get(t, "v1", "ConfigMap", catalogNamespace, tenantDefaultsName)
		if !ok {
			t.Fatalf("%s: the catalog wrote no ConfigMap %s/%s", what, catalogNamespace, tenantDefaultsName)
		}
		if cm.GetAnnotations()["meta.helm.sh/release-name"] != catalogRelease {
			t.Errorf("%s: ConfigMap %s is not the catalog release's (annotations %v)", what, tenantDefaultsName, cm.GetAnnotations())
		}
		var out map[string]any
		text, _, _ := unstructured.NestedString(cm.Object, "data", "values.json")
		if err := json.Unmarshal([]byte(text), &out); err != nil {
			t.Fatalf("%s: ConfigMap %s holds %q in values.json: %v", what, tenantDefaultsName, text, err)
		}
		t.Logf("%s: the catalog publishes %s", what, text)
		return out
	}
	got := catalogRevision("the walkthrough's values", catalogValues)
	if render.Get(got, "talos.imageFactoryURL") != mirror || render.Get(got, "talos.installerRepository") != installer || render.Get(got, "osImage") != nil {
		t.Errorf("the catalog published %v, want the walkthrough's factory %s and installer %s, no osImage", got, mirror, installer)
	}
	e.setPhase(t, catalogNamespace, golden, "Succeeded")

	// A tenant as Cozystack's platform writes its cozystack-values: no
	// _cluster key for tenant workers.
	e.createYAML(t, stockCozystackValues(ns))
	ad, _ := e.get(t, cozystackAPI, "ApplicationDefinition", "", appDefinition)
	prefix := fmt.Sprint(render.Get(ad.Object, "spec.release.prefix"))
	if prefix != support.CozystackReleasePrefix {
		t.Fatalf("ApplicationDefinition %s gives releases the prefix %q, want upstream's %q", appDefinition, prefix, support.CozystackReleasePrefix)
	}
	live, err := render.NewLive(e.config)
	if err != nil {
		t.Fatal(err)
	}
	// poolValues is what helm-controller installs for the application: its
	// HelmRelease (as the ApplicationDefinition makes it) resolved as Flux
	// resolves valuesFrom, then its own values.
	poolValues := func(release string) map[string]any {
		t.Helper()
		hr, ok := e.get(t, helmReleaseAPI, "HelmRelease", ns, release)
		if !ok {
			t.Fatalf("no HelmRelease %s/%s", ns, release)
		}
		vals, unresolved, err := fleet.Values(ctx, live, hr)
		if err != nil || unresolved != "" {
			t.Fatalf("values of %s/%s: %v %s", ns, release, err, unresolved)
		}
		if render.Get(vals, "_cluster.talos") != nil || render.Get(vals, "_cluster.osImage") != nil {
			t.Fatalf("values of %s/%s carry _cluster.talos or _cluster.osImage: %v", ns, release, vals)
		}
		return vals
	}
	newPool := func(name string) (string, *render.Manifest) {
		t.Helper()
		release := prefix + poolCluster + "-" + name
		// As cozystack-api writes it for the application, through the
		// ApplicationDefinition the takeover left (its prefix is checked above).
		e.createYAML(t, support.CozystackHelmReleaseOf(adChartRef(t, e), ns, poolCluster+"-"+name, "{cluster: "+poolCluster+"}"))
		releases = append(releases, release)
		rel := pools.mustInstall(release, render.PoolChart, poolValues(release))
		return release, manifestOf(t, rel)
	}
	disk := "spec.template.spec.virtualMachineTemplate.spec.dataVolumeTemplates.0.spec.source."
	record := func(release string) map[string]any {
		t.Helper()
		md, ok := e.get(t, capiAPIVersion, "MachineDeployment", ns, poolName(release))
		if !ok {
			t.Fatalf("pool %s has no MachineDeployment", release)
		}
		var out map[string]any
		if err := json.Unmarshal([]byte(md.GetAnnotations()[createdWith]), &out); err != nil {
			t.Errorf("pool %s: annotation %s is %q: %v", release, createdWith, md.GetAnnotations()[createdWith], err)
		}
		return out
	}
	// running is what must not move: the template's document as Helm
	// applied it, the object's identity and version on the server, the
	// MachineDeployment's template reference and record.
	running := func(release string, m *render.Manifest) string {
		t.Helper()
		doc, err := m.One(kmtKind)
		if err != nil {
			t.Fatal(err)
		}
		kmt, ok := e.get(t, kmtAPIVersion, kmtKind, ns, doc.Name())
		if !ok {
			t.Fatalf("%s %s/%s of %s is not on the server", kmtKind, ns, doc.Name(), release)
		}
		md, _ := e.get(t, capiAPIVersion, "MachineDeployment", ns, poolName(release))
		spec, _ := json.Marshal(kmt.Object["spec"])
		return fmt.Sprintf("template document:\n%s\non the server: %s uid %s resourceVersion %s spec %s\nMachineDeployment infrastructureRef %v, %s %s",
			doc.Text, kmt.GetName(), kmt.GetUID(), kmt.GetResourceVersion(), spec,
			render.Get(md.Object, "spec.template.spec.infrastructureRef.name"), createdWith, md.GetAnnotations()[createdWith])
	}

	// 1. A new pool imports from the published mirror and records it.
	imported, importedM := newPool("pubmirror")
	kmtDoc, _ := importedM.One(kmtKind)
	if url := fmt.Sprint(render.Get(kmtDoc.Object, disk+"http.url")); !strings.HasPrefix(url, mirror+"/image/"+schematicID+"/"+version+"/") {
		t.Errorf("a new pool under the published factory %s imports from %s", mirror, url)
	}
	if rec := record(imported); rec["imageFactoryURL"] != mirror || fmt.Sprint(rec["fromCatalog"]) != "[imageFactoryURL]" || len(rec) != 2 {
		t.Errorf("the MachineDeployment of %s records %v, want imageFactoryURL %s with fromCatalog [imageFactoryURL] and nothing else", imported, rec, mirror)
	}
	tct := filledTalosConfigTemplate(t, importedM)
	if _, problems := e.dryRunApply(t, tct, ns); len(problems) > 0 {
		t.Errorf("the TalosConfigTemplate of %s: %v", imported, problems)
	}
	var machineConfig struct {
		Machine struct {
			Install    struct{ Image string } `json:"install"`
			Registries struct {
				Mirrors map[string]any `json:"mirrors"`
			} `json:"registries"`
		} `json:"machine"`
	}
	if err := yaml.Unmarshal([]byte(fmt.Sprint(render.Get(tct.Docs[0].Object, "spec.template.spec.data"))), &machineConfig); err != nil {
		t.Fatalf("the TalosConfigTemplate's data of %s is not YAML: %v", imported, err)
	}
	if want := installer + "/" + schematicID + ":" + version; machineConfig.Machine.Install.Image != want {
		t.Errorf("the TalosConfigTemplate of %s installs %q, want the published installer repository's %q", imported, machineConfig.Machine.Install.Image, want)
	}
	gotMirrors, _ := json.Marshal(machineConfig.Machine.Registries.Mirrors)
	wantMirrors, _ := json.Marshal(mirrors)
	if string(gotMirrors) != string(wantMirrors) {
		t.Errorf("the TalosConfigTemplate of %s has registry mirrors %s, want the published %s", imported, gotMirrors, wantMirrors)
	}
	importedBefore := running(imported, importedM)

	// 2. With osImage published, a new pool clones the golden.
	got = catalogRevision("osImage published", map[string]any{"tenantWorkers": map[string]any{"osImage": map[string]any{"builtin": map[string]any{}}}})
	if fmt.Sprint(render.Get(got, "osImage")) != "map[builtin:map[]]" {
		t.Errorf("the catalog published %v, want osImage {builtin: {}}", got)
	}
	cloned, clonedM := newPool("pubgolden")
	checkDisk(t, e, ns, clonedM, golden, "replicated")
	if rec := record(cloned); fmt.Sprint(rec["osImage"]) != "map[builtin:map[]]" || fmt.Sprint(rec["fromCatalog"]) != "[imageFactoryURL osImage]" {
		t.Errorf("the MachineDeployment of %s records %v, want osImage {builtin: {}} and fromCatalog [imageFactoryURL osImage]", cloned, rec)
	}
	clonedBefore := running(cloned, clonedM)

	// 3. The published defaults change, then go: the running pools' upgrades
	// move nothing; a pool created after the change takes the new URL.
	var later string
	for _, change := range []struct {
		what   string
		values map[string]any
	}{
		{"another factory published, osImage no longer", map[string]any{"tenantWorkers": map[string]any{"talos": map[string]any{"imageFactoryURL": other}, "osImage": nil}}},
		{"tenantWorkers removed", map[string]any{"tenantWorkers": nil}},
	} {
		got := catalogRevision(change.what, change.values)
		for _, p := range []struct {
			release, before string
		}{{imported, importedBefore}, {cloned, clonedBefore}} {
			m := manifestOf(t, pools.mustUpgrade(p.release, render.PoolChart, poolValues(p.release)))
			if after := running(p.release, m); after != p.before {
				t.Errorf("%s: the upgrade of running pool %s moved it:\nbefore: %s\nafter: %s", change.what, p.release, p.before, after)
			}
		}
		if later == "" {
			if render.Get(got, "talos.imageFactoryURL") != other {
				t.Fatalf("%s: the catalog published %v, want the factory %s", change.what, got, other)
			}
			var laterM *render.Manifest
			later, laterM = newPool("publater")
			doc, _ := laterM.One(kmtKind)
			if url := fmt.Sprint(render.Get(doc.Object, disk+"http.url")); !strings.HasPrefix(url, other+"/image/") {
				t.Errorf("a pool created after the published factory became %s imports from %s", other, url)
			}
		} else if render.Get(got, "talos") == nil || render.Get(got, "talos.imageFactoryURL") != nil || render.Get(got, "osImage") != nil {
			t.Errorf("%s: the catalog published %v, want the registry mirrors only", change.what, got)
		}
	}

	// 4. `workerimage plan` of the running pool, against the cluster, names
	// the catalog's channel for what it recorded at creation.
	valuesFile := filepath.Join(t.TempDir(), "pubmirror.yaml")
	body, _ := json.Marshal(poolValues(imported))
	if err := os.WriteFile(valuesFile, body, 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, code := e.workerimage(t, "plan", "-f", valuesFile, "--release", imported, "-n", ns, "--kubeconfig", e.kubeconfig)
	var factoryLine string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "image factory ") {
			factoryLine = line
		}
	}
	channel := "the catalog's published defaults (ConfigMap " + catalogNamespace + "/" + tenantDefaultsName + ")"
	if code != 0 || !strings.Contains(factoryLine, mirror+"  (") || !strings.Contains(factoryLine, channel) || !strings.Contains(factoryLine, "annotation "+createdWith) {
		t.Errorf("workerimage plan of %s exited %d; its image factory line is %q, want %s from %s, recorded in the MachineDeployment's annotation:\n%s", imported, code, factoryLine, mirror, channel, out)
	}
	t.Logf("workerimage plan of %s: %s", imported, factoryLine)
	if !strings.Contains(out, kmtDoc.Name()) {
		t.Errorf("workerimage plan of %s does not name its running template %s:\n%s", imported, kmtDoc.Name(), out)
	}

	names := append([]string{}, releases...)
	sort.Strings(names)
	t.Logf("pools %s created from the published defaults, which changed twice; the subtest took %s", strings.Join(names, ", "), time.Since(start).Round(time.Millisecond))
}
