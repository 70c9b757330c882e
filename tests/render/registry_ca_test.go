package render

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A registry mirror served by the organisation's own CA: the catalog
// publishes that CA (registries.config.<host>.tls.ca, and nothing else of
// registries.config) for every pool's Talos machine config.

// registryCA is a self-signed CA certificate of its own (no key is kept).
func registryCA(t testing.TB) string { return readCA(t, "ca/registry-ca.pem") }

// registryCAs is catalog values publishing CAs for the hosts, keyed as
// written (a host[:port] or an endpoint URL).
func registryCAs(t testing.TB, cas map[string]string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("registries:\n  config:\n")
	for key, ca := range cas {
		fmt.Fprintf(&b, "    %s: {tls: {ca: %s}}\n", mustJSON(t, key), mustJSON(t, ca))
	}
	return b.String()
}

// withRegistryCAs is catalog values base with registries.config publishing
// CAs for the hosts (its mirrors kept).
func withRegistryCAs(t testing.TB, base string, cas map[string]string) map[string]interface{} {
	t.Helper()
	v := vals(t, base)
	registries, _ := v["registries"].(map[string]interface{})
	if registries == nil {
		registries = map[string]interface{}{}
		v["registries"] = registries
	}
	registries["config"] = vals(t, registryCAs(t, cas))["registries"].(map[string]interface{})["config"]
	return v
}

// publishedValues parses the JSON the catalog publishes for these values.
func publishedValues(t testing.TB, catalogValues map[string]interface{}) map[string]interface{} {
	t.Helper()
	var out map[string]interface{}
	text := render.Get(catalogTenantDefaults(t, catalogValues)[0].Object, "data[values.json]").(string)
	require.NoError(t, json.Unmarshal([]byte(text), &out))
	return out
}

// The catalog publishes each registry's CA under talos.registryConfig, the
// key _cluster carries the platform's registry config under, keyed by host as
// Talos keys it (an endpoint URL's scheme and path dropped, as the platform
// chart does), with the schema on and off.
func TestCatalogPublishesRegistryCAs(t *testing.T) {
	values := registryCAs(t, map[string]string{
		"registry.mirror.internal:5000":      registryCA(t),
		"https://ghcr.mirror.internal/v2/gh": testCA(t) + rotatedCA(t),
	})
	want := map[string]interface{}{"talos": map[string]interface{}{"registryConfig": map[string]interface{}{
		"registry.mirror.internal:5000": map[string]interface{}{"tls": map[string]interface{}{"ca": registryCA(t)}},
		"ghcr.mirror.internal":          map[string]interface{}{"tls": map[string]interface{}{"ca": testCA(t) + rotatedCA(t)}},
	}}}
	assert.Equal(t, want, publishedValues(t, vals(t, values)))
	m, err := renderChartAs(t, catalogChart(t), schemaOffCatalog, vals(t, values), nil)
	require.NoError(t, err)
	cm, ok := m.Find("ConfigMap", publishedName)
	require.True(t, ok)
	var got map[string]interface{}
	require.NoError(t, json.Unmarshal([]byte(render.Get(cm.Object, "data[values.json]").(string)), &got))
	assert.Equal(t, want, got, "the same with the schema off")
	// With the mirrors and the rest, beside them.
	all := publishedValues(t, withRegistryCAs(t, closedNetworkCatalog(t), map[string]string{"registry.mirror.internal": registryCA(t)}))
	assert.Equal(t, map[string]interface{}{"registry.mirror.internal": map[string]interface{}{"tls": map[string]interface{}{"ca": registryCA(t)}}}, render.Get(all, "talos.registryConfig"))
	assert.NotNil(t, render.Get(all, "talos.registryMirrors"))
	// An empty config, as a values file writes it, publishes nothing.
	assert.Equal(t, map[string]interface{}{}, publishedValues(t, vals(t, "registries: {config: {}}")))
}

var schemaOffCatalog = render.Release{Name: catalogRelease, Namespace: catalogNamespace, SkipSchemaValidation: true}

