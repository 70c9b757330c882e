package docs

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// pageObjects are the YAML documents of a page's yaml blocks, in order.
func pageObjects(t *testing.T, page string) []map[string]any {
	t.Helper()
	raw, err := os.ReadFile(support.Path(page))
	require.NoError(t, err)
	var out []map[string]any
	for _, block := range support.Blocks(string(raw)) {
		if block.Lang != "yaml" {
			continue
		}
		for _, doc := range render.SplitDocuments(block.Text) {
			obj := map[string]any{}
			require.NoError(t, yaml.Unmarshal([]byte(doc), &obj), "%s: a yaml block does not parse:\n%s", page, doc)
			out = append(out, obj)
		}
	}
	return out
}

// upstreamArtifact is the ExternalArtifact upstream Cozystack's
// ApplicationDefinition kubernetes-nodes names (PackageSource
// cozystack.kubernetes-nodes-application, variant kubevirt, component
// kubernetes-nodes).
const upstreamArtifact = "cozystack-kubernetes-nodes-application-kubevirt-kubernetes-nodes"

// artifactName is the ExternalArtifact name Cozystack's operator gives a
// PackageSource's component: <packagesource>-<variant>-<component>, dots made
// dashes (internal/operator/packagesource_reconciler.go).
func artifactName(source, variant, component string) string {
	dash := func(s string) string { return strings.ReplaceAll(s, ".", "-") }
	return dash(source) + "-" + dash(variant) + "-" + dash(component)
}

func TestArtifactNameIsCozystacks(t *testing.T) {
	assert.Equal(t, upstreamArtifact, artifactName("cozystack.kubernetes-nodes-application", "kubevirt", "kubernetes-nodes"))
}

