//go:build integration

package integration

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"
)

const (
	cozySystem     = "cozy-system"
	platformPkg    = "cozystack.cozystack-platform"
	upstreamRDPkg  = "cozystack.kubernetes-nodes-application"
	appDefinition  = "kubernetes-nodes"
	rdChartDir     = "packages/system/kubernetes-nodes-rd"
	externalAPI    = "source.toolkit.fluxcd.io/v1"
	helmReleaseAPI = "helm.toolkit.fluxcd.io/v2"
)

// section is one section of a page, or the test fails naming it.
func section(t testing.TB, page, heading string) string {
	t.Helper()
	sections, err := support.PageSections(page)
	if err != nil {
		t.Fatal(err)
	}
	s, ok := sections[heading]
	if !ok {
		t.Fatalf("%s has no section %q: the tier runs its objects and commands; rename it in tests/support too if the page renamed it", page, heading)
	}
	return s
}

// pageCommands runs a page's shell commands as written, from the repository
// root, with the test's kubectl and workerimage first on PATH and KUBECONFIG
// the tier's.
type pageCommands struct{ env []string }

func newPageCommands(t *testing.T, e *env) *pageCommands {
	t.Helper()
	binDir := filepath.Join(e.dir, "page-bin")
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, path := range map[string]string{"kubectl": kubectlPath(t), "workerimage": e.cli(t)} {
		if err := os.Symlink(path, filepath.Join(binDir, name)); err != nil && !os.IsExist(err) {
			t.Fatal(err)
		}
	}
	env := []string{"KUBECONFIG=" + e.kubeconfig, "KUBECACHEDIR=" + filepath.Join(e.dir, "kube-cache")}
	for _, kv := range os.Environ() {
		name, value, _ := strings.Cut(kv, "=")
		switch name {
		case "PATH":
			env = append(env, "PATH="+binDir+string(os.PathListSeparator)+value)
		case "KUBECONFIG", "KUBECACHEDIR", "MAKELEVEL", "MAKEFLAGS", "MFLAGS":
		default:
			env = append(env, kv)
		}
	}
	return &pageCommands{env: withImageFactory(t, env)}
}

// run runs one command line; it fails the test unless the command exits 0.
func (p *pageCommands) run(t *testing.T, command string) string {
	t.Helper()
	cmd := exec.Command("bash", "-o", "pipefail", "-c", command)
	cmd.Dir = support.RepoRoot()
	cmd.Env = p.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("the page's `%s` failed: %v\nstdout: %s\nstderr: %s", command, err, stdout.String(), stderr.String())
	}
	t.Logf("$ %s (%s)\n%s", command, time.Since(start).Round(time.Millisecond), strings.TrimRight(stdout.String(), "\n"))
	return stdout.String()
}

// applyPageObjects server-side applies every object of a yaml block of the
// page for real, with fieldValidation=Strict, as the operator's kubectl
// would, and requires each to be stored as written, with no warning.
func (e *env) applyPageObjects(t *testing.T, block support.Block) []objectRef {
	t.Helper()
	objs, err := render.ParseObjects([]byte(block.Text))
	if err != nil {
		t.Fatalf("%s: a yaml block does not parse: %v", support.CozystackPage, err)
	}
	var refs []objectRef
	e.takeWarnings()
	for _, obj := range objs {
		if ns := obj.GetNamespace(); ns != "" {
			e.createNamespace(t, ns)
		}
		ref := objectRef{obj.GetAPIVersion(), obj.GetKind(), obj.GetNamespace(), obj.GetName()}
		if err := e.serverSideApply(t, obj, obj.GetNamespace(), false); err != nil {
			t.Fatalf("%s: %s refused: %v", support.CozystackPage, ref, err)
		}
		for _, w := range e.takeWarnings() {
			t.Errorf("%s: %s: warning: %s", support.CozystackPage, ref, w)
		}
		stored, _ := e.get(t, ref.apiVersion, ref.kind, ref.namespace, ref.name)
		for _, diff := range notStored("spec", obj.Object["spec"], stored.Object["spec"]) {
			t.Errorf("%s: %s: %s", support.CozystackPage, ref, diff)
		}
		refs = append(refs, ref)
	}
	return refs
}

// notStored lists each value of the page's object that the stored object
// does not hold as written (the schema's defaults may add fields; pruning
// would drop some).
func notStored(path string, want, got any) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s is stored as %v, the page writes a map", path, got)}
		}
		var out []string
		for k, v := range w {
			out = append(out, notStored(path+"."+k, v, g[k])...)
		}
		sort.Strings(out)
		return out
	default:
		wj, _ := json.Marshal(want)
		gj, _ := json.Marshal(got)
		if !bytes.Equal(wj, gj) {
			return []string{fmt.Sprintf("%s is stored as %s, the page writes %s", path, gj, wj)}
		}
		return nil
	}
}