// Anything of registries.config but a registry's CA is refused, with the
// schema on and off: the published object is readable by every tenant, so
// credentials stay out (and the message says where they go instead), and
// so do other registry settings. Each refusal has its neighbour that renders.
func TestCatalogRefusesRegistryCredentials(t *testing.T) {
	ca := mustJSON(t, registryCA(t))
	why := []string{"but only a registry's CA (tls.ca) is published: the catalog writes its registries.config into ConfigMap cozy-public/kubernetes-worker-image-tenant-defaults, which every tenant may read, so no credential (auth, tls.clientIdentity) and no other registry setting (tls.insecureSkipVerify) goes there",
		"give the workers pull credentials through the platform's _cluster.talos.registryConfig where the platform carries that channel (docs/cozystack.md), or serve the mirror to the tenants' networks without credentials"}
	neighbour := "registries: {config: {'registry.mirror.internal': {tls: {ca: " + ca + "}}}}"
	for _, tc := range []struct{ name, values, refusal string }{
		{"auth", "registries: {config: {'registry.mirror.internal': {auth: {username: puller, password: s3cret}}}}", "registries.config[registry.mirror.internal].auth is set"},
		{"auth beside a CA", "registries: {config: {'registry.mirror.internal': {auth: {password: s3cret}, tls: {ca: " + ca + "}}}}", "registries.config[registry.mirror.internal].auth is set"},
		{"client identity", "registries: {config: {'registry.mirror.internal': {tls: {ca: " + ca + ", clientIdentity: {crt: c, key: s3cret}}}}}", "registries.config[registry.mirror.internal].tls.clientIdentity is set"},
		{"insecureSkipVerify", "registries: {config: {'registry.mirror.internal': {tls: {insecureSkipVerify: true}}}}", "registries.config[registry.mirror.internal].tls.insecureSkipVerify is set"},
		{"another key", "registries: {config: {'registry.mirror.internal': {tls: {ca: " + ca + "}, mirrors: {}}}}", "registries.config[registry.mirror.internal].mirrors is set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, rel := range []render.Release{{Name: catalogRelease, Namespace: catalogNamespace}, schemaOffCatalog} {
				_, err := renderCatalogAs(t, rel, vals(t, tc.values), nil)
				requireRefusal(t, err, append([]string{tc.refusal}, why...)...)
				assert.NotContains(t, err.Error(), "s3cret", "a refusal never prints a credential")
				_, err = renderCatalogAs(t, rel, vals(t, neighbour), nil)
				require.NoError(t, err, "a registry's CA alone is published")
			}
		})
	}
}

