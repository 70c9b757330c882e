package report_test

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// On a stock Cozystack (no _cluster keys for tenant workers: the example
// cluster), plan names the catalog's published defaults as the channel of
// what a new pool takes, in the words the chart uses (report.CatalogChannel
// is the chart's).
func TestPlanNamesTheCatalogsPublishedDefaults(t *testing.T) {
	st, err := render.LoadState(filepath.Join("..", "..", "examples", "cluster-state.yaml"))
	require.NoError(t, err)
	served, err := st.APIVersions()
	require.NoError(t, err)
	chrt, err := report.LoadPoolChart("")
	require.NoError(t, err)
	rep, _, err := report.Plan(chrt, report.Target{Provider: st, Desc: "state", APIVersions: served}, render.Release{Name: "kubernetes-nodes-acme-new", Namespace: "tenant-acme"}, map[string]any{"cluster": "acme"})
	require.NoError(t, err)
	require.Equal(t, "renders", rep.Result, rep.Refusal)
	assert.Equal(t, "https://factory.mirror.internal", rep.DiskSource.ImageFactoryURL.Value)
	assert.Contains(t, rep.DiskSource.ImageFactoryURL.Source, "the default talos.imageFactoryURL of "+report.CatalogChannel+", recorded when the pool was created")
	assert.Equal(t, []string{"imageFactoryURL"}, rep.CreatedWith.FromCatalog)
	assert.Equal(t, "https://factory.mirror.internal", rep.CreatedWith.ImageFactoryURL)
	assert.Empty(t, rep.Behind, "a new pool takes what is published: nothing is behind")

	// The neighbour: _cluster's default is named as _cluster's, and the record names no catalog field.
	rep, _, err = report.Plan(chrt, report.Target{Provider: st, Desc: "state", APIVersions: served}, render.Release{Name: "kubernetes-nodes-acme-new", Namespace: "tenant-acme"},
		map[string]any{"cluster": "acme", "_cluster": map[string]any{"talos": map[string]any{"imageFactoryURL": "https://factory.platform.internal"}}})
	require.NoError(t, err)
	assert.Equal(t, "https://factory.platform.internal", rep.DiskSource.ImageFactoryURL.Value)
	assert.Contains(t, rep.DiskSource.ImageFactoryURL.Source, "the platform default _cluster.talos.imageFactoryURL recorded when the pool was created")
	assert.Empty(t, rep.CreatedWith.FromCatalog)
}

// A pool importing from another factory than the published one is behind,
// and the reason names the channel the new factory comes from.
func TestBehindNamesThePublishedFactory(t *testing.T) {
	r := report.Running{SchematicID: "s", Version: "v1.13.6", ImageFactoryURL: "https://factory.talos.dev",
		Defaults: report.Defaults{SchematicID: "s", Version: "v1.13.6", ImageFactoryURL: "https://factory.mirror.internal", ImageFactoryURLFrom: report.CatalogChannel}}
	assert.Equal(t, []report.BehindReason{{Kind: report.BehindFactory, From: "https://factory.talos.dev", To: "https://factory.mirror.internal",
		Detail: "the factory URL for new pools of " + report.CatalogChannel}}, report.Behind(r, nil))
	r.Defaults.ImageFactoryURLFrom = ""
	assert.Equal(t, "the platform's factory URL for new pools", report.Behind(r, nil)[0].Detail, "_cluster's keeps its words")
}

