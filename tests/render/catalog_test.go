package render

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chart"
)

// The catalog's contract constants, from docs/design.md.
const (
	catalogNamespace      = "cozy-public"
	catalogRelease        = "kubernetes-worker-image"
	catalogDefaultFactory = "https://factory.talos.dev"
	catalogDefaultSize    = "6Gi"
)

// The flavor of the goldens in testdata/catalog (a made-up schematic ID).
const (
	catalogLiveID  = "5d1c0d5ba1f6c2a4a7f3e9b08d2c4e6f1a3b5c7d9e0f2a4b6c8d0e1f3a5b7ce2"
	catalogLiveURL = "https://factory.mirror.internal"
)

// catalogImageURL is the contract's source URL, written here independently of the chart.
func catalogImageURL(factory, schematicID, version string) string {
	return strings.TrimSuffix(factory, "/") + "/image/" + schematicID + "/" + version + "/openstack-amd64.raw.xz"
}

func catalogChart(t testing.TB) *chart.Chart {
	t.Helper()
	c, err := support.LoadChart(render.CatalogChart)
	require.NoError(t, err)
	return c
}

// renderCatalog renders the catalog as the platform installs it (release
// kubernetes-worker-image in cozy-public). A nil cluster is `helm template`.
func renderCatalog(t testing.TB, values map[string]interface{}, cluster *support.Cluster) (*render.Manifest, error) {
	t.Helper()
	return renderCatalogAs(t, render.Release{Name: catalogRelease, Namespace: catalogNamespace}, values, cluster)
}

// renderCatalogAs renders the catalog and returns its goldens, CA
// ConfigMaps, clone RBAC and rules: the published tenant defaults, which
// every render holds (tenant_defaults_test.go covers them through
// renderChartAs), are checked present and taken out, so each test of the
// goldens sees what it is about.
func renderCatalogAs(t testing.TB, rel render.Release, values map[string]interface{}, cluster *support.Cluster) (*render.Manifest, error) {
	t.Helper()
	m, err := renderChartAs(t, catalogChart(t), rel, values, cluster)
	if err == nil {
		withoutTenantDefaults(t, m)
	}
	return m, err
}

func mustRenderCatalog(t testing.TB, values map[string]interface{}, cluster *support.Cluster) *render.Manifest {
	t.Helper()
	m, err := renderCatalog(t, values, cluster)
	require.NoError(t, err)
	return m
}

// withoutTenantDefaults removes the documents of the catalog's
// tenant-defaults.yaml from m, requiring its ConfigMap among them.
func withoutTenantDefaults(t testing.TB, m *render.Manifest) []render.Doc {
	t.Helper()
	var kept, taken []render.Doc
	for _, d := range m.Docs {
		if strings.HasSuffix(d.Source, "/templates/tenant-defaults.yaml") {
			taken = append(taken, d)
			continue
		}
		kept = append(kept, d)
	}
	m.Docs = kept
	require.NotEmpty(t, taken, "every catalog render publishes the tenant defaults")
	require.Equal(t, "ConfigMap", taken[0].Kind())
	require.Equal(t, "kubernetes-worker-image-tenant-defaults", taken[0].Name())
	return taken
}

func catalogGolden(t testing.TB, m *render.Manifest, name string) render.Doc {
	t.Helper()
	d, ok := m.Find("DataVolume", name)
	require.True(t, ok, "the render has the golden %s", name)
	return d
}

func catalogStorage(t testing.TB, d render.Doc) map[string]interface{} {
	t.Helper()
	s, ok := render.Get(d.Object, "spec.storage").(map[string]interface{})
	require.True(t, ok, "%s has spec.storage", d.Name())
	return s
}

func TestCatalogDefaultsHoldThePoolsDefaultFlavor(t *testing.T) {
	def, err := support.PoolDefaults()
	require.NoError(t, err)
	id, version, class := def.SchematicID, def.Version, def.StorageClass
	m := mustRenderCatalog(t, nil, nil)
	goldens := m.OfKind("DataVolume")
	require.Len(t, goldens, 1)
	g := catalogGolden(t, m, support.GoldenName(id, version))
	assert.Equal(t, "cdi.kubevirt.io/v1beta1", g.Object["apiVersion"])
	assert.Equal(t, catalogNamespace, g.Namespace())
	assert.Equal(t, catalogImageURL(catalogDefaultFactory, id, version), render.Get(g.Object, "spec.source.http.url"))
	assert.Equal(t, catalogDefaultSize, render.Get(g.Object, "spec.storage.resources.requests.storage"))
	assert.Equal(t, class, render.Get(g.Object, "spec.storage.storageClassName"))
}

