//go:build integration

package integration

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/render/helmv4"
	"github.com/cozystack/golden-worker-images/tests/support"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

const trustedChecksum = "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

func readCA(t *testing.T, name string) string {
	t.Helper()
	raw, err := os.ReadFile(support.Fixture("ca/" + name))
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// testTrustedImports: the CA ConfigMaps, the disk's certConfigMap and the
// golden's checksum on the real API server, against the CRD controller-gen
// makes from CDI v1.65.0's types; the catalog reads the CDI resource's
// status.observedVersion through a real client. It puts back the cluster-wide
// state it changes (the CDI resource), so it may run in any order.
func testTrustedImports(t *testing.T, e *env) {
	ca, rotated := readCA(t, "factory-ca.pem"), readCA(t, "factory-ca-rotated.pem")

	// A pool with its own CA: Helm installs the ConfigMap beside the disk that names it.
	const ns, release, cmName = "tenant-trusted", "kubernetes-nodes-acme-trusted", "kubernetes-acme-trusted-image-factory-ca"
	e.createNamespace(t, ns)
	h := e.helm(t, ns)
	poolValues := func(pem string) map[string]interface{} {
		return map[string]interface{}{"cluster": poolCluster, "talos": map[string]interface{}{"imageFactoryURL": "https://factory.mirror.internal", "imageFactoryCA": pem}}
	}
	m := manifestOf(t, h.mustInstall(release, render.PoolChart, poolValues(ca)))
	if n, problems := e.dryRunApply(t, m, ns); len(problems) > 0 {
		t.Errorf("pool with a CA: %d objects, refused: %v", n, problems)
	}
	cm, ok := e.get(t, "v1", "ConfigMap", ns, cmName)
	if !ok {
		t.Fatalf("ConfigMap %s/%s was not created", ns, cmName)
	}
	if got := render.Get(cm.Object, "data[ca.pem]"); got != ca {
		t.Errorf("ca.pem on the server is %q, want the PEM written", got)
	}
	kmts := m.OfKind(kmtKind)
	if len(kmts) != 1 {
		t.Fatalf("the pool rendered %d KubevirtMachineTemplates", len(kmts))
	}
	kmt, ok := e.get(t, kmtAPIVersion, kmtKind, ns, kmts[0].Name())
	if !ok {
		t.Fatalf("KubevirtMachineTemplate %s was not created", kmts[0].Name())
	}
	if got := render.Get(kmt.Object, "spec.template.spec.virtualMachineTemplate.spec.dataVolumeTemplates.0.spec.source.http.certConfigMap"); got != cmName {
		t.Errorf("the stored worker disk's certConfigMap is %v, want %s", got, cmName)
	}
	before := e.uids(t, kmtAPIVersion, kmtKind, ns)
	h.mustUpgrade(release, render.PoolChart, poolValues(rotated))
	if after := e.uids(t, kmtAPIVersion, kmtKind, ns); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("rotating the CA changed the machine templates: %v, then %v", before, after)
	}
	if cm, _ := e.get(t, "v1", "ConfigMap", ns, cmName); render.Get(cm.Object, "data[ca.pem]") != rotated {
		t.Errorf("the upgrade did not write the new certificate into %s", cmName)
	}
	h.mustUninstall(release)

	// The catalog, rendered as Helm would through a live client.
	live, err := render.NewLive(e.config)
	if err != nil {
		t.Fatal(err)
	}
	chrt, err := support.LoadChart(render.CatalogChart)
	if err != nil {
		t.Fatal(err)
	}
	e.createNamespace(t, catalogNamespace)
	values := map[string]interface{}{
		"imageFactoryURL": "https://factory.mirror.internal",
		"imageFactoryCA":  ca,
		"images": []interface{}{map[string]interface{}{
			"schematicID": "trusted", "version": "v1.13.6", "checksum": trustedChecksum,
			"imageFactoryCA": rotated, "additionalStorageClasses": []interface{}{"fast"},
		}, map[string]interface{}{"schematicID": "trusted", "version": "v1.13.5"}},
	}
	renderCatalog := func() (*render.Manifest, error) {
		return render.Render(chrt, render.Options{Release: render.Release{Name: catalogRelease, Namespace: catalogNamespace, Upgrade: true}, Values: values, Cluster: live})
	}
	cdi := func(version string) string {
		return fmt.Sprintf("apiVersion: cdi.kubevirt.io/v1beta1\nkind: CDI\nmetadata: {name: cdi}\nspec: {imagePullPolicy: IfNotPresent}\nstatus: {phase: Deployed, observedVersion: %s}\n", version)
	}
	refs := e.applyYAML(t, cdi("v1.64.0"))
	defer e.remove(t, refs...)
	if _, err := renderCatalog(); err == nil || !containsAll(err.Error(), []string{"the CDI resource cdi runs CDI v1.64.0 (status.observedVersion), older than v1.65.0", "talos-worker-trusted-v1.13.6, talos-worker-trusted-v1.13.6--fast"}) {
		t.Errorf("a checksum on CDI v1.64.0: %v, want the refusal naming both versions", err)
	}
	e.applyYAML(t, cdi("v1.65.0"))
	m, err = renderCatalog()
	if err != nil {
		t.Fatalf("a checksum on CDI v1.65.0: %v", err)
	}
	// The same render, its lookups asked of the same API server, under
	// Helm v4.1 (helm-controller v1.5.0's) and the newest v4.
	sameUnderHelmV4(t, m, func(r support.Renderer) (*render.Manifest, error) {
		return r(chrt, render.Options{Release: render.Release{Name: catalogRelease, Namespace: catalogNamespace, Upgrade: true}, Values: values, Cluster: live})
	})
	served := &render.Manifest{}
	for _, kind := range []string{"DataVolume", "ConfigMap"} {
		for _, d := range m.OfKind(kind) {
			if d.Name() != tenantDefaultsName { // the published tenant defaults, not a CA
				served.Docs = append(served.Docs, d)
			}
		}
	}
	if len(served.Docs) != 5 {
		t.Fatalf("the catalog rendered %d goldens and CA ConfigMaps, want 3 and 2:\n%s", len(served.Docs), m.Text())
	}
	n, problems := e.dryRunApply(t, served, catalogNamespace)
	for _, p := range problems {
		t.Errorf("catalog with CAs and a checksum: %s", p)
	}
	t.Logf("%d goldens and CA ConfigMaps passed strict server-side dry-run apply against CDI v1.65.0's DataVolume", n)

	// The controls: the CRD types checksum and certConfigMap, so a dry-run that passes proves something.
	golden, _ := m.Find("DataVolume", "talos-worker-trusted-v1.13.6")
	for _, field := range []string{"checksum", "certConfigMap"} {
		obj := runtime.DeepCopyJSON(golden.Object)
		render.Get(obj, "spec.source.http").(map[string]interface{})[field] = 7
		_, problems := e.dryRunApply(t, &render.Manifest{Docs: []render.Doc{{Object: obj}}}, catalogNamespace)
		if len(problems) != 1 || !strings.Contains(problems[0], field) {
			t.Errorf("a DataVolume with %s: 7: %v, want the server to refuse it", field, problems)
		}
	}

	// A golden that exists keeps its stored source: created without them, it renders without them.
	plain, _ := m.Find("DataVolume", "talos-worker-trusted-v1.13.5")
	values["images"].([]interface{})[1].(map[string]interface{})["checksum"] = trustedChecksum
	stored := runtime.DeepCopyJSON(plain.Object)
	goldenRefs := e.applyYAML(t, mustYAML(t, stored))
	defer e.remove(t, goldenRefs...)
	m, err = renderCatalog()
	if err != nil {
		t.Fatalf("adding a checksum to an entry whose golden exists: %v", err)
	}
	again, _ := m.Find("DataVolume", "talos-worker-trusted-v1.13.5")
	if again.Text != plain.Text {
		t.Errorf("the existing golden renders\n%s\nwant it as stored\n%s", again.Text, plain.Text)
	}
}

