package render

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Package names the platform registers (docs/design.md names the catalog's).
const (
	catalogPackage = "cozystack.kubernetes-worker-image"
	cdiPackage     = "cozystack.kubevirt-cdi"
	poolPackage    = "cozystack.kubernetes-nodes"
)

func renderPlatform(t testing.TB, values map[string]interface{}) (*render.Manifest, error) {
	t.Helper()
	c, err := support.LoadChart(render.PlatformChart)
	require.NoError(t, err)
	return render.Render(c, render.Options{Release: render.Release{Name: "cozystack-platform", Namespace: "cozy-system"}, Values: values})
}

func mustRenderPlatform(t testing.TB, values map[string]interface{}) *render.Manifest {
	t.Helper()
	m, err := renderPlatform(t, values)
	require.NoError(t, err)
	return m
}

func platformDoc(t testing.TB, m *render.Manifest, kind, name string) render.Doc {
	t.Helper()
	d, ok := m.Find(kind, name)
	require.True(t, ok, "the platform renders %s %s", kind, name)
	assert.Equal(t, "cozystack.io/v1alpha1", d.Object["apiVersion"], "%s %s", kind, name)
	return d
}

func packageNames(m *render.Manifest) []string {
	var out []string
	for _, d := range m.OfKind("Package") {
		out = append(out, d.Name())
	}
	return out
}

func TestPlatformCatalogIsNotEnabledByDefault(t *testing.T) {
	m := mustRenderPlatform(t, nil)
	_, found := m.Find("Package", catalogPackage)
	assert.False(t, found, "no Package for the catalog unless enabled")
	platformDoc(t, m, "PackageSource", catalogPackage)
	assert.ElementsMatch(t, []string{cdiPackage, poolPackage}, packageNames(m), "the default packages are installed")
}

func TestPlatformCatalogSourceInstallsTheChartIntoCozyPublicAfterCDI(t *testing.T) {
	m := mustRenderPlatform(t, nil)
	src := platformDoc(t, m, "PackageSource", catalogPackage)
	variants := render.Get(src.Object, "spec.variants").([]interface{})
	require.Len(t, variants, 1)
	assert.Equal(t, "default", render.Get(variants[0], "name"))
	assert.Equal(t, []interface{}{cdiPackage}, render.Get(variants[0], "dependsOn"))
	assert.Equal(t, []interface{}{map[string]interface{}{
		"name": "kubernetes-worker-image",
		"path": "system/kubernetes-worker-image",
		"install": map[string]interface{}{
			"namespace":   catalogNamespace,
			"releaseName": "kubernetes-worker-image",
		},
	}}, render.Get(variants[0], "components"))
	// The dependency is a package the platform registers.
	platformDoc(t, m, "PackageSource", cdiPackage)
}

// Every component path names a chart: the catalog and the pool chart live in this
// repository, under packages/.
func TestPlatformSourcesPointAtTheCharts(t *testing.T) {
	m := mustRenderPlatform(t, nil)
	for pkg, chart := range map[string]string{catalogPackage: render.CatalogChart, poolPackage: render.PoolChart} {
		path := str(render.Get(platformDoc(t, m, "PackageSource", pkg).Object, "spec.variants.0.components.0.path"))
		assert.Equal(t, chart, filepath.ToSlash(filepath.Join("packages", path)), pkg)
		_, err := os.Stat(filepath.Join(support.RepoRoot(), "packages", path, "Chart.yaml"))
		assert.NoError(t, err, pkg)
	}
	// The worker-pool application is published for tenant releases, not installed by the platform.
	assert.Nil(t, render.Get(platformDoc(t, m, "PackageSource", poolPackage).Object, "spec.variants.0.components.0.install"))
}

func TestPlatformEveryPackageHasItsSource(t *testing.T) {
	m := mustRenderPlatform(t, vals(t, "bundles: {enabledPackages: ["+catalogPackage+"]}"))
	require.NotEmpty(t, m.OfKind("Package"))
	for _, p := range m.OfKind("Package") {
		platformDoc(t, m, "PackageSource", p.Name())
		assert.Equal(t, "default", render.Get(p.Object, "spec.variant"), p.Name())
		assert.Empty(t, p.Namespace(), "%s: Packages are cluster-scoped", p.Name())
	}
}

func TestPlatformCDIPrefersCSIClones(t *testing.T) {
	cdi := platformDoc(t, mustRenderPlatform(t, nil), "Package", cdiPackage)
	assert.Equal(t, "csi-clone", render.Get(cdi.Object, "spec.components.kubevirt-cdi.values.cloneStrategyOverride"))
}

func TestPlatformEnablingTheCatalog(t *testing.T) {
	m := mustRenderPlatform(t, vals(t, "bundles: {enabledPackages: ["+catalogPackage+"]}"))
	p := platformDoc(t, m, "Package", catalogPackage)
	assert.Equal(t, "default", render.Get(p.Object, "spec.variant"))
	assert.NotContains(t, p.Object["spec"], "components", "nothing set, nothing forwarded")
}

func TestPlatformDisabledWinsOverEnabled(t *testing.T) {
	m := mustRenderPlatform(t, vals(t, "bundles: {enabledPackages: ["+catalogPackage+"], disabledPackages: ["+catalogPackage+"]}"))
	_, found := m.Find("Package", catalogPackage)
	assert.False(t, found)
	platformDoc(t, m, "PackageSource", catalogPackage)
	assert.Equal(t, mustRenderPlatform(t, nil).Text(), m.Text(), "as if never enabled")

	// disabledPackages also removes a default package; its source stays.
	m = mustRenderPlatform(t, vals(t, "bundles: {disabledPackages: ["+poolPackage+"]}"))
	assert.Equal(t, []string{cdiPackage}, packageNames(m))
	platformDoc(t, m, "PackageSource", poolPackage)
}

func TestPlatformForwardsOnlyTheCatalogKeysSet(t *testing.T) {
	enabled := "bundles: {enabledPackages: [" + catalogPackage + "]}\n"
	for _, set := range []string{
		"{imageFactoryURL: 'https://factory.mirror.internal'}",
		"{imageFactoryURL: ''}",
		"{storageClass: ''}",
		"{storageClass: replicated-ssd}",
		"{storage: 8Gi}",
		"{images: []}",
		"{images: [{schematicID: abc, version: v1.13.6, storage: 7Gi}]}",
		"{imageFactoryURL: 'http://f.internal', storageClass: local, storage: 10Gi, images: [{schematicID: abc, version: v1.13.6}, {schematicID: def, version: v1.14.0}]}",
	} {
		m := mustRenderPlatform(t, vals(t, enabled+"kubernetesWorkerImage: "+set))
		p := platformDoc(t, m, "Package", catalogPackage)
		assert.Equal(t, map[string]interface{}{"kubernetes-worker-image": map[string]interface{}{"values": vals(t, set)}},
			render.Get(p.Object, "spec.components"), set)
	}
	// Setting nothing, or only null, forwards nothing.
	for _, set := range []string{"{}", "{storage: null}"} {
		rel := render.Release{Name: "cozystack-platform", Namespace: "cozy-system", SkipSchemaValidation: true}
		c, err := support.LoadChart(render.PlatformChart)
		require.NoError(t, err)
		m, err := render.Render(c, render.Options{Release: rel, Values: vals(t, enabled+"kubernetesWorkerImage: "+set)})
		require.NoError(t, err)
		assert.NotContains(t, platformDoc(t, m, "Package", catalogPackage).Object["spec"], "components", set)
	}
}

// The forwarded values are catalog values: the catalog renders them as the
// operator wrote them on the platform.
func TestPlatformForwardedValuesRenderTheCatalog(t *testing.T) {
	m := mustRenderPlatform(t, vals(t, `
bundles: {enabledPackages: [`+catalogPackage+`]}
kubernetesWorkerImage:
  imageFactoryURL: https://factory.mirror.internal/
  storageClass: ""
  images: [{schematicID: abc, version: v1.13.6}]
`))
	values, ok := render.Get(platformDoc(t, m, "Package", catalogPackage).Object, "spec.components.kubernetes-worker-image.values").(map[string]interface{})
	require.True(t, ok)
	catalog := mustRenderCatalog(t, values, nil)
	g := catalogGolden(t, catalog, support.GoldenName("abc", "v1.13.6"))
	assert.Equal(t, catalogImageURL("https://factory.mirror.internal", "abc", "v1.13.6"), render.Get(g.Object, "spec.source.http.url"))
	assert.Equal(t, catalogDefaultSize, render.Get(g.Object, "spec.storage.resources.requests.storage"), "storage was not set: the catalog's default")
	assert.NotContains(t, catalogStorage(t, g), "storageClassName")
}

// The catalog's imageFactoryURL defaults to "" (its published factory, else
// the built-in): a platform that does not set it forwards nothing, so its
// Package is what it always was, and the catalog that Package installs renders
// its goldens from the built-in factory, byte for byte as with the URL written
// out; an explicit "" is forwarded and renders the same.
func TestPlatformUnsetFactoryLeavesTheCatalogsDefault(t *testing.T) {
	enabled := "bundles: {enabledPackages: [" + catalogPackage + "]}\n"
	p := platformDoc(t, mustRenderPlatform(t, vals(t, enabled)), "Package", catalogPackage)
	assert.NotContains(t, p.Object["spec"], "components", "nothing set, nothing forwarded")
	unset := mustRenderCatalog(t, nil, nil)
	written := mustRenderCatalog(t, vals(t, "{imageFactoryURL: '"+catalogDefaultFactory+"'}"), nil)
	assert.Equal(t, written.Text(), unset.Text())
	g := catalogGolden(t, unset, unset.OfKind("DataVolume")[0].Name())
	assert.True(t, strings.HasPrefix(render.Get(g.Object, "spec.source.http.url").(string), catalogDefaultFactory+"/image/"))
	values := render.Get(platformDoc(t, mustRenderPlatform(t, vals(t, enabled+"kubernetesWorkerImage: {imageFactoryURL: ''}")), "Package", catalogPackage).Object, "spec.components.kubernetes-worker-image.values").(map[string]interface{})
	assert.Equal(t, unset.Text(), mustRenderCatalog(t, values, nil).Text())
}

// Enabling the catalog adds exactly one Package and leaves every other emitted
// document byte-for-byte as it was; catalog settings alone change nothing.
func TestPlatformEnablingTheCatalogChangesNothingElse(t *testing.T) {
	base := mustRenderPlatform(t, nil)
	require.NotEmpty(t, base.Docs)
	settings := "kubernetesWorkerImage: {storage: 8Gi, images: [{schematicID: abc, version: v1.13.6}]}\n"
	for _, values := range []string{
		"bundles: {enabledPackages: [" + catalogPackage + "]}",
		"bundles: {enabledPackages: [" + catalogPackage + "]}\n" + settings,
		"bundles: {enabledPackages: [" + catalogPackage + "], disabledPackages: []}",
	} {
		m := mustRenderPlatform(t, vals(t, values))
		require.Len(t, m.Docs, len(base.Docs)+1, values)
		var others []render.Doc
		added := 0
		for _, d := range m.Docs {
			if d.Kind() == "Package" && d.Name() == catalogPackage {
				added++
				continue
			}
			others = append(others, d)
		}
		assert.Equal(t, 1, added, values)
		require.Len(t, others, len(base.Docs))
		for i := range others {
			assert.Equal(t, base.Docs[i].Source, others[i].Source, values)
			assert.Equal(t, base.Docs[i].Text, others[i].Text, "%s: %s %s changed", values, others[i].Kind(), others[i].Name())
		}
	}
	// Not enabled, the catalog settings reach nothing.
	assert.Equal(t, base.Text(), mustRenderPlatform(t, vals(t, settings)).Text())
}