func TestCatalogEveryGoldenIsKeptImportedAtOnceAndNeverCollected(t *testing.T) {
	m := mustRenderCatalog(t, vals(t, `
images:
  - {schematicID: abc, version: v1.13.6}
  - {schematicID: abc, version: v1.13.5, storageClass: ""}
  - {schematicID: def, version: v1.14.0-beta.1, imageFactoryURL: "http://mirror.internal:8080/talos", storage: 10Gi, storageClass: local}
`), nil)
	goldens := m.OfKind("DataVolume")
	require.Len(t, goldens, 3)
	flavors := map[string]map[string]interface{}{
		support.GoldenName("abc", "v1.13.6"):        {"kubernetes-worker-image.cozystack.io/talos-schematic-id": "abc", "kubernetes-worker-image.cozystack.io/talos-minor": "v1.13", "kubernetes-worker-image.cozystack.io/talos-patch": "6"},
		support.GoldenName("abc", "v1.13.5"):        {"kubernetes-worker-image.cozystack.io/talos-schematic-id": "abc", "kubernetes-worker-image.cozystack.io/talos-minor": "v1.13", "kubernetes-worker-image.cozystack.io/talos-patch": "5"},
		support.GoldenName("def", "v1.14.0-beta.1"): {"kubernetes-worker-image.cozystack.io/talos-schematic-id": "def", "kubernetes-worker-image.cozystack.io/talos-minor": "v1.14"},
	}
	for _, g := range goldens {
		want := map[string]interface{}{
			"helm.sh/resource-policy":                          "keep",
			"cdi.kubevirt.io/storage.bind.immediate.requested": "true",
			"cdi.kubevirt.io/storage.deleteAfterCompletion":    "false",
		}
		// Its flavor, for the monitoring (a pre-release has no patch to compare).
		for k, v := range flavors[g.Name()] {
			want[k] = v
		}
		assert.Equal(t, want, render.Get(g.Object, "metadata.annotations"), g.Name())
		assert.Equal(t, catalogNamespace, g.Namespace(), g.Name())
	}
}

func TestCatalogPerEntryFieldsOverrideTheChartWideOnes(t *testing.T) {
	m := mustRenderCatalog(t, vals(t, `
imageFactoryURL: https://factory.mirror.internal
storage: 8Gi
storageClass: replicated-ssd
images:
  - {schematicID: abc, version: v1.13.6}
  - {schematicID: abc, version: v1.13.5, imageFactoryURL: "http://other.internal:8080/talos/", storage: 7Gi, storageClass: local}
  - {schematicID: abc, version: v1.13.4, storage: 9Gi}
`), nil)
	plain := catalogGolden(t, m, support.GoldenName("abc", "v1.13.6"))
	assert.Equal(t, catalogImageURL("https://factory.mirror.internal", "abc", "v1.13.6"), render.Get(plain.Object, "spec.source.http.url"))
	assert.Equal(t, map[string]interface{}{"resources": map[string]interface{}{"requests": map[string]interface{}{"storage": "8Gi"}}, "storageClassName": "replicated-ssd"}, catalogStorage(t, plain))

	own := catalogGolden(t, m, support.GoldenName("abc", "v1.13.5"))
	assert.Equal(t, "http://other.internal:8080/talos/image/abc/v1.13.5/openstack-amd64.raw.xz", render.Get(own.Object, "spec.source.http.url"))
	assert.Equal(t, map[string]interface{}{"resources": map[string]interface{}{"requests": map[string]interface{}{"storage": "7Gi"}}, "storageClassName": "local"}, catalogStorage(t, own))

	mixed := catalogGolden(t, m, support.GoldenName("abc", "v1.13.4"))
	assert.Equal(t, catalogImageURL("https://factory.mirror.internal", "abc", "v1.13.4"), render.Get(mixed.Object, "spec.source.http.url"))
	assert.Equal(t, "9Gi", render.Get(mixed.Object, "spec.storage.resources.requests.storage"))
	assert.Equal(t, "replicated-ssd", render.Get(mixed.Object, "spec.storage.storageClassName"))
}

func TestCatalogFactoryURLTrailingSlashGivesNoDoubleSlash(t *testing.T) {
	for _, factory := range []string{"https://mirror.internal/", "https://mirror.internal/talos/", "http://10.0.0.5:8080/"} {
		m := mustRenderCatalog(t, vals(t, fmt.Sprintf("{imageFactoryURL: %q, images: [{schematicID: abc, version: v1.13.6}, {schematicID: abc, version: v1.13.5, imageFactoryURL: %q}]}", factory, factory)), nil)
		for _, version := range []string{"v1.13.6", "v1.13.5"} {
			url := str(render.Get(catalogGolden(t, m, support.GoldenName("abc", version)).Object, "spec.source.http.url"))
			assert.Equal(t, strings.TrimSuffix(factory, "/")+"/image/abc/"+version+"/openstack-amd64.raw.xz", url)
			assert.NotContains(t, strings.TrimPrefix(strings.TrimPrefix(url, "https://"), "http://"), "//", url)
		}
	}
}

