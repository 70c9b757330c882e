//go:build integration

package integration

import (
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// grafanaDashboardCRDFile is the GrafanaDashboard CRD tools/crds generates
// from grafana-operator's API types. installCRDs leaves it out (it is not in
// generatedCRDs): testGrafanaDashboardDryRun installs it.
const grafanaDashboardCRDFile = "grafana.integreatly.org_grafanadashboards.yaml"

// testGrafanaDashboardDryRun sends what `make grafana-dashboard` prints, as
// an operator applies it on a stock Cozystack, through strict server-side
// dry-run apply against the GrafanaDashboard CRD controller-gen generates from
// grafana-operator's API types (v5.13.0, the version Cozystack runs); an
// undeclared field and a JSON model that is no string are refused, so a pass
// means something.
func testGrafanaDashboardDryRun(t *testing.T, e *env) {
	e.installCRDFile(t, grafanaDashboardCRDFile)
	printed, err := support.MakePrints("grafana-dashboard")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := render.ParseObjects(printed)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) == 0 {
		t.Fatalf("make grafana-dashboard printed no object:\n%s", printed)
	}
	m := &render.Manifest{}
	for _, o := range objs {
		e.createNamespace(t, o.GetNamespace())
		m.Docs = append(m.Docs, render.Doc{Object: o.Object})
	}
	n, problems := e.dryRunApply(t, m, "")
	for _, p := range problems {
		t.Errorf("make grafana-dashboard: %s", p)
	}
	for name, spoil := range map[string]func(spec map[string]any){
		"an undeclared field":   func(spec map[string]any) { spec["dashboards"] = "grafana" },
		"a JSON model as a map": func(spec map[string]any) { spec["json"] = map[string]any{"title": "goldens"} },
	} {
		obj := objs[0].DeepCopy()
		spec, _, _ := unstructured.NestedMap(obj.Object, "spec")
		spoil(spec)
		if err := unstructured.SetNestedMap(obj.Object, spec, "spec"); err != nil {
			t.Fatal(err)
		}
		if err := e.serverSideApply(t, obj, obj.GetNamespace(), true); err == nil {
			t.Errorf("GrafanaDashboard with %s passed strict dry-run apply", name)
		} else {
			t.Logf("refused as it should be, %s: %v", name, err)
		}
	}
	t.Logf("%d GrafanaDashboard(s) make grafana-dashboard prints passed strict server-side dry-run apply", n)

	// Then the install page's command, as written: each object is stored.
	commands := newPageCommands(t, e)
	ran := 0
	for _, b := range support.Blocks(section(t, support.CozystackPage, support.CozystackMonitoringSection)) {
		if b.Lang != "sh" {
			continue
		}
		for _, c := range b.Commands() {
			commands.run(t, c)
			ran++
		}
	}
	if ran == 0 {
		t.Fatalf("%s, %q: no command applies the dashboard", support.CozystackPage, support.CozystackMonitoringSection)
	}
	for _, o := range objs {
		stored, ok := e.get(t, o.GetAPIVersion(), o.GetKind(), o.GetNamespace(), o.GetName())
		if !ok {
			t.Errorf("%s %s/%s is not stored after the page's command", o.GetKind(), o.GetNamespace(), o.GetName())
			continue
		}
		if got, want := render.Get(stored.Object, "spec.json"), render.Get(o.Object, "spec.json"); got != want {
			t.Errorf("%s %s/%s stored another dashboard JSON than make grafana-dashboard prints", o.GetKind(), o.GetNamespace(), o.GetName())
		}
		e.deleteOne(t, o.GetAPIVersion(), o.GetKind(), o.GetNamespace(), o.GetName())
	}
}