// The shape of registries.config around the CA, with the schema off (the
// templates hold without it); each refusal with its neighbour.
func TestCatalogRegistryCAShape(t *testing.T) {
	ca := mustJSON(t, registryCA(t))
	big := mustJSON(t, strings.Repeat(registryCA(t), 65536/len(registryCA(t))+1))
	fits := mustJSON(t, strings.Repeat(registryCA(t), 65536/len(registryCA(t))))
	for _, tc := range []struct{ name, values, refusal, neighbour string }{
		{"config a list", "registries: {config: [r.internal]}", "registries.config is a list, not a map of registry host to {tls: {ca: <PEM>}}", "registries: {config: {}}"},
		{"entry not a map", "registries: {config: {r.internal: " + ca + "}}", `registries.config[r.internal] is "-----BEGIN CERTIFICATE-----`, "registries: {config: {r.internal: {tls: {ca: " + ca + "}}}}"},
		{"tls not a map", "registries: {config: {r.internal: {tls: " + ca + "}}}", `registries.config[r.internal].tls is "-----BEGIN CERTIFICATE-----`, "registries: {config: {r.internal: {tls: {ca: " + ca + "}}}}"},
		{"no ca", "registries: {config: {r.internal: {tls: {}}}}", "registries.config[r.internal].tls has no ca; set tls.ca to the PEM of the CA that signs the registry's certificate", "registries: {config: {r.internal: {tls: {ca: " + ca + "}}}}"},
		{"null ca", "registries: {config: {r.internal: {tls: {ca: null}}}}", "registries.config[r.internal].tls.ca is null; set it to the PEM", "registries: {config: {r.internal: {tls: {ca: " + ca + "}}}}"},
		{"empty ca", "registries: {config: {r.internal: {tls: {ca: ''}}}}", `registries.config[r.internal].tls.ca is ""; set it to the PEM`, "registries: {config: {}}"},
		{"ca not PEM", "registries: {config: {r.internal: {tls: {ca: " + mustJSON(t, base64.StdEncoding.EncodeToString([]byte(registryCA(t)))) + "}}}}", "registries.config[r.internal].tls.ca (", "registries: {config: {r.internal: {tls: {ca: " + ca + "}}}}"},
		{"ca with a key", "registries: {config: {r.internal: {tls: {ca: " + mustJSON(t, registryCA(t)+"-----BEGIN PRIVATE KEY-----\nMIGH\n-----END PRIVATE KEY-----\n") + "}}}}", "is not PEM certificates", "registries: {config: {r.internal: {tls: {ca: " + ca + "}}}}"},
		{"ca past 64 KiB", "registries: {config: {r.internal: {tls: {ca: " + big + "}}}}", "more than the 65536 (64 KiB) the chart takes; Talos adds it to the roots a worker trusts when it pulls from that registry, so set it to the PEM of the CA that signs the registry mirror's certificate", "registries: {config: {r.internal: {tls: {ca: " + fits + "}}}}"},
		{"host", `registries: {config: {"r.internal\nx: y": {tls: {ca: ` + ca + `}}}}`, `registries.config has the key "r.internal\nx: y", which is not a registry host[:port]`, "registries: {config: {'r.internal:5000': {tls: {ca: " + ca + "}}}}"},
		{"no host", "registries: {config: {'https://': {tls: {ca: " + ca + "}}}}", `registries.config: key "https://" names no registry host`, "registries: {config: {'https://r.internal': {tls: {ca: " + ca + "}}}}"},
		{"one host twice", "registries: {config: {'https://r.internal/v2/a': {tls: {ca: " + ca + "}}, 'r.internal': {tls: {ca: " + ca + "}}}}", "both name registry host r.internal, and Talos keeps one config per host", "registries: {config: {'https://r.internal/v2/a': {tls: {ca: " + ca + "}}, 'r.internal:443': {tls: {ca: " + ca + "}}}}"},
		{"65 hosts", "registries: {config: " + flowCAs(65, ca) + "}", "registries.config has 65 registry hosts, more than the 64 the chart takes", "registries: {config: " + flowCAs(64, ca) + "}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := renderCatalogAs(t, schemaOffCatalog, vals(t, tc.values), nil)
			requireRefusal(t, err, tc.refusal)
			_, err = renderCatalogAs(t, schemaOffCatalog, vals(t, tc.neighbour), nil)
			require.NoError(t, err, "neighbour %s", tc.neighbour)
		})
	}
}

// flowCAs is a flow map of n registry hosts, each {tls: {ca: ca}}.
func flowCAs(n int, ca string) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf("h%d.internal: {tls: {ca: %s}}", i, ca)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// The published JSON stays within what a pool reads (160 KiB): past it the
// catalog refuses, saying what takes the room; at two CAs of 60 KiB beside the
// Image Factory's CA it still publishes.
func TestCatalogPublishBoundNamesWhatTakesTheRoom(t *testing.T) {
	bundle := strings.Repeat(registryCA(t), 60*1024/len(registryCA(t)))
	three := withRegistryCAs(t, closedNetworkCatalog(t), map[string]string{"a.internal": bundle, "b.internal": bundle, "c.internal": bundle})
	_, err := renderChartAs(t, catalogChart(t), schemaOffCatalog, three, nil)
	requireRefusal(t, err, "tenantWorkers and registries publish ", "more than the 163840 a pool reads of ConfigMap cozy-public/kubernetes-worker-image-tenant-defaults",
		"of those, the Image Factory CA (tenantWorkers.talos.imageFactoryCA): ", " bytes, the registry CAs of 3 host(s) (registries.config): ", " bytes, the mirrors of 2 host(s) (registries.mirrors): ",
		"publish fewer registry CAs or mirrors, shorter mirror endpoints or smaller CA bundles")
	two := withRegistryCAs(t, closedNetworkCatalog(t), map[string]string{"a.internal": bundle, "b.internal": bundle})
	published := publishedValues(t, two)
	assert.Len(t, render.Get(published, "talos.registryConfig"), 2)
}