func TestCatalogEmptyStorageClassOmitsTheKey(t *testing.T) {
	m := mustRenderCatalog(t, vals(t, `
storageClass: ""
images:
  - {schematicID: abc, version: v1.13.6}
  - {schematicID: abc, version: v1.13.5, storageClass: local}
`), nil)
	assert.NotContains(t, catalogStorage(t, catalogGolden(t, m, support.GoldenName("abc", "v1.13.6"))), "storageClassName")
	assert.Equal(t, "local", render.Get(catalogGolden(t, m, support.GoldenName("abc", "v1.13.5")).Object, "spec.storage.storageClassName"))

	// An entry's "" is an override too: the cluster default, whatever the chart-wide class.
	m = mustRenderCatalog(t, vals(t, `{storageClass: local, images: [{schematicID: abc, version: v1.13.6, storageClass: ""}]}`), nil)
	assert.NotContains(t, catalogStorage(t, catalogGolden(t, m, support.GoldenName("abc", "v1.13.6"))), "storageClassName")
}

func TestCatalogEmptyImagesRenderNothing(t *testing.T) {
	for _, v := range []string{"images: []", "{images: [], cloneSubjects: [{kind: Group, name: system:authenticated}]}"} {
		m := mustRenderCatalog(t, vals(t, v), nil)
		assert.Empty(t, m.Docs, "%s: no golden, no Role, no RoleBinding", v)
	}
}

func TestCatalogGoldensAreInCozyPublicWhateverTheReleaseNamespace(t *testing.T) {
	m, err := renderCatalogAs(t, render.Release{Name: "catalog", Namespace: "default"}, nil, nil)
	require.NoError(t, err)
	require.NotEmpty(t, m.Docs)
	for _, d := range m.Docs {
		assert.Equal(t, catalogNamespace, d.Namespace(), "%s %s", d.Kind(), d.Name())
	}
}

// catalogRefusal is one refusal with the neighbouring input that renders.
type catalogRefusal struct {
	name      string
	refused   string
	neighbour string
	fragments []string
}

