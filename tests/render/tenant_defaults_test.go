package render

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The catalog's published defaults for tenant workers, on a platform that
// writes no _cluster keys for them: the ConfigMap the catalog renders, read
// by every pool through Helm's real lookup over the fake cluster.
const (
	publishedName    = "kubernetes-worker-image-tenant-defaults"
	publishedChannel = "the catalog's published defaults (ConfigMap cozy-public/kubernetes-worker-image-tenant-defaults)"
	createdWithKey   = "metadata.annotations[kubernetes-worker-image.cozystack.io/created-with]"
)

// catalogTenantDefaults renders the catalog with catalogValues and returns
// the documents of its tenant-defaults.yaml (ConfigMap, then Role and
// RoleBinding when cloneSubjects are set).
func catalogTenantDefaults(t testing.TB, catalogValues map[string]interface{}) []render.Doc {
	t.Helper()
	m, err := renderChartAs(t, catalogChart(t), render.Release{Name: catalogRelease, Namespace: catalogNamespace}, catalogValues, nil)
	require.NoError(t, err)
	return withoutTenantDefaults(t, m)
}

// publishedBy is the ConfigMap the catalog publishes with these values, as
// a cluster fixture (YAML).
func publishedBy(t testing.TB, catalogValues string) string {
	t.Helper()
	return "---\n" + catalogTenantDefaults(t, vals(t, catalogValues))[0].Text
}

// publishedJSON is a published ConfigMap holding text as written, for what
// no catalog renders.
func publishedJSON(text string) string {
	b, _ := json.Marshal(text)
	return fmt.Sprintf("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: cozy-public}\ndata: {values.json: %s}\n", publishedName, b)
}

// stock is a cluster with the instancetypes, the published object and more.
func stock(t testing.TB, objects ...string) *support.Cluster {
	t.Helper()
	return clusterFromYAML(t, strings.Join(objects, ""), "cluster/instancetypes.yaml")
}

func closedNetworkCatalog(t testing.TB) string {
	t.Helper()
	ca, err := json.Marshal(testCA(t))
	require.NoError(t, err)
	// tenantWorkers last: a test appends its osImage.
	return `
registries:
  mirrors:
    docker.io: {endpoints: [https://registry.mirror.internal/v2/docker.io]}
    ghcr.io: {endpoints: [https://registry.mirror.internal/v2/ghcr.io]}
tenantWorkers:
  talos:
    installerRepository: registry.mirror.internal/siderolabs/installer
    imageFactoryURL: https://factory.mirror.internal
    imageFactoryCA: ` + string(ca) + `
`
}