// A pool writes the published CAs into its Talos machine config as Talos reads
// tls.ca (base64 of the PEM), merged per registry host: the published entry
// first, _cluster's entry for the same host replacing it, the other published
// hosts kept. It rolls nothing: the machine template and MachineDeployment
// keep their bytes.
func TestPoolTakesThePublishedRegistryCAs(t *testing.T) {
	published := publishedBy(t, registryCAs(t, map[string]string{"registry.mirror.internal": registryCA(t), "ghcr.mirror.internal": testCA(t)}))
	m := mustRenderPool(t, vals(t, "cluster: acme"), stock(t, published))
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	assert.Equal(t, map[string]interface{}{
		"registry.mirror.internal": map[string]interface{}{"tls": map[string]interface{}{"ca": b64(registryCA(t))}},
		"ghcr.mirror.internal":     map[string]interface{}{"tls": map[string]interface{}{"ca": b64(testCA(t))}},
	}, render.Get(workerConfig(t, m), "machine.registries.config"))
	assert.Nil(t, render.Get(workerConfig(t, m), "machine.registries.mirrors"), "no mirror published, none written")
	plain := mustRenderPool(t, vals(t, "cluster: acme"), stock(t))
	for _, kind := range baselineKinds {
		assert.Equal(t, doc(t, plain, kind).Text, doc(t, m, kind).Text, "the published CA rolls nothing: %s", kind)
	}

	// _cluster's entry for a host replaces the published one, whole; the other published host stays.
	channel := clusterChannel(t, `
registries:
  config:
    https://registry.mirror.internal/v2:
      auth: {username: puller, password: s3cret}
`)
	merged := mustRenderPool(t, withChannel(t, "cluster: acme", channel), stock(t, published))
	assert.Equal(t, map[string]interface{}{
		"registry.mirror.internal": map[string]interface{}{"auth": map[string]interface{}{"username": "puller", "password": "s3cret"}},
		"ghcr.mirror.internal":     map[string]interface{}{"tls": map[string]interface{}{"ca": b64(testCA(t))}},
	}, render.Get(workerConfig(t, merged), "machine.registries.config"))
	// And without anything published, _cluster's config is written as before.
	alone := mustRenderPool(t, withChannel(t, "cluster: acme", channel), stock(t))
	assert.Equal(t, map[string]interface{}{"registry.mirror.internal": map[string]interface{}{"auth": map[string]interface{}{"username": "puller", "password": "s3cret"}}},
		render.Get(workerConfig(t, alone), "machine.registries.config"))
}

// Nothing new published (mirrors only, or nothing): the pool renders every
// byte as before, its TalosConfigTemplate included.
func TestPoolWithoutPublishedRegistryCAsRendersAsBefore(t *testing.T) {
	channel := clusterChannel(t, mirrorPlatform)
	for _, values := range []map[string]interface{}{vals(t, "cluster: acme"), withChannel(t, "cluster: acme", channel)} {
		before := mustRenderPool(t, values, stock(t)).Text()
		assert.Equal(t, before, mustRenderPool(t, values, stock(t, publishedBy(t, "registries: {config: {}}"))).Text())
	}
}

// The pool reads exactly what the catalog writes of registryConfig: each
// host's tls.ca, PEM certificates within the bound; a credential or any other
// setting in the published object is refused, naming it and the fix.
func TestPoolRefusesPublishedRegistryConfigTheCatalogWouldNot(t *testing.T) {
	const where = "pool kubernetes-acme-workers: ConfigMap cozy-public/kubernetes-worker-image-tenant-defaults, the catalog's published defaults for new pools, values.json (fix the catalog's tenantWorkers, registries.mirrors, registries.config and monitoring.enabled values, which write it): "
	ca := mustJSON(t, registryCA(t))
	for _, tc := range []struct{ object, refusal string }{
		{`{"talos": {"registryConfig": {"r.internal": {"auth": {"password": "s3cret"}}}}}`, where + "talos.registryConfig[r.internal].auth is set, but only a registry's CA (tls.ca) is published"},
		{`{"talos": {"registryConfig": {"r.internal": {"tls": {"ca": ` + ca + `, "insecureSkipVerify": true}}}}}`, where + "talos.registryConfig[r.internal].tls.insecureSkipVerify is set"},
		{`{"talos": {"registryConfig": {"r.internal": {"tls": {"ca": "not a certificate"}}}}}`, where + `talos.registryConfig[r.internal].tls.ca ("not a certificate") is not PEM certificates`},
		{`{"talos": {"registryConfig": {"r.internal": {"tls": {}}}}}`, where + "talos.registryConfig[r.internal].tls has no ca"},
		{`{"talos": {"registryConfig": {"r.internal": {"tls": {"ca": 42}}}}}`, where + "talos.registryConfig[r.internal].tls.ca is 42 (a number); set it to the PEM"},
		{`{"talos": {"registryConfig": ["r.internal"]}}`, where + "talos.registryConfig is a list, not a map; the catalog writes it from its registries.config"},
		{`{"talos": {"registryConfig": {"r.internal x": {"tls": {"ca": ` + ca + `}}}}}`, where + `talos.registryConfig has the key "r.internal x", which is not a registry host[:port]`},
	} {
		_, err := renderPool(t, vals(t, "cluster: acme"), stock(t, publishedJSON(tc.object)))
		requireRefusal(t, err, tc.refusal)
		assert.NotContains(t, err.Error(), "s3cret")
	}
	// The neighbour: what the catalog writes is read.
	_, err := renderPool(t, vals(t, "cluster: acme"), stock(t, publishedJSON(`{"talos": {"registryConfig": {"r.internal": {"tls": {"ca": `+ca+`}}}}}`)))
	require.NoError(t, err)
}

