package render

import (
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The Talos flavor new pools take is published like the factory (issue 59,
// item 1): the catalog's tenantWorkers.talos.schematicID and version, and the
// platform's, written into _cluster.talos. Taken when a pool is created and
// recorded on its MachineDeployment, so moving it rolls no running pool.

const otherSchematic = "feedfacefeedfacefeedfacefeedfacefeedfacefeedfacefeedfacefeedface"

// goldenOf is a Succeeded golden of the default schematic at version.
func goldenOf(version string) string {
	return golden{name: "talos-worker-" + defaultSchematic + "-" + version, class: "replicated", size: "6Gi", phase: "Succeeded"}.yaml()
}

// The catalog publishes the two keys beside the factory, as the platform
// writes them into _cluster: only those set.
func TestCatalogPublishesTheTalosFlavorForNewPools(t *testing.T) {
	tenant := "tenantWorkers: {talos: {schematicID: " + otherSchematic + ", version: v1.13.7, imageFactoryURL: 'https://factory.mirror.internal'}}\n"
	published := catalogTenantDefaults(t, vals(t, tenant+"images: [{schematicID: "+otherSchematic+", version: v1.13.7}]\n"))[0].Object["data"].(map[string]interface{})["values.json"]
	assert.Equal(t, `{"talos":{"imageFactoryURL":"https://factory.mirror.internal","schematicID":"`+otherSchematic+`","version":"v1.13.7"}}`, published)
	assert.Equal(t, map[string]interface{}{"imageFactoryURL": internalFactory, "schematicID": otherSchematic, "version": "v1.13.7"},
		render.Get(clusterChannel(t, tenant), "talos"), "the platform chart writes the same keys into _cluster.talos")
	assert.Equal(t, `{"talos":{"version":"v1.13.7"}}`, catalogTenantDefaults(t, vals(t, "tenantWorkers: {talos: {version: v1.13.7, schematicID: ''}}"))[0].Object["data"].(map[string]interface{})["values.json"], "\"\" is unset: not published")
}

// A new pool takes the published flavor (HTTP and clone), records it with
// the catalog named as its channel, and says so in its sources; _cluster's
// beats the catalog's, and the pool's own beats both.
func TestNewPoolTakesAndRecordsThePublishedTalosFlavor(t *testing.T) {
	published := publishedBy(t, "tenantWorkers: {talos: {version: v1.13.7}}")
	m := mustRenderPool(t, vals(t, "cluster: acme"), stock(t, published))
	assert.Contains(t, urlOfPool(t, m), "/image/"+defaultSchematic+"/v1.13.7/")
	assert.Equal(t, "factory.talos.dev/installer/"+defaultSchematic+":v1.13.7", render.Get(workerConfig(t, m), "machine.install.image"))
	assert.Equal(t, `{"fromCatalog":["version"],"version":"v1.13.7"}`, render.Get(doc(t, m, "MachineDeployment").Object, createdWithKey))
	facts := imageFacts(t, poolChart(t), vals(t, "cluster: acme"), stock(t, published))
	assert.Equal(t, "talos.version unset: the default talos.version of "+publishedChannel+", recorded when the pool was created (today's platform defaults (_cluster, then the catalog's published ones), as for a new pool; its MachineDeployment records those that apply and which came from the catalog)", render.Get(facts, "image.versionSource"))
	assert.Equal(t, "talos.schematicID unset: the chart's default for a new pool", render.Get(facts, "image.schematicIDSource"), "the schematic is not published: the chart's")

	// The clone path clones the published flavor's golden.
	clone := mustRenderPool(t, vals(t, builtinPool), healthyCluster(t, goldenOf("v1.13.7"), published))
	assert.Equal(t, "talos-worker-"+defaultSchematic+"-v1.13.7", render.Get(diskOf(clone), "spec.source.pvc.name"))

	// Both published: both recorded, both named.
	both := mustRenderPool(t, vals(t, "cluster: acme"), stock(t, publishedBy(t, "tenantWorkers: {talos: {version: v1.13.7, schematicID: "+otherSchematic+"}}\nimages: [{schematicID: "+otherSchematic+", version: v1.13.7}]")))
	assert.Contains(t, urlOfPool(t, both), "/image/"+otherSchematic+"/v1.13.7/")
	assert.Equal(t, `{"fromCatalog":["schematicID","version"],"schematicID":"`+otherSchematic+`","version":"v1.13.7"}`, render.Get(doc(t, both, "MachineDeployment").Object, createdWithKey))

	// _cluster's beats the published one, and is recorded without fromCatalog.
	channel := clusterChannel(t, "tenantWorkers: {talos: {version: v1.13.8}}")
	viaCluster := mustRenderPool(t, withChannel(t, "cluster: acme", channel), stock(t, published))
	assert.Contains(t, urlOfPool(t, viaCluster), "/v1.13.8/")
	assert.Equal(t, `{"version":"v1.13.8"}`, render.Get(doc(t, viaCluster, "MachineDeployment").Object, createdWithKey))
	facts = imageFacts(t, poolChart(t), withChannel(t, "cluster: acme", channel), stock(t, published))
	assert.Equal(t, "talos.version unset: the platform default _cluster.talos.version recorded when the pool was created (today's platform defaults (_cluster), as for a new pool; its MachineDeployment records those that apply)", render.Get(facts, "image.versionSource"))

	// The pool's own value, or osImage's own field, wins.
	own := mustRenderPool(t, vals(t, "{cluster: acme, talos: {version: v1.13.5}}"), stock(t, published))
	assert.Contains(t, urlOfPool(t, own), "/v1.13.5/")
	osOwn := mustRenderPool(t, vals(t, "{cluster: acme, osImage: {factory: {version: v1.13.4}}}"), stock(t, published))
	assert.Contains(t, urlOfPool(t, osOwn), "/v1.13.4/")
}

// Moving the published default rolls no running pool: a pool created before
// any flavor was published, and one created under it, render the same bytes
// once the catalog publishes another; a new pool takes the new one.
func TestMovingThePublishedTalosFlavorRollsNoRunningPool(t *testing.T) {
	for _, first := range []string{"{}", "tenantWorkers: {talos: {version: v1.13.7}}"} {
		for _, values := range []string{"cluster: acme", builtinPool} {
			t.Run(first+" "+values, func(t *testing.T) {
				cluster := healthyCluster(t, goldenOf("v1.13.7"), goldenOf("v1.13.8"), publishedBy(t, first))
				created := mustRenderPool(t, vals(t, values), cluster)
				require.NoError(t, cluster.Apply(created, testNamespace))
				for _, later := range []string{"tenantWorkers: {talos: {version: v1.13.8}}", "tenantWorkers: {talos: {version: v1.13.8, schematicID: " + otherSchematic + "}}\nimages: [{schematicID: " + otherSchematic + ", version: v1.13.8}]", "{}"} {
					republish(t, cluster, publishedBy(t, later))
					again := mustRenderPool(t, vals(t, values), cluster)
					assert.Equal(t, created.Text(), again.Text(), "created under %s, then %s: not a byte moves", first, later)
				}
				// A new pool takes what is published now.
				republish(t, cluster, publishedBy(t, "tenantWorkers: {talos: {version: v1.13.8}}"))
				fresh, err := renderChartAs(t, poolChart(t), render.Release{Name: "kubernetes-nodes-acme-fresh", Namespace: testNamespace}, vals(t, values), cluster)
				require.NoError(t, err)
				assert.Contains(t, doc(t, fresh, "KubevirtMachineTemplate").Text, "v1.13.8")
			})
		}
	}
}

// The record is read back where what the pool runs cannot be: a pool whose
// template is gone keeps the recorded flavor, not today's published one and
// not the chart's; without a record it takes the chart's, as before.
func TestRecordedTalosFlavorIsReadBack(t *testing.T) {
	published := publishedBy(t, "tenantWorkers: {talos: {version: v1.13.8}}")
	m := mustRenderPool(t, vals(t, "cluster: acme"), stock(t, published, createdWith(`{"fromCatalog":["version"],"version":"v1.13.7"}`)))
	assert.Contains(t, urlOfPool(t, m), "/image/"+defaultSchematic+"/v1.13.7/")
	assert.Equal(t, `{"fromCatalog":["version"],"version":"v1.13.7"}`, render.Get(doc(t, m, "MachineDeployment").Object, createdWithKey), "carried as written")
	facts := imageFacts(t, poolChart(t), vals(t, "cluster: acme"), stock(t, published, createdWith(`{"fromCatalog":["version"],"version":"v1.13.7"}`)))
	assert.Equal(t, "talos.version unset: the default talos.version of "+publishedChannel+", recorded when the pool was created (annotation kubernetes-worker-image.cozystack.io/created-with of MachineDeployment tenant-acme/kubernetes-acme-workers)", render.Get(facts, "image.versionSource"))

	schematicOnly := mustRenderPool(t, vals(t, "cluster: acme"), stock(t, published, createdWith(`{"schematicID":"`+otherSchematic+`"}`)))
	assert.Contains(t, urlOfPool(t, schematicOnly), "/image/"+otherSchematic+"/"+defaultTalos+"/", "a recorded schematic; the version unrecorded: the chart's")

	none := mustRenderPool(t, vals(t, "cluster: acme"), stock(t, published, createdWith(`{"imageFactoryURL":"https://factory.mirror.internal"}`)))
	assert.Contains(t, urlOfPool(t, none), "/"+defaultTalos+"/", "recorded before the flavor was published: the chart's default, never today's")
}

// A recorded flavor is checked as the pool's own value would be.
func TestUnreadableRecordedTalosFlavorIsRefused(t *testing.T) {
	const from = "the annotation kubernetes-worker-image.cozystack.io/created-with of MachineDeployment tenant-acme/kubernetes-acme-workers"
	for _, tc := range []struct{ record, refusal string }{
		{`{"version":"1.13.7"}`, `version in ` + from + ` is "1.13.7", not a Talos release as this chart records it`},
		{`{"version":7}`, `version in ` + from + ` is 7 (a number), not a Talos release as this chart records it`},
		{`{"schematicID":"ABC"}`, `schematicID in ` + from + ` is "ABC", not a Talos schematic ID as this chart records it`},
		{`{"schematicID":"` + strings.Repeat("a", 65) + `"}`, `not a Talos schematic ID as this chart records it (it must match ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$ and be at most 64 characters)`},
		{`{"version":"v1.13.7","fromCatalog":["schematicID"]}`, `lists "schematicID", which is not a field the record holds (once)`},
		{`{"version":"v1.13.7","schematicID":"a","imageFactoryURL":"https://f.internal","imageFactoryCA":true,"osImage":{},"fromCatalog":["version","schematicID","imageFactoryURL","imageFactoryCA","osImage","version"]}`, "not a list of one to five field names"},
	} {
		_, err := renderPool(t, vals(t, "cluster: acme"), stock(t, createdWith(tc.record)))
		requireRefusal(t, err, "pool kubernetes-acme-workers: ", tc.refusal)
	}
	// The neighbours: what the chart writes, and a pool naming its own version (the record is still read).
	for _, record := range []string{`{"version":"v1.13.7"}`, `{"fromCatalog":["schematicID","version"],"schematicID":"abc","version":"v1.13.7-rc.1"}`} {
		_, err := renderPool(t, vals(t, "cluster: acme"), stock(t, createdWith(record)))
		require.NoError(t, err, record)
	}
}

// A published or platform flavor a pool would refuse is refused when a new
// pool would record it, naming the channel and the fix.
func TestUnrecordablePlatformTalosFlavorIsRefused(t *testing.T) {
	_, err := renderPool(t, withChannel(t, "cluster: acme", map[string]interface{}{"talos": map[string]interface{}{"version": "v1.13"}}), stock(t))
	requireRefusal(t, err, `pool kubernetes-acme-workers: the platform default _cluster.talos.version "v1.13" is malformed for a pool`, "fix the platform's default (tenantWorkers in the platform chart writes _cluster.talos.version)")
	_, err = renderPool(t, withChannel(t, "cluster: acme", map[string]interface{}{"talos": map[string]interface{}{"version": "v1.13.7"}}), stock(t))
	require.NoError(t, err, "the neighbour")
	// An existing pool never reads today's platform flavor, so it is not refused for it.
	_, err = renderPool(t, withChannel(t, "cluster: acme", map[string]interface{}{"talos": map[string]interface{}{"version": "v1.13"}}), stock(t, createdWith("")))
	require.NoError(t, err)
}

// behindFacts' defaults are the flavor a new pool gets now, with where it
// came from: a published osImage's own field, else _cluster.talos, else the
// catalog's talos, else the chart's built-in ("").
func TestBehindDefaultsAreTheFlavorNewPoolsTakeNow(t *testing.T) {
	for _, tc := range []struct {
		name, pool                                     string
		channel                                        map[string]interface{}
		cluster                                        *support.Cluster
		schematic, schematicFrom, version, versionFrom string
	}{
		{"nothing published", "cluster: acme", nil, stock(t), defaultSchematic, "", defaultTalos, ""},
		{"the catalog's version", "cluster: acme", nil, stock(t, publishedBy(t, "tenantWorkers: {talos: {version: v1.13.7}}")), defaultSchematic, "", "v1.13.7", "the default talos.version of " + publishedChannel},
		{"_cluster's over the catalog's", "cluster: acme", map[string]interface{}{"talos": map[string]interface{}{"version": "v1.13.8", "schematicID": "abc"}}, stock(t, publishedBy(t, "tenantWorkers: {talos: {version: v1.13.7}}")), "abc", "the platform default _cluster.talos.schematicID", "v1.13.8", "the platform default _cluster.talos.version"},
		{"a published osImage's own field", "cluster: acme", nil, stock(t, publishedBy(t, "tenantWorkers: {talos: {version: v1.13.7}, osImage: {factory: {version: v1.13.9}}}")), defaultSchematic, "", "v1.13.9", "the default osImage.factory.version of " + publishedChannel},
		{"a running pool: today's, not its own", "cluster: acme", nil, stock(t, publishedBy(t, "tenantWorkers: {talos: {version: v1.13.8}}"), createdWith(`{"version":"v1.13.7"}`)), defaultSchematic, "", "v1.13.8", "the default talos.version of " + publishedChannel},
	} {
		values := vals(t, tc.pool)
		if tc.channel != nil {
			values["_cluster"] = tc.channel
		}
		facts := imageFacts(t, poolChart(t), values, tc.cluster)
		assert.Equal(t, []interface{}{tc.schematic, tc.schematicFrom, tc.version, tc.versionFrom},
			[]interface{}{render.Get(facts, "behind.defaults.schematicID"), render.Get(facts, "behind.defaults.schematicIDFrom"), render.Get(facts, "behind.defaults.version"), render.Get(facts, "behind.defaults.versionFrom")}, tc.name)
	}
}

// The catalog refuses a published osImage.builtin whose flavor no entry
// imports (every new pool would clone a golden that does not exist).
func TestCatalogRefusesAPublishedCloneFlavorNoEntryImports(t *testing.T) {
	for _, tc := range []struct{ values, refusal, neighbour string }{
		{"tenantWorkers: {osImage: {builtin: {}}}\nimages: []",
			"clones the golden of Talos v1.13.6, schematic " + defaultSchematic + " (schematicID from the pool chart's built-in default (tenantWorkers.talos.schematicID is not set), version from the pool chart's built-in default (tenantWorkers.talos.version is not set))",
			"tenantWorkers: {osImage: {builtin: {}}}"},
		{"tenantWorkers: {osImage: {builtin: {}}, talos: {version: v1.13.7}}",
			"clones the golden of Talos v1.13.7, schematic " + defaultSchematic + " (schematicID from the pool chart's built-in default (tenantWorkers.talos.schematicID is not set), version from tenantWorkers.talos.version)",
			"tenantWorkers: {osImage: {builtin: {}}, talos: {version: v1.13.7}}\nimages: [{schematicID: " + defaultSchematic + ", version: v1.13.7}]"},
		{"tenantWorkers: {osImage: {builtin: {version: v1.13.8}}, talos: {version: v1.13.7}}\nimages: [{schematicID: " + defaultSchematic + ", version: v1.13.7}]",
			"clones the golden of Talos v1.13.8, schematic " + defaultSchematic + " (schematicID from the pool chart's built-in default (tenantWorkers.talos.schematicID is not set), version from tenantWorkers.osImage.builtin.version)",
			"tenantWorkers: {osImage: {builtin: {version: v1.13.8}}, talos: {version: v1.13.7}}\nimages: [{schematicID: " + defaultSchematic + ", version: v1.13.8}]"},
	} {
		_, err := renderCatalog(t, vals(t, tc.values), nil)
		requireRefusal(t, err, "tenantWorkers.osImage is {builtin: ...}, so every new pool without its own osImage", tc.refusal,
			"but no images[] entry imports that flavor", "add the entry {schematicID: "+defaultSchematic+", version: ", "or remove tenantWorkers.osImage so that new pools import over HTTP")
		_, err = renderCatalog(t, vals(t, tc.neighbour), nil)
		require.NoError(t, err, tc.neighbour)
	}
	// New pools that import over HTTP clone nothing: a flavor no entry imports is published all the same.
	for _, values := range []string{"tenantWorkers: {talos: {version: v1.13.7}}\nimages: []", "tenantWorkers: {osImage: {factory: {}}, talos: {version: v1.13.7}}\nimages: []"} {
		_, err := renderCatalog(t, vals(t, values), nil)
		require.NoError(t, err, values)
	}
}

// Retiring the golden new pools take by default is refused as in use, before
// any pool runs it: the chart's built-in one while nothing is published, the
// published one once something is.
func TestCatalogRefusesToRetireTheDefaultFlavor(t *testing.T) {
	entry := func(version string, retire bool) string {
		s := "{schematicID: " + defaultSchematic + ", version: " + version
		if retire {
			s += ", retire: true"
		}
		return s + "}"
	}
	for _, tc := range []struct{ values, label, flavor, neighbour string }{
		{"images: [" + entry("v1.13.6", true) + ", " + entry("v1.13.7", false) + "]",
			`images[0] (schematicID "` + defaultSchematic + `", version "v1.13.6")`,
			"Talos v1.13.6, schematic " + defaultSchematic + ": schematicID from the pool chart's built-in default (tenantWorkers.talos.schematicID is not set), version from the pool chart's built-in default (tenantWorkers.talos.version is not set)",
			"tenantWorkers: {talos: {version: v1.13.7}}\nimages: [" + entry("v1.13.6", true) + ", " + entry("v1.13.7", false) + "]"},
		{"tenantWorkers: {talos: {version: v1.13.7}}\nimages: [" + entry("v1.13.6", false) + ", " + entry("v1.13.7", true) + "]",
			`images[1] (schematicID "` + defaultSchematic + `", version "v1.13.7")`,
			"Talos v1.13.7, schematic " + defaultSchematic + ": schematicID from the pool chart's built-in default (tenantWorkers.talos.schematicID is not set), version from tenantWorkers.talos.version",
			"tenantWorkers: {talos: {version: v1.13.6}}\nimages: [" + entry("v1.13.6", false) + ", " + entry("v1.13.7", true) + "]"},
		{"tenantWorkers: {talos: {version: v1.13.7}, osImage: {builtin: {version: v1.13.8}}}\nimages: [" + entry("v1.13.7", false) + ", " + entry("v1.13.8", true) + "]",
			`images[1] (schematicID "` + defaultSchematic + `", version "v1.13.8")`,
			"version from tenantWorkers.osImage.builtin.version",
			"tenantWorkers: {talos: {version: v1.13.7}, osImage: {builtin: {version: v1.13.7}}}\nimages: [" + entry("v1.13.7", false) + ", " + entry("v1.13.8", true) + "]"},
		{"images: [{schematicID: " + defaultSchematic + ", version: v1.13.6, additionalStorageClasses: [ceph-rbd], retire: true}]",
			`images[0] (schematicID "` + defaultSchematic + `", version "v1.13.6")`, "version from the pool chart's built-in default",
			"images: [{schematicID: " + defaultSchematic + ", version: v1.13.6, additionalStorageClasses: [ceph-rbd]}]"},
	} {
		// Nothing in the cluster uses it yet: the default is what makes it in use.
		_, err := renderCatalog(t, vals(t, tc.values), support.NewCluster())
		requireRefusal(t, err, tc.label+" sets retire: true, but its golden cozy-public/", "is in use: new pools take it by default (Talos ", tc.flavor,
			"Publish another default first (tenantWorkers.talos.schematicID and version, with an images[] entry that imports it), then retire this one; or remove retire to keep the golden")
		_, err = renderCatalog(t, vals(t, tc.neighbour), support.NewCluster())
		require.NoError(t, err, tc.neighbour)
	}

	// A live golden of the default flavor marked retiring, its entry dropped: Helm would delete it.
	retiring := clusterFromYAML(t, `---
apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata:
  name: `+defaultGolden+`
  namespace: cozy-public
  labels: {app.kubernetes.io/part-of: kubernetes-worker-image}
  annotations: {kubernetes-worker-image.cozystack.io/retiring: "true"}
`)
	_, err := renderCatalog(t, vals(t, "images: ["+entry("v1.13.7", false)+"]"), retiring)
	requireRefusal(t, err, "the golden cozy-public/"+defaultGolden+" is marked retiring and this render no longer lists its entry, so Helm would delete it, but it is in use: new pools take it by default (Talos v1.13.6",
		"Publish another default first", "until then keep its entry in images with retire: true")
	_, err = renderCatalog(t, vals(t, "tenantWorkers: {talos: {version: v1.13.7}}\nimages: ["+entry("v1.13.7", false)+"]"), retiring)
	require.NoError(t, err, "the neighbour: another default published, nothing uses it")
}

// The platform forwards the flavor new pools take to the catalog, beside
// _cluster.talos, so the catalog's guard counts it where the platform, not
// the catalog, publishes it; nothing else of tenantWorkers is forwarded, and
// with neither set the catalog's values keep their keys.
func TestPlatformForwardsTheDefaultFlavorToTheCatalog(t *testing.T) {
	catalogValuesOf := func(values string) map[string]interface{} {
		m, err := renderChartAs(t, platformChart(t), render.Release{Name: "platform", Namespace: "cozy-system"}, vals(t, "bundles: {enabledPackages: [cozystack.kubernetes-worker-image]}\n"+values), nil)
		require.NoError(t, err)
		pkg, ok := m.Find("Package", "cozystack.kubernetes-worker-image")
		require.True(t, ok)
		v, _ := render.Get(pkg.Object, "spec.components.kubernetes-worker-image.values").(map[string]interface{})
		return v
	}
	withFlavor := catalogValuesOf("tenantWorkers: {talos: {version: v1.13.7, imageFactoryURL: 'https://factory.mirror.internal'}, osImage: {builtin: {}}}\nkubernetesWorkerImage: {images: [{schematicID: " + defaultSchematic + ", version: v1.13.6, retire: true}, {schematicID: " + defaultSchematic + ", version: v1.13.7}]}")
	assert.Equal(t, map[string]interface{}{"talos": map[string]interface{}{"version": "v1.13.7"}}, withFlavor["tenantWorkers"])
	// What the catalog takes from it: the built-in v1.13.6 is no default any more, so it retires.
	_, err := renderCatalog(t, withFlavor, support.NewCluster())
	require.NoError(t, err)
	delete(withFlavor["tenantWorkers"].(map[string]interface{})["talos"].(map[string]interface{}), "version")
	_, err = renderCatalog(t, withFlavor, support.NewCluster())
	// The neighbour: without the forwarded version, v1.13.6 is the default.
	requireRefusal(t, err, "is in use: new pools take it by default (Talos v1.13.6")

	assert.NotContains(t, catalogValuesOf("tenantWorkers: {talos: {imageFactoryURL: 'https://factory.mirror.internal'}}"), "tenantWorkers")
	assert.NotContains(t, catalogValuesOf("tenantWorkers: {talos: {version: ''}}"), "tenantWorkers")
}

// behindFacts reports the Talos minors the support rows list, from the very
// table the support check reads (tools learn them from a render, never from
// the chart's source): a row added to that table is reported, and refuses
// what it says.
func TestBehindFactsListTheSupportRowsMinors(t *testing.T) {
	facts := imageFacts(t, poolChart(t), vals(t, "cluster: acme"), stock(t))
	assert.Equal(t, []interface{}{"v1.11", "v1.12", "v1.13"}, render.Get(facts, "behind.defaults.talosMinors"))

	c := poolChart(t)
	edited := false
	for _, dep := range c.Dependencies() {
		for _, f := range dep.Templates {
			if dep.Name()+"/"+f.Name == "kubernetes-nodes-lib/templates/_versions.tpl" {
				s := strings.Replace(string(f.Data), "v1.13: {min: 31, max: 36}\n", "v1.13: {min: 31, max: 36}\nv1.14: {min: 33, max: 36}\n", 1)
				edited = s != string(f.Data)
				f.Data = []byte(s)
			}
		}
	}
	require.True(t, edited, "the support table was found")
	facts = imageFacts(t, c, vals(t, "cluster: acme"), stock(t))
	assert.Equal(t, []interface{}{"v1.11", "v1.12", "v1.13", "v1.14"}, render.Get(facts, "behind.defaults.talosMinors"))
	_, err := renderChartAs(t, c, render.Release{Name: testRelease, Namespace: testNamespace}, vals(t, "{cluster: acme, version: v1.32, talos: {version: v1.14.0}}"), stock(t))
	requireRefusal(t, err, "Talos v1.14.0 (talos.version) does not support Kubernetes v1.32; Talos v1.14 supports v1.33 to v1.36")
}
