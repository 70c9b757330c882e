package render

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	fleetread "github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// stockExample is the main example cluster: a stock Cozystack (main
// 3c780acd4) after the install page's takeover. The tests below hold every
// object in it that someone else derives (Cozystack's platform, its
// operator, cozystack-api, the catalog chart, the rd chart, the pool chart)
// to what that writer writes from the objects it reads there; `make golden`
// (-update) rewrites the rendered ones in place, comments kept.
const stockExample = "examples/cluster-state.yaml"

// upstreamClusterKeys are the _cluster keys Cozystack's platform chart
// writes into cozy-system/cozystack-values (packages/core/platform,
// templates/apps.yaml, main 3c780acd4) with its default values, which the
// tenant chart and cozystack-basics copy into every tenant's Secret:
// branding only when set (unset here), kube-root-ca from the cluster's
// kube-root-ca.crt. Nothing of this repository (talos, osImage,
// kubernetesWorkerImage) is among them.
var upstreamClusterKeys = []string{
	"root-host", "bundle-name", "solver", "issuer-name", "wildcard-secret-name", "wildcard-issue",
	"dns01-provider", "dns01-cloudflare-secret-name", "dns01-cloudflare-secret-key",
	"dns01-route53-region", "dns01-route53-access-key-id", "dns01-route53-secret-name", "dns01-route53-secret-key",
	"dns01-digitalocean-secret-name", "dns01-digitalocean-secret-key",
	"dns01-rfc2136-nameserver", "dns01-rfc2136-tsig-key-name", "dns01-rfc2136-tsig-algorithm", "dns01-rfc2136-secret-name", "dns01-rfc2136-secret-key",
	"oidc-enabled", "oidc-insecure-skip-verify", "extra-keycloak-redirect-uri-for-dashboard", "keycloak-internal-url",
	"expose-services", "expose-ingress", "expose-ingress-admin", "expose-external-ips", "load-balancer-class", "proxy-protocol",
	"gateway-enabled", "gateway-attached-namespaces", "monitoring-enabled", "cluster-domain", "api-server-endpoint",
	"cpu-allocation-ratio", "memory-allocation-ratio", "ephemeral-storage-allocation-ratio", "scheduling", "kube-root-ca",
}

// upstreamNamespaceKeys are the _namespace keys upstream's tenant chart
// (packages/apps/tenant, templates/namespace.yaml) writes for a tenant with
// no scheduling class: each names the nearest ancestor namespace that runs
// the service, host is the tenant's own name under its parent's host.
var upstreamNamespaceKeys = []string{"etcd", "ingress", "gateway", "monitoring", "seaweedfs", "host"}

// upstreamPackageReleases are the releases of upstream's Packages that a
// PackageSource of the example depends on (packages/core/platform/sources):
// the operator turns a variant's dependsOn into its HelmReleases' dependsOn,
// one per installed component of the Package it names.
var upstreamPackageReleases = map[string][]map[string]any{
	"cozystack.kubevirt-cdi": {
		{"name": "kubevirt-cdi-operator", "namespace": "cozy-kubevirt-cdi"},
		{"name": "kubevirt-cdi", "namespace": "cozy-kubevirt-cdi"},
	},
}

// The Cozystack operator's defaults for the HelmReleases it makes
// (cmd/cozystack-operator flags --helmrelease-*, which the installer does
// not set).
const (
	operatorInterval = "5m"
	operatorRetry    = "30s"
	operatorTimeout  = "10m"
	operatorHistory  = 5
)

// Pools of the example created before the takeover: through upstream's
// dashboard form (every key it pre-fills from upstream's schema defaults),
// or, older still, a release naming its chart in spec.chart. Their running
// objects were rendered by upstream's chart, which writes no creation
// record: the byte-identity promise makes them this chart's render too.
var preTakeoverPools = map[string]string{
	"tenant-acme/kubernetes-nodes-acme-golden":  "dashboard",
	"tenant-beta/kubernetes-nodes-beta-web":     "dashboard",
	"tenant-acme/kubernetes-nodes-acme-workers": "spec.chart",
}