// testCozystackInstall: a stock Cozystack set up as docs/cozystack.md says.
//
// The cluster starts as a stock Cozystack runs it: the platform's Package
// cozystack.cozystack-platform, upstream's PackageSource
// cozystack.kubernetes-nodes-application and the Package the platform renders
// for it, whose release kubernetes-nodes-rd installs upstream's
// ApplicationDefinition kubernetes-nodes. Then every object the install page
// lists (the catalog's OCIRepository, PackageSource and Package, the pool
// chart's OCIRepository and PackageSource, the rd chart's three objects) is
// server-side applied with strict field validation against the cozystack.io
// CRDs generated from Go types written from Cozystack's API, and every
// command of the takeover's runbook and of the way back runs as written, with
// kubectl. Between commands, a stand-in plays the controllers a Cozystack runs
// (cozystackStandIn). Before the takeover, a patched ApplicationDefinition
// does not survive a simulated Cozystack upgrade (the control); after it, the
// ApplicationDefinition names this pool chart's artifact and carries this
// pool chart's schema across the same simulated upgrade.
func testCozystackInstall(t *testing.T, e *env) {
	start := time.Now()
	op := newCozystackStandIn(t, e)
	t.Cleanup(func() { op.cleanup(t) })
	cmds := newPageCommands(t, e)

	// A stock Cozystack before the page: upstream's ApplicationDefinition.
	op.stockCozystack(t)
	op.reconcile(t)
	upstreamRef := cozystackArtifact
	if got := adChartRef(t, e); got != upstreamRef {
		t.Fatalf("before the page, the ApplicationDefinition names %q, want upstream's %q", got, upstreamRef)
	}

	// The control: an ApplicationDefinition patched to this pool chart does
	// not survive a Cozystack upgrade while upstream's rd package is rendered
	// (the page: "A patch of the ApplicationDefinition does not survive
	// that"), so the same upgrade after the takeover shows something.
	poolRef := rdDefaultChartRef(t)
	patch := fmt.Sprintf(`{"spec":{"release":{"chartRef":{"name":%q}}}}`, poolRef)
	cmds.run(t, "kubectl patch applicationdefinition kubernetes-nodes --type merge -p '"+patch+"'")
	if got := adChartRef(t, e); got != poolRef {
		t.Fatalf("the patched ApplicationDefinition names %q, want %q", got, poolRef)
	}
	op.cozystackUpgrade(t)
	if got := adChartRef(t, e); got != upstreamRef {
		t.Fatalf("control: after a Cozystack upgrade with upstream's rd package enabled, the patched ApplicationDefinition names %q, want upstream's %q written back: the simulated upgrade would prove nothing", got, upstreamRef)
	}
	t.Logf("control: a Cozystack upgrade wrote upstream's chartRef %s back over the patch", upstreamRef)

	// The page, in its order.
	var applied []objectRef
	for _, heading := range support.CozystackInstallSections {
		for _, b := range support.Blocks(section(t, support.CozystackPage, heading)) {
			switch b.Lang {
			case "yaml":
				refs := e.applyPageObjects(t, b)
				applied = append(applied, refs...)
				op.created = append(op.created, refs...)
			case "sh":
				for _, c := range b.Commands() {
					out := cmds.run(t, c)
					if strings.HasPrefix(c, "kubectl get applicationdefinition kubernetes-nodes") && strings.TrimSpace(out) != poolRef {
						t.Errorf("%s: `%s` printed %q, want this pool chart's artifact %q", support.CozystackPage, c, out, poolRef)
					}
					op.reconcile(t)
				}
				continue
			}
			op.reconcile(t)
		}
	}
	var kinds []string
	for _, r := range applied {
		kinds = append(kinds, r.kind+" "+r.name)
	}
	t.Logf("%d objects of %s applied with strict server-side apply: %s", len(applied), support.CozystackPage, strings.Join(kinds, ", "))
	if len(applied) != 8 {
		t.Errorf("%s lists %d objects for the install, want 8 (3 of the catalog, 2 of the pool chart, 3 of the rd chart)", support.CozystackPage, len(applied))
	}
	if _, ok := e.get(t, cozystackAPI, "Package", "", upstreamRDPkg); ok {
		t.Errorf("after the takeover, upstream's Package %s is still there", upstreamRDPkg)
	}
	checkOurApplicationDefinition(t, e, poolRef, "after the takeover")
	refuseApplicationDefinitions(t, e)
	// The catalog's Package waits for cozystack.kubevirt-cdi, which no
	// Package of the tier makes ready: the operator holds it, as it would.
	catalogPkg, _ := e.get(t, cozystackAPI, "Package", "", "cozystack.kubernetes-worker-image")
	if reason := conditionReason(catalogPkg, "Ready"); reason != "DependenciesNotReady" {
		t.Errorf("the catalog's Package: Ready reason %q, want DependenciesNotReady (it depends on cozystack.kubevirt-cdi)", reason)
	}

	// A Cozystack upgrade: the platform renders its Packages again (upstream's
	// rd package is in bundles.disabledPackages now) and every release of
	// every Package is upgraded. The ApplicationDefinition stays this pool
	// chart's, and the page's Package is the page's own.
	ours, _ := e.get(t, cozystackAPI, "Package", "", "kubernetes-nodes.golden-rd")
	op.cozystackUpgrade(t)
	if _, ok := e.get(t, cozystackAPI, "Package", "", upstreamRDPkg); ok {
		t.Errorf("the Cozystack upgrade rendered upstream's Package %s again, though bundles.disabledPackages lists it", upstreamRDPkg)
	}
	checkOurApplicationDefinition(t, e, poolRef, "after a Cozystack upgrade")
	after, _ := e.get(t, cozystackAPI, "Package", "", "kubernetes-nodes.golden-rd")
	if after.GetGeneration() != ours.GetGeneration() {
		t.Errorf("the Cozystack upgrade changed the page's Package kubernetes-nodes.golden-rd (generation %d -> %d)", ours.GetGeneration(), after.GetGeneration())
	}
	if revs := op.revisions["kubernetes-nodes-golden-rd"]; revs < 2 {
		t.Errorf("the Cozystack upgrade did not upgrade the release kubernetes-nodes-golden-rd (%d revisions): the check above saw no upgrade", revs)
	}

	// The cluster as the install page leaves it (this ApplicationDefinition in
	// place, the page's catalog objects applied, the catalog's Package held
	// for CDI): a new pool takes the platform defaults the catalog publishes
	// through Helm's real lookup, and a running pool keeps its template when
	// they change.
	t.Run("PublishedDefaults", func(t *testing.T) { testPublishedDefaults(t, e) })

	// Going back, as the page says.
	for _, b := range support.Blocks(section(t, support.CozystackPage, support.CozystackGoingBack)) {
		if b.Lang != "sh" {
			continue
		}
		for _, c := range b.Commands() {
			cmds.run(t, c)
			op.reconcile(t)
		}
	}
	if _, ok := e.get(t, cozystackAPI, "ApplicationDefinition", "", appDefinition); ok {
		t.Errorf("after going back, an ApplicationDefinition %s is left", appDefinition)
	}
	t.Logf("the install page's objects and runbook, the control and the upgrade took %s", time.Since(start).Round(time.Millisecond))
}