// The catalog keys registries.config as the platform chart keys it (an
// endpoint URL or a host[:port]), with the same template: same refusals.
func TestCatalogAndPlatformKeyRegistryConfigAlike(t *testing.T) {
	platform, err := support.LoadChart(render.PlatformChart)
	require.NoError(t, err)
	ca := mustJSON(t, registryCA(t))
	for _, tc := range []struct{ config, refusal string }{
		{"{'https://': {tls: {ca: " + ca + "}}}", `registries.config: key "https://" names no registry host; key each entry by the mirror endpoint URL or its host[:port]`},
		{"{'https://r.internal/v2': {tls: {ca: " + ca + "}}, 'r.internal': {tls: {ca: " + ca + "}}}", `registries.config: keys "https://r.internal/v2" and "r.internal" both name registry host r.internal, and Talos keeps one config per host; merge them into one entry`},
	} {
		values := "registries: {config: " + tc.config + "}"
		_, catalogErr := renderCatalogAs(t, schemaOffCatalog, vals(t, values), nil)
		requireRefusal(t, catalogErr, tc.refusal)
		_, platformErr := render.Render(platform, render.Options{Release: render.Release{Name: "platform", Namespace: "cozy-system", SkipSchemaValidation: true}, Values: vals(t, values)})
		requireRefusal(t, platformErr, tc.refusal)
	}
}

// The committed renders agree with each other: the published object the pool
// golden is rendered against is the one the catalog golden renders, and that
// pool's KubevirtMachineTemplate and MachineDeployment are what the same pool
// renders with nothing published (a published CA rolls nothing).
func TestPublishedRegistryCAGoldensAgree(t *testing.T) {
	catalog, err := render.LoadObjects(filepath.Join("testdata", "golden", "catalog-registry-ca.golden.yaml"))
	require.NoError(t, err)
	fixture, err := render.LoadObjects(support.Fixture("golden/state/published-registry-ca.yaml"))
	require.NoError(t, err)
	require.Len(t, fixture, 1)
	var published map[string]interface{}
	for _, o := range catalog {
		if o.GetKind() == "ConfigMap" && o.GetName() == publishedName {
			published = o.Object
		}
	}
	require.NotNil(t, published, "the catalog golden publishes the tenant defaults")
	assert.Equal(t, published, fixture[0].Object, "the pool golden reads what the catalog golden publishes")

	golden, err := os.ReadFile(filepath.Join("testdata", "golden", "pool-published-registry-ca.golden.yaml"))
	require.NoError(t, err)
	nothing := mustRenderPool(t, vals(t, "cluster: acme"), loadCluster(t, "golden/state/instancetypes.yaml", "golden/state/classes.yaml"))
	for _, kind := range baselineKinds {
		assert.Contains(t, string(golden), doc(t, nothing, kind).Text, "%s: the same bytes with nothing published", kind)
	}
	assert.Contains(t, string(golden), "registries:\n                config:\n                  registry.mirror.internal:\n                    tls:\n                      ca: "+base64.StdEncoding.EncodeToString([]byte(registryCA(t)))+"\n")
}