// exampleDoc is one document of an example file: the comment lines before
// its object, and the object's text.
type exampleDoc struct {
	comment, body string
	obj           *unstructured.Unstructured
}

func (d exampleDoc) key() string {
	return docKey(d.obj.GetKind(), d.obj.GetNamespace(), d.obj.GetName())
}

func docKey(kind, namespace, name string) string { return kind + " " + namespace + "/" + name }

// readExampleDocs splits an example file at its "---" lines.
func readExampleDocs(t testing.TB, path string) (header string, docs []exampleDoc) {
	t.Helper()
	raw, err := os.ReadFile(support.Path(path))
	require.NoError(t, err)
	parts := strings.Split("\n"+string(raw), "\n---\n")
	for i, part := range parts {
		part = strings.TrimPrefix(part, "\n")
		if !strings.HasSuffix(part, "\n") {
			part += "\n"
		}
		lines := strings.SplitAfter(part, "\n")
		n := 0
		for n < len(lines) && strings.HasPrefix(lines[n], "#") {
			n++
		}
		comment, body := strings.Join(lines[:n], ""), strings.Join(lines[n:], "")
		if strings.TrimSpace(body) == "" {
			require.Zero(t, i, "%s: a document holds no object", path)
			header = comment
			continue
		}
		objs, err := render.ParseObjects([]byte(body))
		require.NoError(t, err, "%s: %s", path, body)
		require.Len(t, objs, 1, "%s: one object per document", path)
		if i == 0 && header == "" {
			// The file's header is the first document's leading comment.
			header, comment = comment, ""
		}
		docs = append(docs, exampleDoc{comment: comment, body: body, obj: objs[0]})
	}
	return header, docs
}

func writeExampleDocs(t testing.TB, path, header string, docs []exampleDoc) {
	t.Helper()
	var b strings.Builder
	b.WriteString(header)
	for i, d := range docs {
		if i > 0 {
			b.WriteString("---\n")
		}
		b.WriteString(d.comment + d.body)
	}
	require.NoError(t, os.WriteFile(support.Path(path), []byte(b.String()), 0o644))
}

// rewriteExampleDocs writes the example with each document of want (as
// YAML) and of replaceText (as the text given) in place, comments kept, a
// document of insertAfter's text after the one its key names, and reads it
// back.
func rewriteExampleDocs(t testing.TB, header string, docs []exampleDoc, want map[string]map[string]any, replaceText, insertAfter map[string]string) (string, []exampleDoc) {
	t.Helper()
	var out []exampleDoc
	for _, d := range docs {
		if w, ok := want[d.key()]; ok {
			raw, err := yaml.Marshal(w)
			require.NoError(t, err)
			d.body = string(raw)
		}
		if text, ok := replaceText[d.key()]; ok {
			d.body = text
		}
		if !strings.HasSuffix(d.body, "\n") {
			d.body += "\n"
		}
		out = append(out, d)
		if text, ok := insertAfter[d.key()]; ok {
			out = append(out, exampleDoc{body: text})
		}
	}
	writeExampleDocs(t, stockExample, header, out)
	return readExampleDocs(t, stockExample)
}

type exampleIndex map[string]*unstructured.Unstructured

func indexDocs(docs []exampleDoc) exampleIndex {
	out := exampleIndex{}
	for _, d := range docs {
		out[d.key()] = d.obj
	}
	return out
}

func (x exampleIndex) must(t testing.TB, kind, namespace, name string) *unstructured.Unstructured {
	t.Helper()
	o, ok := x[docKey(kind, namespace, name)]
	require.True(t, ok, "the example holds %s %s/%s", kind, namespace, name)
	return o
}