// stockCozystack is a stock Cozystack before this repository's pages: the
// platform's Package (nothing disabled yet), upstream's PackageSource of the
// KubernetesNodes application (so its ApplicationDefinition, once
// reconciled), and the platform's _cluster replicated into cozy-public,
// which every Package release there reads (valuesFrom).
func (s *cozystackStandIn) stockCozystack(t *testing.T) {
	t.Helper()
	s.e.createNamespace(t, catalogNamespace)
	if _, ok := s.e.get(t, "v1", "Secret", catalogNamespace, "cozystack-values"); !ok {
		s.e.createYAML(t, cozystackValues(catalogNamespace, stockClusterValues))
		t.Cleanup(func() { s.e.remove(t, objectRef{"v1", "Secret", catalogNamespace, "cozystack-values"}) })
	}
	s.applyObjects(t, "cozystack-operator", fmt.Sprintf(`
apiVersion: %[1]s
kind: Package
metadata: {name: %[2]s}
spec:
  variant: isp-full
  components:
    platform:
      values:
        bundles: {disabledPackages: []}
---
# Upstream's PackageSource (packages/core/platform/sources/kubernetes-nodes-application.yaml
# at 3c780acd4), which the platform renders whatever the bundles say. Its
# variant's dependsOn (Cozystack's networking, Cluster API and engine
# Packages, none of which runs here) is left out.
apiVersion: %[1]s
kind: PackageSource
metadata: {name: %[3]s}
spec:
  sourceRef: {kind: OCIRepository, name: cozystack-packages, namespace: cozy-system, path: /}
  variants:
    - name: kubevirt
      libraries: [{name: cozy-lib, path: library/cozy-lib}]
      components:
        - {name: kubernetes-nodes, path: apps/kubernetes-nodes, libraries: [cozy-lib]}
        - name: kubernetes-nodes-rd
          path: system/kubernetes-nodes-rd
          install: {namespace: cozy-system, releaseName: kubernetes-nodes-rd}
`, cozystackAPI, platformPkg, upstreamRDPkg))
}