// The template's own guards, behind the schema (--skip-schema-validation).
func TestCatalogRefusals(t *testing.T) {
	const fix = "set "
	cases := []catalogRefusal{
		{"no schematicID", "images: [{version: v1.13.6}]", "images: [{schematicID: abc, version: v1.13.6}]",
			[]string{"images[0]", `version "v1.13.6"`, "has no schematicID", fix + "schematicID"}},
		{"empty schematicID", `images: [{schematicID: abc, version: v1.13.6}, {schematicID: "", version: v1.13.6}]`, `images: [{schematicID: abc, version: v1.13.6}, {schematicID: def, version: v1.13.6}]`,
			[]string{"images[1]", "has no schematicID", fix + "schematicID"}},
		{"null schematicID", "images: [{schematicID: null, version: v1.13.6}]", "images: [{schematicID: 'null', version: v1.13.6}]",
			[]string{"images[0]", "has no schematicID"}},
		{"no version", "images: [{schematicID: abc}]", "images: [{schematicID: abc, version: v1.13.6}]",
			[]string{"images[0]", `schematicID "abc"`, "has no version", fix + "version"}},
		{"uppercase schematicID", "images: [{schematicID: ABC, version: v1.13.6}]", "images: [{schematicID: abc, version: v1.13.6}]",
			[]string{"images[0]", `schematicID "ABC" is malformed`, "DataVolume name", "set it to the schematic ID"}},
		{"schematicID with a trailing dash", "images: [{schematicID: abc-, version: v1.13.6}]", "images: [{schematicID: a-c, version: v1.13.6}]",
			[]string{`schematicID "abc-" is malformed`}},
		{"schematicID with a slash", "images: [{schematicID: a/b, version: v1.13.6}]", "images: [{schematicID: a-b, version: v1.13.6}]",
			[]string{`schematicID "a/b" is malformed`}},
		{"version without v", "images: [{schematicID: abc, version: 1.13.6}]", "images: [{schematicID: abc, version: v1.13.6}]",
			[]string{"images[0]", `version "1.13.6" is not a Talos release`, "vMAJOR.MINOR.PATCH", "set it to a release such as"}},
		{"version without patch", "images: [{schematicID: abc, version: v1.13}]", "images: [{schematicID: abc, version: v1.13.0}]",
			[]string{`version "v1.13" is not a Talos release`}},
		{"uppercase pre-release", "images: [{schematicID: abc, version: v1.14.0-RC1}]", "images: [{schematicID: abc, version: v1.14.0-rc.1}]",
			[]string{`version "v1.14.0-RC1" is not a Talos release`}},
		{"pre-release ending in a dot", "images: [{schematicID: abc, version: v1.14.0-rc.}]", "images: [{schematicID: abc, version: v1.14.0-rc.1}]",
			[]string{`version "v1.14.0-rc." is not a Talos release`}},
		{"empty pre-release segment", "images: [{schematicID: abc, version: v1.14.0-rc..1}]", "images: [{schematicID: abc, version: v1.14.0-rc.0.1}]",
			[]string{`version "v1.14.0-rc..1" is not a Talos release`}},
		{"build metadata", "images: [{schematicID: abc, version: v1.14.0+x}]", "images: [{schematicID: abc, version: v1.14.0-x}]",
			[]string{`version "v1.14.0+x" is not a Talos release`}},
		{"factory URL without scheme", "{imageFactoryURL: factory.talos.dev, images: [{schematicID: abc, version: v1.13.6}]}", "{imageFactoryURL: 'https://factory.talos.dev', images: [{schematicID: abc, version: v1.13.6}]}",
			[]string{"images[0]", `imageFactoryURL "factory.talos.dev" (from imageFactoryURL) is not a plain http(s) URL`, "set imageFactoryURL to a URL"}},
		// An entry's own "" is set (chart-wide "" is unset: TestCatalogFactoryFollowsThePublishedOne).
		{"empty entry factory URL", "{images: [{schematicID: abc, version: v1.13.6, imageFactoryURL: ''}]}", "{images: [{schematicID: abc, version: v1.13.6, imageFactoryURL: 'http://f.internal'}]}",
			[]string{`imageFactoryURL "" (from images[0].imageFactoryURL)`}},
		{"ftp factory URL", "images: [{schematicID: abc, version: v1.13.6, imageFactoryURL: 'ftp://f.internal'}]", "images: [{schematicID: abc, version: v1.13.6, imageFactoryURL: 'http://f.internal'}]",
			[]string{`"ftp://f.internal" (from images[0].imageFactoryURL)`, "set images[0].imageFactoryURL to a URL"}},
		{"whitespace in factory URL", "images: [{schematicID: abc, version: v1.13.6, imageFactoryURL: 'https://f.internal/a b'}]", "images: [{schematicID: abc, version: v1.13.6, imageFactoryURL: 'https://f.internal/a-b'}]",
			[]string{`"https://f.internal/a b" (from images[0].imageFactoryURL)`}},
		// Found by FuzzValidatingHelpers: CDI could not parse the import URL.
		{"bare percent in factory URL", "images: [{schematicID: abc, version: v1.13.6, imageFactoryURL: 'http://0/000000%000000%0%00000000'}]", "images: [{schematicID: abc, version: v1.13.6, imageFactoryURL: 'http://0/000000%000000%20%00000000'}]",
			[]string{`"http://0/000000%000000%0%00000000" (from images[0].imageFactoryURL)`, "is not a plain http(s) URL"}},
		{"dollar in factory URL", "images: [{schematicID: abc, version: v1.13.6, imageFactoryURL: 'https://f.internal/$(id)'}]", "images: [{schematicID: abc, version: v1.13.6, imageFactoryURL: 'https://f.internal/id'}]",
			[]string{"$(id)", "is not a plain http(s) URL"}},
		{"quote in factory URL", `images: [{schematicID: abc, version: v1.13.6, imageFactoryURL: 'https://f.internal/"x'}]`, "images: [{schematicID: abc, version: v1.13.6, imageFactoryURL: 'https://f.internal/x'}]",
			[]string{"is not a plain http(s) URL"}},
		{"backtick in factory URL", "images: [{schematicID: abc, version: v1.13.6, imageFactoryURL: 'https://f.internal/`x`'}]", "images: [{schematicID: abc, version: v1.13.6, imageFactoryURL: 'https://f.internal/x'}]",
			[]string{"is not a plain http(s) URL"}},
		{"YAML metacharacters in factory URL", "images: [{schematicID: abc, version: v1.13.6, imageFactoryURL: 'https://f.internal/a: #b'}]", "images: [{schematicID: abc, version: v1.13.6, imageFactoryURL: 'https://f.internal/a'}]",
			[]string{"is not a plain http(s) URL"}},
		{"storage not a quantity", "{storage: 6 GB, images: [{schematicID: abc, version: v1.13.6}]}", "{storage: 6144Mi, images: [{schematicID: abc, version: v1.13.6}]}",
			[]string{"images[0]", `storage "6 GB" (from storage) is not a Kubernetes quantity`, "set storage to a size"}},
		{"entry storage not a quantity", "images: [{schematicID: abc, version: v1.13.6, storage: lots}]", "images: [{schematicID: abc, version: v1.13.6, storage: 1.5Ti}]",
			[]string{`storage "lots" (from images[0].storage)`, "set images[0].storage to a size"}},
		{"storageClass not a class name", "{storageClass: 'fast ssd', images: [{schematicID: abc, version: v1.13.6}]}", "{storageClass: fast-ssd.v2, images: [{schematicID: abc, version: v1.13.6}]}",
			[]string{`storageClass "fast ssd" (from storageClass) is not a StorageClass name`, "set storageClass to a class"}},
		// A control character once broke the chart's YAML round trip and dropped every golden silently.
		{"entry storageClass with a control character", "images: [{schematicID: abc, version: v1.13.6, storageClass: \"a\\x7f\"}]", "images: [{schematicID: abc, version: v1.13.6, storageClass: ''}]",
			[]string{`storageClass "a\x7f" (from images[0].storageClass)`, "set images[0].storageClass"}},
		{"the same pair twice", "images: [{schematicID: abc, version: v1.13.6}, {schematicID: abc, version: v1.13.6, storage: 9Gi}]", "images: [{schematicID: abc, version: v1.13.6}, {schematicID: abc, version: v1.13.5, storage: 9Gi}]",
			[]string{"images[1]", support.GoldenName("abc", "v1.13.6"), "as images[0] already does", "remove one of the two entries"}},
		{"an entry that is a string", "images: [abc]", "images: [{schematicID: abc, version: v1.13.6}]",
			[]string{`images[0] is "abc", not an entry`, "write it as {schematicID"}},
		{"an entry that is null", "images: [{schematicID: abc, version: v1.13.6}, null]", "images: [{schematicID: abc, version: v1.13.6}]",
			[]string{"images[1] is null, not an entry"}},
		{"images not a list", "images: {schematicID: abc, version: v1.13.6}", "images: [{schematicID: abc, version: v1.13.6}]",
			[]string{"images is a map, not a list", "write images as a list"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rel := render.Release{Name: catalogRelease, Namespace: catalogNamespace, SkipSchemaValidation: true}
			_, err := renderCatalogAs(t, rel, vals(t, tc.refused), nil)
			requireRefusal(t, err, tc.fragments...)
			m, err := renderCatalogAs(t, rel, vals(t, tc.neighbour), nil)
			require.NoError(t, err, "the neighbour %s must render", tc.neighbour)
			assert.NotEmpty(t, m.OfKind("DataVolume"))
		})
	}
}

