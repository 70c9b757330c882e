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
	"sigs.k8s.io/yaml"
)

// Per-class goldens (docs/design.md "One flavor on several StorageClasses"): the
// contract's name rule, written here independently of the charts.
func perClassName(schematicID, version, class string) string {
	return support.GoldenName(schematicID, version) + "--" + class
}

const perClassValues = `
imageFactoryURL: https://factory.mirror.internal
storage: 7Gi
images:
  - {schematicID: abc, version: v1.13.6, additionalStorageClasses: [ceph-rbd, fast.tier]}
  - {schematicID: abc, version: v1.13.5}
`

func TestCatalogAdditionalClassesAddOneGoldenPerClass(t *testing.T) {
	m := mustRenderCatalog(t, vals(t, perClassValues), nil)
	plain := catalogGolden(t, m, support.GoldenName("abc", "v1.13.6"))
	require.Len(t, m.OfKind("DataVolume"), 4)
	for _, class := range []string{"ceph-rbd", "fast.tier"} {
		g := catalogGolden(t, m, perClassName("abc", "v1.13.6", class))
		assert.Equal(t, catalogNamespace, g.Namespace())
		assert.Equal(t, render.Get(plain.Object, "spec.source"), render.Get(g.Object, "spec.source"), "same source URL")
		assert.Equal(t, map[string]interface{}{"resources": map[string]interface{}{"requests": map[string]interface{}{"storage": "7Gi"}}, "storageClassName": class}, catalogStorage(t, g))
		assert.Equal(t, render.Get(plain.Object, "metadata.annotations"), render.Get(g.Object, "metadata.annotations"), "same annotations: kept, imported at once, never collected")
	}
	assert.Equal(t, "replicated", render.Get(plain.Object, "spec.storage.storageClassName"), "the entry's own golden keeps its class")

	role := doc(t, m, "Role")
	assert.Equal(t, []interface{}{
		support.GoldenName("abc", "v1.13.6"), perClassName("abc", "v1.13.6", "ceph-rbd"), perClassName("abc", "v1.13.6", "fast.tier"), support.GoldenName("abc", "v1.13.5"),
	}, render.Get(role.Object, "rules.0.resourceNames"), "every golden, per-class ones included")
}

// A catalog without additionalStorageClasses renders as before; an empty list is no class.
func TestCatalogEmptyAdditionalClassesChangeNothing(t *testing.T) {
	before := mustRenderCatalog(t, vals(t, "images: [{schematicID: abc, version: v1.13.6}]"), nil)
	after := mustRenderCatalog(t, vals(t, "images: [{schematicID: abc, version: v1.13.6, additionalStorageClasses: []}]"), nil)
	assert.Equal(t, before.Text(), after.Text())
}

