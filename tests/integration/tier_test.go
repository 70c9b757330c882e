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

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

const (
	poolCluster       = "acme"
	poolNamespace     = "tenant-acme"
	poolRelease       = "kubernetes-nodes-acme-workers"
	catalogNamespace  = "cozy-public"
	catalogRelease    = "kubernetes-worker-image"
	kmtAPIVersion     = "infrastructure.cluster.x-k8s.io/v1alpha1"
	kmtKind           = "KubevirtMachineTemplate"
	capiAPIVersion    = "cluster.x-k8s.io/v1beta1"
	dataVolumeVersion = "cdi.kubevirt.io/v1beta1"
)

// TestAPIServerTier is one API server for the whole tier (start-up and CRD
// installation take seconds; every subtest uses its own namespace and releases).
func TestAPIServerTier(t *testing.T) {
	e := startEnv(t)
	crds := e.installCRDs(t)
	t.Logf("kube-apiserver %s ready with %d CRDs", kubeVersion, len(crds))

	e.createClusterFixtures(t)

	t.Run("GeneratedCRDs", func(t *testing.T) { testGeneratedCRDs(t, e) })
	t.Run("BaselineDryRun", func(t *testing.T) { testBaselineDryRun(t, e) })
	t.Run("GoldenCasesDryRun", func(t *testing.T) { testGoldenCasesDryRun(t, e) })
	t.Run("DryRunRejects", func(t *testing.T) { testDryRunRejects(t, e) })
	t.Run("PoolLifecycle", func(t *testing.T) { testPoolLifecycle(t, e) })
	t.Run("UnknownInstanceType", func(t *testing.T) { testUnknownInstanceType(t, e) })
	t.Run("PlatformDefaults", func(t *testing.T) { testPlatformDefaults(t, e) })
	t.Run("Catalog", func(t *testing.T) { testCatalog(t, e) })
	t.Run("CLIPinsLive", func(t *testing.T) { testCLIPinsLive(t, e) })
	t.Run("CatalogRetire", func(t *testing.T) { testCatalogRetire(t, e) })
	t.Run("PerClassAndFallbacks", func(t *testing.T) { testPerClassAndFallbacks(t, e) })
	// After CLIPinsLive, which first needs a cluster without Flux's HelmRelease.
	t.Run("CLIAdoptLive", func(t *testing.T) { testCLIAdoptLive(t, e) })
	t.Run("TrustedImports", func(t *testing.T) { testTrustedImports(t, e) })
	t.Run("RuleObjectsDryRun", func(t *testing.T) { testRuleObjectsDryRun(t, e) })
	t.Run("KubeStateMetrics", func(t *testing.T) { testKubeStateMetrics(t, e) })
	t.Run("GrafanaDashboardDryRun", func(t *testing.T) { testGrafanaDashboardDryRun(t, e) })
	t.Run("GoldenRecovery", func(t *testing.T) { testGoldenRecovery(t, e) })
	t.Run("WorkersJoin", func(t *testing.T) { testWorkersJoin(t, e) })
	t.Run("ChartsThroughOCIRegistry", func(t *testing.T) { testChartsThroughOCIRegistry(t, e) })
	// After CLIPinsLive, which installs Flux's HelmRelease CRD.
	t.Run("CozystackPageObjects", func(t *testing.T) { testCozystackPageObjects(t, e) })
	t.Run("CozystackInstall", func(t *testing.T) { testCozystackInstall(t, e) })
	// The catalog's published platform defaults, on the cluster as the
	// install page leaves it, are CozystackInstall/PublishedDefaults.
	t.Run("MonitoringAgentsPackage", func(t *testing.T) { testMonitoringAgentsPackage(t, e) })
	// The rollout subtests, and helm-controller's, run where Cluster API
	// runs too: TestPlatformControllers.
}

// createClusterFixtures creates the cluster state the charts look up: the
// instancetypes and StorageClasses of a typical cluster, the same fixtures the
// render tests use, through the real schemas.
func (e *env) createClusterFixtures(t testing.TB) {
	t.Helper()
	for _, f := range []string{"instancetypes.yaml", "storageclasses.yaml"} {
		raw, err := os.ReadFile(support.Fixture("cluster/" + f))
		if err != nil {
			t.Fatal(err)
		}
		e.createYAML(t, string(raw))
	}
}

// baselineCorner is a baseline case's release and values.
type baselineCorner struct {
	release string
	values  map[string]interface{}
}

func baselineValues(t *testing.T) map[string]baselineCorner {
	t.Helper()
	corners, err := support.BaselineCases()
	if err != nil || len(corners) == 0 {
		t.Fatalf("no baseline values (%v)", err)
	}
	out := map[string]baselineCorner{}
	for _, c := range corners {
		vals, err := render.ReadValues(c.ValuesFile)
		if err != nil {
			t.Fatal(err)
		}
		out[c.Name] = baselineCorner{release: c.ReleaseOf().Name, values: vals}
	}
	return out
}