func (x exampleIndex) ofKind(kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range x {
		if o.GetKind() == kind {
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].GetNamespace()+"/"+out[i].GetName() < out[j].GetNamespace()+"/"+out[j].GetName()
	})
	return out
}

// componentValues is a Package's values for one component.
func componentValues(pkg *unstructured.Unstructured, component string) map[string]any {
	v, _, _ := unstructured.NestedMap(pkg.Object, "spec", "components", component, "values")
	if v == nil {
		v = map[string]any{}
	}
	return v
}

// operatorReleaseValues are the values helm-controller renders a Package
// component's HelmRelease with (the operator writes it with valuesFrom the
// cozystack-values Secret of its namespace): that Secret's values.yaml, the
// Package's values over it.
func operatorReleaseValues(t testing.TB, x exampleIndex, namespace string, values map[string]any) map[string]any {
	t.Helper()
	secret := x.must(t, "Secret", namespace, "cozystack-values")
	text, _, _ := unstructured.NestedString(secret.Object, "stringData", "values.yaml")
	require.NotEmpty(t, text, "Secret %s/cozystack-values holds values.yaml in stringData", namespace)
	var base map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(text), &base))
	return render.MergeValues(base, values)
}

// helmOwned is obj as Helm leaves an object it installed for release in
// namespace: its managed-by label and release annotations added.
func helmOwned(obj map[string]any, release, namespace string) map[string]any {
	out := deepCopy(obj)
	meta := out["metadata"].(map[string]any)
	labels, _ := meta["labels"].(map[string]any)
	if labels == nil {
		labels = map[string]any{}
	}
	labels["app.kubernetes.io/managed-by"] = "Helm"
	meta["labels"] = labels
	ann, _ := meta["annotations"].(map[string]any)
	if ann == nil {
		ann = map[string]any{}
	}
	ann["meta.helm.sh/release-name"] = release
	ann["meta.helm.sh/release-namespace"] = namespace
	meta["annotations"] = ann
	return out
}

// helmOwnedText is a rendered document's text as Helm leaves the object it
// installed: helmOwned's label and annotations written into the chart's
// own text, so the example reads as the chart renders it.
func helmOwnedText(t testing.TB, text, release, namespace string) string {
	t.Helper()
	lines := strings.SplitAfter(text, "\n")
	var out []string
	inMeta, labels, annotations := false, false, false
	add := func(l ...string) { out = append(out, l...) }
	for _, l := range lines {
		switch {
		case l == "metadata:\n":
			inMeta = true
			add(l)
			continue
		case inMeta && !strings.HasPrefix(l, " ") && !strings.HasPrefix(l, "#"):
			if !labels {
				add("  labels:\n", "    app.kubernetes.io/managed-by: Helm\n")
			}
			if !annotations {
				add("  annotations:\n", "    meta.helm.sh/release-name: "+release+"\n", "    meta.helm.sh/release-namespace: "+namespace+"\n")
			}
			inMeta = false
		case inMeta && l == "  labels:\n":
			labels = true
			add(l, "    app.kubernetes.io/managed-by: Helm\n")
			continue
		case inMeta && l == "  annotations:\n":
			annotations = true
			add(l, "    meta.helm.sh/release-name: "+release+"\n", "    meta.helm.sh/release-namespace: "+namespace+"\n")
			continue
		}
		add(l)
	}
	return strings.Join(out, "")
}

