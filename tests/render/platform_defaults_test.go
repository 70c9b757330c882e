package render

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// clusterChannel renders the platform chart with the given values and returns
// the _cluster map its cozystack-values Secret carries: exactly what Cozystack
// merges into every tenant application's values.
func clusterChannel(t testing.TB, platformValues string) map[string]interface{} {
	t.Helper()
	c, err := support.LoadChart(render.PlatformChart)
	require.NoError(t, err)
	m, err := render.Render(c, render.Options{Release: render.Release{Name: "platform", Namespace: "cozy-system"}, Values: vals(t, platformValues)})
	require.NoError(t, err)
	secret, ok := m.Find("Secret", "cozystack-values")
	require.True(t, ok, "the platform renders the cozystack-values Secret")
	assert.Equal(t, "cozy-system", secret.Namespace())
	raw, ok := render.Get(secret.Object, "stringData[values.yaml]").(string)
	require.True(t, ok, "stringData.values.yaml is a YAML string")
	out := map[string]interface{}{}
	require.NoError(t, yaml.Unmarshal([]byte(raw), &out))
	cluster, ok := out["_cluster"].(map[string]interface{})
	require.True(t, ok, "values.yaml holds _cluster: %s", raw)
	return cluster
}

// withChannel returns pool values carrying the platform's _cluster.
func withChannel(t testing.TB, pool string, channel map[string]interface{}) map[string]interface{} {
	v := vals(t, pool)
	v["_cluster"] = channel
	return v
}

const (
	mirrorPlatform = `
registries:
  mirrors:
    docker.io: {endpoints: [https://registry.mirror.internal/v2/docker.io]}
    ghcr.io: {endpoints: [https://registry.mirror.internal/v2/ghcr.io], overridePath: true}
  config:
    https://registry.mirror.internal/v2/docker.io:
      auth: {username: puller, password: s3cret}
      tls: {insecureSkipVerify: false}
tenantWorkers:
  talos:
    installerRepository: registry.mirror.internal/siderolabs/installer
    imageFactoryURL: https://factory.mirror.internal
`
	internalFactory = "https://factory.mirror.internal"
	builtinFactory  = "https://factory.talos.dev"
)

func TestPlatformClusterKeysAppearOnlyWhenSet(t *testing.T) {
	assert.Equal(t, map[string]interface{}{}, clusterChannel(t, "{}"), "nothing set, no _cluster key")
	assert.Equal(t, map[string]interface{}{"talos": map[string]interface{}{"installerRepository": "r.internal/installer"}},
		clusterChannel(t, "tenantWorkers: {talos: {installerRepository: r.internal/installer}}"))
	assert.Equal(t, map[string]interface{}{"osImage": map[string]interface{}{"builtin": map[string]interface{}{}}},
		clusterChannel(t, "tenantWorkers: {osImage: {builtin: {}}}"))

	channel := clusterChannel(t, mirrorPlatform)
	assert.Equal(t, internalFactory, render.Get(channel, "talos.imageFactoryURL"))
	assert.Equal(t, "registry.mirror.internal/siderolabs/installer", render.Get(channel, "talos.installerRepository"))
	assert.Equal(t, []interface{}{"https://registry.mirror.internal/v2/docker.io"}, render.Get(channel, "talos.registryMirrors[docker.io].endpoints"))
	// Talos keys registry config by host: the endpoint URL's scheme and path go.
	assert.Equal(t, map[string]interface{}{"registry.mirror.internal": map[string]interface{}{
		"auth": map[string]interface{}{"username": "puller", "password": "s3cret"},
		"tls":  map[string]interface{}{"insecureSkipVerify": false},
	}}, render.Get(channel, "talos.registryConfig"))
	assert.Nil(t, render.Get(channel, "osImage"))
}