// A malformed value reaches the template with the schema on, and the operator
// reads the template's words (values.schema.json leaves patterns and required
// keys to its x-form); a value of the wrong shape is the schema's still.
func TestCatalogRefusesInItsOwnWordsWithTheSchemaOn(t *testing.T) {
	for v, want := range map[string]string{
		"images: [{version: v1.13.6}]":                   "has no schematicID",
		"images: [{schematicID: ABC, version: v1.13.6}]": `"ABC"`,
		"images: [{schematicID: abc, version: v1.13}]":   `"v1.13"`,
		"{imageFactoryURL: factory.talos.dev}":           `imageFactoryURL "factory.talos.dev"`,
		"{storage: 6 GB}":                                `storage "6 GB"`,
	} {
		_, on := renderCatalog(t, vals(t, v), nil)
		_, off := renderCatalogAs(t, render.Release{Name: catalogRelease, Namespace: catalogNamespace, SkipSchemaValidation: true}, vals(t, v), nil)
		requireRefusal(t, on, want)
		require.NotContains(t, on.Error(), schemaHeader, v)
		require.Equal(t, off.Error(), on.Error(), v)
	}
	_, err := renderCatalog(t, vals(t, "images: [abc]"), nil)
	requireRefusal(t, err, schemaHeader, "- at '/images/0': got string, want object")
}

// catalogLiveValues are the entries that created testdata/catalog/goldens.yaml, plus
// a fresh entry first, so that the live ones are images[1] and images[2].
const catalogLiveValues = `
imageFactoryURL: https://factory.mirror.internal
storage: 6Gi
storageClass: replicated
images:
  - {schematicID: abc, version: v1.13.6}
  - {schematicID: ` + catalogLiveID + `, version: v1.13.5}
  - {schematicID: ` + catalogLiveID + `, version: v1.13.4, storageClass: ""}
`

// catalogEditedLive returns catalogLiveValues with one line replaced.
func catalogEditedLive(t testing.TB, old, new string) map[string]interface{} {
	t.Helper()
	require.Contains(t, catalogLiveValues, old, "the edit applies")
	return vals(t, strings.Replace(catalogLiveValues, old, new, 1))
}