// operatorObjects are the ArtifactGenerator of each PackageSource and the
// HelmRelease of each installed component of each Package, as Cozystack's
// operator writes them (internal/operator, packagesource_reconciler.go and
// package_reconciler.go at main 3c780acd4).
func operatorObjects(t testing.TB, x exampleIndex) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	dash := func(s string) string { return strings.ReplaceAll(s, ".", "-") }
	for _, ps := range x.ofKind("PackageSource") {
		src, _, _ := unstructured.NestedMap(ps.Object, "spec", "sourceRef")
		base := strings.Trim(fmt.Sprint(src["path"]), "/")
		var outputs []any
		variants, _, _ := unstructured.NestedSlice(ps.Object, "spec", "variants")
		for _, v := range variants {
			variant := v.(map[string]any)
			components, _ := variant["components"].([]any)
			for _, c := range components {
				comp := c.(map[string]any)
				path := strings.Trim(fmt.Sprint(comp["path"]), "/")
				from := strings.Trim(base+"/"+path, "/")
				last := path[strings.LastIndex(path, "/")+1:]
				artifact := dash(ps.GetName()) + "-" + dash(fmt.Sprint(variant["name"])) + "-" + dash(fmt.Sprint(comp["name"]))
				outputs = append(outputs, map[string]any{"name": artifact, "copy": []any{map[string]any{
					"from": fmt.Sprintf("@%s/%s/**", src["name"], from), "to": fmt.Sprintf("@artifact/%s/", last)}}})
			}
		}
		out[docKey("ArtifactGenerator", "cozy-system", ps.GetName())] = map[string]any{
			"apiVersion": "source.extensions.fluxcd.io/v1beta1", "kind": "ArtifactGenerator",
			"metadata": map[string]any{
				"name": ps.GetName(), "namespace": "cozy-system",
				"labels":          map[string]any{"cozystack.io/packagesource": ps.GetName()},
				"ownerReferences": []any{map[string]any{"apiVersion": "cozystack.io/v1alpha1", "kind": "PackageSource", "name": ps.GetName(), "uid": string(ps.GetUID()), "controller": true}},
			},
			"spec": map[string]any{
				"sources":         []any{map[string]any{"alias": src["name"], "kind": src["kind"], "name": src["name"], "namespace": src["namespace"]}},
				"outputArtifacts": outputs,
			},
		}
	}
	for _, pkg := range x.ofKind("Package") {
		ps, ok := x[docKey("PackageSource", "", pkg.GetName())]
		if !ok {
			continue // the platform's own Package: its PackageSource is the installer's, not in the example
		}
		variantName, _, _ := unstructured.NestedString(pkg.Object, "spec", "variant")
		if variantName == "" {
			variantName = "default"
		}
		variants, _, _ := unstructured.NestedSlice(ps.Object, "spec", "variants")
		for _, v := range variants {
			variant := v.(map[string]any)
			if variant["name"] != variantName {
				continue
			}
			var dependsOn []any
			deps, _ := variant["dependsOn"].([]any)
			for _, d := range deps {
				releases, ok := upstreamPackageReleases[fmt.Sprint(d)]
				require.True(t, ok, "the releases of upstream's Package %s", d)
				for _, r := range releases {
					dependsOn = append(dependsOn, r)
				}
			}
			components, _ := variant["components"].([]any)
			for _, c := range components {
				comp := c.(map[string]any)
				install, ok := comp["install"].(map[string]any)
				if !ok {
					continue
				}
				release := fmt.Sprint(install["releaseName"])
				strategy := map[string]any{"name": "RetryOnFailure", "retryInterval": operatorRetry}
				spec := map[string]any{
					"interval":   operatorInterval,
					"maxHistory": operatorHistory,
					"chartRef":   map[string]any{"kind": "ExternalArtifact", "name": dash(ps.GetName()) + "-" + dash(variantName) + "-" + dash(fmt.Sprint(comp["name"])), "namespace": "cozy-system"},
					"install":    map[string]any{"timeout": operatorTimeout, "strategy": strategy},
					"upgrade":    map[string]any{"timeout": operatorTimeout, "strategy": strategy},
					"valuesFrom": []any{map[string]any{"kind": "Secret", "name": "cozystack-values"}},
				}
				if vals := componentValues(pkg, fmt.Sprint(comp["name"])); len(vals) > 0 {
					spec["values"] = vals
				}
				if len(dependsOn) > 0 {
					spec["dependsOn"] = dependsOn
				}
				out[docKey("HelmRelease", fmt.Sprint(install["namespace"]), release)] = map[string]any{
					"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
					"metadata": map[string]any{
						"name": release, "namespace": install["namespace"],
						"labels":          map[string]any{"cozystack.io/package": pkg.GetName()},
						"ownerReferences": []any{map[string]any{"apiVersion": "cozystack.io/v1alpha1", "kind": "Package", "name": pkg.GetName(), "uid": string(pkg.GetUID()), "controller": true}},
					},
					"spec": spec,
				}
			}
		}
	}
	return out
}