func TestPlatformRegistryConfigKeys(t *testing.T) {
	assert.Equal(t, map[string]interface{}{"registry.internal:5000": map[string]interface{}{"tls": map[string]interface{}{"insecureSkipVerify": true}}},
		render.Get(clusterChannel(t, "registries: {config: {'registry.internal:5000': {tls: {insecureSkipVerify: true}}}}"), "talos.registryConfig"), "a bare host[:port] stays as it is")

	c, err := support.LoadChart(render.PlatformChart)
	require.NoError(t, err)
	_, err = render.Render(c, render.Options{Release: render.Release{Name: "platform", Namespace: "cozy-system"}, Values: vals(t, `
registries:
  config:
    https://registry.internal:5000/v2/docker.io: {auth: {username: a}}
    http://registry.internal:5000/v2/ghcr.io: {auth: {username: b}}
`)})
	requireRefusal(t, err, "registries.config: keys", "both name registry host registry.internal:5000", "merge them into one entry")
	_, err = render.Render(c, render.Options{Release: render.Release{Name: "platform", Namespace: "cozy-system"}, Values: vals(t, "registries: {config: {'https:///x': {auth: {username: a}}}}")})
	requireRefusal(t, err, `registries.config: key "https:///x" names no registry host`)
}

// The kubeadm-era containerd Secret is gone: mirrors reach workers only through _cluster.
func TestPlatformRendersNoContainerdRegistrySecret(t *testing.T) {
	c, err := support.LoadChart(render.PlatformChart)
	require.NoError(t, err)
	m, err := render.Render(c, render.Options{Release: render.Release{Name: "platform", Namespace: "cozy-system"}, Values: vals(t, mirrorPlatform)})
	require.NoError(t, err)
	secrets := m.OfKind("Secret")
	require.Len(t, secrets, 1)
	assert.Equal(t, "cozystack-values", secrets[0].Name())
	assert.NotContains(t, strings.ToLower(m.Text()), "containerd")
}

func TestInstallerRepositoryPrecedence(t *testing.T) {
	platform := clusterChannel(t, "tenantWorkers: {talos: {installerRepository: r.internal/installer}}")
	for _, tc := range []struct {
		pool    string
		channel map[string]interface{}
		want    string
	}{
		{"cluster: acme", nil, "factory.talos.dev/installer"},
		{"cluster: acme", platform, "r.internal/installer"},
		{"{cluster: acme, talos: {installerRepository: own.internal/installer}}", platform, "own.internal/installer"},
		{"{cluster: acme, talos: {installerRepository: factory.talos.dev/installer}}", platform, "factory.talos.dev/installer"},
	} {
		m := mustRenderPool(t, withChannel(t, tc.pool, tc.channel), nil)
		assert.Equal(t, tc.want+"/"+defaultSchematic+":"+defaultTalos, render.Get(workerConfig(t, m), "machine.install.image"), "%s with %v", tc.pool, tc.channel)
	}
}

func TestRegistryMirrorsMergePerHost(t *testing.T) {
	channel := clusterChannel(t, mirrorPlatform)
	m := mustRenderPool(t, withChannel(t, `
cluster: acme
talos:
  registryMirrors:
    docker.io: {endpoints: [https://tenant.mirror/v2/docker.io]}
    quay.io: {endpoints: [https://tenant.mirror/v2/quay.io]}
`, channel), nil)
	registries := render.Get(workerConfig(t, m), "machine.registries").(map[string]interface{})
	assert.Equal(t, map[string]interface{}{
		"docker.io": map[string]interface{}{"endpoints": []interface{}{"https://tenant.mirror/v2/docker.io"}},
		"ghcr.io":   map[string]interface{}{"endpoints": []interface{}{"https://registry.mirror.internal/v2/ghcr.io"}, "overridePath": true},
		"quay.io":   map[string]interface{}{"endpoints": []interface{}{"https://tenant.mirror/v2/quay.io"}},
	}, registries["mirrors"], "platform hosts stay, the pool's entry for docker.io replaces the platform's whole entry")
	assert.Equal(t, channel["talos"].(map[string]interface{})["registryConfig"], registries["config"], "registry auth/TLS reaches machine.registries.config")

	// Platform only.
	m = mustRenderPool(t, withChannel(t, "cluster: acme", channel), nil)
	assert.Equal(t, channel["talos"].(map[string]interface{})["registryMirrors"], render.Get(workerConfig(t, m), "machine.registries.mirrors"))
}