// The objects docs/cozystack.md tells an operator to apply fit together as
// Cozystack's and Flux's machinery reads them: every PackageSource takes its
// charts from an OCIRepository of the page that unpacks the Helm chart layer,
// every HelmRelease's chartRef OCIRepository keeps it whole, every
// ExternalArtifact a chartRef or the ApplicationDefinition patch names is one a
// PackageSource of the page makes (or upstream's own, to go back), a Package
// has its PackageSource and variant, and the names the prose and commands
// quote are those.
func TestCozystackObjectsFitTogether(t *testing.T) {
	objs := pageObjects(t, support.CozystackPage)
	require.NotEmpty(t, objs)
	raw, err := os.ReadFile(support.Path(support.CozystackPage))
	require.NoError(t, err)
	page := string(raw)

	type key struct{ kind, namespace, name string }
	byKey := map[key]map[string]any{}
	artifacts := map[string]bool{upstreamArtifact: true}
	sources := map[string]map[string]bool{} // PackageSource -> variants
	for _, o := range objs {
		kind, _ := o["kind"].(string)
		name, _ := render.Get(o, "metadata.name").(string)
		namespace, _ := render.Get(o, "metadata.namespace").(string)
		byKey[key{kind, namespace, name}] = o
	}
	for _, o := range objs {
		if o["kind"] != "PackageSource" {
			continue
		}
		name := render.Get(o, "metadata.name").(string)
		ref := render.Get(o, "spec.sourceRef").(map[string]any)
		require.Equal(t, "OCIRepository", ref["kind"], name)
		repo, ok := byKey[key{"OCIRepository", ref["namespace"].(string), ref["name"].(string)}]
		require.True(t, ok, "PackageSource %s takes its charts from OCIRepository %s/%s, which the page does not define", name, ref["namespace"], ref["name"])
		assert.Equal(t, "application/vnd.cncf.helm.chart.content.v1.tar+gzip", render.Get(repo, "spec.layerSelector.mediaType"), name)
		assert.Equal(t, "extract", render.Get(repo, "spec.layerSelector.operation"), "PackageSource %s copies chart folders out of its source: its OCIRepository must unpack the chart archive", name)
		sources[name] = map[string]bool{}
		for _, v := range render.Get(o, "spec.variants").([]any) {
			variant := v.(map[string]any)
			sources[name][variant["name"].(string)] = true
			for _, c := range variant["components"].([]any) {
				comp := c.(map[string]any)
				// The chart archive's one folder is named after the chart.
				chartName := strings.TrimPrefix(render.Get(repo, "spec.url").(string)[strings.LastIndex(render.Get(repo, "spec.url").(string), "/"):], "/")
				assert.Equal(t, chartName, comp["path"], "PackageSource %s component %s: the archive of %s unpacks into the folder %s", name, comp["name"], chartName, chartName)
				artifacts[artifactName(name, variant["name"].(string), comp["name"].(string))] = true
			}
		}
	}
	for _, o := range objs {
		switch o["kind"] {
		case "Package":
			name := render.Get(o, "metadata.name").(string)
			variants, ok := sources[name]
			require.True(t, ok, "Package %s has no PackageSource of its name on the page", name)
			assert.True(t, variants[render.Get(o, "spec.variant").(string)], "Package %s: variant %v", name, render.Get(o, "spec.variant"))
		case "HelmRelease":
			ref := render.Get(o, "spec.chartRef").(map[string]any)
			if ref["kind"] == "OCIRepository" {
				repo, ok := byKey[key{"OCIRepository", render.Get(o, "metadata.namespace").(string), ref["name"].(string)}]
				require.True(t, ok, "HelmRelease chartRef %v is not on the page", ref)
				assert.Equal(t, "copy", render.Get(repo, "spec.layerSelector.operation"), "a HelmRelease's chartRef OCIRepository keeps the chart archive whole")
			}
		}
		if ref, ok := render.Get(o, "spec.release.chartRef").(map[string]any); ok {
			assert.Equal(t, "ExternalArtifact", ref["kind"])
			assert.Equal(t, "cozy-system", ref["namespace"])
			assert.True(t, artifacts[ref["name"].(string)], "the ApplicationDefinition patch names ExternalArtifact %s, which no PackageSource of the page makes", ref["name"])
		}
	}
	// Every ExternalArtifact name the prose and commands quote is one the
	// objects make.
	quoted := regexp.MustCompile(`[a-z0-9-]+-(?:default|kubevirt)-[a-z0-9-]+`).FindAllString(page, -1)
	require.NotEmpty(t, quoted)
	for _, name := range quoted {
		if name == "cozystack-kubernetes-nodes-default-kubernetes-nodes" {
			continue // this repository's platform chart's name, quoted to say it differs
		}
		assert.True(t, artifacts[name], "the page quotes ExternalArtifact %s, which none of its PackageSources makes", name)
	}
}

// The Package that installs this repository's kubernetes-nodes-rd chart gives
// it the chartRef the chart defaults to, and that names the artifact the page's
// pool chart PackageSource makes: the ApplicationDefinition the page installs
// points at the pool chart the page publishes.
func TestCozystackRDPackageNamesThePoolChart(t *testing.T) {
	var rdPackage, poolSource map[string]any
	for _, o := range pageObjects(t, support.CozystackPage) {
		switch {
		case o["kind"] == "Package" && render.Get(o, "metadata.name") == "kubernetes-nodes.golden-rd":
			rdPackage = o
		case o["kind"] == "PackageSource" && render.Get(o, "metadata.name") == "kubernetes-nodes.golden":
			poolSource = o
		}
	}
	require.NotNil(t, rdPackage, "the page installs no Package kubernetes-nodes.golden-rd")
	require.NotNil(t, poolSource, "the page defines no PackageSource kubernetes-nodes.golden")
	ref := render.Get(rdPackage, "spec.components.kubernetes-nodes-rd.values.chartRef")
	defaults, err := render.ReadValues(support.Path("packages/system/kubernetes-nodes-rd/values.yaml"))
	require.NoError(t, err)
	assert.Equal(t, defaults["chartRef"], ref, "the page's chartRef is the chart's default")
	variant := render.Get(poolSource, "spec.variants").([]any)[0].(map[string]any)
	comp := variant["components"].([]any)[0].(map[string]any)
	assert.Equal(t, artifactName("kubernetes-nodes.golden", variant["name"].(string), comp["name"].(string)), render.Get(rdPackage, "spec.components.kubernetes-nodes-rd.values.chartRef.name"))
}