func TestCatalogPublishesTenantDefaults(t *testing.T) {
	docs := catalogTenantDefaults(t, vals(t, "{}"))
	require.Len(t, docs, 3)
	cm := docs[0]
	assert.Equal(t, catalogNamespace, cm.Namespace())
	assert.Equal(t, "keep", render.Get(cm.Object, "metadata.annotations[helm.sh/resource-policy]"), "uninstalling the catalog must not send new pools to the public factory")
	assert.Equal(t, "kubernetes-worker-image", render.Get(cm.Object, "metadata.labels[app.kubernetes.io/part-of]"))
	assert.Equal(t, map[string]interface{}{"values.json": "{}"}, cm.Object["data"], "nothing set: an empty object, rendered all the same")

	// Tenants may read that one ConfigMap, and nothing else.
	role, binding := docs[1], docs[2]
	assert.Equal(t, "Role", role.Kind())
	assert.Equal(t, []interface{}{map[string]interface{}{"apiGroups": []interface{}{""}, "resources": []interface{}{"configmaps"}, "verbs": []interface{}{"get"}, "resourceNames": []interface{}{publishedName}}}, role.Object["rules"])
	assert.Equal(t, "RoleBinding", binding.Kind())
	assert.Equal(t, publishedName, render.Get(binding.Object, "roleRef.name"))
	assert.Equal(t, []interface{}{map[string]interface{}{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:serviceaccounts"}}, render.Get(binding.Object, "subjects"), "the catalog's cloneSubjects")
	assert.Len(t, catalogTenantDefaults(t, vals(t, "cloneSubjects: []")), 1, "no subjects: the ConfigMap alone")

	// Every key set, in the _cluster shape, and the metrics switch with monitoring.
	set := vals(t, closedNetworkCatalog(t)+"  osImage: {builtin: {}}\nmonitoring: {enabled: true}\n")
	var got map[string]interface{}
	require.NoError(t, json.Unmarshal([]byte(catalogTenantDefaults(t, set)[0].Object["data"].(map[string]interface{})["values.json"].(string)), &got))
	assert.Equal(t, map[string]interface{}{
		"talos": map[string]interface{}{
			"installerRepository": "registry.mirror.internal/siderolabs/installer",
			"imageFactoryURL":     internalFactory,
			"imageFactoryCA":      testCA(t),
			"registryMirrors": map[string]interface{}{
				"docker.io": map[string]interface{}{"endpoints": []interface{}{"https://registry.mirror.internal/v2/docker.io"}},
				"ghcr.io":   map[string]interface{}{"endpoints": []interface{}{"https://registry.mirror.internal/v2/ghcr.io"}},
			},
		},
		"osImage":               map[string]interface{}{"builtin": map[string]interface{}{}},
		"kubernetesWorkerImage": map[string]interface{}{"metrics": true},
	}, got)
	// The same keys the platform chart writes into _cluster for the same values.
	assert.Equal(t, render.Get(clusterChannel(t, closedNetworkCatalog(t)), "talos"), render.Get(got, "talos"))
}

// The shape of registries and tenantWorkers, with the schema off
// (registries.config: registry_ca_test.go).
func TestCatalogRegistriesAndTenantWorkersShape(t *testing.T) {
	schemaOff := render.Release{Name: catalogRelease, Namespace: catalogNamespace, SkipSchemaValidation: true}
	_, err := renderCatalogAs(t, schemaOff, vals(t, "registries: {config: {}, mirrors: {docker.io: {endpoints: ['https://m.internal/v2']}}}"), nil)
	require.NoError(t, err, "the neighbour of each refusal below")
	_, err = renderCatalogAs(t, schemaOff, vals(t, "registries: [docker.io]"), nil)
	requireRefusal(t, err, "registries is a list, not a map; write it as {mirrors: {docker.io: {endpoints: [https://registry.mirror.internal/v2/docker.io]}}}")
	_, err = renderCatalogAs(t, schemaOff, vals(t, "registries: {mirror: {}}"), nil)
	requireRefusal(t, err, `registries has no key "mirror"; the keys it takes are mirrors, config`)
	_, err = renderCatalogAs(t, schemaOff, vals(t, "tenantWorkers: [talos]"), nil)
	requireRefusal(t, err, "tenantWorkers is a list, not a map")
	_, err = renderCatalogAs(t, schemaOff, vals(t, "tenantWorkers: {talos: yes}"), nil)
	requireRefusal(t, err, "tenantWorkers.talos is true (a boolean), not a map")
}

// The catalog checks tenantWorkers and registries.mirrors with the very
// templates the platform chart checks them with: same message, same words.
func TestCatalogAndPlatformCheckTenantWorkersAlike(t *testing.T) {
	platform, err := support.LoadChart(render.PlatformChart)
	require.NoError(t, err)
	for _, tc := range []struct{ values, refusal string }{
		{"tenantWorkers: {talos: {imageFactoryURL: 'ftp://factory.internal'}}", `tenantWorkers.talos.imageFactoryURL "ftp://factory.internal" is not a plain http(s) URL`},
		{"tenantWorkers: {talos: {installerRepository: 'Registry/Installer'}}", `tenantWorkers.talos.installerRepository "Registry/Installer" is not an image repository`},
		{"tenantWorkers: {talos: {imageFactoryCA: 'not a certificate'}}", `tenantWorkers.talos.imageFactoryCA ("not a certificate") is not PEM certificates`},
		{"tenantWorkers: {osImage: {builtin: false}}", "tenantWorkers.osImage.builtin is false (a boolean), not a map"},
		{"tenantWorkers: {talos: {imageFactoryUrl: 'https://f.internal'}}", `tenantWorkers.talos has no key "imageFactoryUrl"`},
		{"tenantWorkers: {osimage: {builtin: {}}}", `tenantWorkers has no key "osimage"`},
		{"tenantWorkers: {talos: {version: 'v1.13'}}", `tenantWorkers.talos.version "v1.13" is malformed: it must match`},
		{"tenantWorkers: {talos: {schematicID: 7}}", "tenantWorkers.talos.schematicID is 7 (a number), not a string"},
		{"registries: {mirrors: {docker.io: {endpoints: []}}}", "registries.mirrors[docker.io].endpoints is a list; list at least one mirror URL"},
	} {
		_, catalogErr := renderCatalogAs(t, render.Release{Name: catalogRelease, Namespace: catalogNamespace, SkipSchemaValidation: true}, vals(t, tc.values), nil)
		requireRefusal(t, catalogErr, tc.refusal)
		_, platformErr := render.Render(platform, render.Options{Release: render.Release{Name: "platform", Namespace: "cozy-system", SkipSchemaValidation: true}, Values: vals(t, tc.values)})
		requireRefusal(t, platformErr, tc.refusal)
		// With the schema on, both schemas refuse first.
		_, catalogErr = renderCatalog(t, vals(t, tc.values), nil)
		require.Error(t, catalogErr, tc.values)
	}
	_, err = renderCatalog(t, vals(t, closedNetworkCatalog(t)), nil)
	require.NoError(t, err, "the neighbour: a valid closed network")
}

// A pool refuses more than 160 KiB before parsing, so the catalog refuses to
// publish that much.
func TestCatalogRefusesDefaultsPoolsWouldNotRead(t *testing.T) {
	mirrors := map[string]interface{}{}
	for i := 0; i < 64; i++ {
		var endpoints []interface{}
		for j := 0; j < 2; j++ {
			endpoints = append(endpoints, fmt.Sprintf("https://mirror-%d.internal/%s", j, strings.Repeat("p", 1300)))
		}
		mirrors[fmt.Sprintf("registry-%d.internal", i)] = map[string]interface{}{"endpoints": endpoints}
	}
	_, err := renderCatalog(t, map[string]interface{}{"registries": map[string]interface{}{"mirrors": mirrors}}, nil)
	requireRefusal(t, err, "tenantWorkers and registries publish", "more than the 163840 a pool reads of ConfigMap cozy-public/kubernetes-worker-image-tenant-defaults", "of those, the mirrors of 64 host(s) (registries.mirrors): ", "publish fewer registry CAs or mirrors, shorter mirror endpoints or smaller CA bundles")
	delete(mirrors, "registry-0.internal")
	for i := 1; i < 40; i++ {
		delete(mirrors, fmt.Sprintf("registry-%d.internal", i))
	}
	_, err = renderCatalog(t, map[string]interface{}{"registries": map[string]interface{}{"mirrors": mirrors}}, nil)
	require.NoError(t, err, "the neighbour: 24 such hosts fit")
}

// A new pool with nothing of its own and no _cluster keys takes every
// published default: the factory URL, its CA, the installer repository and
// the mirrors; its MachineDeployment records which came from the catalog.
func TestNewPoolTakesThePublishedDefaults(t *testing.T) {
	cluster := stock(t, publishedBy(t, closedNetworkCatalog(t)))
	m := mustRenderPool(t, vals(t, "cluster: acme"), cluster)
	assert.True(t, strings.HasPrefix(urlOfPool(t, m), internalFactory+"/image/"), urlOfPool(t, m))
	assert.Equal(t, testCA(t), caConfigMapData(t, m, poolCAConfigMap))
	assert.Equal(t, poolCAConfigMap, render.Get(diskOf(m), "spec.source.http.certConfigMap"))
	assert.Equal(t, "registry.mirror.internal/siderolabs/installer/"+defaultSchematic+":"+defaultTalos, render.Get(workerConfig(t, m), "machine.install.image"))
	assert.Equal(t, []interface{}{"https://registry.mirror.internal/v2/docker.io"}, render.Get(workerConfig(t, m), "machine.registries.mirrors[docker.io].endpoints"))
	assert.Equal(t, `{"fromCatalog":["imageFactoryURL","imageFactoryCA"],"imageFactoryCA":true,"imageFactoryURL":"https://factory.mirror.internal"}`, render.Get(doc(t, m, "MachineDeployment").Object, createdWithKey))

	// osImage published: a new pool clones the golden.
	clone := mustRenderPool(t, vals(t, "cluster: acme"), healthyCluster(t, publishedBy(t, "tenantWorkers: {osImage: {builtin: {}}}")))
	assert.Equal(t, defaultGolden, render.Get(diskOf(clone), "spec.source.pvc.name"))
	assert.Equal(t, `{"fromCatalog":["osImage"],"osImage":{"builtin":{}}}`, render.Get(doc(t, clone, "MachineDeployment").Object, createdWithKey))
}

// No published object, or one with nothing set: the pool renders exactly as
// it always did.
func TestNothingPublishedRendersAsBefore(t *testing.T) {
	for _, values := range []string{"cluster: acme", "{cluster: acme, osImage: {factory: {}}}", "{cluster: acme, talos: {registryMirrors: {docker.io: {endpoints: ['https://m.internal/v2']}}}}"} {
		before := mustRenderPool(t, vals(t, values), stock(t)).Text()
		assert.Equal(t, before, mustRenderPool(t, vals(t, values), stock(t, publishedBy(t, "{}"))).Text(), values)
		assert.Equal(t, before, mustRenderPool(t, vals(t, values), stock(t, publishedBy(t, "monitoring: {enabled: false}"))).Text(), values)
	}
}

// Per field: the pool's own value, then _cluster, then the published one.
func TestClusterAndPoolBeatThePublishedDefaults(t *testing.T) {
	published := publishedBy(t, closedNetworkCatalog(t)+"  osImage: {factory: {}}\n")
	channel := clusterChannel(t, `
tenantWorkers: {talos: {installerRepository: platform.internal/installer, imageFactoryURL: 'https://factory.platform.internal'}}
registries: {mirrors: {docker.io: {endpoints: ['https://platform.internal/v2/docker.io']}}}
`)
	m := mustRenderPool(t, withChannel(t, "cluster: acme", channel), stock(t, published))
	assert.True(t, strings.HasPrefix(urlOfPool(t, m), "https://factory.platform.internal/image/"), "_cluster's URL beats the published one")
	assert.Equal(t, "platform.internal/installer/"+defaultSchematic+":"+defaultTalos, render.Get(workerConfig(t, m), "machine.install.image"))
	assert.Equal(t, map[string]interface{}{
		"docker.io": map[string]interface{}{"endpoints": []interface{}{"https://platform.internal/v2/docker.io"}},
		"ghcr.io":   map[string]interface{}{"endpoints": []interface{}{"https://registry.mirror.internal/v2/ghcr.io"}},
	}, render.Get(workerConfig(t, m), "machine.registries.mirrors"), "merged per host: _cluster's docker.io replaces the published one, the published ghcr.io stays")
	// Per field: the CA and osImage _cluster does not set come from the catalog, and the record says so.
	assert.Equal(t, `{"fromCatalog":["imageFactoryCA","osImage"],"imageFactoryCA":true,"imageFactoryURL":"https://factory.platform.internal","osImage":{"factory":{}}}`, render.Get(doc(t, m, "MachineDeployment").Object, createdWithKey))

	own := mustRenderPool(t, withChannel(t, `
cluster: acme
osImage: {}
talos:
  imageFactoryURL: https://factory.own.internal
  installerRepository: own.internal/installer
  registryMirrors: {ghcr.io: {endpoints: ['https://own.internal/v2/ghcr.io']}}
`, channel), stock(t, published))
	assert.True(t, strings.HasPrefix(urlOfPool(t, own), "https://factory.own.internal/image/"))
	assert.Empty(t, poolConfigMaps(own), "a pool's own URL takes no published CA")
	assert.Equal(t, "own.internal/installer/"+defaultSchematic+":"+defaultTalos, render.Get(workerConfig(t, own), "machine.install.image"))
	assert.Equal(t, []interface{}{"https://own.internal/v2/ghcr.io"}, render.Get(workerConfig(t, own), "machine.registries.mirrors[ghcr.io].endpoints"))
	assert.Equal(t, []interface{}{"https://platform.internal/v2/docker.io"}, render.Get(workerConfig(t, own), "machine.registries.mirrors[docker.io].endpoints"))
}

// Taken at creation: once the pool's MachineDeployment records them, a
// change or removal of the published defaults moves nothing that rolls.
func TestRunningPoolKeepsItsTemplateWhenThePublishedDefaultsChange(t *testing.T) {
	for _, first := range []string{closedNetworkCatalog(t), "tenantWorkers: {osImage: {factory: {}}, talos: {imageFactoryURL: 'https://factory.mirror.internal'}}"} {
		cluster := healthyCluster(t, publishedBy(t, first))
		created := mustRenderPool(t, vals(t, "cluster: acme"), cluster)
		require.NoError(t, cluster.Apply(created, testNamespace))
		kmt := doc(t, created, "KubevirtMachineTemplate").Text
		record := render.Get(doc(t, created, "MachineDeployment").Object, createdWithKey)
		for _, later := range []string{"tenantWorkers: {osImage: {builtin: {}}, talos: {imageFactoryURL: 'https://factory.other.internal'}}", "{}", ""} {
			if later == "" {
				require.NoError(t, cluster.Delete("v1", "ConfigMap", "cozy-public", publishedName))
			} else {
				republish(t, cluster, publishedBy(t, later))
			}
			if strings.Contains(first, "imageFactoryCA") && !strings.Contains(later, "imageFactoryCA") {
				// Its disk names the CA's ConfigMap: that case is refused (below), its neighbour keeps the CA.
				again := mustRenderPool(t, withChannel(t, "cluster: acme", platformCA(t, testCA(t))), cluster)
				assert.Equal(t, kmt, doc(t, again, "KubevirtMachineTemplate").Text, "%s, then %q", first, later)
				assert.Equal(t, record, render.Get(doc(t, again, "MachineDeployment").Object, createdWithKey))
				continue
			}
			again := mustRenderPool(t, vals(t, "cluster: acme"), cluster)
			assert.Equal(t, kmt, doc(t, again, "KubevirtMachineTemplate").Text, "%s, then %q", first, later)
			assert.Equal(t, record, render.Get(doc(t, again, "MachineDeployment").Object, createdWithKey))
		}
	}
}

// A pool created with the published CA names its ConfigMap in its disk: with
// the CA gone from both channels it is refused, naming the catalog's value
// to set again, as a pool created with _cluster's CA is.
func TestPublishedCARemovedIsRefusedForThePoolsCreatedWithIt(t *testing.T) {
	cluster := stock(t, publishedBy(t, closedNetworkCatalog(t)))
	created := mustRenderPool(t, vals(t, "cluster: acme"), cluster)
	require.NoError(t, cluster.Apply(created, testNamespace))
	republish(t, cluster, publishedBy(t, "tenantWorkers: {talos: {imageFactoryURL: 'https://factory.mirror.internal'}}"))
	_, err := renderPool(t, vals(t, "cluster: acme"), cluster)
	requireRefusal(t, err, "pool kubernetes-acme-workers: it was created while "+publishedChannel+" set talos.imageFactoryCA (annotation kubernetes-worker-image.cozystack.io/created-with of MachineDeployment tenant-acme/kubernetes-acme-workers)",
		"names the ConfigMap tenant-acme/kubernetes-acme-workers-image-factory-ca", "set the catalog's tenantWorkers.talos.imageFactoryCA again (a new certificate rolls no worker)")
	// Neighbours: the catalog's CA rotated, or _cluster's, serve the same ConfigMap; nothing rolls.
	republish(t, cluster, publishedBy(t, strings.ReplaceAll(closedNetworkCatalog(t), mustJSON(t, testCA(t)), mustJSON(t, rotatedCA(t)))))
	rotated := mustRenderPool(t, vals(t, "cluster: acme"), cluster)
	assert.Equal(t, rotatedCA(t), caConfigMapData(t, rotated, poolCAConfigMap))
	assert.Equal(t, machineTemplateName(t, created), machineTemplateName(t, rotated))
	require.NoError(t, cluster.Delete("v1", "ConfigMap", "cozy-public", publishedName))
	viaCluster := mustRenderPool(t, withChannel(t, "cluster: acme", platformCA(t, testCA(t))), cluster)
	assert.Equal(t, machineTemplateName(t, created), machineTemplateName(t, viaCluster))
	assert.Equal(t, testCA(t), caConfigMapData(t, viaCluster, poolCAConfigMap), "_cluster's CA serves a pool created with the catalog's")
}

// republish replaces the published ConfigMap, as the catalog's next upgrade does.
func republish(t testing.TB, cluster *support.Cluster, object string) {
	t.Helper()
	_ = cluster.Delete("v1", "ConfigMap", "cozy-public", publishedName)
	objs, err := render.ParseObjects([]byte(object))
	require.NoError(t, err)
	require.NoError(t, cluster.Add(objs...))
}

func mustJSON(t testing.TB, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	require.NoError(t, err)
	return string(b)
}

// The published object sits in cozy-public, which only the platform writes,
// and is read in the process that renders every tenant: it is bounded and
// checked before it is used, and refused naming itself, the value and the fix.
func TestMalformedPublishedDefaultsAreRefused(t *testing.T) {
	const where = "pool kubernetes-acme-workers: ConfigMap cozy-public/kubernetes-worker-image-tenant-defaults, the catalog's published defaults for new pools,"
	const fix = "the catalog's tenantWorkers, registries.mirrors, registries.config and monitoring.enabled values"
	deep := strings.Repeat(`{"a":`, 6) + "1" + strings.Repeat("}", 6)
	big := `{"talos": {"imageFactoryURL": "` + strings.Repeat("x", 163840) + `"}}`
	for _, tc := range []struct{ object, refusal string }{
		{"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + publishedName + ", namespace: cozy-public}\ndata: {values.yaml: '{}'}\n", where + " has no key values.json (its keys: values.yaml)"},
		{publishedJSON(big), where + fmt.Sprintf(" holds %d bytes in values.json, more than the 163840 a pool reads, so it is refused before it is parsed", len(big))},
		{publishedJSON(deep), where + " nests deeper in values.json than the 5 levels the catalog writes"},
		{publishedJSON("talos: {imageFactoryURL: https://f.internal}"), where + ` holds in values.json "talos: {imageFactoryURL: https://f.internal}", not a JSON object as the catalog writes it`},
		{publishedJSON(`{"talos": {"registryCAs": {}}}`), where + ` values.json (fix the catalog's tenantWorkers, registries.mirrors, registries.config and monitoring.enabled values, which write it): talos has no key "registryCAs"`},
		{publishedJSON(`{"talos": {"installerRepository": "Bad Repo"}}`), where + ` values.json (fix the catalog's tenantWorkers, registries.mirrors, registries.config and monitoring.enabled values, which write it): talos.installerRepository "Bad Repo" is not an image repository`},
		{publishedJSON(`{"talos": {"imageFactoryURL": 42}}`), where + " values.json (fix the catalog's tenantWorkers, registries.mirrors, registries.config and monitoring.enabled values, which write it): talos.imageFactoryURL is 42 (a number), not a string"},
		{publishedJSON(`{"osImage": {"builtin": false}}`), where + " values.json (fix the catalog's tenantWorkers, registries.mirrors, registries.config and monitoring.enabled values, which write it): osImage.builtin is false (a boolean), not a map"},
		{publishedJSON(`{"kubernetesWorkerImage": {"metrics": "yes"}}`), where + ` values.json (fix the catalog's tenantWorkers, registries.mirrors, registries.config and monitoring.enabled values, which write it): kubernetesWorkerImage.metrics is "yes", not a boolean; the catalog writes true while its monitoring.enabled is`},
		{publishedJSON(`{"kubernetesWorkerImage": true}`), where + " values.json (fix the catalog's tenantWorkers, registries.mirrors, registries.config and monitoring.enabled values, which write it): kubernetesWorkerImage is true (a boolean), not a map; it is set by the catalog (monitoring.enabled in its values writes {metrics: true})"},
		{publishedJSON(`{"talos": []}`), where + " values.json (fix the catalog's tenantWorkers, registries.mirrors, registries.config and monitoring.enabled values, which write it): talos is a list, not a map"},
	} {
		_, err := renderPool(t, vals(t, "cluster: acme"), stock(t, tc.object))
		requireRefusal(t, err, tc.refusal, fix)
	}
	// The neighbour: the catalog's own rendering, of the largest CA and mirrors it takes, is read.
	_, err := renderPool(t, vals(t, "cluster: acme"), stock(t, publishedBy(t, closedNetworkCatalog(t)+"monitoring: {enabled: true}\n")))
	require.NoError(t, err)
	_, err = renderPool(t, vals(t, "cluster: acme"), stock(t, publishedJSON(`{"talos":{"registryMirrors":{"docker.io":{"endpoints":["https://m.internal/v2"]}}}}`)))
	require.NoError(t, err, "5 levels deep is what the catalog writes")
}

// The record's fromCatalog holds only what the chart writes.
func TestUnreadableFromCatalogIsRefused(t *testing.T) {
	for _, tc := range []struct{ value, refusal string }{
		{`{"imageFactoryURL":"https://f.internal","fromCatalog":"imageFactoryURL"}`, `fromCatalog in the annotation kubernetes-worker-image.cozystack.io/created-with of MachineDeployment tenant-acme/kubernetes-acme-workers is "imageFactoryURL", not a list of one to five field names`},
		{`{"imageFactoryURL":"https://f.internal","fromCatalog":[]}`, "is a list, not a list of one to five field names"},
		{`{"imageFactoryURL":"https://f.internal","fromCatalog":["osImage"]}`, `lists "osImage", which is not a field the record holds (once)`},
		{`{"imageFactoryURL":"https://f.internal","fromCatalog":["imageFactoryURL","imageFactoryURL"]}`, `lists "imageFactoryURL", which is not a field the record holds (once)`},
		{`{"imageFactoryURL":"https://f.internal","fromCatalog":[1]}`, "lists 1 (a number), which is not a field the record holds"},
	} {
		_, err := renderPool(t, vals(t, "cluster: acme"), stock(t, createdWith(tc.value)))
		requireRefusal(t, err, tc.refusal, "delete that key if those fields came from _cluster")
	}
	m, err := renderPool(t, vals(t, "cluster: acme"), stock(t, createdWith(`{"fromCatalog":["imageFactoryURL"],"imageFactoryURL":"https://factory.mirror.internal"}`)))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(urlOfPool(t, m), internalFactory+"/image/"))
}

// Where each default came from is named, channel and all, in what the
// chart's report reads (the disk source's sources, the creation record).
func TestPublishedDefaultsAreNamedAsTheirChannel(t *testing.T) {
	cluster := stock(t, publishedBy(t, closedNetworkCatalog(t)))
	facts := reportFacts(t, vals(t, "cluster: acme"), cluster)
	assert.Equal(t, "the default talos.imageFactoryURL of "+publishedChannel+", recorded when the pool was created (today's platform defaults (_cluster, then the catalog's published ones), as for a new pool; its MachineDeployment records those that apply and which came from the catalog)", facts["imageFactoryURLSource"])
	assert.Contains(t, facts["imageFactoryCASource"], "the default talos.imageFactoryCA of "+publishedChannel)
	// _cluster's keeps its words, byte for byte.
	facts = reportFacts(t, withChannel(t, "cluster: acme", clusterChannel(t, "tenantWorkers: {talos: {imageFactoryURL: 'https://factory.mirror.internal'}}")), stock(t))
	assert.Equal(t, "the platform default _cluster.talos.imageFactoryURL recorded when the pool was created (today's platform defaults (_cluster), as for a new pool; its MachineDeployment records those that apply)", facts["imageFactoryURLSource"])
}

// reportFacts renders the chart's resolved image and CA, as the CLI reads them.
func reportFacts(t testing.TB, values map[string]interface{}, cluster *support.Cluster) map[string]interface{} {
	t.Helper()
	c := render.WithTemplate(poolChart(t), "templates/0-facts.yaml", []byte(`{{- include "kubernetes-nodes.ensureImageFactoryCA" . -}}
kind: Facts
metadata: {name: facts}
imageFactoryURLSource: {{ ._kubernetesNodes.image.imageFactoryURLSource | toJson }}
imageFactoryCASource: {{ ._kubernetesNodes.ca.source | toJson }}
`))
	m, err := render.Render(c, render.Options{Release: render.Release{Name: testRelease, Namespace: testNamespace}, Values: values, Cluster: cluster})
	require.NoError(t, err)
	d, ok := m.Find("Facts", "facts")
	require.True(t, ok)
	return d.Object
}

// The metrics switch: _cluster's when set, else the published one.
func TestPublishedMetricsSwitchAnnotatesThePools(t *testing.T) {
	const key = "metadata.annotations[kubernetes-worker-image.cozystack.io/talos-minor]"
	on := stock(t, publishedBy(t, "monitoring: {enabled: true}"))
	assert.Equal(t, "v1.13", render.Get(doc(t, mustRenderPool(t, vals(t, "cluster: acme"), on), "MachineDeployment").Object, key))
	assert.Nil(t, render.Get(doc(t, mustRenderPool(t, vals(t, "{cluster: acme, _cluster: {kubernetesWorkerImage: {metrics: false}}}"), on), "MachineDeployment").Object, key), "_cluster's false wins")
	assert.Equal(t, "v1.13", render.Get(doc(t, mustRenderPool(t, vals(t, "{cluster: acme, _cluster: {kubernetesWorkerImage: {metrics: true}}}"), stock(t, publishedBy(t, "{}"))), "MachineDeployment").Object, key))
	assert.Nil(t, render.Get(doc(t, mustRenderPool(t, vals(t, "cluster: acme"), stock(t, publishedBy(t, "{}"))), "MachineDeployment").Object, key))
}

// docs/closed-networks.md gives the catalog values a closed network
// publishes (examples/stock-cozystack/catalog-values.yaml) and plans a new
// pool against the example cluster: its catalog Package carries those
// values as written, besides its goldens, so the ConfigMap the example
// holds (TestStockExampleIsWhatCozystackAndTheChartsWrite: what the catalog
// renders from the Package) is what they publish.
func TestStockCozystackExampleIsWhatTheCatalogPublishes(t *testing.T) {
	values, err := render.ReadValues(filepath.Join(support.RepoRoot(), "examples", "stock-cozystack", "catalog-values.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, values)
	_, docs := readExampleDocs(t, stockExample)
	pkg := indexDocs(docs).must(t, "Package", "", "cozystack.kubernetes-worker-image")
	inPackage := componentValues(pkg, "kubernetes-worker-image")
	for k, v := range values {
		assert.Equal(t, normalized(t, v), normalized(t, inPackage[k]), "the Package's %s is catalog-values.yaml's", k)
	}
	assert.Equal(t, catalogTenantDefaults(t, values)[0].Object, catalogTenantDefaults(t, inPackage)[0].Object,
		"what the Package publishes is what catalog-values.yaml publishes: its goldens publish nothing")
}