// Precedence for the disk-source knobs on a new pool: its own value, then the
// platform default, then the built-in.
func TestImageFactoryURLAndOSImagePrecedenceOnANewPool(t *testing.T) {
	platform := clusterChannel(t, "tenantWorkers: {talos: {imageFactoryURL: 'https://factory.mirror.internal'}}")
	urlOf := func(m *render.Manifest) string {
		return render.Get(diskOf(m), "spec.source.http.url").(string)
	}
	image := "/image/" + defaultSchematic + "/" + defaultTalos + "/openstack-amd64.raw.xz"
	assert.Equal(t, builtinFactory+image, urlOf(mustRenderPool(t, vals(t, "cluster: acme"), nil)))
	assert.Equal(t, internalFactory+image, urlOf(mustRenderPool(t, withChannel(t, "cluster: acme", platform), nil)))
	assert.Equal(t, "https://own.internal"+image, urlOf(mustRenderPool(t, withChannel(t, "{cluster: acme, talos: {imageFactoryURL: 'https://own.internal'}}", platform), nil)))
	assert.Equal(t, builtinFactory+image, urlOf(mustRenderPool(t, withChannel(t, "{cluster: acme, talos: {imageFactoryURL: 'https://factory.talos.dev'}}", platform), nil)),
		"a pool that writes the built-in value itself wins over the platform")
	assert.Equal(t, "http://f.internal"+image, urlOf(mustRenderPool(t, withChannel(t, "{cluster: acme, osImage: {factory: {imageFactoryURL: 'http://f.internal'}}}", platform), nil)))

	builtin := clusterChannel(t, "tenantWorkers: {osImage: {builtin: {}}}")
	assert.Equal(t, defaultGolden, render.Get(diskOf(mustRenderPool(t, withChannel(t, "cluster: acme", builtin), healthyCluster(t))), "spec.source.pvc.name"), "a new pool takes the platform's osImage")
	for _, own := range []string{"{cluster: acme, osImage: {}}", "{cluster: acme, osImage: {factory: {}}}"} {
		assert.Equal(t, builtinFactory+image, urlOf(mustRenderPool(t, withChannel(t, own, builtin), healthyCluster(t))), "%s: the pool's own osImage wins", own)
	}
}

// createdWith is the pool's MachineDeployment, as an earlier release left it,
// carrying the creation record annotation value (left out when "").
func createdWith(value string) string {
	annotations := ""
	if value != "" {
		annotations = fmt.Sprintf("\n  annotations: {kubernetes-worker-image.cozystack.io/created-with: %q}", value)
	}
	return fmt.Sprintf("---\napiVersion: cluster.x-k8s.io/v1beta1\nkind: MachineDeployment\nmetadata:\n  name: %s\n  namespace: %s%s\nspec: {clusterName: kubernetes-acme}\n", testPoolName, testNamespace, annotations)
}

// legacyRecord is the ConfigMap an earlier chart version recorded the
// creation defaults in, with the pool's MachineDeployment (no annotation).
func legacyRecord(data string) string {
	return createdWith("") + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: kubernetes-acme-workers-created-with, namespace: tenant-acme}\ndata: " + data + "\n"
}