// stockPool is one pool of the example and what the pool chart renders for it.
type stockPool struct {
	id      string
	md, kmt *render.Doc // rendered; nil when the chart refuses the pool
	refusal error
}

// renderStockPools renders every pool of the example with its values as Flux
// computes them. asCreated: a pool created before the takeover against the
// example as it is (its upgrade), one created since as at its creation (the
// example without its own MachineDeployment and template, so the chart
// writes the creation record it keeps). Otherwise every pool as an upgrade
// against the example as it is.
func renderStockPools(t testing.TB, x exampleIndex, asCreated bool) []stockPool {
	t.Helper()
	all := make([]*unstructured.Unstructured, 0, len(x))
	for _, o := range x {
		all = append(all, o)
	}
	state := render.NewState(all...)
	served, err := state.APIVersions()
	require.NoError(t, err)
	chrt := poolChart(t)
	fl, err := fleetread.Read(context.Background(), state, fleetread.Options{Chart: chrt.Metadata.Name})
	require.NoError(t, err)
	require.Len(t, fl.Pools, 7, "the example's pools")

	var out []stockPool
	for _, p := range fl.Pools {
		require.Empty(t, p.Unresolved, p.ID())
		sp := stockPool{id: p.ID()}
		mdName := "kubernetes-" + strings.TrimPrefix(p.Release, "kubernetes-nodes-")
		rel := render.Release{Name: p.Release, Namespace: p.Namespace, Upgrade: true}
		at := state
		if _, before := preTakeoverPools[p.ID()]; asCreated && !before {
			// At creation: nothing of the pool's own in the cluster.
			var without []*unstructured.Unstructured
			running := x[docKey("MachineDeployment", p.Namespace, mdName)]
			for _, o := range all {
				if o.GetNamespace() == p.Namespace && (o.GetKind() == "MachineDeployment" && o.GetName() == mdName ||
					o.GetKind() == "KubevirtMachineTemplate" && running != nil && o.GetName() == fmt.Sprint(render.Get(running.Object, "spec.template.spec.infrastructureRef.name"))) {
					continue
				}
				without = append(without, o)
			}
			at = render.NewState(without...)
			rel.Upgrade = false
		}
		m, err := render.Render(chrt, render.Options{Release: rel, Values: p.Values, Cluster: at, APIVersions: served})
		if err != nil {
			sp.refusal = err
			out = append(out, sp)
			continue
		}
		md, err := m.One("MachineDeployment")
		require.NoError(t, err)
		kmt, err := m.One("KubevirtMachineTemplate")
		require.NoError(t, err)
		sp.md, sp.kmt = &md, &kmt
		out = append(out, sp)
	}
	return out
}