func TestCatalogAdditionalClassRefusals(t *testing.T) {
	long := strings.Repeat("a", 200)
	cases := []catalogRefusal{
		{"not a list", "images: [{schematicID: abc, version: v1.13.6, additionalStorageClasses: ceph-rbd}]", "images: [{schematicID: abc, version: v1.13.6, additionalStorageClasses: [ceph-rbd]}]",
			[]string{"images[0].additionalStorageClasses is \"ceph-rbd\", not a list", "write it as a list of StorageClass names"}},
		{"an item not a string", "images: [{schematicID: abc, version: v1.13.6, additionalStorageClasses: [[x]]}]", "images: [{schematicID: abc, version: v1.13.6, additionalStorageClasses: [x]}]",
			[]string{"images[0].additionalStorageClasses[0] is a list, not a string"}},
		{"not a class name", "images: [{schematicID: abc, version: v1.13.6, additionalStorageClasses: ['Ceph RBD']}]", "images: [{schematicID: abc, version: v1.13.6, additionalStorageClasses: [ceph-rbd]}]",
			[]string{`images[0] (schematicID "abc", version "v1.13.6")`, `images[0].additionalStorageClasses[0] "Ceph RBD" is not a StorageClass name`, "DNS subdomain", "set it to a class such as"}},
		{"empty class", "images: [{schematicID: abc, version: v1.13.6, additionalStorageClasses: ['']}]", "images: [{schematicID: abc, version: v1.13.6, additionalStorageClasses: [a]}]",
			[]string{`additionalStorageClasses[0] "" is not a StorageClass name`}},
		{"listed twice", "images: [{schematicID: abc, version: v1.13.6, additionalStorageClasses: [ceph-rbd, local, ceph-rbd]}]", "images: [{schematicID: abc, version: v1.13.6, additionalStorageClasses: [ceph-rbd, local]}]",
			[]string{`images[0].additionalStorageClasses[2] "ceph-rbd" is listed already (as [0])`, `remove the second "ceph-rbd"`}},
		{"the chart-wide class of the entry's golden", "images: [{schematicID: abc, version: v1.13.6, additionalStorageClasses: [replicated]}]", "images: [{schematicID: abc, version: v1.13.6, additionalStorageClasses: [ceph-rbd]}]",
			[]string{`additionalStorageClasses[0] "replicated" is the class the entry's own golden ` + support.GoldenName("abc", "v1.13.6") + ` is on (from storageClass)`, `remove "replicated" from additionalStorageClasses`}},
		{"the entry's own class", "images: [{schematicID: abc, version: v1.13.6, storageClass: local, additionalStorageClasses: [local]}]", "images: [{schematicID: abc, version: v1.13.6, storageClass: local, additionalStorageClasses: [replicated]}]",
			[]string{`"local" is the class the entry's own golden`, "(from images[0].storageClass)"}},
		{"a name over 253 characters", "images: [{schematicID: abc, version: v1.13.6, additionalStorageClasses: [" + long + "." + long[:52] + "]}]", "images: [{schematicID: abc, version: v1.13.6, additionalStorageClasses: [" + long + "." + long[:20] + "]}]",
			[]string{"gives the golden name talos-worker-abc-v1.13.6--aaa", "(279 characters), longer than the 253", "shorter name"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rel := render.Release{Name: catalogRelease, Namespace: catalogNamespace, SkipSchemaValidation: true}
			_, err := renderCatalogAs(t, rel, vals(t, tc.refused), nil)
			requireRefusal(t, err, tc.fragments...)
			m, err := renderCatalogAs(t, rel, vals(t, tc.neighbour), nil)
			require.NoError(t, err, "the neighbour %s must render", tc.neighbour)
			assert.Len(t, m.OfKind("DataVolume"), 1+len(render.Get(vals(t, tc.neighbour), "images.0.additionalStorageClasses").([]interface{})))
		})
	}
	// With the schema on, the operator reads the same words (the class rules
	// are the schema's x-form); a value of another shape is the schema's.
	for _, v := range []string{
		"images: [{schematicID: abc, version: v1.13.6, additionalStorageClasses: ['Ceph RBD']}]",
		"images: [{schematicID: abc, version: v1.13.6, additionalStorageClasses: [a, a]}]",
	} {
		_, on := renderCatalog(t, vals(t, v), nil)
		_, off := renderCatalogAs(t, render.Release{Name: catalogRelease, Namespace: catalogNamespace, SkipSchemaValidation: true}, vals(t, v), nil)
		require.Error(t, off)
		require.Error(t, on)
		require.Equal(t, off.Error(), on.Error(), v)
	}
	_, err := renderCatalog(t, vals(t, "images: [{schematicID: abc, version: v1.13.6, additionalStorageClasses: a}]"), nil)
	requireRefusal(t, err, "values don't meet the specifications of the schema", "got string, want array")
}

// For an entry without a class, its golden's class is the one it is on today:
// its DataVolume's, else its PVC's, else the cluster default.
func TestCatalogAdditionalClassEqualToWhereTheGoldenIsIsRefused(t *testing.T) {
	const entry = "{storageClass: '', images: [{schematicID: abc, version: v1.13.6, additionalStorageClasses: [%s]}]}"
	name := support.GoldenName("abc", "v1.13.6")
	url := catalogImageURL(catalogDefaultFactory, "abc", "v1.13.6")
	dvOn := func(class string) string {
		return "---\napiVersion: cdi.kubevirt.io/v1beta1\nkind: DataVolume\nmetadata: {name: " + name + ", namespace: cozy-public}\nspec:\n  source: {http: {url: '" + url + "'}}\n  storage: {resources: {requests: {storage: 6Gi}}}\nstatus: {claimName: " + name + "}\n" + pvc("cozy-public", name, class, "6Gi")
	}
	classes := storageClass("replicated", "2026-01-01T00:00:00Z", true, gaDefault) + storageClass("local", "2026-01-01T00:00:00Z", true)
	for _, tc := range []struct {
		name, cluster, refused, neighbour, from string
	}{
		{"bound by its DataVolume's PVC", dvOn("local") + classes, "local", "replicated", "its PersistentVolumeClaim cozy-public/" + name},
		{"only its PVC is left", pvc("cozy-public", name, "local", "6Gi") + classes, "local", "replicated", "its PersistentVolumeClaim cozy-public/" + name},
		{"no golden yet: the cluster default", classes, "replicated", "local", "the cluster default class"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := renderCatalog(t, vals(t, strings.ReplaceAll(entry, "%s", tc.refused)), clusterFromYAML(t, tc.cluster))
			requireRefusal(t, err, `images[0].additionalStorageClasses[0] "`+tc.refused+`" is the class the entry's own golden `+name+` is on`, tc.from, `remove "`+tc.refused+`"`)
			m, err := renderCatalog(t, vals(t, strings.ReplaceAll(entry, "%s", tc.neighbour)), clusterFromYAML(t, tc.cluster))
			require.NoError(t, err)
			catalogGolden(t, m, perClassName("abc", "v1.13.6", tc.neighbour))
		})
	}
	// No cluster: nothing known, nothing refused.
	mustRenderCatalog(t, vals(t, strings.ReplaceAll(entry, "%s", "replicated")), nil)
	// A catalog with no additional class reads no class or PVC for it.
	cluster := clusterFromYAML(t, classes)
	mustRenderCatalog(t, vals(t, "{storageClass: '', images: [{schematicID: abc, version: v1.13.6}]}"), cluster)
	assert.Zero(t, cluster.CallsByVerb()["list storageclasses"])
}