func TestRecordedPlatformOSImageIsNamedInRefusals(t *testing.T) {
	_, err := renderPool(t, withChannel(t, "cluster: acme", clusterChannel(t, "tenantWorkers: {osImage: {builtin: {}}}")), clusterFromYAML(t, "", "cluster/instancetypes.yaml"))
	requireRefusal(t, err, "is absent from cozy-public", "_cluster.osImage.builtin resolved to", "the platform default recorded when the pool was created", "set the pool's own osImage: {} to import over HTTP")

	annotated := createdWith(`{"osImage":{"builtin":{"version":"v1.13.6 #"}}}`)
	_, err = renderPool(t, vals(t, "cluster: acme"), clusterFromYAML(t, annotated, "cluster/instancetypes.yaml"))
	requireRefusal(t, err, `version "v1.13.6 #" (from the platform default _cluster.osImage.builtin.version recorded when the pool was created (annotation kubernetes-worker-image.cozystack.io/created-with of MachineDeployment tenant-acme/kubernetes-acme-workers)) is malformed`)
	_, err = renderPool(t, vals(t, "{cluster: acme, osImage: {}}"), clusterFromYAML(t, annotated, "cluster/instancetypes.yaml"))
	require.NoError(t, err, "the pool's own osImage overrides a bad record")

	legacy := legacyRecord(`{origin: platform, imageFactoryURL: "", osImage: "builtin: {version: 'v1.13.6 #'}"}`)
	_, err = renderPool(t, vals(t, "cluster: acme"), clusterFromYAML(t, legacy, "cluster/instancetypes.yaml"))
	requireRefusal(t, err, `(ConfigMap tenant-acme/kubernetes-acme-workers-created-with, the record of an earlier chart version)) is malformed`)
}

func TestRecordCapturesTheCreationDefaults(t *testing.T) {
	annotation := func(m *render.Manifest) interface{} {
		return render.Get(doc(t, m, "MachineDeployment").Object, "metadata.annotations[kubernetes-worker-image.cozystack.io/created-with]")
	}
	plain := mustRenderPool(t, vals(t, "cluster: acme"), nil)
	assert.Nil(t, annotation(plain), "no default applied: no annotation, and the MachineDeployment keeps its bytes")
	assert.Empty(t, poolConfigMaps(plain), "no record object in the release")
	m := mustRenderPool(t, withChannel(t, "cluster: acme", clusterChannel(t, mirrorPlatform+"  osImage: {factory: {}}\n")), nil)
	assert.Equal(t, `{"imageFactoryURL":"`+internalFactory+`","osImage":{"factory":{}}}`, annotation(m))
	assert.Contains(t, doc(t, m, "MachineDeployment").Text, `kubernetes-worker-image.cozystack.io/created-with: "{\"imageFactoryURL\":\"`+internalFactory+`\",\"osImage\":{\"factory\":{}}}"`+"\n")
}

// The record on the MachineDeployment holds only what this chart writes.
func TestUnreadableCreationAnnotationIsRefused(t *testing.T) {
	for _, tc := range []struct{ value, refusal string }{
		{`builtin: {}`, `the annotation kubernetes-worker-image.cozystack.io/created-with of MachineDeployment tenant-acme/kubernetes-acme-workers is not a JSON object as this chart writes it ("builtin: {}")`},
		{`{"osImage": {"builtin": {}`, "is not a JSON object as this chart writes it"},
		{`{"osimage": {"builtin": {}}}`, `the annotation kubernetes-worker-image.cozystack.io/created-with of MachineDeployment tenant-acme/kubernetes-acme-workers has no key "osimage"; the keys it takes are imageFactoryURL, osImage`},
		{`{"imageFactoryURL": 42}`, `imageFactoryURL in the annotation kubernetes-worker-image.cozystack.io/created-with of MachineDeployment tenant-acme/kubernetes-acme-workers is 42 (a number), not a string`},
		{`{"osImage": {"builtin": false}}`, `_cluster.osImage.builtin is false (a boolean), not a map`},
	} {
		_, err := renderPool(t, vals(t, "cluster: acme"), clusterFromYAML(t, createdWith(tc.value), "cluster/instancetypes.yaml"))
		requireRefusal(t, err, tc.refusal)
	}
	m, err := renderPool(t, vals(t, "cluster: acme"), clusterFromYAML(t, createdWith(`{"imageFactoryURL":"https://factory.mirror.internal"}`), "cluster/instancetypes.yaml"))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(urlOfPool(t, m), internalFactory+"/image/"), "the recorded factory applies")
}

