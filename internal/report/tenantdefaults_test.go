package report_test

import (
	"path/filepath"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
