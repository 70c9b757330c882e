package main

import (
	"os"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func catalogOf(t *testing.T, code int, args ...string) report.CatalogReport {
	t.Helper()
	res := cli(t, append(append([]string{"catalog"}, args...), "-o", "json")...)
	require.Equal(t, code, res.code, res.stderr)
	return decode[report.CatalogReport](t, res)
}

func outcomes(r report.CatalogReport) map[string]string {
	out := map[string]string{}
	for _, g := range r.Goldens {
		out[g.Name] = g.Outcome
	}
	return out
}

// The closed-networks page's platform values, on the platform example whose
// goldens were imported from the public factory: the catalog refuses the
// entry as edited, and the preview says so before the upgrade would; the
// cutover as the catalog takes it keeps both goldens and creates the new
// flavor from the mirror.
func TestCatalogPreviewShowsTheClosedNetworkRefusal(t *testing.T) {
	state := support.Path("examples", "platform", "cluster-state.yaml")
	r := catalogOf(t, exitAttn, "-f", support.Path("examples", "platform", "closed-network.yaml"), "--cluster", state)
	assert.Equal(t, "refused", r.Result)
	require.NotNil(t, r.Enabled)
	assert.True(t, *r.Enabled)
	assert.Contains(t, r.Refusal, `was edited after its golden was created`)
	assert.Contains(t, r.Refusal, `"https://factory.mirror.internal/image/`)
	assert.Equal(t, map[string]string{goldenName("v1.13.5"): report.GoldenDropped, goldenName("v1.13.6"): report.GoldenRefusesEdit}, outcomes(r))
	assert.Equal(t, "https://factory.mirror.internal", r.Values["imageFactoryURL"], "the values the platform forwards")
	assert.Empty(t, r.CloneRole, "a refused render has no Role")

	r = catalogOf(t, exitOK, "-f", support.Path("examples", "platform", "closed-network-cutover.yaml"), "--cluster", state)
	assert.Equal(t, "renders", r.Result)
	assert.Equal(t, map[string]string{goldenName("v1.13.5"): report.GoldenKeeps, goldenName("v1.13.6"): report.GoldenKeeps, goldenName("v1.13.7"): report.GoldenCreates}, outcomes(r))
	assert.Equal(t, []string{goldenName("v1.13.5"), goldenName("v1.13.6"), goldenName("v1.13.7")}, r.CloneRole)
	assert.Equal(t, []string{"kubernetes-worker-image-ca"}, r.CAConfigMaps)
	for _, g := range r.Goldens {
		if g.Outcome == report.GoldenCreates {
			assert.Equal(t, "kubernetes-worker-image-ca", g.CAConfigMap)
			assert.True(t, strings.HasPrefix(g.Checksum, "sha256:"))
			assert.Equal(t, "https://factory.mirror.internal/image/"+defaultSchematic+"/v1.13.7/openstack-amd64.raw.xz", g.SourceURL)
		}
	}
}

// Retiring: an entry whose golden nothing uses retires; one a pool still
// clones is refused to retire, naming its users by the catalog's own rule; a
// golden marked retiring whose entry is dropped is deleted when unused. The
// values are the platform's, so the cluster is the platform example.
func TestCatalogPreviewRetires(t *testing.T) {
	state := support.Path("examples", "platform", "cluster-state.yaml")
	values := writeTemp(t, "platform.yaml", `kubernetesWorkerImage:
  images:
    - {schematicID: `+defaultSchematic+`, version: v1.13.5, retire: true}
    - {schematicID: `+defaultSchematic+`, version: v1.13.6, retire: true}
`)
	r := catalogOf(t, exitAttn, "-f", values, "--cluster", state)
	require.NotNil(t, r.Enabled)
	assert.False(t, *r.Enabled, "these values do not enable the catalog")
	assert.Equal(t, map[string]string{goldenName("v1.13.5"): report.GoldenRetires, goldenName("v1.13.6"): report.GoldenRetireRefused}, outcomes(r))
	for _, g := range r.Goldens {
		if g.Outcome == report.GoldenRetireRefused {
			assert.Contains(t, g.Detail, "tenant-acme/DataVolume/kubernetes-acme-golden-4c1d2e-8xk2p-disk-system")
		}
	}
	text := cli(t, "catalog", "-f", values, "--cluster", state).stdout
	assert.Contains(t, text, "\nenabled  no: these platform values do not list cozystack.kubernetes-worker-image in bundles.enabledPackages")
	assert.Contains(t, text, "\nretires  "+goldenName("v1.13.5")+"\n")
	assert.Contains(t, text, "\nrefuses to retire  "+goldenName("v1.13.6")+"\n")

	for _, g := range r.Goldens {
		if g.Name == goldenName("v1.13.6") {
			assert.Contains(t, g.Detail, "; and new pools' default (schematicID from the pool chart's built-in default", "v1.13.6 is also the flavor new pools take")
		}
	}

	// The default flavor's golden, marked retiring, its entry dropped: refused
	// while new pools take it (issue 59); deleted once the platform gives new
	// pools another (its tenantWorkers.talos.version, which it forwards).
	retiring := stateWith(t, "golden-retiring")
	r = catalogOf(t, exitAttn, "-f", writeTemp(t, "none.yaml", "kubernetesWorkerImage: {images: []}\n"), "--cluster", retiring)
	assert.Equal(t, map[string]string{goldenName(defaultVersion): report.GoldenRetireRefused}, outcomes(r))
	assert.Contains(t, r.Refusal, "is marked retiring and this render no longer lists its entry, so Helm would delete it, but it is in use: new pools take it by default")
	r = catalogOf(t, exitOK, "-f", writeTemp(t, "moved.yaml", "tenantWorkers: {talos: {version: v1.13.7}}\nkubernetesWorkerImage: {images: []}\n"), "--cluster", retiring)
	assert.Equal(t, map[string]string{goldenName(defaultVersion): report.GoldenDeletes}, outcomes(r))
}

// Without -f the values are the cluster's catalog Package's (what the
// platform forwards now), else the catalog's own defaults; a platform value
// the platform chart refuses is its refusal, with the key nearest to a
// misspelt one.
func TestCatalogPreviewValuesFromTheClusterAndRefusedPlatformValues(t *testing.T) {
	withPackage := stateWith(t, "golden", `---
apiVersion: cozystack.io/v1alpha1
kind: Package
metadata: {name: cozystack.kubernetes-worker-image}
spec:
  variant: default
  components:
    kubernetes-worker-image:
      values:
        images: []
`)
	r := catalogOf(t, exitOK, "--cluster", withPackage)
	assert.Contains(t, r.ValuesFrom, "the cluster's Package cozystack.kubernetes-worker-image")
	assert.Nil(t, r.Enabled)
	assert.Equal(t, map[string]string{goldenName(defaultVersion): report.GoldenDropped}, outcomes(r))

	r = catalogOf(t, exitOK, "--cluster", td("state", "golden.yaml"))
	assert.Contains(t, r.ValuesFrom, "the catalog's built-in values (the cluster has no Package")
	assert.Equal(t, map[string]string{goldenName(defaultVersion): report.GoldenKeeps}, outcomes(r), "the catalog's default entry is the chart's default flavor")

	// A nested typo is bad input (exit 2), as a top-level one is.
	typo := writeTemp(t, "typo.yaml", "kubernetesWorkerImage:\n  imageFactoryUrl: https://factory.mirror.internal\n")
	requireProblem(t, cli(t, "catalog", "-f", typo, "--cluster", td("state", "golden.yaml")),
		`the values at kubernetesWorkerImage: "imageFactoryUrl" is not a key of kubernetesWorkerImage in platform values, read as platform values since they set kubernetesWorkerImage`, "did you mean imageFactoryURL?")
	// A value the platform chart refuses is its refusal, word for word (exit 1).
	bad := writeTemp(t, "bad.yaml", "kubernetesWorkerImage:\n  imageFactoryURL: factory.mirror.internal\n")
	r = catalogOf(t, exitAttn, "-f", bad, "--cluster", td("state", "golden.yaml"))
	assert.Contains(t, r.Refusal, "the platform chart refuses these values: ")
	assert.Contains(t, r.Refusal+r.SchemaRefusal, "factory.mirror.internal")
}

// What the catalog publishes for new pools is previewed with its goldens:
// with the catalog's monitoring on, the metrics switch pools follow where
// _cluster sets none; the clone Role and the CA list stay the goldens' own.
func TestCatalogPreviewShowsThePublishedTenantDefaults(t *testing.T) {
	values := t.TempDir() + "/platform.yaml"
	require.NoError(t, os.WriteFile(values, []byte("kubernetesWorkerImage: {monitoring: {enabled: true}}\n"), 0o644))
	r := catalogOf(t, exitOK, "-f", values, "--reset-values", "--cluster", support.Path("examples", "cluster-state.yaml"))
	assert.Equal(t, `{"kubernetesWorkerImage":{"metrics":true}}`, r.TenantDefaults)
	assert.NotContains(t, r.CloneRole, report.TenantDefaultsConfigMap, "the tenant defaults' Role is not the clone Role")
	assert.NotContains(t, r.CAConfigMaps, report.TenantDefaultsConfigMap)
	require.NotNil(t, r.Publishes)
	assert.Equal(t, map[string]any{"kubernetesWorkerImage": map[string]any{"metrics": true}}, r.Publishes.Publishes)
	text := cli(t, "catalog", "-f", values, "--reset-values", "--cluster", support.Path("examples", "cluster-state.yaml"))
	assert.Contains(t, text.stdout, "\ntenant defaults  what the catalog publishes for new pools in ConfigMap cozy-public/kubernetes-worker-image-tenant-defaults (a pool's own values and _cluster come first); now: ")
	assert.Contains(t, text.stdout, "\n  metrics        true")

	// Nothing published beyond {}: no row, no key.
	require.NoError(t, os.WriteFile(values, []byte("kubernetesWorkerImage: {}\n"), 0o644))
	assert.Empty(t, catalogOf(t, exitOK, "-f", values, "--reset-values", "--cluster", support.Path("examples", "cluster-state.yaml")).TenantDefaults)
}
