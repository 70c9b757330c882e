package render

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// One setting for a closed network: the catalog's goldens import from the
// factory it publishes for new pools (tenantWorkers.talos.imageFactoryURL)
// unless the catalog sets its own imageFactoryURL; a golden that exists keeps
// the source it is stored with.

const publishedFactory = "https://factory.mirror.internal"

// publishingCatalog is catalog values that publish the mirror (and its CA,
// with ca) and list the entries given.
func publishingCatalog(t testing.TB, ca string, entries ...string) map[string]interface{} {
	t.Helper()
	v := vals(t, "{tenantWorkers: {talos: {imageFactoryURL: '"+publishedFactory+"'}}, images: ["+strings.Join(entries, ", ")+"]}")
	if ca != "" {
		v["tenantWorkers"].(map[string]interface{})["talos"].(map[string]interface{})["imageFactoryCA"] = ca
	}
	return v
}

func goldenURL(t testing.TB, m *render.Manifest, name string) interface{} {
	t.Helper()
	return render.Get(catalogGolden(t, m, name).Object, "spec.source.http.url")
}

func goldenCA(t testing.TB, m *render.Manifest, name string) interface{} {
	t.Helper()
	return render.Get(catalogGolden(t, m, name).Object, "spec.source.http.certConfigMap")
}

// Where a new golden imports from: the catalog's own imageFactoryURL (set,
// even to the public factory, it wins), else the published factory, else the
// built-in; an entry's own URL wins over all of them.
func TestCatalogFactoryFollowsThePublishedOne(t *testing.T) {
	entries := []string{"{schematicID: abc, version: v1.13.6, additionalStorageClasses: [fast]}", "{schematicID: own, version: v1.13.6, imageFactoryURL: 'https://factory.own.internal'}"}
	for _, tc := range []struct {
		name    string
		values  map[string]interface{}
		factory string
	}{
		{"nothing set or published: the built-in", vals(t, "{images: ["+strings.Join(entries, ", ")+"]}"), catalogDefaultFactory},
		{"the catalog's own \"\" is unset", vals(t, "{imageFactoryURL: '', images: ["+strings.Join(entries, ", ")+"]}"), catalogDefaultFactory},
		{"published: the goldens follow it", publishingCatalog(t, "", entries...), publishedFactory},
		{"the catalog's own wins over the published", func() map[string]interface{} {
			v := publishingCatalog(t, "", entries...)
			v["imageFactoryURL"] = "https://factory.talos.dev"
			return v
		}(), "https://factory.talos.dev"},
	} {
		for _, schemaOff := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s (schema off %v)", tc.name, schemaOff), func(t *testing.T) {
				m, err := renderCatalogAs(t, render.Release{Name: catalogRelease, Namespace: catalogNamespace, SkipSchemaValidation: schemaOff}, tc.values, nil)
				require.NoError(t, err)
				for _, name := range []string{"talos-worker-abc-v1.13.6", "talos-worker-abc-v1.13.6--fast"} {
					assert.Equal(t, catalogImageURL(tc.factory, "abc", "v1.13.6"), goldenURL(t, m, name), name)
				}
				assert.Equal(t, catalogImageURL("https://factory.own.internal", "own", "v1.13.6"), goldenURL(t, m, "talos-worker-own-v1.13.6"), "an entry's own URL wins")
				assert.Empty(t, m.OfKind("ConfigMap"), "no CA set or published: none")
			})
		}
	}
	// Nothing set and nothing published renders what the public factory written out renders.
	builtin := mustRenderCatalog(t, vals(t, "{images: ["+entries[0]+"]}"), nil)
	written := mustRenderCatalog(t, vals(t, "{imageFactoryURL: '"+catalogDefaultFactory+"', images: ["+entries[0]+"]}"), nil)
	assert.Equal(t, written.Text(), builtin.Text())
}