// The example is a stock Cozystack after the takeover, every derived object
// as its writer writes it:
//   - each cozystack-values holds only the keys Cozystack's platform writes;
//   - the catalog's published defaults are what the catalog renders from its
//     Package's values, the ApplicationDefinition what the rd chart renders
//     from the takeover Package's, each with Helm's ownership;
//   - the operator's ArtifactGenerators and HelmReleases are what it makes
//     of the PackageSources and Packages, and each ExternalArtifact a pool or
//     Package names is there;
//   - upstream's KubernetesNodes Package is disabled and absent;
//   - every Cozystack pool's values are what the form of its time wrote
//     (upstream's schema defaults before the takeover, this chart's after),
//     and its MachineDeployment and template are what the pool chart renders.
func TestStockExampleIsWhatCozystackAndTheChartsWrite(t *testing.T) {
	header, docs := readExampleDocs(t, stockExample)
	x := indexDocs(docs)

	// What the writers write, by document.
	want := map[string]map[string]any{}
	wantText := map[string]string{}

	catalogPkg := x.must(t, "Package", "", "cozystack.kubernetes-worker-image")
	// Rendered as helm-controller renders the operator's HelmRelease: the
	// cozystack-values Secret of cozy-public (its replica of the platform's
	// _cluster) under the Package's values.
	published := catalogTenantDefaults(t, operatorReleaseValues(t, x, catalogNamespace, componentValues(catalogPkg, "kubernetes-worker-image")))[0]
	wantBody := map[string]string{} // the text -update writes, where not YAML of want
	owned := func(d render.Doc, release, namespace string) {
		key := docKey(d.Kind(), d.Namespace(), d.Name())
		want[key] = helmOwned(d.Object, release, namespace)
		wantBody[key] = helmOwnedText(t, d.Text, release, namespace)
		objs, err := render.ParseObjects([]byte(wantBody[key]))
		require.NoError(t, err)
		require.Equal(t, normalized(t, want[key]), normalized(t, objs[0].Object), "helmOwnedText writes what helmOwned does")
	}
	owned(published, catalogRelease, catalogNamespace)

	rdPkg := x.must(t, "Package", "", "kubernetes-nodes.golden-rd")
	rd, err := renderRD(t, componentValues(rdPkg, "kubernetes-nodes-rd"))
	require.NoError(t, err)
	ad := doc(t, rd, "ApplicationDefinition")
	owned(ad, "kubernetes-nodes-golden-rd", "cozy-system")

	for k, v := range operatorObjects(t, x) {
		want[k] = v
	}
	if *support.Update {
		// The pools are read through the ApplicationDefinition: write it first.
		header, docs = rewriteExampleDocs(t, header, docs, want, wantBody, nil)
		x = indexDocs(docs)
	}

	// The pools: MachineDeployment (status as the example has it) and
	// template, the template compared as bytes. The template the example's
	// MachineDeployment names is the one rewritten: a render that changes
	// the body renames it.
	replaceText, insertAfter := map[string]string{}, map[string]string{}
	for _, p := range renderStockPools(t, x, true) {
		if p.md == nil {
			require.Equal(t, "tenant-gamma/kubernetes-nodes-gamma-big", p.id, "refused: %v", p.refusal)
			assert.NotContains(t, x, docKey("MachineDeployment", "tenant-gamma", "kubernetes-gamma-big"), "never rendered, never deployed")
			continue
		}
		key := docKey("MachineDeployment", p.md.Namespace(), p.md.Name())
		md := deepCopy(p.md.Object)
		if running, ok := x[key]; ok {
			if st, ok := running.Object["status"]; ok {
				md["status"] = st
			}
			ref := docKey("KubevirtMachineTemplate", running.GetNamespace(), fmt.Sprint(render.Get(running.Object, "spec.template.spec.infrastructureRef.name")))
			if _, ok := x[ref]; ok {
				replaceText[ref] = p.kmt.Text
			} else {
				insertAfter[key] = p.kmt.Text // a new pool's template goes after its MachineDeployment
			}
		}
		want[key] = md
		wantText[docKey("KubevirtMachineTemplate", p.kmt.Namespace(), p.kmt.Name())] = p.kmt.Text
	}

	if *support.Update {
		for k, v := range wantBody {
			replaceText[k] = v
		}
		_, docs = rewriteExampleDocs(t, header, docs, want, replaceText, insertAfter)
		x = indexDocs(docs)
	}

	texts := map[string]string{}
	for _, d := range docs {
		texts[d.key()] = d.body
	}
	for k, w := range want {
		got, ok := x[k]
		if !assert.True(t, ok, "the example holds %s", k) {
			continue
		}
		assert.Equal(t, normalized(t, w), normalized(t, got.Object), "%s is not what its writer writes: run go test ./tests/render -run TestStockExample -update deliberately", k)
	}
	for k, w := range wantText {
		assert.Equal(t, w, texts[k], "%s is not the pool chart's render, byte for byte: run go test ./tests/render -run TestStockExample -update deliberately", k)
	}

	// Rendered again as upgrades against the example, every pool gives the
	// same objects: a creation record keeps what its pool took.
	for _, p := range renderStockPools(t, x, false) {
		if p.md == nil {
			continue
		}
		key := docKey("MachineDeployment", p.md.Namespace(), p.md.Name())
		md := deepCopy(p.md.Object)
		md["status"] = want[key]["status"]
		assert.Equal(t, normalized(t, want[key]), normalized(t, md), "%s: its upgrade renders another MachineDeployment than its creation", p.id)
		assert.Equal(t, wantText[docKey("KubevirtMachineTemplate", p.kmt.Namespace(), p.kmt.Name())], p.kmt.Text, "%s: its upgrade renders another template than its creation", p.id)
	}
}

