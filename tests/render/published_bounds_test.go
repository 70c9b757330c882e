package render

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A value of each field the catalog publishes for new pools: at its bound, one
// past it, and malformed.
type publishedValue struct {
	path, value string
	valid       bool
}

func publishedFieldValues() []publishedValue {
	id64, url := strings.Repeat("a", 64), "https://f.internal/"
	var out []publishedValue
	for _, path := range []string{"builtin", "factory"} {
		out = append(out,
			publishedValue{"osImage." + path + ".schematicID", id64, true},
			publishedValue{"osImage." + path + ".schematicID", id64 + "a", false},
			publishedValue{"osImage." + path + ".schematicID", "ABC", false},
			publishedValue{"osImage." + path + ".version", "v1.13.6-" + strings.Repeat("a", 56), true},
			publishedValue{"osImage." + path + ".version", "v1.13.6-" + strings.Repeat("a", 57), false},
			publishedValue{"osImage." + path + ".version", "1.13.6", false},
		)
	}
	// The Talos flavor new pools take, published beside the factory.
	out = append(out,
		publishedValue{"talos.schematicID", id64, true},
		publishedValue{"talos.schematicID", id64 + "a", false},
		publishedValue{"talos.schematicID", "ABC", false},
		publishedValue{"talos.version", "v1.13.6-" + strings.Repeat("a", 56), true},
		publishedValue{"talos.version", "v1.13.6-" + strings.Repeat("a", 57), false},
		publishedValue{"talos.version", "1.13.6", false},
	)
	for _, path := range []string{"osImage.factory.imageFactoryURL", "talos.imageFactoryURL"} {
		out = append(out,
			publishedValue{path, url + strings.Repeat("a", 2048-len(url)), true},
			publishedValue{path, url + strings.Repeat("a", 2049-len(url)), false},
			publishedValue{path, "https://f.internal:99999", false},
			publishedValue{path, "ftp://f.internal", false},
		)
	}
	return out
}

// catalogPublishing is the catalog values publishing v: the value, and for a
// flavor new pools clone (osImage.builtin's), the images[] entry that
// imports it, without which the catalog refuses to publish it.
func catalogPublishing(v publishedValue) map[string]interface{} {
	values := map[string]interface{}{"tenantWorkers": atPath(v.path, v.value)}
	if strings.HasPrefix(v.path, "osImage.builtin.") {
		entry := map[string]interface{}{"schematicID": defaultSchematic, "version": defaultTalos}
		entry[strings.TrimPrefix(v.path, "osImage.builtin.")] = v.value
		values["images"] = []interface{}{entry}
	}
	return values
}

// atPath returns {a: {b: {c: value}}} for the path a.b.c.
func atPath(path, value string) map[string]interface{} {
	parts := strings.Split(path, ".")
	var v interface{} = value
	for i := len(parts) - 1; i >= 0; i-- {
		v = map[string]interface{}{parts[i]: v}
	}
	return v.(map[string]interface{})
}

// What the catalog publishes, every new pool accepts: for each published field,
// the catalog (templates, schema off) takes exactly the values a new pool takes
// from the object the catalog would write. A new pool records the published
// defaults whatever its own values, so one with its own osImage refuses a bad
// published osImage too; one without takes the published factory path.
func TestWhatTheCatalogPublishesEveryNewPoolAccepts(t *testing.T) {
	catalogOff := render.Release{Name: catalogRelease, Namespace: catalogNamespace, SkipSchemaValidation: true}
	for _, v := range publishedFieldValues() {
		t.Run(fmt.Sprintf("%s %.20s (%d)", v.path, v.value, len(v.value)), func(t *testing.T) {
			catalogValues := catalogPublishing(v)
			_, catalogErr := renderCatalogAs(t, catalogOff, catalogValues, nil)
			pools := []string{"{cluster: acme, osImage: {factory: {}}}"}
			if !strings.HasPrefix(v.path, "osImage.builtin") {
				pools = append(pools, "cluster: acme")
			}
			if v.valid {
				require.NoError(t, catalogErr)
				// What the catalog writes for it.
				published := stock(t, "---\n"+catalogTenantDefaults(t, catalogValues)[0].Text)
				for _, pool := range pools {
					_, err := renderPool(t, vals(t, pool), published)
					require.NoError(t, err, "%s takes what the catalog publishes", pool)
				}
				return
			}
			if strings.HasPrefix(v.path, "osImage.") {
				requireRefusal(t, catalogErr, "tenantWorkers."+v.path+" ", "is malformed: it must match", "as a pool's own value must; every new pool without its own osImage takes it")
			} else if v.path != "talos.imageFactoryURL" {
				requireRefusal(t, catalogErr, "tenantWorkers."+v.path+" ", "is malformed: it must match", "as a pool's own "+v.path+" must; every new pool that sets none takes it")
			} else {
				requireRefusal(t, catalogErr, "tenantWorkers."+v.path+" ", "is not a plain http(s) URL")
			}
			// The object holding it, as the catalog would have written it.
			raw, err := json.Marshal(atPath(v.path, v.value))
			require.NoError(t, err)
			published := stock(t, publishedJSON(string(raw)))
			for _, pool := range pools {
				_, err := renderPool(t, vals(t, pool), published)
				require.Error(t, err, "%s refuses what the catalog refuses to publish", pool)
			}
		})
	}
}