func renderPool(t *testing.T, release, namespace string, vals map[string]interface{}) *render.Manifest {
	t.Helper()
	chrt, err := support.LoadChart(render.PoolChart)
	if err != nil {
		t.Fatal(err)
	}
	m, err := render.Render(chrt, render.Options{Release: render.Release{Name: release, Namespace: namespace}, Values: vals})
	if err != nil {
		t.Fatalf("render %s: %v", release, err)
	}
	return m
}

// testBaselineDryRun: every object of every baseline corner, as the render
// harness renders it, is accepted by the real schemas with strict field
// validation. This is the project's schema check of its output.
func testBaselineDryRun(t *testing.T, e *env) {
	e.createNamespace(t, poolNamespace)
	corners := baselineValues(t)
	names := make([]string, 0, len(corners))
	for name := range corners {
		names = append(names, name)
	}
	sort.Strings(names)
	total, templates := 0, 0
	for _, name := range names {
		m := renderPool(t, corners[name].release, poolNamespace, corners[name].values)
		n, problems := e.dryRunApply(t, m, poolNamespace)
		total += n
		for _, p := range problems {
			t.Errorf("baseline %s: %s", name, p)
		}
		// The TalosConfigTemplate its reconcile Job applies, filled with values
		// of the parent's shapes, against CABPT's CRD.
		tct := filledTalosConfigTemplate(t, m)
		n, problems = e.dryRunApply(t, tct, poolNamespace)
		total += n
		templates += n
		for _, p := range problems {
			t.Errorf("baseline %s, its TalosConfigTemplate: %s", name, p)
		}
	}
	t.Logf("%d objects of %d baseline corners (%d of them the TalosConfigTemplates their Jobs write) passed strict server-side dry-run apply", total, len(names), templates)
}

// testGoldenCasesDryRun: every object of every committed golden case
// (tests/render/testdata/golden/cases.yaml), rendered against its fixture
// cluster, passes strict server-side dry-run apply against the real schemas,
// the controller-gen CRDs included: the platform chart's PackageSources and
// Packages against the cozystack.io CRDs written from Cozystack's API.
func testGoldenCasesDryRun(t *testing.T, e *env) {
	cases, found, err := support.GoldenCases()
	if err != nil || !found {
		t.Fatalf("golden case table: found %v, %v", found, err)
	}
	total, kinds := 0, map[string]int{}
	for _, c := range cases {
		m, err := c.Render(render.Render, true)
		if err != nil {
			t.Fatalf("case %s: %v", c.Name, err)
		}
		rel := c.ReleaseOf()
		e.createNamespace(t, rel.Namespace)
		for _, d := range m.Docs {
			if ns := d.Namespace(); ns != "" {
				e.createNamespace(t, ns)
			}
			if strings.HasPrefix(fmt.Sprint(d.Object["apiVersion"]), "cozystack.io/") {
				kinds[d.Kind()]++
			}
		}
		n, problems := e.dryRunApply(t, m, rel.Namespace)
		total += n
		for _, p := range problems {
			t.Errorf("golden case %s: %s", c.Name, p)
		}
	}
	t.Logf("%d objects of %d golden cases passed strict server-side dry-run apply, the platform's cozystack.io objects among them (%v)", total, len(cases), kinds)
}

// kmts lists the pool's KubevirtMachineTemplates as name -> UID.
func kmts(t *testing.T, e *env, namespace string) map[string]string {
	out := map[string]string{}
	for name, uid := range e.uids(t, kmtAPIVersion, kmtKind, namespace) {
		out[name] = string(uid)
	}
	return out
}