func TestCatalogUnchangedEntriesRenderAgainstTheirLiveGoldens(t *testing.T) {
	offline := mustRenderCatalog(t, vals(t, catalogLiveValues), nil)
	for _, fixtures := range [][]string{{"catalog/goldens.yaml"}, {"catalog/orphaned-pvcs.yaml"}, {"catalog/goldens.yaml", "catalog/orphaned-pvcs.yaml", "catalog/elsewhere.yaml"}} {
		cluster := loadCluster(t, fixtures...)
		m := mustRenderCatalog(t, vals(t, catalogLiveValues), cluster)
		assert.Equal(t, offline.Text(), m.Text(), "%v: the goldens render as without a cluster", fixtures)
		assert.Positive(t, cluster.Calls(), "the goldens were looked up")
	}
}

func TestCatalogRendersAgainstItsOwnPreviousRelease(t *testing.T) {
	for _, values := range []string{"", catalogLiveValues, "{storageClass: '', images: [{schematicID: abc, version: v1.13.6, storage: 6144Mi}]}"} {
		cluster := support.NewCluster()
		first := mustRenderCatalog(t, vals(t, values), cluster)
		require.NoError(t, cluster.Apply(first, catalogNamespace))
		m, err := renderCatalogAs(t, render.Release{Name: catalogRelease, Namespace: catalogNamespace, Upgrade: true}, vals(t, values), cluster)
		require.NoError(t, err, "an upgrade that changes nothing renders")
		assert.Equal(t, first.Text(), m.Text())
	}
}

// Each kind of edit of an entry whose golden exists is refused, naming the
// entry, the value there and the value now, and the supported move.
func TestCatalogEditedEntriesOfLiveGoldensAreRefused(t *testing.T) {
	v135 := fmt.Sprintf(`images[1] (schematicID %q, version "v1.13.5")`, catalogLiveID)
	v134 := fmt.Sprintf(`images[2] (schematicID %q, version "v1.13.4")`, catalogLiveID)
	move := []string{"cannot be changed in place", "Put the entry back", "add a new (schematicID, version) entry", "move the pools", "retire this one"}
	dv135 := "DataVolume cozy-public/" + support.GoldenName(catalogLiveID, "v1.13.5")
	pvc135 := "PersistentVolumeClaim cozy-public/" + support.GoldenName(catalogLiveID, "v1.13.5") + " (its DataVolume is gone)"
	pvc134 := "PersistentVolumeClaim cozy-public/" + support.GoldenName(catalogLiveID, "v1.13.4") + " (its DataVolume is gone)"
	oldURL135 := catalogImageURL(catalogLiveURL, catalogLiveID, "v1.13.5")
	for _, tc := range []struct {
		name      string
		fixture   string
		values    map[string]interface{}
		fragments []string
	}{
		{"chart-wide factory URL", "catalog/goldens.yaml", catalogEditedLive(t, "imageFactoryURL: https://factory.mirror.internal", "imageFactoryURL: https://factory.talos.dev"),
			[]string{v135, dv135, fmt.Sprintf("source URL %q there, %q now (from imageFactoryURL)", oldURL135, catalogImageURL(catalogDefaultFactory, catalogLiveID, "v1.13.5"))}},
		{"entry factory URL", "catalog/goldens.yaml", catalogEditedLive(t, "version: v1.13.5}", "version: v1.13.5, imageFactoryURL: 'http://other.internal'}"),
			[]string{v135, fmt.Sprintf("source URL %q there, %q now (from images[1].imageFactoryURL)", oldURL135, catalogImageURL("http://other.internal", catalogLiveID, "v1.13.5"))}},
		{"storage", "catalog/goldens.yaml", catalogEditedLive(t, "version: v1.13.5}", "version: v1.13.5, storage: 8Gi}"),
			[]string{v135, dv135, `storage "6Gi" there, "8Gi" now (from images[1].storage)`}},
		{"storage respelled", "catalog/goldens.yaml", catalogEditedLive(t, "storage: 6Gi", "storage: 6144Mi"),
			[]string{v135, `storage "6Gi" there, "6144Mi" now (from storage)`}},
		{"storageClass", "catalog/goldens.yaml", catalogEditedLive(t, "storageClass: replicated", "storageClass: fast"),
			[]string{v135, dv135, `storageClass "replicated" there, "fast" now (from storageClass)`}},
		{"storageClass to the default", "catalog/goldens.yaml", catalogEditedLive(t, "version: v1.13.5}", `version: v1.13.5, storageClass: ""}`),
			[]string{v135, `storageClass "replicated" there, "" now (from images[1].storageClass)`}},
		{"storageClass from the default", "catalog/goldens.yaml", catalogEditedLive(t, `version: v1.13.4, storageClass: ""}`, "version: v1.13.4}"),
			[]string{v134, `storageClass "" there, "replicated" now (from storageClass)`}},
		{"everything at once", "catalog/goldens.yaml", catalogEditedLive(t, "version: v1.13.5}", "version: v1.13.5, storage: 8Gi, storageClass: fast}"),
			[]string{v135, `storage "6Gi" there, "8Gi" now`, `; storageClass "replicated" there, "fast" now`}},
		{"PVC storage", "catalog/orphaned-pvcs.yaml", catalogEditedLive(t, "version: v1.13.5}", "version: v1.13.5, storage: 8Gi}"),
			[]string{v135, pvc135, `storage "6Gi" there, "8Gi" now`}},
		{"PVC storageClass", "catalog/orphaned-pvcs.yaml", catalogEditedLive(t, "storageClass: replicated", "storageClass: fast"),
			[]string{v135, pvc135, `storageClass "replicated" there, "fast" now`}},
		{"PVC import endpoint", "catalog/orphaned-pvcs.yaml", catalogEditedLive(t, "imageFactoryURL: https://factory.mirror.internal", "imageFactoryURL: https://factory.talos.dev"),
			[]string{v135, pvc135, fmt.Sprintf("source URL %q there", oldURL135)}},
		{"PVC storage, no annotation", "catalog/orphaned-pvcs.yaml", catalogEditedLive(t, `version: v1.13.4, storageClass: ""}`, `version: v1.13.4, storageClass: "", storage: 7Gi}`),
			[]string{v134, pvc134, `storage "6Gi" there, "7Gi" now`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := renderCatalog(t, tc.values, loadCluster(t, tc.fixture))
			requireRefusal(t, err, append(tc.fragments, move...)...)
			// The same edit with no golden in the cluster is a new golden, not an edit.
			_, err = renderCatalog(t, tc.values, support.NewCluster())
			require.NoError(t, err)
		})
	}
}