// The same bounds hold with the schema on: the catalog and the platform
// refuse what a pool refuses, in their templates' words (the schemas' patterns
// and lengths are the form's x-form), with the schema off too.
func TestPlatformAndCatalogSchemasBoundPublishedImageFields(t *testing.T) {
	platformOff := render.Release{Name: "cozystack-platform", Namespace: "cozy-system", SkipSchemaValidation: true}
	platformOn := render.Release{Name: "cozystack-platform", Namespace: "cozy-system"}
	for _, v := range publishedFieldValues() {
		values := catalogPublishing(v)
		_, catalogSchema := renderCatalog(t, values, nil)
		delete(values, "images") // the platform's catalog entries are kubernetesWorkerImage.images
		_, platformTemplates := renderChartAs(t, platformChart(t), platformOff, values, nil)
		_, platformSchema := renderChartAs(t, platformChart(t), platformOn, values, nil)
		if v.valid {
			require.NoError(t, catalogSchema, "%s %d", v.path, len(v.value))
			require.NoError(t, platformTemplates, "%s %d", v.path, len(v.value))
			require.NoError(t, platformSchema, "%s %d", v.path, len(v.value))
			continue
		}
		requireTemplateRefusal(t, catalogSchema, "tenantWorkers."+v.path)
		// The platform's schema keeps the URL and quantity rules it shares with
		// kubernetesWorkerImage.images, whose entries only the catalog's
		// templates check: there, the schema's message is the refusal.
		var schemaErr *render.SchemaError
		if !errors.As(platformSchema, &schemaErr) || !strings.HasSuffix(v.path, "imageFactoryURL") {
			requireTemplateRefusal(t, platformSchema, "tenantWorkers."+v.path)
		}
		require.Error(t, platformTemplates, "%s %.30s", v.path, v.value)
	}
}

func requireTemplateRefusal(t *testing.T, err error, field string) {
	t.Helper()
	require.Error(t, err)
	var schemaErr *render.SchemaError
	require.False(t, errors.As(err, &schemaErr), "the template's words, not the schema's: %v", err)
	assert.Contains(t, err.Error(), field)
}