// The published factory's CA goes with it: the goldens that import from the
// published URL name the ConfigMap holding it, an entry with its own URL does
// not, and the catalog's own imageFactoryCA (or an entry's) wins; with the
// catalog's own URL set, the published CA applies to nothing.
func TestCatalogTakesThePublishedCAWithThePublishedFactory(t *testing.T) {
	entries := []string{"{schematicID: abc, version: v1.13.6, additionalStorageClasses: [fast]}", "{schematicID: own, version: v1.13.6, imageFactoryURL: 'https://factory.own.internal'}", "{schematicID: none, version: v1.13.6, imageFactoryCA: ''}"}
	m := mustRenderCatalog(t, publishingCatalog(t, testCA(t), entries...), nil)
	assert.Equal(t, testCA(t), caConfigMapData(t, m, catalogCAConfigMap))
	assert.Len(t, m.OfKind("ConfigMap"), 1)
	for name, want := range map[string]interface{}{
		"talos-worker-abc-v1.13.6":       catalogCAConfigMap,
		"talos-worker-abc-v1.13.6--fast": catalogCAConfigMap,
		"talos-worker-own-v1.13.6":       nil,
		"talos-worker-none-v1.13.6":      nil,
	} {
		assert.Equal(t, want, goldenCA(t, m, name), name)
	}
	assert.Contains(t, catalogConfigMap(t, m, catalogCAConfigMap).Text, "(tenantWorkers.talos.imageFactoryCA)", "the ConfigMap says where its CA came from")

	// The catalog's own CA wins, for every golden it applies to today.
	own := publishingCatalog(t, testCA(t), entries...)
	own["imageFactoryCA"] = rotatedCA(t)
	m = mustRenderCatalog(t, own, nil)
	assert.Equal(t, rotatedCA(t), caConfigMapData(t, m, catalogCAConfigMap))
	assert.Equal(t, catalogCAConfigMap, goldenCA(t, m, "talos-worker-abc-v1.13.6"))
	assert.Equal(t, catalogCAConfigMap, goldenCA(t, m, "talos-worker-own-v1.13.6"), "the catalog's own CA applies to every entry, as before")

	// The catalog's own URL: the published CA belongs to another URL, and applies to nothing.
	explicit := publishingCatalog(t, testCA(t), entries...)
	explicit["imageFactoryURL"] = publishedFactory
	m = mustRenderCatalog(t, explicit, nil)
	assert.Empty(t, m.OfKind("ConfigMap"))
	assert.Nil(t, goldenCA(t, m, "talos-worker-abc-v1.13.6"))
}

func catalogConfigMap(t testing.TB, m *render.Manifest, name string) render.Doc {
	t.Helper()
	d, ok := m.Find("ConfigMap", name)
	require.True(t, ok, "the render has the ConfigMap %s", name)
	return d
}

// storedGolden is a golden a previous catalog release imported from factory,
// as CDI completed it (the catalog's label and flavor annotations left out:
// they are metadata the upgrade adds).
func storedGolden(name, factory, schematicID, version, class string) string {
	return fmt.Sprintf(`---
apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata:
  name: %s
  namespace: cozy-public
  annotations: {helm.sh/resource-policy: keep}
spec:
  source: {http: {url: %s}}
  storage: {resources: {requests: {storage: 6Gi}}, storageClassName: %s}
status: {phase: Succeeded, progress: 100.0%%}
`, name, catalogImageURL(factory, schematicID, version), class)
}