func mustYAML(t *testing.T, obj map[string]interface{}) string {
	t.Helper()
	raw, err := yaml.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// sameUnderHelmV4 renders again under Helm v4.1 (tools/helm-v4.1: missing,
// a failure in CI and a skip of this check elsewhere) and the newest v4, and
// requires v3's bytes.
func sameUnderHelmV4(t *testing.T, v3 *render.Manifest, renderWith func(support.Renderer) (*render.Manifest, error)) {
	t.Helper()
	renderers := []struct {
		name   string
		render support.Renderer
	}{{"the newest Helm v4", helmv4.Render}}
	if path, ok, why := support.Tool(support.HelmV41Tool, support.HelmV41Env); ok {
		v41, err := support.StartHelmV41(path)
		if err != nil {
			t.Fatal(err)
		}
		defer v41.Close()
		renderers = append(renderers, struct {
			name   string
			render support.Renderer
		}{"Helm v4.1", v41.Render})
	} else if os.Getenv("CI") != "" {
		t.Fatal(why)
	} else {
		t.Log(why)
	}
	for _, r := range renderers {
		m, err := renderWith(r.render)
		if err != nil {
			t.Fatalf("%s through the live client: %v", r.name, err)
		}
		if m.Text() != v3.Text() {
			t.Errorf("%s renders otherwise than Helm v3 through the live client:\n%s\nHelm v3:\n%s", r.name, m.Text(), v3.Text())
		}
	}
}
