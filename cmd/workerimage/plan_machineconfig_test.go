package main

import (
	"encoding/base64"
	"os"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sigsyaml "sigs.k8s.io/yaml"
)

// A closed network on a stock Cozystack: the catalog's Package publishes the
// installer, the mirrors and the CA of the registry behind them. plan of a
// pool shows all three, each with the channel it came from, and never the
// CA itself.
func TestPlanShowsTheRegistryCAsTheCatalogPublishes(t *testing.T) {
	pem, err := os.ReadFile(support.Path("examples/platform/mirror-ca.pem"))
	require.NoError(t, err)
	values, err := os.ReadFile(support.Path("examples/stock-cozystack/catalog-values.yaml"))
	require.NoError(t, err)
	catalogValues := map[string]any{}
	require.NoError(t, sigsyaml.Unmarshal(values, &catalogValues))
	catalogValues["registries"].(map[string]any)["config"] = map[string]any{"registry.mirror.internal": map[string]any{"tls": map[string]any{"ca": string(pem)}}}
	catalog, err := support.LoadChart(render.CatalogChart)
	require.NoError(t, err)
	m, err := render.Render(catalog, render.Options{Release: render.Release{Name: "kubernetes-worker-image", Namespace: "cozy-public"}, Values: catalogValues})
	require.NoError(t, err)
	published, ok := m.Find("ConfigMap", report.TenantDefaultsConfigMap)
	require.True(t, ok, "the catalog publishes its tenant defaults")
	state := stateWith(t, "cluster", "---\n"+published.Text)
	pool := td("pools", "http.yaml")

	r := planOf(t, pool, state, exitOK)
	require.NotNil(t, r.MachineConfig)
	channel := " of " + report.CatalogChannel
	assert.Equal(t, "registry.mirror.internal/siderolabs/installer", r.MachineConfig.Installer.Repository)
	assert.Equal(t, "the default talos.installerRepository"+channel, r.MachineConfig.Installer.Source)
	assert.Equal(t, []report.RegistryConfigHost{{Host: "registry.mirror.internal", CA: true, Source: "the default talos.registryConfig" + channel}}, r.MachineConfig.RegistryConfig)
	require.Len(t, r.MachineConfig.RegistryMirrors, 2)
	assert.Equal(t, "the default talos.registryMirrors"+channel, r.MachineConfig.RegistryMirrors[0].Source)

	text := cli(t, "plan", "-values", pool, "-release", testRelease, "-namespace", testNamespace, "-cluster", state)
	require.Equal(t, exitOK, text.code, text.stderr)
	assert.Contains(t, text.stdout, "\ninstaller         registry.mirror.internal/siderolabs/installer/"+defaultSchematic+":"+defaultVersion+"  (the default talos.installerRepository"+channel+")\n")
	assert.Contains(t, text.stdout, "\nmirrors           docker.io -> https://registry.mirror.internal/v2/docker.io  (the default talos.registryMirrors"+channel+")\n"+
		"                  factory.talos.dev -> https://registry.mirror.internal/v2/factory.talos.dev  (the default talos.registryMirrors"+channel+")\n")
	assert.Contains(t, text.stdout, "\nregistry CAs      registry.mirror.internal  (the default talos.registryConfig"+channel+")\n")

	asJSON := cli(t, "plan", "-values", pool, "-release", testRelease, "-namespace", testNamespace, "-cluster", state, "-o", "json")
	for _, out := range []string{text.stdout, asJSON.stdout} {
		assert.NotContains(t, out, "BEGIN CERTIFICATE", "never a CA's PEM")
		assert.NotContains(t, out, strings.Split(string(pem), "\n")[1])
		assert.NotContains(t, out, base64.StdEncoding.EncodeToString(pem)[:40], "nor the base64 the machine config carries")
	}
}

// catalog previews the registry CAs a Package publishes as plan names them:
// by host, never the PEM.
func TestCatalogPreviewNamesThePublishedRegistryCAsByHost(t *testing.T) {
	res := cli(t, "catalog", "-f", support.Path("examples/closed-network/catalog.yaml"), "--cluster", support.Path("examples/cluster-state.yaml"))
	require.Equal(t, exitOK, res.code, res.stderr)
	assert.Contains(t, res.stdout, "\n  registry CAs   registry.mirror.internal  (now: none)\n")
	assert.NotContains(t, res.stdout, "BEGIN CERTIFICATE")
	assert.NotContains(t, res.stdout, "talos.registryConfig")
}