// A golden that exists keeps its source as stored when nobody set its URL:
// publishing a mirror (or moving it, or removing it) refuses no entry as
// edited and changes no golden's spec; goldens created from then on (a new
// entry, a new additional class) import from the published factory. With the
// schema on and off.
func TestExistingGoldensKeepTheirSourceWhenThePublishedFactoryMoves(t *testing.T) {
	stored := storedGolden("talos-worker-abc-v1.13.6", catalogDefaultFactory, "abc", "v1.13.6", "replicated")
	before := mustRenderCatalog(t, vals(t, "{images: [{schematicID: abc, version: v1.13.6}]}"), clusterFromYAML(t, stored))
	for _, published := range []map[string]interface{}{
		publishingCatalog(t, "", "{schematicID: abc, version: v1.13.6}"),
		publishingCatalog(t, testCA(t), "{schematicID: abc, version: v1.13.6}"),
	} {
		for _, schemaOff := range []bool{false, true} {
			m, err := renderCatalogAs(t, render.Release{Name: catalogRelease, Namespace: catalogNamespace, SkipSchemaValidation: schemaOff}, published, clusterFromYAML(t, stored))
			require.NoError(t, err, "an existing golden is not refused as edited when the published factory moves")
			assert.Equal(t, catalogGolden(t, before, "talos-worker-abc-v1.13.6").Text, catalogGolden(t, m, "talos-worker-abc-v1.13.6").Text, "the golden renders as it is stored: its URL, no CA")
		}
	}
	// Goldens created from then on import from the mirror, with its CA: a new entry, a new class of the old one.
	grown := publishingCatalog(t, testCA(t), "{schematicID: abc, version: v1.13.6, additionalStorageClasses: [fast]}", "{schematicID: abc, version: v1.13.7}")
	m := mustRenderCatalog(t, grown, clusterFromYAML(t, stored))
	assert.Equal(t, catalogImageURL(catalogDefaultFactory, "abc", "v1.13.6"), goldenURL(t, m, "talos-worker-abc-v1.13.6"))
	assert.Nil(t, goldenCA(t, m, "talos-worker-abc-v1.13.6"))
	for name, version := range map[string]string{"talos-worker-abc-v1.13.6--fast": "v1.13.6", "talos-worker-abc-v1.13.7": "v1.13.7"} {
		assert.Equal(t, catalogImageURL(publishedFactory, "abc", version), goldenURL(t, m, name), name)
		assert.Equal(t, catalogCAConfigMap, goldenCA(t, m, name), name)
	}
	// The mirror moves again, or goes: a golden imported from the first mirror keeps it too.
	onMirror := storedGolden("talos-worker-abc-v1.13.7", publishedFactory, "abc", "v1.13.7", "replicated")
	for _, values := range []map[string]interface{}{
		vals(t, "{tenantWorkers: {talos: {imageFactoryURL: 'https://factory.second.internal'}}, images: [{schematicID: abc, version: v1.13.7}]}"),
		vals(t, "{images: [{schematicID: abc, version: v1.13.7}]}"),
	} {
		m := mustRenderCatalog(t, values, clusterFromYAML(t, onMirror))
		assert.Equal(t, catalogImageURL(publishedFactory, "abc", "v1.13.7"), goldenURL(t, m, "talos-worker-abc-v1.13.7"))
	}
	// Only its PVC left (CDI collected the DataVolume): its import endpoint is the stored source.
	pvc := `---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: talos-worker-abc-v1.13.6
  namespace: cozy-public
  annotations: {cdi.kubevirt.io/storage.import.endpoint: "` + catalogImageURL(catalogDefaultFactory, "abc", "v1.13.6") + `"}
spec: {storageClassName: replicated, resources: {requests: {storage: 6Gi}}}
`
	m = mustRenderCatalog(t, publishingCatalog(t, "", "{schematicID: abc, version: v1.13.6}"), clusterFromYAML(t, pvc))
	assert.Equal(t, catalogImageURL(catalogDefaultFactory, "abc", "v1.13.6"), goldenURL(t, m, "talos-worker-abc-v1.13.6"))
}

// A URL set explicitly keeps today's rule: the catalog's own imageFactoryURL,
// or an entry's, that differs from the stored source is an edit, refused
// naming the value and where it came from; its neighbour (the stored URL
// written out) renders.
func TestExplicitFactoryURLsStillRefuseAnEdit(t *testing.T) {
	stored := clusterFromYAML(t, storedGolden("talos-worker-abc-v1.13.6", catalogDefaultFactory, "abc", "v1.13.6", "replicated"))
	for _, tc := range []struct{ name, refused, neighbour, from string }{
		{"the catalog's own", "{imageFactoryURL: '" + publishedFactory + "', images: [{schematicID: abc, version: v1.13.6}]}", "{imageFactoryURL: '" + catalogDefaultFactory + "', images: [{schematicID: abc, version: v1.13.6}]}", "imageFactoryURL"},
		{"the entry's own", "{images: [{schematicID: abc, version: v1.13.6, imageFactoryURL: '" + publishedFactory + "'}]}", "{images: [{schematicID: abc, version: v1.13.6, imageFactoryURL: '" + catalogDefaultFactory + "'}]}", "images[0].imageFactoryURL"},
		{"the entry's own beside a published one", "{tenantWorkers: {talos: {imageFactoryURL: '" + publishedFactory + "'}}, images: [{schematicID: abc, version: v1.13.6, imageFactoryURL: '" + publishedFactory + "'}]}", "{tenantWorkers: {talos: {imageFactoryURL: '" + publishedFactory + "'}}, images: [{schematicID: abc, version: v1.13.6}]}", "images[0].imageFactoryURL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := renderCatalog(t, vals(t, tc.refused), stored)
			requireRefusal(t, err, `images[0] (schematicID "abc", version "v1.13.6") was edited after its golden was created: DataVolume cozy-public/talos-worker-abc-v1.13.6 has source URL "`+catalogImageURL(catalogDefaultFactory, "abc", "v1.13.6")+`" there, "`+catalogImageURL(publishedFactory, "abc", "v1.13.6")+`" now (from `+tc.from+`)`, "add a new (schematicID, version) entry")
			_, err = renderCatalog(t, vals(t, tc.neighbour), stored)
			require.NoError(t, err)
		})
	}
}