// What a bare PVC cannot tell is not guessed at.
func TestCatalogOrphanedPVCComparesOnlyWhatItRecords(t *testing.T) {
	cluster := loadCluster(t, "catalog/orphaned-pvcs.yaml")
	// v1.13.4's PVC has no import endpoint: its source URL is unknown.
	_, err := renderCatalog(t, catalogEditedLive(t, `version: v1.13.4, storageClass: ""}`, `version: v1.13.4, storageClass: "", imageFactoryURL: 'http://other.internal'}`), cluster)
	require.NoError(t, err)
	// It bound to "replicated" while the entry asked for the default: a PVC shows
	// the class it bound to, not the request, so an entry at "" is not compared...
	_, err = renderCatalog(t, vals(t, catalogLiveValues), cluster)
	require.NoError(t, err)
	// ...while an entry naming another class is.
	_, err = renderCatalog(t, catalogEditedLive(t, `version: v1.13.4, storageClass: ""}`, `version: v1.13.4, storageClass: fast}`), cluster)
	requireRefusal(t, err, `storageClass "replicated" there, "fast" now`)
}

func TestCatalogGoldensAreLookedUpOnlyInCozyPublic(t *testing.T) {
	values := vals(t, "images: [{schematicID: "+catalogLiveID+", version: v1.13.6}]")
	cluster := loadCluster(t, "catalog/elsewhere.yaml")
	m := mustRenderCatalog(t, values, cluster)
	assert.Equal(t, mustRenderCatalog(t, values, nil).Text(), m.Text())
	assert.Positive(t, cluster.Calls())
}

func TestCatalogLookupErrorsFailTheRender(t *testing.T) {
	apiErr := errors.New("etcdserver: request timed out")
	cluster := loadCluster(t, "catalog/goldens.yaml")
	cluster.FailWith = map[string]error{"DataVolume": apiErr}
	_, err := renderCatalog(t, vals(t, catalogLiveValues), cluster)
	requireRefusal(t, err, apiErr.Error())

	// The PVC is read only when the DataVolume is gone, and its errors count too.
	cluster = loadCluster(t, "catalog/orphaned-pvcs.yaml")
	cluster.FailWith = map[string]error{"PersistentVolumeClaim": apiErr}
	_, err = renderCatalog(t, vals(t, catalogLiveValues), cluster)
	requireRefusal(t, err, apiErr.Error())

	// The clone Role lists the goldens cozy-public holds, those kept only as
	// their PVC too: a failed list of its PVCs fails the render, never a Role
	// that would lose a golden.
	cluster = loadCluster(t, "catalog/goldens.yaml")
	cluster.FailWith = map[string]error{"PersistentVolumeClaim": apiErr}
	_, err = renderCatalog(t, vals(t, "{imageFactoryURL: "+catalogLiveURL+", images: [{schematicID: "+catalogLiveID+", version: v1.13.5}]}"), cluster)
	requireRefusal(t, err, apiErr.Error())
}