// A pool an earlier chart version created has its record as a ConfigMap: the
// first upgrade reads it, carries it into the MachineDeployment's annotation
// and leaves the ConfigMap out of the release (Helm deletes it), with the
// same machine template.
func TestAnEarlierRecordIsCarriedIntoTheAnnotation(t *testing.T) {
	legacy := legacyRecord(`{origin: platform, imageFactoryURL: "https://factory.mirror.internal", osImage: "factory: {}"}`)
	m, err := renderPoolAs(t, render.Release{Name: testRelease, Namespace: testNamespace, Upgrade: true}, withChannel(t, "cluster: acme", clusterChannel(t, "tenantWorkers: {osImage: {builtin: {}}}")), clusterFromYAML(t, legacy, "cluster/instancetypes.yaml"))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(urlOfPool(t, m), internalFactory+"/image/"), "the recorded defaults apply, not today's")
	assert.Equal(t, `{"imageFactoryURL":"https://factory.mirror.internal","osImage":{"factory":{}}}`, render.Get(doc(t, m, "MachineDeployment").Object, "metadata.annotations[kubernetes-worker-image.cozystack.io/created-with]"))
	assert.Empty(t, poolConfigMaps(m))

	// Then the annotation alone answers, with the same bytes.
	next, err := renderPoolAs(t, render.Release{Name: testRelease, Namespace: testNamespace, Upgrade: true}, vals(t, "cluster: acme"), clusterFromYAML(t, createdWith(`{"imageFactoryURL":"https://factory.mirror.internal","osImage":{"factory":{}}}`), "cluster/instancetypes.yaml"))
	require.NoError(t, err)
	assert.Equal(t, m.Text(), next.Text())

	// A broken recorded osImage: refused for a pool that reads it, dropped by one with its own.
	broken := legacyRecord(`{origin: platform, imageFactoryURL: "", osImage: "builtin: [unclosed"}`)
	_, err = renderPool(t, vals(t, "cluster: acme"), clusterFromYAML(t, broken, "cluster/instancetypes.yaml"))
	requireRefusal(t, err, "pool kubernetes-acme-workers: the osImage recorded in ConfigMap tenant-acme/kubernetes-acme-workers-created-with does not parse", "set the pool's own osImage")
	own, err := renderPool(t, vals(t, "{cluster: acme, osImage: {}}"), clusterFromYAML(t, broken, "cluster/instancetypes.yaml"))
	require.NoError(t, err, "a pool with its own osImage does not read the record's")
	assert.Nil(t, render.Get(doc(t, own, "MachineDeployment").Object, "metadata.annotations[kubernetes-worker-image.cozystack.io/created-with]"), "nothing valid to carry")
	merge := legacyRecord(`{origin: platform, imageFactoryURL: "", osImage: "builtin: {}\n'<<': {factory: {}}"}`)
	_, err = renderPool(t, vals(t, "cluster: acme"), clusterFromYAML(t, merge, "cluster/instancetypes.yaml"))
	requireRefusal(t, err, "the osImage recorded in ConfigMap tenant-acme/kubernetes-acme-workers-created-with holds a YAML merge key, anchor, alias or tag")
}

// fleet is a cluster holding what earlier installs left behind, upgraded as Helm would.
type fleet struct {
	t       *testing.T
	cluster *support.Cluster
}

func newFleet(t *testing.T) *fleet {
	return &fleet{t: t, cluster: healthyCluster(t)}
}