// The chart never writes a creation record it would refuse to read back: the
// largest record a new pool can write (every field at its bound, from _cluster
// and from the catalog) is read by the next render of the same pool, which
// keeps its machine template and its record; a default past a bound is refused
// when the pool is created, naming the default and the fix, where before the
// pool was created with a record every later render refused (a value past 8 KiB
// refused the whole record, even once the default was fixed).
func TestCreationRecordIsOneTheChartReadsBack(t *testing.T) {
	url := "https://f.internal/"
	maxURL := url + strings.Repeat("a", 2048-len(url))
	maxFactory := fmt.Sprintf("{factory: {schematicID: %s, version: v1.13.6-%s, imageFactoryURL: '%s'}}", strings.Repeat("a", 64), strings.Repeat("a", 56), maxURL)
	channel := fmt.Sprintf("{talos: {imageFactoryURL: '%s', imageFactoryCA: %s}, osImage: %s}", maxURL, mustJSON(t, testCA(t)), maxFactory)
	published := fmt.Sprintf("tenantWorkers: {talos: {imageFactoryURL: '%s', imageFactoryCA: %s}, osImage: %s}", maxURL, mustJSON(t, testCA(t)), maxFactory)
	for name, tc := range map[string]struct {
		values  string
		cluster func() string
	}{
		"_cluster":                   {"{cluster: acme, osImage: {builtin: {}}, _cluster: " + channel + "}", func() string { return "" }},
		"the catalog's":              {"{cluster: acme, osImage: {builtin: {}}}", func() string { return publishedBy(t, published) }},
		"the catalog's, no own path": {"cluster: acme", func() string { return publishedBy(t, published) }},
	} {
		t.Run(name, func(t *testing.T) {
			cluster := healthyCluster(t, tc.cluster())
			if !strings.Contains(tc.values, "builtin") {
				cluster = stock(t, tc.cluster())
			}
			created := mustRenderPool(t, vals(t, tc.values), cluster)
			record := render.Get(doc(t, created, "MachineDeployment").Object, createdWithKey).(string)
			assert.Contains(t, record, maxURL)
			assert.Less(t, len(record), 4608, "the largest record stays under 4.5 KiB (README), within the 8 KiB a pool reads")
			require.NoError(t, cluster.Apply(created, testNamespace))
			again := mustRenderPool(t, vals(t, tc.values), cluster)
			assert.Equal(t, record, render.Get(doc(t, again, "MachineDeployment").Object, createdWithKey), "the next render reads the record back")
			assert.Equal(t, machineTemplateName(t, created), machineTemplateName(t, again))
		})
	}

	huge := strings.Repeat("a", 9000)
	for _, tc := range []struct{ name, values, published, refusal, neighbour string }{
		{"_cluster's osImage past 8 KiB, the pool's own osImage set",
			"{cluster: acme, osImage: {}, _cluster: {osImage: {builtin: {schematicID: " + huge + "}}}}", "",
			`the platform default _cluster.osImage.builtin.schematicID "` + huge[:80] + `...(9000 characters)" is malformed for a pool: it must match ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$ and be at most 64 characters`,
			"{cluster: acme, osImage: {}, _cluster: {osImage: {builtin: {schematicID: " + huge[:64] + "}}}}"},
		{"_cluster's factory URL malformed, the pool's own URL set",
			"{cluster: acme, talos: {imageFactoryURL: 'https://own.internal'}, _cluster: {talos: {imageFactoryURL: 'https://f.internal:99999'}}}", "",
			`the platform default _cluster.talos.imageFactoryURL "https://f.internal:99999" is malformed for a pool`,
			"{cluster: acme, talos: {imageFactoryURL: 'https://own.internal'}, _cluster: {talos: {imageFactoryURL: 'https://f.internal:9999'}}}"},
		{"the catalog's osImage version too long, written by hand",
			"{cluster: acme, osImage: {}}", `{"osImage":{"factory":{"version":"v1.13.6-` + strings.Repeat("a", 57) + `"}}}`,
			`the default osImage.factory.version of ` + publishedChannel + ` "v1.13.6-` + strings.Repeat("a", 57) + `" is malformed for a pool`,
			"{cluster: acme, osImage: {}}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objects := ""
			if tc.published != "" {
				objects = publishedJSON(tc.published)
			}
			_, err := renderPool(t, vals(t, tc.values), stock(t, objects))
			requireRefusal(t, err, "pool kubernetes-acme-workers: "+tc.refusal, "records the platform's defaults at creation", "so the pool is not created with it")
			neighbourObjects := ""
			if tc.published != "" {
				neighbourObjects = publishedJSON(strings.Replace(tc.published, "a\"", "\"", 1))
			}
			_, err = renderPool(t, vals(t, tc.neighbour), stock(t, neighbourObjects))
			require.NoError(t, err, "the neighbour at the bound is created")
		})
	}
}

// An earlier version's record (a ConfigMap, read within 8 KiB) is carried
// into the annotation as JSON, which writes < > & as six bytes each: one that
// would come out past 8 KiB is refused at that upgrade, naming it and the fix,
// rather than written for every later render to refuse. Its neighbour, as
// long but of plain characters, is carried and read back.
func TestACarriedRecordIsOneTheChartReadsBack(t *testing.T) {
	upgrade := render.Release{Name: testRelease, Namespace: testNamespace, Upgrade: true}
	own := "{cluster: acme, talos: {imageFactoryURL: 'https://own.internal'}, osImage: {}}"
	escaped := legacyRecord(`{origin: platform, imageFactoryURL: "https://f.internal/` + strings.Repeat("&", 2000) + `"}`)
	_, err := renderPoolAs(t, upgrade, vals(t, own), clusterFromYAML(t, escaped, "cluster/instancetypes.yaml"))
	requireRefusal(t, err, "pool kubernetes-acme-workers: the creation record this render would write onto its MachineDeployment",
		"carried from ConfigMap tenant-acme/kubernetes-acme-workers-created-with, the record of an earlier chart version) is 12041 bytes as JSON, more than the 8192 the chart reads back",
		"delete that record to take the built-in values")

	plain := "https://f.internal/" + strings.Repeat("a", 8000)
	cluster := clusterFromYAML(t, legacyRecord(`{origin: platform, imageFactoryURL: "`+plain+`"}`), "cluster/instancetypes.yaml")
	carried, err := renderPoolAs(t, upgrade, vals(t, own), cluster)
	require.NoError(t, err)
	record := render.Get(doc(t, carried, "MachineDeployment").Object, createdWithKey).(string)
	assert.Equal(t, `{"imageFactoryURL":"`+plain+`"}`, record)
	require.NoError(t, cluster.Apply(carried, testNamespace))
	again, err := renderPoolAs(t, upgrade, vals(t, own), cluster)
	require.NoError(t, err)
	assert.Equal(t, record, render.Get(doc(t, again, "MachineDeployment").Object, createdWithKey), "the carried record is read back")
}