// The catalog's default flavor and class are the pool chart's: a pool that sets
// osImage: {builtin: {}} must find its golden, on its own class.
func TestCatalogDefaultsMatchThePoolChart(t *testing.T) {
	catalogFile := filepath.Join(support.RepoRoot(), render.CatalogChart, "values.yaml")
	pool, err := support.PoolDefaults()
	require.NoError(t, err)
	catalog, err := render.ReadValues(catalogFile)
	require.NoError(t, err)
	require.NoError(t, catalogDefaultsAgree(catalogFile, pool, catalog))
}

// A one-sided bump of either chart's default must fail, naming both places.
func TestCatalogDefaultsAgreementCatchesOneSidedBumps(t *testing.T) {
	catalogFile := filepath.Join(support.RepoRoot(), render.CatalogChart, "values.yaml")
	fresh := func() (*support.Defaults, map[string]interface{}) {
		pool, err := support.PoolDefaults()
		require.NoError(t, err)
		catalog, err := render.ReadValues(catalogFile)
		require.NoError(t, err)
		return &pool, catalog
	}
	for name, bump := range map[string]func(pool *support.Defaults, catalog map[string]interface{}){
		"pool talos.version":     func(p *support.Defaults, _ map[string]interface{}) { p.Version = "v9.9.9" },
		"pool talos.schematicID": func(p *support.Defaults, _ map[string]interface{}) { p.SchematicID = "feed" },
		"pool storageClass":      func(p *support.Defaults, _ map[string]interface{}) { p.StorageClass = "fast" },
		"catalog version": func(_ *support.Defaults, c map[string]interface{}) {
			c["images"].([]interface{})[0].(map[string]interface{})["version"] = "v9.9.9"
		},
		"catalog schematicID": func(_ *support.Defaults, c map[string]interface{}) {
			c["images"].([]interface{})[0].(map[string]interface{})["schematicID"] = "feed"
		},
		"catalog storageClass": func(_ *support.Defaults, c map[string]interface{}) { c["storageClass"] = "fast" },
		"catalog entry storageClass": func(_ *support.Defaults, c map[string]interface{}) {
			c["images"].([]interface{})[0].(map[string]interface{})["storageClass"] = "fast"
		},
		"catalog second entry": func(_ *support.Defaults, c map[string]interface{}) {
			c["images"] = append(c["images"].([]interface{}), map[string]interface{}{"schematicID": "feed", "version": "v9.9.9"})
		},
		"catalog no entry": func(_ *support.Defaults, c map[string]interface{}) { c["images"] = []interface{}{} },
	} {
		t.Run(name, func(t *testing.T) {
			pool, catalog := fresh()
			bump(pool, catalog)
			err := catalogDefaultsAgree(catalogFile, *pool, catalog)
			requireRefusal(t, err, poolDefaultsSource, filepath.Join(render.CatalogChart, "values.yaml"), "bump both together")
		})
	}
}

// poolDefaultsSource names where the pool chart's defaults for a new pool
// live: its Talos flavor in the shared library's builtinFlavor, its class in values.yaml.
var poolDefaultsSource = filepath.Join("packages", "library", "worker-image-lib", "templates", "_golden.tpl") + " (worker-image-lib.builtinFlavor) and " + filepath.Join(render.PoolChart, "values.yaml")

// catalogDefaultsAgree checks that the catalog's default images[] is exactly the
// flavor the pool chart gives a new pool, on the pool's default class.
func catalogDefaultsAgree(catalogFile string, pool support.Defaults, catalog map[string]interface{}) error {
	rel := func(p string) string {
		r, err := filepath.Rel(support.RepoRoot(), p)
		if err != nil {
			return p
		}
		return r
	}
	id, version, class := pool.SchematicID, pool.Version, pool.StorageClass
	images, _ := catalog["images"].([]interface{})
	var problems []string
	if len(images) != 1 {
		problems = append(problems, fmt.Sprintf("images has %d entries, want exactly one", len(images)))
	} else {
		e, _ := images[0].(map[string]interface{})
		if str(e["schematicID"]) != id || str(e["version"]) != version {
			problems = append(problems, fmt.Sprintf("images[0] is (%q, %q), the pool chart gives a new pool (%q, %q)", str(e["schematicID"]), str(e["version"]), id, version))
		}
		if c, ok := e["storageClass"]; ok && str(c) != class {
			problems = append(problems, fmt.Sprintf("images[0].storageClass is %q, the pool's storageClass is %q", str(c), class))
		}
	}
	if c := str(catalog["storageClass"]); c != class {
		problems = append(problems, fmt.Sprintf("storageClass is %q, the pool's is %q", c, class))
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("the defaults of %s and %s disagree: %s; bump both together", rel(catalogFile), poolDefaultsSource, strings.Join(problems, "; "))
}