// release renders pool values as release kubernetes-nodes-acme-<pool> (an
// upgrade when the pool exists) and applies the result to the cluster.
func (f *fleet) release(pool, values string, channel map[string]interface{}, upgrade bool) *render.Manifest {
	f.t.Helper()
	v := vals(f.t, values)
	if channel != nil {
		v["_cluster"] = channel
	}
	m, err := renderPoolAs(f.t, render.Release{Name: "kubernetes-nodes-acme-" + pool, Namespace: testNamespace, Upgrade: upgrade}, v, f.cluster)
	require.NoError(f.t, err, pool)
	require.NoError(f.t, f.cluster.Apply(m, testNamespace))
	return m
}

func urlOfPool(t testing.TB, m *render.Manifest) string {
	u, _ := render.Get(diskOf(m), "spec.source.http.url").(string)
	return u
}

// The create-time promise, step by step through a fleet's life.
func TestPlatformDefaultsNeverRollAnExistingPool(t *testing.T) {
	f := newFleet(t)
	none := map[string]interface{}{}
	first := clusterChannel(t, mirrorPlatform+"  osImage: {builtin: {}}\n")
	second := clusterChannel(t, "tenantWorkers: {talos: {imageFactoryURL: 'https://factory.second.internal'}}")

	// Two pools created with no defaults.
	legacy := f.release("legacy", "cluster: acme", none, false)
	plain := f.release("plain", "cluster: acme", none, false)

	// The operator sets platform defaults; the existing pools upgrade.
	legacyAfter := f.release("legacy", "cluster: acme", first, true)
	plainAfter := f.release("plain", "cluster: acme", first, true)
	for name, pair := range map[string][2]*render.Manifest{"legacy": {legacy, legacyAfter}, "plain": {plain, plainAfter}} {
		assert.Equal(t, machineTemplateName(t, pair[0]), machineTemplateName(t, pair[1]), "%s: the template keeps its name", name)
		assert.Equal(t, doc(t, pair[0], "KubevirtMachineTemplate").Text, doc(t, pair[1], "KubevirtMachineTemplate").Text, name)
		assert.Equal(t, builtinFactory, strings.Split(urlOfPool(t, pair[1]), "/image/")[0], name)
		// Mirrors and installer are render-time: they reach existing pools, in the TalosConfigTemplate only.
		assert.NotEqual(t, talosConfigTemplate(t, pair[0]), talosConfigTemplate(t, pair[1]), name)
		assert.Equal(t, "registry.mirror.internal/siderolabs/installer/"+defaultSchematic+":"+defaultTalos, render.Get(workerConfig(t, pair[1]), "machine.install.image"), name)
	}
	assert.Nil(t, render.Get(doc(t, legacyAfter, "MachineDeployment").Object, "metadata.annotations[kubernetes-worker-image.cozystack.io/created-with]"), "a pool without record counts as created with the built-in values, and stays without one")

	// A new pool takes today's defaults: a clone of the golden.
	fresh := f.release("fresh", "cluster: acme", first, false)
	assert.Equal(t, defaultGolden, render.Get(diskOf(fresh), "spec.source.pvc.name"))

	// The default moves again: nobody moves with it.
	for _, pool := range []struct {
		name   string
		before *render.Manifest
	}{{"legacy", legacyAfter}, {"plain", plainAfter}, {"fresh", fresh}} {
		again := f.release(pool.name, "cluster: acme", second, true)
		assert.Equal(t, machineTemplateName(t, pool.before), machineTemplateName(t, again), "%s keeps its template when the default changes again", pool.name)
	}
	newest := f.release("newest", "cluster: acme", second, false)
	assert.True(t, strings.HasPrefix(urlOfPool(t, newest), "https://factory.second.internal/image/"), "a pool created now takes the new default")

	// A pool that edits its own talos.version re-images from the source it was created with.
	edited := f.release("newest", "{cluster: acme, talos: {version: v1.13.5}}", none, true)
	assert.NotEqual(t, machineTemplateName(t, newest), machineTemplateName(t, edited))
	assert.Equal(t, "https://factory.second.internal/image/"+defaultSchematic+"/v1.13.5/openstack-amd64.raw.xz", urlOfPool(t, edited))
	require.NoError(t, f.cluster.Add(mustObjects(t, golden{name: "talos-worker-" + defaultSchematic + "-v1.13.5", class: "replicated", size: "6Gi", phase: "Succeeded"}.yaml())...))
	editedFresh := f.release("fresh", "{cluster: acme, talos: {version: v1.13.5}}", none, true)
	assert.Equal(t, "talos-worker-"+defaultSchematic+"-v1.13.5", render.Get(diskOf(editedFresh), "spec.source.pvc.name"), "the recorded builtin follows the pool's own version")
}

