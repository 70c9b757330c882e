package render

import (
	"encoding/base64"
	"sort"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// What `workerimage plan` reads of a pool's machine config: the installer,
// the mirrors and the registries' config, each with its channel, answered by
// the chart (kubernetes-nodes.machineConfigFacts) from what the machine
// config itself is written from.

// machineConfigFacts renders the pool with the facts the CLI adds, and
// returns them beside the worker's machine config of the same render, after
// checking that the two say the same.
func machineConfigFacts(t testing.TB, values map[string]interface{}, cluster *support.Cluster) (mcFacts, string) {
	t.Helper()
	c := render.WithTemplate(poolChart(t), "templates/0-facts.yaml", []byte(`kind: Facts
metadata: {name: facts}
machineConfig:
  {{- include "kubernetes-nodes.machineConfigFacts" . | nindent 2 }}
`))
	m, err := render.Render(c, render.Options{Release: render.Release{Name: testRelease, Namespace: testNamespace}, Values: values, Cluster: cluster})
	require.NoError(t, err)
	d, ok := m.Find("Facts", "facts")
	require.True(t, ok)
	var facts struct {
		MachineConfig mcFacts `json:"machineConfig"`
	}
	require.NoError(t, yaml.Unmarshal([]byte(d.Text), &facts))
	f := facts.MachineConfig
	config := workerConfig(t, m)

	// The facts are what the machine config holds, host for host.
	assert.Equal(t, render.Get(config, "machine.install.image"), f.Installer.Image)
	assert.True(t, strings.HasPrefix(f.Installer.Image, f.Installer.Repository+"/"), f.Installer)
	mirrors, _ := render.Get(config, "machine.registries.mirrors").(map[string]interface{})
	var hosts []string
	for _, mirror := range f.RegistryMirrors {
		hosts = append(hosts, mirror.Host)
		want := map[string]interface{}{"endpoints": toAny(mirror.Endpoints)}
		if mirror.OverridePath != nil {
			want["overridePath"] = *mirror.OverridePath
		}
		if mirror.SkipFallback != nil {
			want["skipFallback"] = *mirror.SkipFallback
		}
		assert.Equal(t, want, mirrors[mirror.Host], mirror.Host)
	}
	assert.Equal(t, sortedKeys(mirrors), hosts, "one fact per mirrored host, in order")
	registryConfig, _ := render.Get(config, "machine.registries.config").(map[string]interface{})
	hosts = nil
	for _, entry := range f.RegistryConfig {
		hosts = append(hosts, entry.Host)
		ca, _ := render.Get(registryConfig[entry.Host].(map[string]interface{}), "tls.ca").(string)
		assert.Equal(t, ca != "", entry.CA, entry.Host)
	}
	assert.Equal(t, sortedKeys(registryConfig), hosts, "one fact per configured host, in order")
	return f, d.Text
}

type mcFacts report.MachineConfigReport

// sources is each host's channel, as host=source.
func (f mcFacts) sources() (mirrors, config []string) {
	for _, m := range f.RegistryMirrors {
		mirrors = append(mirrors, m.Host+"="+m.Source)
	}
	for _, c := range f.RegistryConfig {
		ca := "no CA"
		if c.CA {
			ca = "CA"
		}
		config = append(config, c.Host+"="+ca+" from "+c.Source)
	}
	return mirrors, config
}

func toAny(s []string) []interface{} {
	out := make([]interface{}, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func sortedKeys(m map[string]interface{}) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

const (
	publishedMirrors  = "the default talos.registryMirrors of " + publishedChannel
	publishedConfig   = "the default talos.registryConfig of " + publishedChannel
	publishedSource   = "the default talos.installerRepository of " + publishedChannel
	clusterMirrors    = "the platform default _cluster.talos.registryMirrors"
	clusterConfig     = "the platform default _cluster.talos.registryConfig"
	clusterInstaller  = "the platform default _cluster.talos.installerRepository"
	builtinInstaller  = "the chart's built-in talos.installerRepository"
	ownInstaller      = "talos.installerRepository"
	ownMirrors        = "talos.registryMirrors"
	installerOfImage  = "/" + defaultSchematic + ":" + defaultTalos
	mirrorInstaller   = "registry.mirror.internal/siderolabs/installer"
	platformInstaller = "platform.internal/installer"
)

// Nothing published, nothing of _cluster's or the pool's own: the built-in
// installer, and no mirror or registry config.
func TestMachineConfigFactsBuiltin(t *testing.T) {
	for _, cluster := range []*support.Cluster{nil, stock(t), stock(t, publishedBy(t, "{}"))} {
		f, _ := machineConfigFacts(t, vals(t, "cluster: acme"), cluster)
		assert.Equal(t, "factory.talos.dev/installer"+installerOfImage, f.Installer.Image)
		assert.Equal(t, builtinInstaller, f.Installer.Source)
		assert.Empty(t, f.RegistryMirrors)
		assert.Empty(t, f.RegistryConfig)
	}
}

// A stock Cozystack: the catalog publishes the installer and the mirrors,
// and each is named with the catalog's ConfigMap.
func TestMachineConfigFactsPublished(t *testing.T) {
	f, _ := machineConfigFacts(t, vals(t, "cluster: acme"), stock(t, publishedBy(t, closedNetworkCatalog(t))))
	assert.Equal(t, mirrorInstaller+installerOfImage, f.Installer.Image)
	assert.Equal(t, mirrorInstaller, f.Installer.Repository)
	assert.Equal(t, publishedSource, f.Installer.Source)
	mirrors, config := f.sources()
	assert.Equal(t, []string{"docker.io=" + publishedMirrors, "ghcr.io=" + publishedMirrors}, mirrors)
	assert.Empty(t, config)
	assert.Equal(t, []string{"https://registry.mirror.internal/v2/docker.io"}, f.RegistryMirrors[0].Endpoints)
}

// _cluster's installer and mirrors, and its registry config (Talos's shape,
// credentials and all, which the facts never carry), named as _cluster's.
func TestMachineConfigFactsCluster(t *testing.T) {
	f, text := machineConfigFacts(t, withChannel(t, "cluster: acme", clusterChannel(t, mirrorPlatform)), stock(t))
	assert.Equal(t, mirrorInstaller+installerOfImage, f.Installer.Image)
	assert.Equal(t, clusterInstaller, f.Installer.Source)
	mirrors, config := f.sources()
	assert.Equal(t, []string{"docker.io=" + clusterMirrors, "ghcr.io=" + clusterMirrors}, mirrors)
	require.NotNil(t, f.RegistryMirrors[1].OverridePath)
	assert.True(t, *f.RegistryMirrors[1].OverridePath, "overridePath as written")
	assert.Nil(t, f.RegistryMirrors[0].OverridePath, "absent when not written")
	assert.Equal(t, []string{"registry.mirror.internal=no CA from " + clusterConfig}, config, "an entry of auth and insecureSkipVerify trusts no CA")
	assert.NotContains(t, text, "s3cret", "the facts never carry a credential")
	assert.NotContains(t, text, "puller")
}

// The pool's own installer and mirrors win over every channel.
func TestMachineConfigFactsPoolOwn(t *testing.T) {
	f, _ := machineConfigFacts(t, withChannel(t, `
cluster: acme
talos:
  installerRepository: own.internal/installer
  registryMirrors:
    docker.io: {endpoints: ['https://own.internal/v2/docker.io', 'https://own2.internal/v2/docker.io'], skipFallback: true}
`, clusterChannel(t, mirrorPlatform)), stock(t, publishedBy(t, closedNetworkCatalog(t))))
	assert.Equal(t, "own.internal/installer"+installerOfImage, f.Installer.Image)
	assert.Equal(t, ownInstaller, f.Installer.Source)
	assert.Equal(t, "docker.io", f.RegistryMirrors[0].Host)
	assert.Equal(t, ownMirrors, f.RegistryMirrors[0].Source)
	assert.Equal(t, []string{"https://own.internal/v2/docker.io", "https://own2.internal/v2/docker.io"}, f.RegistryMirrors[0].Endpoints)
	require.NotNil(t, f.RegistryMirrors[0].SkipFallback)
	assert.True(t, *f.RegistryMirrors[0].SkipFallback)
}

// Mirrors merge per host: the published ones, then _cluster's, then the
// pool's own, each replacing the one before for its host; each host names
// the channel its entry came from. The installer: _cluster's over the
// published one.
func TestMachineConfigFactsMergePerHost(t *testing.T) {
	channel := clusterChannel(t, `
tenantWorkers: {talos: {installerRepository: platform.internal/installer}}
registries: {mirrors: {docker.io: {endpoints: ['https://platform.internal/v2/docker.io']}, quay.io: {endpoints: ['https://platform.internal/v2/quay.io']}}}
`)
	published := stock(t, publishedBy(t, closedNetworkCatalog(t)))
	f, _ := machineConfigFacts(t, withChannel(t, "cluster: acme", channel), published)
	assert.Equal(t, platformInstaller+installerOfImage, f.Installer.Image)
	assert.Equal(t, clusterInstaller, f.Installer.Source)
	mirrors, _ := f.sources()
	assert.Equal(t, []string{"docker.io=" + clusterMirrors, "ghcr.io=" + publishedMirrors, "quay.io=" + clusterMirrors}, mirrors)

	f, _ = machineConfigFacts(t, withChannel(t, "{cluster: acme, talos: {registryMirrors: {ghcr.io: {endpoints: ['https://own.internal/v2/ghcr.io']}}}}", channel), published)
	mirrors, _ = f.sources()
	assert.Equal(t, []string{"docker.io=" + clusterMirrors, "ghcr.io=" + ownMirrors, "quay.io=" + clusterMirrors}, mirrors)
	assert.Equal(t, []string{"https://own.internal/v2/ghcr.io"}, f.RegistryMirrors[1].Endpoints)
}

// A registry CA the catalog publishes: the host trusts it, named with the
// catalog's ConfigMap, and the facts hold neither the PEM nor the base64 the
// machine config carries. _cluster's entry for the host replaces it, and the
// facts say that entry trusts no CA.
func TestMachineConfigFactsRegistryCAFromTheCatalog(t *testing.T) {
	catalog := withRegistryCAs(t, closedNetworkCatalog(t), map[string]string{"registry.mirror.internal": registryCA(t), "ghcr.mirror.internal:5000": registryCA(t)})
	published := stock(t, "---\n"+catalogTenantDefaults(t, catalog)[0].Text)
	f, text := machineConfigFacts(t, vals(t, "cluster: acme"), published)
	_, config := f.sources()
	assert.Equal(t, []string{"ghcr.mirror.internal:5000=CA from " + publishedConfig, "registry.mirror.internal=CA from " + publishedConfig}, config)
	assert.NotContains(t, text, "BEGIN CERTIFICATE")
	assert.NotContains(t, text, base64.StdEncoding.EncodeToString([]byte(registryCA(t)))[:40])

	channel := clusterChannel(t, "registries: {config: {registry.mirror.internal: {auth: {username: puller, password: s3cret}}}}")
	f, _ = machineConfigFacts(t, withChannel(t, "cluster: acme", channel), published)
	_, config = f.sources()
	assert.Equal(t, []string{"ghcr.mirror.internal:5000=CA from " + publishedConfig, "registry.mirror.internal=no CA from " + clusterConfig}, config)
}