// A per-class golden that exists cannot be edited, like any golden.
func TestCatalogEditedPerClassGoldenIsRefused(t *testing.T) {
	const before = "{storage: 6Gi, images: [{schematicID: abc, version: v1.13.6, additionalStorageClasses: [ceph-rbd]}]}"
	cluster := support.NewCluster()
	require.NoError(t, cluster.Apply(mustRenderCatalog(t, vals(t, before), nil), catalogNamespace))
	up := render.Release{Name: catalogRelease, Namespace: catalogNamespace, Upgrade: true}
	_, err := renderCatalogAs(t, up, vals(t, before), cluster)
	require.NoError(t, err, "unchanged")
	_, err = renderCatalogAs(t, up, vals(t, "{storage: 6Gi, images: [{schematicID: abc, version: v1.13.6, additionalStorageClasses: [ceph-rbd, other]}]}"), cluster)
	require.NoError(t, err, "adding a class adds a golden and edits none")
	// The plain golden is refused first (the chart-wide storage moved both); drop it to see the per-class one.
	require.NoError(t, cluster.Delete("cdi.kubevirt.io/v1beta1", "DataVolume", catalogNamespace, support.GoldenName("abc", "v1.13.6")))
	_, err = renderCatalogAs(t, up, vals(t, "{storage: 8Gi, images: [{schematicID: abc, version: v1.13.6, additionalStorageClasses: [ceph-rbd]}]}"), cluster)
	requireRefusal(t, err, `images[0] (schematicID "abc", version "v1.13.6"), additional class "ceph-rbd" was edited after its golden was created`,
		"DataVolume cozy-public/"+perClassName("abc", "v1.13.6", "ceph-rbd"), `storage "6Gi" there, "8Gi" now (from storage)`, "cannot be changed in place")
}

// retire: true retires the entry's per-class goldens with it, each checked for users.
func TestCatalogRetireTakesThePerClassGoldens(t *testing.T) {
	const keep = "images: [{schematicID: abc, version: v1.13.5, additionalStorageClasses: [ceph-rbd]}, {schematicID: abc, version: v1.13.6}]"
	const retire = "images: [{schematicID: abc, version: v1.13.5, additionalStorageClasses: [ceph-rbd], retire: true}, {schematicID: abc, version: v1.13.6}]"
	pc := perClassName("abc", "v1.13.5", "ceph-rbd")
	live := func(objects ...string) *support.Cluster {
		cluster := support.NewCluster()
		require.NoError(t, cluster.Apply(mustRenderCatalog(t, vals(t, keep), nil), catalogNamespace))
		if len(objects) > 0 {
			objs, err := render.ParseObjects([]byte(strings.Join(objects, "")))
			require.NoError(t, err)
			require.NoError(t, cluster.Add(objs...))
		}
		return cluster
	}
	_, err := renderCatalog(t, vals(t, retire), live(diskUser("DataVolume", "tenant-acme", "vm-1-disk-system", pc)))
	requireRefusal(t, err, `additional class "ceph-rbd" sets retire: true, but its golden cozy-public/`+pc, "still used by 1 object(s): tenant-acme/DataVolume/vm-1-disk-system")

	m, err := renderCatalog(t, vals(t, retire), live(diskUser("DataVolume", "tenant-acme", "vm-1-disk-system", retireB)))
	require.NoError(t, err)
	g := catalogGolden(t, m, pc)
	assert.Equal(t, "true", render.Get(g.Object, "metadata.annotations["+retiringKey+"]"))
	assert.Nil(t, render.Get(g.Object, "metadata.annotations[helm.sh/resource-policy]"))
	assert.Equal(t, []interface{}{retireB}, render.Get(doc(t, m, "Role").Object, "rules.0.resourceNames"), "neither retiring golden may be cloned")
}