// plan shows what a new pool's machine config gets, each with its channel,
// as the chart answers it: on the stock example the catalog publishes the
// installer and two mirrors; _cluster's and the pool's own values come
// first, mirrors merged per host; with nothing published, the built-in
// installer and no mirror or registry config (said as empty lists in JSON).
func TestPlanShowsTheInstallerAndMirrorsWithTheirChannels(t *testing.T) {
	objs, err := render.LoadObjects(filepath.Join("..", "..", "examples", "cluster-state.yaml"))
	require.NoError(t, err)
	chrt, err := report.LoadPoolChart("")
	require.NoError(t, err)
	plan := func(st *render.State, values map[string]any) *report.MachineConfigReport {
		t.Helper()
		served, err := st.APIVersions()
		require.NoError(t, err)
		rep, _, err := report.Plan(chrt, report.Target{Provider: st, Desc: "state", APIVersions: served}, render.Release{Name: "kubernetes-nodes-acme-new", Namespace: "tenant-acme"}, values)
		require.NoError(t, err)
		require.Equal(t, "renders", rep.Result, rep.Refusal)
		require.NotNil(t, rep.MachineConfig)
		return rep.MachineConfig
	}
	const (
		schematicAndVersion = "/ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515:v1.13.6"
		publishedMirror     = "the default talos.registryMirrors of " + report.CatalogChannel
		clusterMirror       = "the platform default _cluster.talos.registryMirrors"
	)
	mirror := func(host, endpoint, source string) report.RegistryMirror {
		return report.RegistryMirror{Host: host, Endpoints: []string{endpoint}, Source: source}
	}
	stock := render.NewState(objs...)

	mc := plan(stock, map[string]any{"cluster": "acme"})
	assert.Equal(t, report.Installer{Image: "registry.mirror.internal/siderolabs/installer" + schematicAndVersion, Repository: "registry.mirror.internal/siderolabs/installer",
		Source: "the default talos.installerRepository of " + report.CatalogChannel}, mc.Installer)
	assert.Equal(t, []report.RegistryMirror{
		mirror("docker.io", "https://registry.mirror.internal/v2/docker.io", publishedMirror),
		mirror("factory.talos.dev", "https://registry.mirror.internal/v2/factory.talos.dev", publishedMirror),
	}, mc.RegistryMirrors)
	assert.Equal(t, []report.RegistryConfigHost{}, mc.RegistryConfig)

	mc = plan(stock, map[string]any{"cluster": "acme",
		"talos": map[string]any{"registryMirrors": map[string]any{"factory.talos.dev": map[string]any{"endpoints": []any{"https://own.internal/v2/factory.talos.dev"}}}},
		"_cluster": map[string]any{"talos": map[string]any{
			"installerRepository": "platform.internal/installer",
			"registryMirrors": map[string]any{
				"docker.io": map[string]any{"endpoints": []any{"https://platform.internal/v2/docker.io"}},
				"quay.io":   map[string]any{"endpoints": []any{"https://platform.internal/v2/quay.io"}},
			},
			// Talos's shape: base64 of the PEM.
			"registryConfig": map[string]any{"platform.internal": map[string]any{"tls": map[string]any{"ca": base64.StdEncoding.EncodeToString(mirrorCAPEM(t))}}},
		}}})
	assert.Equal(t, report.Installer{Image: "platform.internal/installer" + schematicAndVersion, Repository: "platform.internal/installer", Source: "the platform default _cluster.talos.installerRepository"}, mc.Installer)
	assert.Equal(t, []report.RegistryMirror{
		mirror("docker.io", "https://platform.internal/v2/docker.io", clusterMirror),
		mirror("factory.talos.dev", "https://own.internal/v2/factory.talos.dev", "talos.registryMirrors"),
		mirror("quay.io", "https://platform.internal/v2/quay.io", clusterMirror),
	}, mc.RegistryMirrors, "merged per host: the published mirrors, then _cluster's, then the pool's own")
	assert.Equal(t, []report.RegistryConfigHost{{Host: "platform.internal", CA: true, Source: "the platform default _cluster.talos.registryConfig"}}, mc.RegistryConfig)

	mc = plan(stock, map[string]any{"cluster": "acme", "talos": map[string]any{"installerRepository": "own.internal/installer"}})
	assert.Equal(t, report.Installer{Image: "own.internal/installer" + schematicAndVersion, Repository: "own.internal/installer", Source: "talos.installerRepository"}, mc.Installer)

	var unpublished []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() != "ConfigMap" || o.GetName() != report.TenantDefaultsConfigMap {
			unpublished = append(unpublished, o)
		}
	}
	require.Less(t, len(unpublished), len(objs), "the example publishes defaults")
	mc = plan(render.NewState(unpublished...), map[string]any{"cluster": "acme"})
	assert.Equal(t, &report.MachineConfigReport{Installer: report.Installer{Image: "factory.talos.dev/installer" + schematicAndVersion, Repository: "factory.talos.dev/installer", Source: "the chart's built-in talos.installerRepository"},
		RegistryMirrors: []report.RegistryMirror{}, RegistryConfig: []report.RegistryConfigHost{}}, mc)
}

// mirrorCAPEM is a real CA certificate (the closed-network page's), as the
// chart's DER check takes only certificates.
func mirrorCAPEM(t *testing.T) []byte {
	t.Helper()
	pem, err := os.ReadFile(filepath.Join("..", "..", "examples", "platform", "mirror-ca.pem"))
	require.NoError(t, err)
	return pem
}