// Every baseline corner, as an existing pool (MachineDeployment, no record),
// upgraded with every platform default set: the template, the deployment and
// the health check keep their committed bytes.
func TestBaselineCornersIgnoreLaterPlatformDefaults(t *testing.T) {
	channel := clusterChannel(t, mirrorPlatform+"  osImage: {builtin: {}}\n")
	for _, c := range baselineCorners(t) {
		t.Run(c.Name, func(t *testing.T) {
			values, err := render.ReadValues(c.ValuesFile)
			require.NoError(t, err)
			golden, err := os.ReadFile(c.GoldenFile)
			require.NoError(t, err)
			objs, err := render.ParseObjects(golden)
			require.NoError(t, err)
			var md []*unstructured.Unstructured
			for _, o := range objs {
				if o.GetKind() == "MachineDeployment" {
					md = append(md, o)
				}
			}
			require.Len(t, md, 1)
			cluster, err := c.LoadCluster()
			require.NoError(t, err)
			require.NoError(t, cluster.Add(md...))
			platform := map[string]interface{}{}
			if own, ok := values["_cluster"].(map[string]interface{}); ok {
				for k, v := range own {
					platform[k] = v
				}
			}
			for k, v := range channel {
				platform[k] = v
			}
			values["_cluster"] = platform
			release := c.ReleaseOf()
			release.Upgrade = true
			m, err := renderPoolAs(t, release, values, cluster)
			require.NoError(t, err)
			for _, kind := range []string{"KubevirtMachineTemplate", "MachineDeployment", "MachineHealthCheck"} {
				assert.Contains(t, string(golden), doc(t, m, kind).Text, "%s of %s keeps its committed bytes", kind, c.Name)
			}
		})
	}
}

func TestCreationRecordLookupErrorsFailTheRender(t *testing.T) {
	// A new pool reads its MachineDeployment; an existing one without the
	// annotation also reads an earlier version's record.
	for _, kind := range []string{"ConfigMap", "MachineDeployment"} {
		cluster := healthyCluster(t, createdWith(""))
		cluster.FailWith = map[string]error{kind: errFakeOutage}
		_, err := renderPool(t, withChannel(t, "cluster: acme", clusterChannel(t, mirrorPlatform)), cluster)
		requireRefusal(t, err, errFakeOutage.Error())
	}
}

func mustObjects(t testing.TB, text string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := render.ParseObjects([]byte(text))
	require.NoError(t, err)
	return objs
}

func TestOSImageThatIsNotAMapIsRefused(t *testing.T) {
	skip := render.Release{Name: testRelease, Namespace: testNamespace, SkipSchemaValidation: true}
	_, err := renderPoolAs(t, skip, vals(t, "{cluster: acme, osImage: builtin}"), nil)
	requireRefusal(t, err, `pool kubernetes-acme-workers: osImage is "builtin", not a map; write it as a map with builtin or factory`)
	_, err = renderPoolAs(t, skip, withChannel(t, "cluster: acme", map[string]interface{}{"osImage": []interface{}{"builtin"}}), nil)
	requireRefusal(t, err, "_cluster.osImage is a list, not a map")
	_, err = renderPoolAs(t, skip, vals(t, "{cluster: acme, osImage: {factory: {}}}"), nil)
	require.NoError(t, err)
}