// The platform forwards additionalStorageClasses and checks its shape with the catalog's rule.
func TestPlatformForwardsAdditionalClasses(t *testing.T) {
	enabled := "bundles: {enabledPackages: [" + catalogPackage + "]}\n"
	set := "{images: [{schematicID: abc, version: v1.13.6, additionalStorageClasses: [ceph-rbd]}]}"
	m := mustRenderPlatform(t, vals(t, enabled+"kubernetesWorkerImage: "+set))
	values := render.Get(platformDoc(t, m, "Package", catalogPackage).Object, "spec.components.kubernetes-worker-image.values")
	assert.Equal(t, vals(t, set), values)
	catalogGolden(t, mustRenderCatalog(t, values.(map[string]interface{}), nil), perClassName("abc", "v1.13.6", "ceph-rbd"))

	c, err := support.LoadChart(render.PlatformChart)
	require.NoError(t, err)
	rel := render.Release{Name: "cozystack-platform", Namespace: "cozy-system", SkipSchemaValidation: true}
	_, err = render.Render(c, render.Options{Release: rel, Values: vals(t, enabled+"kubernetesWorkerImage: {images: [{schematicID: abc, version: v1.13.6, additionalStorageClasses: {a: b}}]}")})
	requireRefusal(t, err, "kubernetesWorkerImage.images[0].additionalStorageClasses is a map, not a list")
	_, err = render.Render(c, render.Options{Release: rel, Values: vals(t, enabled+"kubernetesWorkerImage: "+set)})
	require.NoError(t, err)
}

// Per-class goldens are byte-neutral on the catalog side too: for every catalog
// golden case, listing one more class in every entry adds that class's goldens
// and their names in the clone Role, and leaves every other document of the
// committed render byte for byte (existing goldens never change name or spec).
func TestAdditionalClassesChangeNoCommittedCatalogDocument(t *testing.T) {
	cases, _, err := support.GoldenCases()
	require.NoError(t, err)
	checked := 0
	for _, c := range cases {
		if c.Chart != "catalog" {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			before, err := c.Render(render.Render, c.Cluster != nil)
			require.NoError(t, err)
			values, err := render.ReadValues(c.ValuesFile)
			require.NoError(t, err)
			if _, set := values["images"]; !set {
				// The chart's default entries, copied so the chart stays as loaded.
				chrt, err := support.LoadChart(c.ChartDir())
				require.NoError(t, err)
				raw, err := yaml.Marshal(chrt.Values["images"])
				require.NoError(t, err)
				var defaults []interface{}
				require.NoError(t, yaml.Unmarshal(raw, &defaults))
				values["images"] = defaults
			}
			entries, _ := values["images"].([]interface{})
			for _, e := range entries {
				entry := e.(map[string]interface{})
				classes, _ := entry["additionalStorageClasses"].([]interface{})
				entry["additionalStorageClasses"] = append(classes, "extra-tier")
			}
			raw, err := yaml.Marshal(values)
			require.NoError(t, err)
			with := c
			with.ValuesFile = filepath.Join(t.TempDir(), "values.yaml")
			require.NoError(t, os.WriteFile(with.ValuesFile, raw, 0o644))
			after, err := with.Render(render.Render, c.Cluster != nil)
			require.NoError(t, err)

			byName := map[string]string{}
			for _, d := range after.Docs {
				byName[d.Kind()+"/"+d.Name()] = d.Text
			}
			for _, d := range before.Docs {
				if d.Kind() == "Role" {
					continue // its resourceNames gain the new goldens
				}
				require.Equal(t, d.Text, byName[d.Kind()+"/"+d.Name()], "%s %s", d.Kind(), d.Name())
			}
			require.Len(t, after.Docs, len(before.Docs)+len(entries), "one more golden per entry")
			checked++
		})
	}
	require.GreaterOrEqual(t, checked, 4)
}