// rdDefaultChartRef is the artifact the rd chart names by default: the
// ExternalArtifact the page's pool chart PackageSource makes (tests/docs
// checks the two names agree).
func rdDefaultChartRef(t *testing.T) string {
	t.Helper()
	vals, err := render.ReadValues(support.Path(rdChartDir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(render.Get(vals, "chartRef.name"))
}

func adChartRef(t *testing.T, e *env) string {
	t.Helper()
	ad, ok := e.get(t, cozystackAPI, "ApplicationDefinition", "", appDefinition)
	if !ok {
		t.Fatalf("no ApplicationDefinition %s", appDefinition)
	}
	return fmt.Sprint(render.Get(ad.Object, "spec.release.chartRef.name"))
}

// checkOurApplicationDefinition: the ApplicationDefinition names this pool
// chart's artifact, carries this pool chart's schema as make generate wrote
// it, and the release settings upstream's gives the application.
func checkOurApplicationDefinition(t *testing.T, e *env, poolRef, when string) {
	t.Helper()
	ad, ok := e.get(t, cozystackAPI, "ApplicationDefinition", "", appDefinition)
	if !ok {
		t.Errorf("%s: no ApplicationDefinition %s", when, appDefinition)
		return
	}
	ref := render.Get(ad.Object, "spec.release.chartRef").(map[string]any)
	if ref["kind"] != "ExternalArtifact" || ref["namespace"] != cozySystem || ref["name"] != poolRef {
		t.Errorf("%s: the ApplicationDefinition's chartRef is %v, want ExternalArtifact %s/%s", when, ref, cozySystem, poolRef)
	}
	schema, err := os.ReadFile(support.Path(rdChartDir, "files", "openAPISchema.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(render.Get(ad.Object, "spec.application.openAPISchema")); got != strings.TrimSpace(string(schema)) {
		t.Errorf("%s: the ApplicationDefinition's openAPISchema (%d bytes) is not this pool chart's (%s/files/openAPISchema.json, %d bytes)", when, len(got), rdChartDir, len(strings.TrimSpace(string(schema))))
	}
	for k, v := range map[string]string{"release.cozystack.io/helm-install-timeout": "15m", "release.cozystack.io/helm-install-disable-wait": "true"} {
		if got := ad.GetAnnotations()[k]; got != v {
			t.Errorf("%s: the ApplicationDefinition's annotation %s is %q, want %q", when, k, got, v)
		}
	}
}

// refuseApplicationDefinitions: the ApplicationDefinition CRD refuses, on
// a copy of the installed object (which it accepted; a new name, so a field
// left out is missing, not kept by its manager), what upstream's schema refuses.
func refuseApplicationDefinitions(t *testing.T, e *env) {
	t.Helper()
	installed, _ := e.get(t, cozystackAPI, "ApplicationDefinition", "", appDefinition)
	for _, c := range []struct {
		path, key  string
		value      any
		wantInText string
	}{
		{"spec.release", "prefix", "kubernetes.nodes-", "prefix"},
		{"spec.release", "chartRef", nil, "chartRef"},
		{"spec.release.chartRef", "kind", "GitRepository", "kind"},
		{"spec.release", "waitStrategy", "kstatus", "waitStrategy"},
		{"spec.dashboard", "tabs", []any{"logs"}, "tabs"},
		{"spec.application", "openAPISchema", nil, "openAPISchema"},
	} {
		obj := map[string]any{"apiVersion": cozystackAPI, "kind": "ApplicationDefinition", "metadata": map[string]any{"name": appDefinition + "-refused"}}
		body, _ := json.Marshal(installed.Object["spec"])
		spec := map[string]any{}
		_ = json.Unmarshal(body, &spec)
		obj["spec"] = spec
		parent, ok := render.Get(obj, c.path).(map[string]any)
		if !ok {
			t.Fatalf("the installed ApplicationDefinition has no object at %s", c.path)
		}
		if c.value == nil {
			delete(parent, c.key)
		} else {
			parent[c.key] = c.value
		}
		if _, problems := e.dryRunApply(t, &render.Manifest{Docs: []render.Doc{{Object: obj}}}, ""); len(problems) != 1 || !strings.Contains(problems[0], c.wantInText) {
			t.Errorf("the ApplicationDefinition with %s.%s = %v: want the dry-run to refuse it, got %q", c.path, c.key, c.value, problems)
		} else {
			t.Logf("refused as it should be: %s", problems[0])
		}
	}
}

func conditionReason(obj *unstructured.Unstructured, typ string) string {
	return conditionField(obj, typ, "reason")
}

// conditionStatus is the status of obj's condition of type typ.
func conditionStatus(obj *unstructured.Unstructured, typ string) string {
	return conditionField(obj, typ, "status")
}

func conditionField(obj *unstructured.Unstructured, typ, field string) string {
	if obj == nil {
		return ""
	}
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		if m, _ := c.(map[string]any); m["type"] == typ {
			return fmt.Sprint(m[field])
		}
	}
	return ""
}

// cozystackStandIn plays, called between the runbook's commands, what the
// controllers of a Cozystack do with these objects (notes from Cozystack
// main 3c780acd4, internal/operator and its platform chart):
//   - the platform: Package cozystack.cozystack-platform's values rendered
//     by this repository's platform chart, with one line standing for
//     upstream's iaas bundle (its Package cozystack.kubernetes-nodes-application,
//     variant kubevirt, through the chart's own helper, which leaves out a
//     package bundles.disabledPackages lists); the rendered Packages are
//     server-side applied, and one no longer rendered stays (upstream's
//     carry helm.sh/resource-policy: keep);
//   - source-watcher: an ExternalArtifact <packagesource>-<variant>-<component>
//     in cozy-system for every component of every PackageSource;
//   - the operator: for each Package whose PackageSource and variant exist
//     and whose variant depends on nothing (the tier runs none of the
//     Packages a variant waits for; such a Package is held, Ready False
//     DependenciesNotReady), a HelmRelease per installed component, owned by
//     the Package; a HelmRelease whose Package is gone is deleted (garbage
//     collection);
//   - helm-controller: each HelmRelease's chart installed or upgraded with
//     Helm's SDK, taking existing objects over as helm-controller v1.5 does,
//     when its chart or values changed; a deleted HelmRelease uninstalled.
//
// Which chart a component path holds in the tier: the rd chart's archive
// folder (the page's OCIRepository) is this repository's rd chart;
// cozystack-packages' system/kubernetes-nodes-rd is upstream's, its one
// object the fixture tests/render/testdata/cozystack/kubernetes-nodes-rd.yaml.
type cozystackStandIn struct {
	e         *env
	charts    map[string]*chart.Chart
	platform  *chart.Chart
	rendered  string            // the platform values last rendered
	applied   map[string]string // release -> digest of the chart and values installed
	revisions map[string]int
	created   []objectRef
}

// upstreamIaaSLine is upstream's iaas bundle's line for the package
// (packages/core/platform/templates/bundles/iaas.yaml at 3c780acd4), through
// this repository's platform chart's helper of the same rule.
const upstreamIaaSLine = `{{- include "platform.validate" . }}
{{- include "platform.package" (dict "root" . "name" "cozystack.kubernetes-nodes-application" "variant" "kubevirt") }}
`

func newCozystackStandIn(t *testing.T, e *env) *cozystackStandIn {
	t.Helper()
	ours, err := support.LoadChart(rdChartDir)
	if err != nil {
		t.Fatal(err)
	}
	upstreamAD, err := os.ReadFile(support.Fixture("cozystack/kubernetes-nodes-rd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	upstream := &chart.Chart{
		Metadata:  &chart.Metadata{APIVersion: chart.APIVersionV2, Name: "kubernetes-nodes-rd", Version: "0.0.0", Type: "application"},
		Templates: []*chart.File{{Name: "templates/cozyrd.yaml", Data: []byte(`{{ .Files.Get "cozyrds/kubernetes-nodes.yaml" }}`)}},
		Files:     []*chart.File{{Name: "cozyrds/kubernetes-nodes.yaml", Data: upstreamAD}},
	}
	platform, err := support.LoadChart(render.PlatformChart)
	if err != nil {
		t.Fatal(err)
	}
	catalog, err := support.LoadChart(render.CatalogChart)
	if err != nil {
		t.Fatal(err)
	}
	e.createNamespace(t, cozySystem)
	return &cozystackStandIn{
		e:         e,
		charts:    map[string]*chart.Chart{"kubernetes-nodes-rd": ours, "system/kubernetes-nodes-rd": upstream, "kubernetes-worker-image": catalog},
		platform:  render.WithTemplate(platform, "templates/zz-upstream-iaas.yaml", []byte(upstreamIaaSLine)),
		applied:   map[string]string{},
		revisions: map[string]int{},
	}
}

// applyObjects server-side applies objects as a field manager and records
// them for the cleanup.
func (s *cozystackStandIn) applyObjects(t *testing.T, manager, text string) {
	t.Helper()
	objs, err := render.ParseObjects([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range objs {
		if err := s.apply(t, manager, obj); err != nil {
			t.Fatalf("apply %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
	}
}

func (s *cozystackStandIn) apply(t *testing.T, manager string, obj *unstructured.Unstructured) error {
	t.Helper()
	body, err := obj.MarshalJSON()
	if err != nil {
		return err
	}
	force := true
	opts := metav1.PatchOptions{FieldManager: manager, Force: &force, FieldValidation: metav1.FieldValidationStrict}
	ref := objectRef{obj.GetAPIVersion(), obj.GetKind(), obj.GetNamespace(), obj.GetName()}
	_, err = s.e.client(t, ref.apiVersion, ref.kind, ref.namespace).Patch(context.Background(), ref.name, types.ApplyPatchType, body, opts)
	if err == nil && !containsRef(s.created, ref) {
		s.created = append(s.created, ref)
	}
	return err
}

func containsRef(refs []objectRef, r objectRef) bool {
	for _, x := range refs {
		if x == r {
			return true
		}
	}
	return false
}

// cozystackUpgrade is what a new Cozystack release does to these objects:
// the platform is rendered again and every release of every Package is
// upgraded (its artifact's revision moved).
func (s *cozystackStandIn) cozystackUpgrade(t *testing.T) {
	t.Helper()
	s.rendered = ""
	s.applied = map[string]string{}
	s.reconcile(t)
}

// reconcile runs each stand-in once, in the order the controllers settle.
func (s *cozystackStandIn) reconcile(t *testing.T) {
	t.Helper()
	s.renderPlatform(t)
	s.publishArtifacts(t)
	desired := s.reconcilePackages(t)
	s.collectReleases(t, desired)
}

func (s *cozystackStandIn) renderPlatform(t *testing.T) {
	t.Helper()
	pkg, ok := s.e.get(t, cozystackAPI, "Package", "", platformPkg)
	if !ok {
		return
	}
	values, _ := render.Get(pkg.Object, "spec.components.platform.values").(map[string]any)
	key, _ := json.Marshal(values)
	if string(key) == s.rendered {
		return
	}
	m, err := render.Render(s.platform, render.Options{Release: render.Release{Name: "cozystack-platform", Namespace: cozySystem}, Values: values})
	if err != nil {
		t.Fatalf("the platform chart with the values of Package %s (%s): %v", platformPkg, key, err)
	}
	for _, d := range m.OfKind("Package") {
		if err := s.apply(t, "helm-controller", &unstructured.Unstructured{Object: d.Object}); err != nil {
			t.Fatalf("the platform's Package %s: %v", d.Name(), err)
		}
	}
	s.rendered = string(key)
}

func (s *cozystackStandIn) publishArtifacts(t *testing.T) {
	t.Helper()
	list, err := s.e.client(t, cozystackAPI, "PackageSource", "").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ps := range list.Items {
		for _, v := range sliceOf(render.Get(ps.Object, "spec.variants")) {
			for _, c := range sliceOf(render.Get(v, "components")) {
				name := cozystackArtifactName(ps.GetName(), fmt.Sprint(render.Get(v, "name")), fmt.Sprint(render.Get(c, "name")))
				if _, ok := s.e.get(t, externalAPI, "ExternalArtifact", cozySystem, name); ok {
					continue
				}
				s.e.createYAML(t, fmt.Sprintf("apiVersion: %s\nkind: ExternalArtifact\nmetadata: {name: %s, namespace: %s}\nspec:\n  sourceRef: {apiVersion: source.extensions.fluxcd.io/v1beta1, kind: ArtifactGenerator, name: %s, namespace: %s}\n", externalAPI, name, cozySystem, ps.GetName(), cozySystem))
				s.created = append(s.created, objectRef{externalAPI, "ExternalArtifact", cozySystem, name})
			}
		}
	}
}

// cozystackArtifactName is the name Cozystack's operator gives a component's
// ExternalArtifact.
func cozystackArtifactName(source, variant, component string) string {
	dash := func(s string) string { return strings.ReplaceAll(s, ".", "-") }
	return dash(source) + "-" + dash(variant) + "-" + dash(component)
}

func sliceOf(v any) []map[string]any {
	list, _ := v.([]any)
	out := make([]map[string]any, 0, len(list))
	for _, x := range list {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// reconcilePackages makes each Package's HelmReleases and installs them; it
// returns the releases wanted, namespace/name.
func (s *cozystackStandIn) reconcilePackages(t *testing.T) map[string]bool {
	t.Helper()
	desired := map[string]bool{}
	list, err := s.e.client(t, cozystackAPI, "Package", "").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		pkg := &list.Items[i]
		ps, ok := s.e.get(t, cozystackAPI, "PackageSource", "", pkg.GetName())
		if !ok {
			continue // PackageSourceNotFound: the platform's own Package, or a model Package the tier does not install
		}
		variantName := fmt.Sprint(render.Get(pkg.Object, "spec.variant"))
		if variantName == "" || variantName == "<nil>" {
			variantName = "default"
		}
		var variant map[string]any
		for _, v := range sliceOf(render.Get(ps.Object, "spec.variants")) {
			if v["name"] == variantName {
				variant = v
			}
		}
		if variant == nil {
			s.setReady(t, pkg, "False", "VariantNotFound", "variant "+variantName+" not found")
			continue
		}
		if deps, _ := variant["dependsOn"].([]any); !s.ready(t, deps) {
			s.setReady(t, pkg, "False", "DependenciesNotReady", fmt.Sprintf("waiting for %v", deps))
			continue
		}
		n := 0
		for _, c := range sliceOf(variant["components"]) {
			install, ok := c["install"].(map[string]any)
			name := fmt.Sprint(c["name"])
			if !ok || render.Get(pkg.Object, "spec.components."+name+".enabled") == false {
				continue
			}
			release, namespace := fmt.Sprint(install["releaseName"]), fmt.Sprint(install["namespace"])
			if install["releaseName"] == nil {
				release = name
			}
			desired[namespace+"/"+release] = true
			values, _ := render.Get(pkg.Object, "spec.components."+name+".values").(map[string]any)
			s.helmRelease(t, pkg, release, namespace, cozystackArtifactName(ps.GetName(), variantName, name), values)
			s.install(t, release, namespace, fmt.Sprint(c["path"]), s.e.valuesFrom(t, namespace, values))
			n++
		}
		s.setReady(t, pkg, "True", "ReconciliationSucceeded", fmt.Sprintf("generated %d helmrelease(s)", n))
	}
	return desired
}

// ready: every Package of deps exists and is Ready, as the operator waits
// for a variant's dependencies (the tier runs none of Cozystack's own
// Packages, so a test that needs one marks a model of it Ready).
func (s *cozystackStandIn) ready(t *testing.T, deps []any) bool {
	t.Helper()
	for _, d := range deps {
		pkg, ok := s.e.get(t, cozystackAPI, "Package", "", fmt.Sprint(d))
		if !ok || conditionStatus(pkg, "Ready") != "True" {
			return false
		}
	}
	return true
}

// helmRelease writes the HelmRelease the operator makes for a component.
func (s *cozystackStandIn) helmRelease(t *testing.T, pkg *unstructured.Unstructured, name, namespace, artifact string, values map[string]any) {
	t.Helper()
	spec := map[string]any{
		"interval":   "5m",
		"chartRef":   map[string]any{"kind": "ExternalArtifact", "name": artifact, "namespace": cozySystem},
		"valuesFrom": []any{map[string]any{"kind": "Secret", "name": "cozystack-values"}},
	}
	if values != nil {
		spec["values"] = values
	}
	hr := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": helmReleaseAPI, "kind": "HelmRelease",
		"metadata": map[string]any{
			"name": name, "namespace": namespace,
			"labels": map[string]any{"cozystack.io/package": pkg.GetName()},
			"ownerReferences": []any{map[string]any{
				"apiVersion": cozystackAPI, "kind": "Package", "name": pkg.GetName(), "uid": string(pkg.GetUID()), "controller": true,
			}},
		},
		"spec": spec,
	}}
	if err := s.apply(t, "cozystack-package-controller", hr); err != nil {
		t.Fatalf("the operator's HelmRelease %s/%s: %v", namespace, name, err)
	}
}

// valuesFrom is what helm-controller renders the operator's HelmRelease
// with: the cozystack-values Secret of its namespace (valuesFrom; Cozystack
// replicates the platform's into the namespaces it labels system ones,
// cozy-public among them), the Package's values over it.
func (e *env) valuesFrom(t *testing.T, namespace string, values map[string]any) map[string]any {
	t.Helper()
	secret, ok := e.get(t, "v1", "Secret", namespace, "cozystack-values")
	if !ok {
		return values
	}
	raw, _, _ := unstructured.NestedString(secret.Object, "data", "values.yaml")
	text, err := base64.StdEncoding.DecodeString(raw)
	if err != nil {
		t.Fatalf("Secret %s/cozystack-values: values.yaml is not base64: %v", namespace, err)
	}
	var base map[string]any
	if err := yaml.Unmarshal(text, &base); err != nil {
		t.Fatalf("Secret %s/cozystack-values: values.yaml: %v", namespace, err)
	}
	return render.MergeValues(base, values)
}

// install is helm-controller: the release installed, or upgraded when its
// chart or values changed since.
func (s *cozystackStandIn) install(t *testing.T, name, namespace, path string, values map[string]any) {
	t.Helper()
	chrt, ok := s.charts[path]
	if !ok {
		t.Fatalf("the stand-in has no chart for component path %q (release %s/%s)", path, namespace, name)
	}
	body, _ := json.Marshal(values)
	sum := sha256.Sum256(append([]byte(chrt.Metadata.Name+"@"+chrt.Metadata.Version+"\n"), body...))
	digest := hex.EncodeToString(sum[:])
	if s.applied[namespace+"/"+name] == digest {
		return
	}
	h := s.e.helm(t, namespace)
	var rel *release.Release
	var err error
	if _, err = action.NewGet(h.cfg).Run(name); errors.Is(err, driver.ErrReleaseNotFound) {
		inst := action.NewInstall(h.cfg)
		inst.ReleaseName, inst.Namespace, inst.Timeout, inst.TakeOwnership = name, namespace, time.Minute, true
		rel, err = inst.Run(chrt, values)
	} else {
		up := action.NewUpgrade(h.cfg)
		up.Namespace, up.Timeout, up.TakeOwnership = namespace, time.Minute, true
		rel, err = up.Run(name, chrt, values)
	}
	if err != nil {
		t.Fatalf("helm-controller's install or upgrade of %s/%s: %v", namespace, name, err)
	}
	// helm-controller v1.5 applies a release's objects with server-side
	// apply and forced conflicts, so every field the chart renders is the
	// chart's again, whoever changed it; Helm 3's SDK patches only what
	// changed between the two manifests, so the objects are applied so after.
	for _, d := range manifestOf(t, rel).Docs {
		obj := &unstructured.Unstructured{Object: d.Object}
		if obj.GetNamespace() == "" && obj.GetKind() != "ApplicationDefinition" {
			obj.SetNamespace(namespace)
		}
		if err := s.apply(t, "helm-controller", obj); err != nil {
			t.Fatalf("helm-controller's apply of %s %s of %s/%s: %v", obj.GetKind(), obj.GetName(), namespace, name, err)
		}
	}
	s.applied[namespace+"/"+name] = digest
	s.revisions[name]++
}

// collectReleases deletes the HelmReleases of Packages gone (garbage
// collection) or of components no longer installed, and uninstalls them.
func (s *cozystackStandIn) collectReleases(t *testing.T, desired map[string]bool) {
	t.Helper()
	list, err := s.e.client(t, helmReleaseAPI, "HelmRelease", "").List(context.Background(), metav1.ListOptions{LabelSelector: "cozystack.io/package"})
	if err != nil {
		t.Fatal(err)
	}
	for _, hr := range list.Items {
		key := hr.GetNamespace() + "/" + hr.GetName()
		if desired[key] {
			continue
		}
		s.e.remove(t, objectRef{helmReleaseAPI, "HelmRelease", hr.GetNamespace(), hr.GetName()})
		if err := s.e.helm(t, hr.GetNamespace()).uninstall(hr.GetName()); err != nil && !errors.Is(err, driver.ErrReleaseNotFound) {
			t.Fatalf("helm-controller's uninstall of %s: %v", key, err)
		}
		delete(s.applied, key)
	}
}

// setReady writes a Package's Ready condition through its status subresource.
func (s *cozystackStandIn) setReady(t *testing.T, pkg *unstructured.Unstructured, status, reason, message string) {
	t.Helper()
	if conditionReason(pkg, "Ready") == reason {
		return
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": cozystackAPI, "kind": "Package", "metadata": map[string]any{"name": pkg.GetName()},
		"status": map[string]any{"conditions": []any{map[string]any{
			"type": "Ready", "status": status, "reason": reason, "message": message,
			"lastTransitionTime": time.Now().UTC().Format(time.RFC3339), "observedGeneration": pkg.GetGeneration(),
		}}},
	}}
	if err := s.e.applyStatus(t, obj); err != nil {
		t.Fatalf("the status of Package %s: %v", pkg.GetName(), err)
	}
}

// cleanup removes what the stand-ins and the page made, also when the test
// stopped half way: Packages first, so their releases are uninstalled as
// Cozystack's would be, then every object applied (an ApplicationDefinition
// among them: the CLI subtests after this one read it).
func (s *cozystackStandIn) cleanup(t *testing.T) {
	for _, r := range s.created {
		if r.kind == "Package" {
			s.e.remove(t, r)
		}
	}
	s.collectReleases(t, map[string]bool{})
	s.e.remove(t, s.created...)
}

// testMonitoringAgentsPackage: the Package docs/monitoring.md has an operator
// apply on a stock Cozystack. `make monitoring-agents` prints it; it passes
// strict server-side dry-run against the Package CRD; then the page's command
// runs as written, next to the Package Cozystack's platform wrote (its
// global.target, applied by helm-controller's field manager), and the two
// field managers do not conflict: the stored Package carries both.
func testMonitoringAgentsPackage(t *testing.T, e *env) {
	const page, heading, name = "docs/monitoring.md", "On a stock Cozystack", "cozystack.monitoring-agents"
	var command string
	for _, b := range support.Blocks(section(t, page, heading)) {
		if b.Lang == "sh" {
			for _, c := range b.Commands() {
				if strings.Contains(c, "monitoring-agents") {
					command = c
				}
			}
		}
	}
	if command == "" {
		t.Fatalf("%s, %q: no command applies the monitoring-agents Package", page, heading)
	}
	out, err := support.MakePrints("monitoring-agents")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := render.ParseObjects(out)
	if err != nil || len(objs) != 1 || objs[0].GetKind() != "Package" || objs[0].GetName() != name {
		t.Fatalf("make -s monitoring-agents printed %d objects (%v), want the Package %s", len(objs), err, name)
	}
	n, problems := e.dryRunApply(t, &render.Manifest{Docs: []render.Doc{{Object: objs[0].Object}}}, "")
	for _, p := range problems {
		t.Errorf("make monitoring-agents: %s", p)
	}

	op := &cozystackStandIn{e: e}
	t.Cleanup(func() { e.remove(t, op.created...) })
	op.applyObjects(t, "helm-controller", fmt.Sprintf(`
apiVersion: %s
kind: Package
metadata: {name: %s}
spec:
  variant: default
  components:
    monitoring-agents:
      values:
        global: {target: tenant-root}
`, cozystackAPI, name))
	newPageCommands(t, e).run(t, command)
	pkg, _ := e.get(t, cozystackAPI, "Package", "", name)
	values := render.Get(pkg.Object, "spec.components.monitoring-agents.values").(map[string]any)
	if render.Get(values, "global.target") != "tenant-root" || render.Get(values, "kube-state-metrics.customResourceState.enabled") != true {
		t.Errorf("after the page's command, Package %s holds values %v, want the platform's global.target and the goldens' customResourceState", name, values)
	}
	managers := map[string]bool{}
	for _, f := range pkg.GetManagedFields() {
		managers[f.Manager] = true
	}
	if !managers["helm-controller"] || !managers["kubernetes-worker-image"] {
		t.Errorf("Package %s is managed by %v, want helm-controller (the platform) and kubernetes-worker-image (the page) side by side", name, managers)
	}
	t.Logf("the monitoring-agents Package passed strict dry-run (%d object) and the page's command applied it beside the platform's", n)
}