// Every object and command of docs/cozystack.md is run somewhere: the yaml
// blocks of the install's sections are applied for real by the integration
// tier, and the plain HelmRelease's are dry-run there; the sh commands of the
// install, the takeover and the way back run there as written, against its
// API server (tests/integration, CozystackInstall), and so does the
// dashboard's (GrafanaDashboardDryRun); every other command
// needs the reader's own registry. A block added to another section would
// otherwise be tested by nothing.
func TestCozystackPageRunsInTheTier(t *testing.T) {
	sections, err := support.PageSections(support.CozystackPage)
	require.NoError(t, err)
	inTier := map[string]bool{support.CozystackGoingBack: true, support.CozystackPlainSection: true, support.CozystackMonitoringSection: true}
	for _, s := range support.CozystackInstallSections {
		inTier[s] = true
	}
	for heading := range inTier {
		require.Contains(t, sections, heading, "%s has no section %q, which the tier runs", support.CozystackPage, heading)
	}
	yamlBlocks, commands := 0, 0
	for heading, text := range sections {
		for _, b := range support.Blocks(text) {
			switch {
			case b.Lang == "yaml" && !inTier[heading]:
				t.Errorf("%s: section %q has a yaml block the tier neither applies nor dry-runs: list the section in tests/support/page.go", support.CozystackPage, heading)
			case b.Lang == "yaml" && heading != support.CozystackPlainSection:
				yamlBlocks++
			case b.Lang == "sh" && !inTier[heading]:
				for _, c := range b.Commands() {
					assert.Contains(t, c, "registry.example.org", "%s, section %q: the command %q runs nowhere; the tier runs the commands of %v and %q", support.CozystackPage, heading, c, support.CozystackInstallSections, support.CozystackGoingBack)
				}
			case b.Lang == "sh":
				commands += len(b.Commands())
			}
		}
	}
	assert.Equal(t, 3, yamlBlocks, "the install's yaml blocks: the catalog's, the pool chart's, the rd chart's")
	assert.GreaterOrEqual(t, commands, 10, "the install's, the takeover's, the way back's and the dashboard's commands")
}

// docs/closed-networks.md is one numbered path: its steps, in order, are the
// sections the tier runs (tests/integration, ClosedNetworkPage), every sh
// command of the page is in one of them, no step holds a yaml block (the
// path applies its files, under examples/closed-network, with its
// commands), and every file a command names is in the repository.
func TestClosedNetworkPageRunsInTheTier(t *testing.T) {
	sections, err := support.PageSections(support.ClosedNetworkPage)
	require.NoError(t, err)
	inTier := map[string]bool{}
	for i, s := range support.ClosedNetworkSteps {
		require.Contains(t, sections, s, "%s has no step %q, which the tier runs", support.ClosedNetworkPage, s)
		assert.True(t, strings.HasPrefix(s, fmt.Sprintf("%d. ", i+1)), "step %q is not numbered %d", s, i+1)
		inTier[s] = true
	}
	files := regexp.MustCompile(`(examples/[-a-z/]+\.(yaml|pem))`)
	commands := 0
	for heading, text := range sections {
		for _, b := range support.Blocks(text) {
			switch {
			case b.Lang == "yaml" && inTier[heading]:
				t.Errorf("%s, step %q: a yaml block; the path applies files with its commands (kubectl apply -f examples/closed-network/...)", support.ClosedNetworkPage, heading)
			case b.Lang == "sh" && !inTier[heading]:
				t.Errorf("%s, section %q: the commands %q run nowhere; the tier runs the steps %v", support.ClosedNetworkPage, heading, b.Commands(), support.ClosedNetworkSteps)
			case b.Lang == "sh":
				for _, c := range b.Commands() {
					commands++
					for _, m := range files.FindAllString(c, -1) {
						_, err := os.Stat(support.Path(m))
						assert.NoError(t, err, "%s: %q names %s", support.ClosedNetworkPage, c, m)
					}
				}
			}
		}
	}
	assert.GreaterOrEqual(t, commands, 12, "the path's commands")
}