func withValues(base map[string]interface{}, kv ...interface{}) map[string]interface{} {
	out := map[string]interface{}{}
	for k, v := range base {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

// testPoolLifecycle: install a pool; an unchanged upgrade and a minReplicas
// change keep its KubevirtMachineTemplate (same name, same object); a diskSize
// change creates a new one (the documented re-image); uninstall removes it all.
func testPoolLifecycle(t *testing.T, e *env) {
	vals := baselineValues(t)["pool-cozystack-01-defaults"].values
	h := e.helm(t, poolNamespace)
	rel := h.mustInstall(poolRelease, render.PoolChart, vals)

	want := renderPool(t, poolRelease, poolNamespace, vals)
	refs := e.refsOf(t, want, poolNamespace)
	for _, r := range refs {
		if _, ok := e.get(t, r.apiVersion, r.kind, r.namespace, r.name); !ok {
			t.Errorf("after install: %s is missing", r)
		}
	}
	for _, kind := range []string{kmtKind, "MachineDeployment", "MachineHealthCheck", "ConfigMap", "Job", "ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"} {
		if docs := want.OfKind(kind); len(docs) != 1 {
			t.Errorf("the pool rendered %d %s, want 1: %v", len(docs), kind, refs)
		}
	}
	if docs := want.OfKind("TalosConfigTemplate"); len(docs) != 0 {
		t.Errorf("the release renders a TalosConfigTemplate; its reconcile Job writes it (WorkersJoin)")
	}
	if got := strings.TrimSpace(rel.Manifest); !strings.Contains(got, "kind: KubevirtMachineTemplate") {
		t.Errorf("release manifest has no KubevirtMachineTemplate")
	}
	kmtDoc, err := want.One(kmtKind)
	if err != nil {
		t.Fatal(err)
	}
	installed := kmts(t, e, poolNamespace)
	if len(installed) != 1 || installed[kmtDoc.Name()] == "" {
		t.Fatalf("after install: KubevirtMachineTemplates %v, want only %s", installed, kmtDoc.Name())
	}

	h.mustUpgrade(poolRelease, render.PoolChart, vals)
	if got := kmts(t, e, poolNamespace); !equalMaps(got, installed) {
		t.Errorf("helm upgrade with unchanged values changed the KubevirtMachineTemplates: %v -> %v", installed, got)
	}

	h.mustUpgrade(poolRelease, render.PoolChart, withValues(vals, "minReplicas", 1))
	if got := kmts(t, e, poolNamespace); !equalMaps(got, installed) {
		t.Errorf("changing minReplicas changed the KubevirtMachineTemplates: %v -> %v", installed, got)
	}
	mdName := "kubernetes-" + poolCluster + "-workers"
	md, _ := e.get(t, capiAPIVersion, "MachineDeployment", poolNamespace, mdName)
	if got := md.GetAnnotations()["cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"]; got != "1" {
		t.Errorf("after minReplicas=1 the MachineDeployment's min-size annotation is %q, want \"1\"", got)
	}

	h.mustUpgrade(poolRelease, render.PoolChart, withValues(vals, "minReplicas", 1, "diskSize", "30Gi"))
	after := kmts(t, e, poolNamespace)
	var created []string
	for name := range after {
		if _, ok := installed[name]; !ok {
			created = append(created, name)
		}
	}
	if len(created) != 1 {
		t.Fatalf("changing diskSize created %d KubevirtMachineTemplates (%v), want 1; before %v, after %v", len(created), created, installed, after)
	}
	md, _ = e.get(t, capiAPIVersion, "MachineDeployment", poolNamespace, mdName)
	if got, _, _ := unstructured.NestedString(md.Object, "spec", "template", "spec", "infrastructureRef", "name"); got != created[0] {
		t.Errorf("MachineDeployment infrastructureRef names %q, want the new template %q", got, created[0])
	}
	if _, ok := after[kmtDoc.Name()]; ok {
		t.Logf("the previous KubevirtMachineTemplate %s is kept after the re-image", kmtDoc.Name())
	} else {
		t.Logf("helm upgrade deleted the previous KubevirtMachineTemplate %s (no longer in the manifest)", kmtDoc.Name())
	}

	h.mustUninstall(poolRelease)
	e.waitGone(t, e.refsOf(t, renderPool(t, poolRelease, poolNamespace, withValues(vals, "minReplicas", 1, "diskSize", "30Gi")), poolNamespace))
	if left := kmts(t, e, poolNamespace); len(left) != 0 {
		t.Errorf("after uninstall KubevirtMachineTemplates are left: %v", left)
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// testUnknownInstanceType: the instancetype lookup, through the real client,
// refuses a name the cluster does not have, with the chart's message, and
// nothing is created.
func testUnknownInstanceType(t *testing.T, e *env) {
	const ns, rel = "tenant-odd", "kubernetes-nodes-acme-odd"
	e.createNamespace(t, ns)
	vals := map[string]interface{}{"cluster": poolCluster, "instanceType": "u1.nonexistent"}
	_, err := e.helm(t, ns).install(rel, render.PoolChart, vals)
	want := `pool kubernetes-acme-odd: instanceType "u1.nonexistent" is not a VirtualMachineClusterInstancetype of this cluster (it has: u1.large, u1.medium, u1.xlarge); set instanceType to one of them, or set resources.cpu and resources.memory instead`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("install with an unknown instanceType: got %v, want an error containing %q", err, want)
	}
	if left := kmts(t, e, ns); len(left) != 0 {
		t.Errorf("a refused install created KubevirtMachineTemplates: %v", left)
	}
}

// poolDefaults reads the pool chart's default Talos image.
func poolDefaults(t *testing.T) (schematicID, version string) {
	t.Helper()
	d, err := support.PoolDefaults()
	if err != nil {
		t.Fatal(err)
	}
	return d.SchematicID, d.Version
}

// testCatalog: the catalog and builtin pools for real. The golden exists with
// every annotation; CDI's Succeeded is written through the status
// subresource; a builtin pool installs and clones it; the clone refusals come
// through the real client; removing an entry or uninstalling the catalog keeps
// the goldens; uninstalling a pool removes only the pool.
func testCatalog(t *testing.T, e *env) {
	if _, err := os.Stat(filepath.Join(support.RepoRoot(), render.CatalogChart, "Chart.yaml")); err != nil {
		t.Skipf("%s has not landed", render.CatalogChart)
	}
	schematicID, version := poolDefaults(t)
	golden := support.GoldenName(schematicID, version)
	const otherVersion = "v1.13.5"
	other := support.GoldenName(schematicID, otherVersion)

	e.createNamespace(t, catalogNamespace)
	cat := e.helm(t, catalogNamespace)
	rel := cat.mustInstall(catalogRelease, render.CatalogChart, nil)
	m := manifestOf(t, rel)
	n, problems := e.dryRunApply(t, m, catalogNamespace)
	for _, p := range problems {
		t.Errorf("catalog: %s", p)
	}
	t.Logf("%d catalog objects passed strict server-side dry-run apply", n)

	goldens := m.OfKind("DataVolume")
	if len(goldens) != 1 || goldens[0].Name() != golden {
		t.Fatalf("the default catalog rendered DataVolumes %v, want only %s (the pool chart's default image)", names(goldens), golden)
	}
	dv, ok := e.get(t, dataVolumeVersion, "DataVolume", catalogNamespace, golden)
	if !ok {
		t.Fatalf("golden %s/%s was not created", catalogNamespace, golden)
	}
	rendered, _ := render.Get(goldens[0].Object, "metadata.annotations").(map[string]interface{})
	for k, v := range rendered {
		if got := dv.GetAnnotations()[k]; got != fmt.Sprint(v) {
			t.Errorf("golden %s: annotation %s is %q on the server, rendered %q", golden, k, got, v)
		}
	}
	for k, v := range map[string]string{
		"helm.sh/resource-policy":                          "keep",
		"cdi.kubevirt.io/storage.bind.immediate.requested": "true",
		"cdi.kubevirt.io/storage.deleteAfterCompletion":    "false",
	} {
		if got := dv.GetAnnotations()[k]; got != v {
			t.Errorf("golden %s: annotation %s is %q, want %q", golden, k, got, v)
		}
	}
	for _, kind := range []string{"Role", "RoleBinding"} {
		if _, ok := e.get(t, "rbac.authorization.k8s.io/v1", kind, catalogNamespace, "kubernetes-worker-image-clone"); !ok {
			t.Errorf("catalog %s kubernetes-worker-image-clone was not created", kind)
		}
	}
	e.setPhase(t, catalogNamespace, golden, "Succeeded")

	// A builtin pool clones the golden.
	const cloneNS = "tenant-clone"
	const cloneRelease = "kubernetes-nodes-acme-clone"
	e.createNamespace(t, cloneNS)
	pool := e.helm(t, cloneNS)
	builtin := func(kv ...interface{}) map[string]interface{} {
		b := map[string]interface{}{}
		for i := 0; i+1 < len(kv); i += 2 {
			b[kv[i].(string)] = kv[i+1]
		}
		return map[string]interface{}{"cluster": poolCluster, "osImage": map[string]interface{}{"builtin": b}}
	}
	prel := pool.mustInstall(cloneRelease, render.PoolChart, builtin())
	pm := manifestOf(t, prel)
	n, problems = e.dryRunApply(t, pm, cloneNS)
	for _, p := range problems {
		t.Errorf("builtin pool: %s", p)
	}
	t.Logf("%d objects of the builtin pool passed strict server-side dry-run apply", n)
	kmt := checkDisk(t, e, cloneNS, pm, golden, "replicated")

	t.Run("CLIPlanLive", func(t *testing.T) { testCLIPlanLive(t, e, cloneNS, cloneRelease, kmt) })
	t.Run("ScaledToZeroKeepsItsClass", func(t *testing.T) { testScaledToZeroKeepsItsClass(t, e, builtin) })

	// Each clone refusal, reached through the real client. None creates anything.
	refused := func(release string, vals map[string]interface{}, wants ...string) {
		t.Helper()
		_, err := pool.install(release, render.PoolChart, vals)
		if err == nil {
			t.Errorf("install %s: not refused, want %q", release, wants)
			return
		}
		for _, w := range wants {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("install %s: error %q does not contain %q", release, err, w)
			}
		}
	}
	refused("kubernetes-nodes-acme-absent", builtin("version", otherVersion),
		fmt.Sprintf("pool kubernetes-acme-absent: golden %s is absent from cozy-public", other))

	cat.mustUpgrade(catalogRelease, render.CatalogChart, map[string]interface{}{"images": []interface{}{
		map[string]interface{}{"schematicID": schematicID, "version": version},
		map[string]interface{}{"schematicID": schematicID, "version": otherVersion},
	}})
	e.setPhase(t, catalogNamespace, other, "Failed")
	refused("kubernetes-nodes-acme-failed", builtin("version", otherVersion),
		fmt.Sprintf("pool kubernetes-acme-failed: golden %s in cozy-public failed to import (status.phase Failed)", other))

	local := builtin()
	local["storageClass"] = "local"
	refused("kubernetes-nodes-acme-local", local,
		`pool kubernetes-acme-local: its disks would be on StorageClass "local"`,
		fmt.Sprintf(`but golden %s is on "replicated"`, golden))

	_, err := cat.upgrade(catalogRelease, render.CatalogChart, map[string]interface{}{"storage": "7Gi", "images": []interface{}{
		map[string]interface{}{"schematicID": schematicID, "version": version},
	}})
	if err == nil || !strings.Contains(err.Error(), "was edited after its golden was created") {
		t.Errorf("catalog upgrade with an edited entry: got %v, want the edit refusal", err)
	}
	if left := kmts(t, e, cloneNS); len(left) != 1 {
		t.Errorf("the refused installs left KubevirtMachineTemplates in %s: %v (want only the builtin pool's)", cloneNS, left)
	}

	// Removing an entry keeps its golden, cloneable: the clone Role on the
	// server still names it (a pool still on it scales up); so does
	// uninstalling the catalog.
	cat.mustUpgrade(catalogRelease, render.CatalogChart, nil)
	if _, ok := e.get(t, dataVolumeVersion, "DataVolume", catalogNamespace, other); !ok {
		t.Errorf("removing the catalog entry deleted its golden %s", other)
	}
	role, ok := e.get(t, "rbac.authorization.k8s.io/v1", "Role", catalogNamespace, "kubernetes-worker-image-clone")
	if !ok {
		t.Fatalf("the clone Role is gone after an upgrade that only drops an entry")
	}
	var granted []string
	for _, r := range render.Get(role.Object, "rules").([]interface{}) {
		for _, n := range render.Get(r, "resourceNames").([]interface{}) {
			granted = append(granted, fmt.Sprint(n))
		}
	}
	if want := []string{golden, other}; strings.Join(granted, ",") != strings.Join(want, ",") {
		t.Errorf("the clone Role names %v after dropping the entry of %s, want %v: today's entry, then the dropped golden still in cozy-public", granted, other, want)
	}
	e.uninstallCatalog(t, cat, catalogRelease)
	e.waitGone(t, []objectRef{
		{"rbac.authorization.k8s.io/v1", "Role", catalogNamespace, "kubernetes-worker-image-clone"},
		{"rbac.authorization.k8s.io/v1", "RoleBinding", catalogNamespace, "kubernetes-worker-image-clone"},
	})
	for _, g := range []string{golden, other} {
		if _, ok := e.get(t, dataVolumeVersion, "DataVolume", catalogNamespace, g); !ok {
			t.Errorf("helm uninstall of the catalog deleted golden %s (helm.sh/resource-policy: keep)", g)
		}
	}

	// Uninstalling the pool removes its objects and leaves the golden.
	pool.mustUninstall(cloneRelease)
	e.waitGone(t, e.refsOf(t, pm, cloneNS))
	dv, ok = e.get(t, dataVolumeVersion, "DataVolume", catalogNamespace, golden)
	if !ok {
		t.Fatalf("uninstalling a builtin pool deleted golden %s", golden)
	}
	if phase, _, _ := unstructured.NestedString(dv.Object, "status", "phase"); phase != "Succeeded" {
		t.Errorf("golden %s: status.phase %q after the pool's uninstall, want Succeeded", golden, phase)
	}
}

func names(docs []render.Doc) []string {
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = d.Name()
	}
	return out
}

// testDryRunRejects is the control for the dry-run check: a field the
// schemas do not declare, or a value of the wrong type, at each depth the
// charts write to, must be refused, or a passing dry-run would prove nothing.
func testDryRunRejects(t *testing.T, e *env) {
	e.createNamespace(t, poolNamespace)
	m := renderPool(t, poolRelease, poolNamespace, baselineValues(t)["pool-cozystack-01-defaults"].values)
	if chrt, err := support.LoadChart(render.CatalogChart); err == nil {
		// The golden, against the DataVolume CRD tools/crds generates with controller-gen.
		cm, err := render.Render(chrt, render.Options{Release: render.Release{Name: catalogRelease, Namespace: catalogNamespace}})
		if err != nil {
			t.Fatal(err)
		}
		e.createNamespace(t, catalogNamespace)
		m.Docs = append(m.Docs, cm.OfKind("DataVolume")...)
	}
	// Each case sets key to value in the object at path: an undeclared field,
	// or a declared one with a value of the wrong shape.
	cases := []struct {
		kind, path, key string
		value           interface{}
	}{
		{"DataVolume", "spec.storage.resources.requests", "storage", "lots"},
		{"DataVolume", "spec.source.http", "notAField", "x"},
		{"DataVolume", "spec.source.http", "checksum", 7},
		{"DataVolume", "spec.storage", "storageClassName", 7},
		{kmtKind, "spec.template.spec.virtualMachineTemplate.spec.dataVolumeTemplates.0.spec.storage", "notAField", "x"},
		{kmtKind, "spec.template.spec.virtualMachineTemplate.spec.dataVolumeTemplates.0.spec.source.http", "notAField", "x"},
		{kmtKind, "spec.template.spec.virtualMachineTemplate.spec.template.spec.domain.devices", "notAField", "x"},
		{kmtKind, "spec.template.spec.virtualMachineTemplate.spec", "notAField", "x"},
		{kmtKind, "spec.template.spec", "notAField", "x"},
		{"MachineDeployment", "spec.template.spec", "notAField", "x"},
		{"MachineHealthCheck", "spec", "maxUnhealthy", true},
		{"Job", "spec.template.spec.containers.0", "notAField", "x"},
		{"ConfigMap", "data", "notAString", 7},
	}
	for _, c := range cases {
		docs := m.OfKind(c.kind)
		if len(docs) == 0 {
			continue // the catalog chart has not landed
		}
		doc := docs[0]
		obj := runtime.DeepCopyJSON(doc.Object)
		parent, ok := render.Get(obj, c.path).(map[string]interface{})
		if !ok {
			t.Fatalf("%s has no object at %s", c.kind, c.path)
		}
		parent[c.key] = c.value
		_, problems := e.dryRunApply(t, &render.Manifest{Docs: []render.Doc{{Object: obj}}}, poolNamespace)
		if len(problems) != 1 || !strings.Contains(problems[0], c.key) {
			t.Errorf("%s with %s.%s: %v: want the dry-run to refuse that field, got %q", c.kind, c.path, c.key, c.value, problems)
		} else {
			t.Logf("refused as it should be: %s", problems[0])
		}
	}
}

// testCLIPlanLive: the operator CLI's -kubeconfig path on a real cluster.
// `workerimage plan` of the installed builtin pool renders the very
// KubevirtMachineTemplate Helm installed, and the class-mismatch example is
// refused (exit 1) with the chart's message.
func testCLIPlanLive(t *testing.T, e *env, namespace, release string, installed *unstructured.Unstructured) {
	root := support.RepoRoot()
	plan := func(values string, extra ...string) (string, int) {
		out, _, code := e.workerimage(t, append([]string{"plan", "-values", filepath.Join(root, "examples", "pools", values), "-kubeconfig", e.kubeconfig}, extra...)...)
		return out, code
	}

	out, code := plan("golden.yaml", "-release", release, "-namespace", namespace, "--manifests")
	if code != 0 {
		t.Fatalf("workerimage plan of the installed builtin pool exited %d:\n%s", code, out)
	}
	objs, err := render.ParseObjects([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	var planned *unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kmtKind {
			planned = o
		}
	}
	if planned == nil {
		t.Fatalf("workerimage plan --manifests printed no %s:\n%s", kmtKind, out)
	}
	if planned.GetName() != installed.GetName() {
		t.Errorf("workerimage plan names the template %s, Helm installed %s", planned.GetName(), installed.GetName())
	}
	// Compared as JSON: the API answers whole numbers (the disk's block size) as int64, YAML as float64.
	plannedSpec, _ := json.Marshal(planned.Object["spec"])
	installedSpec, _ := json.Marshal(installed.Object["spec"])
	if string(plannedSpec) != string(installedSpec) {
		t.Errorf("workerimage plan's %s spec differs from the one Helm installed:\n%s\n%s", kmtKind, plannedSpec, installedSpec)
	}

	// rollcheck of this chart folder against what the pool runs: the
	// MachineDeployment Helm installed names that very template, so nothing rolls.
	rollOut, _, rollCode := e.workerimage(t, "rollcheck", filepath.Join(root, "packages", "apps", "kubernetes-nodes"),
		"-f", filepath.Join(root, "examples", "pools", "golden.yaml"), "--release", release, "-n", namespace, "--kubeconfig", e.kubeconfig, "-o", "json")
	if rollCode != 0 || !strings.Contains(rollOut, `"status": "no roll"`) || !strings.Contains(rollOut, `"machineTemplate": "`+installed.GetName()+`"`) {
		t.Errorf("workerimage rollcheck against the installed pool exited %d, want no roll of %s:\n%s", rollCode, installed.GetName(), rollOut)
	}

	out, code = plan("golden-local.yaml")
	if code != 1 || !strings.Contains(out, `its disks would be on StorageClass "local"`) {
		t.Errorf("workerimage plan of golden-local.yaml: exit %d, want 1 with the class refusal:\n%s", code, out)
	}
}

// testPlatformDefaults: the create-time platform defaults (_cluster) by a real
// install/upgrade sequence. A new pool takes today's default and records it;
// changing or dropping the default later rolls nothing; a pool that existed
// with no default keeps the built-in values when one appears; a pool an
// earlier chart version created carries its ConfigMap record into its
// MachineDeployment's annotation without rolling; a pool created after the
// change takes the new default.
func testPlatformDefaults(t *testing.T, e *env) {
	const ns = "tenant-defaults"
	e.createNamespace(t, ns)
	h := e.helm(t, ns)
	withFactory := func(factory string) map[string]interface{} {
		v := map[string]interface{}{"cluster": poolCluster}
		if factory != "" {
			v["_cluster"] = map[string]interface{}{"talos": map[string]interface{}{"imageFactoryURL": factory}}
		}
		return v
	}
	imageURL := func(release string) string {
		t.Helper()
		var url string
		for name := range kmtsOfPool(t, e, ns, release) {
			kmt, _ := e.get(t, kmtAPIVersion, kmtKind, ns, name)
			url = fmt.Sprint(render.Get(kmt.Object, "spec.template.spec.virtualMachineTemplate.spec.dataVolumeTemplates.0.spec.source.http.url"))
		}
		return url
	}
	// recorded is the record on the pool's MachineDeployment ("" without one).
	recorded := func(release string) string {
		t.Helper()
		md, ok := e.get(t, capiAPIVersion, "MachineDeployment", ns, poolName(release))
		if !ok {
			t.Fatalf("pool %s has no MachineDeployment", release)
		}
		return md.GetAnnotations()["kubernetes-worker-image.cozystack.io/created-with"]
	}
	const mirror, other = "https://factory.mirror.example", "https://factory.other.example"
	mirrorRecord := `{"imageFactoryURL":"` + mirror + `"}`

	// A new pool takes today's default and keeps it.
	const fresh = "kubernetes-nodes-acme-fresh"
	rel := h.mustInstall(fresh, render.PoolChart, withFactory(mirror))
	if _, problems := e.dryRunApply(t, manifestOf(t, rel), ns); len(problems) > 0 {
		t.Errorf("pool created with a platform default: %v", problems)
	}
	if url := imageURL(fresh); !strings.HasPrefix(url, mirror+"/image/") {
		t.Errorf("a pool created under the platform default %s imports from %s", mirror, url)
	}
	if got := recorded(fresh); got != mirrorRecord {
		t.Errorf("the record of %s is %q, want %q", fresh, got, mirrorRecord)
	}
	before := kmtsOfPool(t, e, ns, fresh)
	for _, factory := range []string{other, ""} {
		h.mustUpgrade(fresh, render.PoolChart, withFactory(factory))
		if got := kmtsOfPool(t, e, ns, fresh); !equalMaps(got, before) {
			t.Errorf("platform default changed to %q: the pool's KubevirtMachineTemplates went %v -> %v", factory, before, got)
		}
		if got := recorded(fresh); got != mirrorRecord {
			t.Errorf("platform default changed to %q: the record now holds %q, want %q", factory, got, mirrorRecord)
		}
	}

	// A pool created with no default: no record; a default appearing later does not reach it.
	const old = "kubernetes-nodes-acme-old"
	h.mustInstall(old, render.PoolChart, withFactory(""))
	before = kmtsOfPool(t, e, ns, old)
	h.mustUpgrade(old, render.PoolChart, withFactory(mirror))
	if got := kmtsOfPool(t, e, ns, old); !equalMaps(got, before) {
		t.Errorf("a pool created with no default rolled when a platform default appeared: %v -> %v", before, got)
	}
	if url := imageURL(old); !strings.HasPrefix(url, "https://factory.talos.dev/image/") {
		t.Errorf("a pool created with no default imports from %s, want the built-in factory", url)
	}
	if got := recorded(old); got != "" {
		t.Errorf("a pool created with no default carries the record %q", got)
	}

	// A pool an earlier chart version created, with its record as a ConfigMap:
	// upgraded to today's chart under another default, it keeps importing from
	// the recorded default (the template is renamed once, for the layout of
	// Cozystack's chart that this chart now renders: docs/upstream.md), its
	// record moves into the MachineDeployment's annotation, Helm deletes the
	// ConfigMap, and the next upgrade rolls nothing.
	earlier, err := support.ExtractChartAt(support.RecordConfigMapCommit, t.TempDir(), render.PoolChart, "packages/library")
	if err != nil {
		t.Skipf("no earlier chart to upgrade from: %v", err)
	}
	const migrated = "kubernetes-nodes-acme-migrated"
	h.mustInstall(migrated, earlier, withFactory(mirror))
	record := objectRef{"v1", "ConfigMap", ns, poolName(migrated) + "-created-with"}
	if _, ok := e.get(t, record.apiVersion, record.kind, ns, record.name); !ok {
		t.Fatalf("the earlier chart made no record %s", record)
	}
	h.mustUpgrade(migrated, render.PoolChart, withFactory(other))
	if url := imageURL(migrated); !strings.HasPrefix(url, mirror+"/image/") {
		t.Errorf("the upgrade from the ConfigMap record imports from %s, want the recorded %s", url, mirror)
	}
	before = kmtsOfPool(t, e, ns, migrated)
	if got := recorded(migrated); got != mirrorRecord {
		t.Errorf("the record carried into the annotation is %q, want %q", got, mirrorRecord)
	}
	e.waitGone(t, []objectRef{record})
	h.mustUpgrade(migrated, render.PoolChart, withFactory(""))
	if got := kmtsOfPool(t, e, ns, migrated); !equalMaps(got, before) {
		t.Errorf("the next upgrade, from the annotation, rolled the pool: %v -> %v", before, got)
	}

	// A pool created after the change takes the new default.
	const later = "kubernetes-nodes-acme-later"
	h.mustInstall(later, render.PoolChart, withFactory(other))
	if url := imageURL(later); !strings.HasPrefix(url, other+"/image/") {
		t.Errorf("a pool created under the platform default %s imports from %s", other, url)
	}

	for _, r := range []string{fresh, old, migrated, later} {
		h.mustUninstall(r)
	}
}

// poolName is kubernetes-<cluster>-<pool> for a release kubernetes-nodes-<cluster>-<pool>.
func poolName(release string) string {
	return "kubernetes-" + strings.TrimPrefix(release, "kubernetes-nodes-")
}

// kmtsOfPool lists one pool's KubevirtMachineTemplates (name -> UID) in a
// namespace that holds several pools.
func kmtsOfPool(t *testing.T, e *env, namespace, release string) map[string]string {
	out := map[string]string{}
	for name, uid := range kmts(t, e, namespace) {
		if strings.HasPrefix(name, poolName(release)+"-") && len(name) == len(poolName(release))+7 {
			out[name] = uid
		}
	}
	return out
}

// testScaledToZeroKeepsItsClass: a builtin pool with storageClass "" binds to
// the default class of the day it is created. Its workers become ready, it is
// scaled to zero (no worker disk is left), the operator moves the cluster's
// default class, and the unchanged upgrade keeps the template's name: the class
// is read from the pool's current template, not from its disks.
func testScaledToZeroKeepsItsClass(t *testing.T, e *env, builtin func(...interface{}) map[string]interface{}) {
	const ns = "tenant-frozen"
	const release = "kubernetes-nodes-acme-frozen"
	e.createNamespace(t, ns)
	h := e.helm(t, ns)
	values := builtin()
	values["storageClass"] = ""
	first := manifestOf(t, h.mustInstall(release, render.PoolChart, values))
	kmtDoc, err := first.One(kmtKind)
	if err != nil {
		t.Fatal(err)
	}
	if class := render.Get(kmtDoc.Object, "spec.template.spec.virtualMachineTemplate.spec.dataVolumeTemplates.0.spec.storage.storageClassName"); class != "replicated" {
		t.Fatalf("the new pool resolved storageClass \"\" to %v, want the default class replicated", class)
	}
	md := "kubernetes-acme-frozen"
	for _, ready := range []int{2, 0} { // workers became ready, then the autoscaler took the pool to zero
		patch := []byte(fmt.Sprintf(`{"status":{"replicas":%d,"readyReplicas":%d}}`, ready, ready))
		if _, err := e.client(t, capiAPIVersion, "MachineDeployment", ns).Patch(context.Background(), md, types.MergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
			t.Fatalf("set status.readyReplicas %d on MachineDeployment %s/%s: %v", ready, ns, md, err)
		}
	}
	moveDefault := func(from, to string) {
		t.Helper()
		for name, value := range map[string]interface{}{from: nil, to: "true"} {
			patch, _ := json.Marshal(map[string]interface{}{"metadata": map[string]interface{}{"annotations": map[string]interface{}{"storageclass.kubernetes.io/is-default-class": value}}})
			if _, err := e.client(t, "storage.k8s.io/v1", "StorageClass", "").Patch(context.Background(), name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				t.Fatalf("move the default class to %s: %v", to, err)
			}
		}
	}
	moveDefault("replicated", "local")
	t.Cleanup(func() { moveDefault("local", "replicated") })

	before := kmts(t, e, ns)
	second := manifestOf(t, h.mustUpgrade(release, render.PoolChart, values))
	after := kmts(t, e, ns)
	name := machineTemplateOf(t, second)
	if name != kmtDoc.Name() || !equalMaps(before, after) {
		t.Errorf("after the default class moved, the unchanged upgrade of a pool at zero workers renamed its template: %s -> %s (templates before %v, after %v)", kmtDoc.Name(), name, before, after)
	}
	t.Logf("pool at zero workers, default moved replicated -> local: template %s kept, %d template(s) in %s", name, len(after), ns)
	h.mustUninstall(release)
}

func machineTemplateOf(t *testing.T, m *render.Manifest) string {
	t.Helper()
	d, err := m.One(kmtKind)
	if err != nil {
		t.Fatal(err)
	}
	return d.Name()
}