// The example's Cozystack is stock, and its tenants wrote their pools through
// the forms of their time:
//   - every cozystack-values holds the _cluster Cozystack's platform chart
//     writes, the same everywhere, and nothing else (no talos, no osImage);
//     a tenant's also its _namespace as upstream's tenant chart writes it;
//   - upstream's KubernetesNodes Package is disabled in the platform's
//     values and gone, and no ApplicationDefinition but this repository's;
//   - every ExternalArtifact a HelmRelease or the ApplicationDefinition names
//     is there, made from a PackageSource of the example;
//   - a pool created before the takeover carries every key upstream's form
//     pre-fills (cozystack-api's defaulting of upstream's schema adds
//     nothing to it), and the public factory among them; every Cozystack pool
//     is as cozystack-api reads it through this repository's schema.
func TestStockExampleIsStock(t *testing.T) {
	_, docs := readExampleDocs(t, stockExample)
	x := indexDocs(docs)

	var rootHost string
	secrets := 0
	for _, s := range x.ofKind("Secret") {
		if s.GetName() != "cozystack-values" {
			continue
		}
		secrets++
		raw, _, _ := unstructured.NestedString(s.Object, "stringData", "values.yaml")
		values := map[string]any{}
		require.NoError(t, yaml.Unmarshal([]byte(raw), &values), s.GetNamespace())
		cluster, _ := values["_cluster"].(map[string]any)
		var keys []string
		for k := range cluster {
			keys = append(keys, k)
		}
		assert.ElementsMatch(t, upstreamClusterKeys, keys, "%s: _cluster holds what Cozystack's platform writes, nothing of this repository", s.GetNamespace())
		if rootHost == "" {
			rootHost = fmt.Sprint(cluster["root-host"])
		}
		if !strings.HasPrefix(s.GetNamespace(), "tenant-") {
			assert.Equal(t, []string{"_cluster"}, keysOf(values), "%s: the platform's channel holds _cluster only", s.GetNamespace())
			continue
		}
		ns, _ := values["_namespace"].(map[string]any)
		assert.ElementsMatch(t, upstreamNamespaceKeys, keysOf(ns), s.GetNamespace())
		tenant := s.GetNamespace()[strings.LastIndex(s.GetNamespace(), "-")+1:]
		assert.Equal(t, tenant+"."+rootHost, ns["host"], "%s: the tenant's host under its parent's", s.GetNamespace())
	}
	assert.Equal(t, 4, secrets, "cozy-public's and the three tenants'")
	var first any
	for _, s := range x.ofKind("Secret") {
		raw, _, _ := unstructured.NestedString(s.Object, "stringData", "values.yaml")
		values := map[string]any{}
		require.NoError(t, yaml.Unmarshal([]byte(raw), &values))
		if first == nil {
			first = values["_cluster"]
		}
		assert.Equal(t, first, values["_cluster"], "%s: every tenant's _cluster is the platform's", s.GetNamespace())
	}

	platform := x.must(t, "Package", "", "cozystack.cozystack-platform")
	disabled, _, _ := unstructured.NestedStringSlice(platform.Object, "spec", "components", "platform", "values", "bundles", "disabledPackages")
	assert.Contains(t, disabled, "cozystack.kubernetes-nodes-application", "upstream's KubernetesNodes Package disabled (docs/cozystack.md, step 1)")
	assert.NotContains(t, x, docKey("Package", "", "cozystack.kubernetes-nodes-application"), "and deleted (step 2)")
	ads := x.ofKind("ApplicationDefinition")
	require.Len(t, ads, 1)

	artifacts := map[string]bool{}
	for k := range operatorObjects(t, x) {
		if strings.HasPrefix(k, "ArtifactGenerator ") {
			ag := x.must(t, "ArtifactGenerator", "cozy-system", strings.TrimPrefix(k, "ArtifactGenerator cozy-system/"))
			outs, _, _ := unstructured.NestedSlice(ag.Object, "spec", "outputArtifacts")
			for _, o := range outs {
				name := fmt.Sprint(o.(map[string]any)["name"])
				artifacts[name] = true
				ea := x.must(t, "ExternalArtifact", "cozy-system", name)
				assert.Equal(t, ag.GetName(), render.Get(ea.Object, "spec.sourceRef.name"), "%s is made by the ArtifactGenerator of its PackageSource", name)
			}
		}
	}
	for _, ea := range x.ofKind("ExternalArtifact") {
		assert.True(t, artifacts[ea.GetName()], "ExternalArtifact %s comes from no PackageSource of the example", ea.GetName())
	}
	assert.True(t, artifacts[fmt.Sprint(render.Get(ads[0].Object, "spec.release.chartRef.name"))], "the ApplicationDefinition names an artifact of the example")

	upstream, err := specSchema(render.Get(upstreamRD(t), "spec.application.openAPISchema").(string))
	require.NoError(t, err)
	ours, err := specSchema(render.Get(ads[0].Object, "spec.application.openAPISchema").(string))
	require.NoError(t, err)
	upstreamDefaulted := 0
	for _, hr := range x.ofKind("HelmRelease") {
		id := hr.GetNamespace() + "/" + hr.GetName()
		if render.Get(hr.Object, "metadata.labels[apps.cozystack.io/application.kind]") != "KubernetesNodes" {
			continue // the operator's, or a release older than the ApplicationDefinitions
		}
		assert.Equal(t, render.Get(ads[0].Object, "spec.release.chartRef"), render.Get(hr.Object, "spec.chartRef"), "%s: moved to the ApplicationDefinition's chart at the takeover", id)
		values, _, _ := unstructured.NestedMap(hr.Object, "spec", "values")
		assert.Equal(t, normalized(t, values), normalized(t, applyDefaults(deepCopy(values), ours, true)), "%s: cozystack-api's read through this repository's schema adds nothing", id)
		if preTakeoverPools[id] != "dashboard" {
			continue
		}
		upstreamDefaulted++
		withDefaults := applyDefaults(deepCopy(values), upstream, true).(map[string]any)
		assert.Equal(t, normalized(t, values), normalized(t, withDefaults), "%s: created through upstream's form, it carries every key the form pre-fills", id)
		assert.Len(t, added(map[string]any{"cluster": values["cluster"]}, applyDefaults(map[string]any{"cluster": values["cluster"]}, upstream, true)), 18, "upstream's form pre-fills 18 keys besides cluster")
		assert.Equal(t, "https://factory.talos.dev", render.Get(values, "talos.imageFactoryURL"), "%s: the public factory, from upstream's form", id)
	}
	assert.Equal(t, 2, upstreamDefaulted)
}

func keysOf(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
