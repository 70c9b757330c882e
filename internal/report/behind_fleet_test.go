package report_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FleetBehind over the example cluster: each pool rendered by the chart,
// judged against the goldens cozy-public holds, read once.
func TestFleetBehindOverTheExampleCluster(t *testing.T) {
	st, err := render.LoadState(filepath.Join("..", "..", "examples", "cluster-state.yaml"))
	require.NoError(t, err)
	chrt, err := report.LoadPoolChart("")
	require.NoError(t, err)
	fl, err := fleet.Read(context.Background(), st, fleet.Options{Chart: chrt.Metadata.Name})
	require.NoError(t, err)
	served, err := st.APIVersions()
	require.NoError(t, err)
	pools, err := report.FleetBehind(chrt, report.Target{Provider: st, Desc: "state", APIVersions: served}, fl.Pools)
	require.NoError(t, err)
	byPool := map[string]report.PoolBehind{}
	for _, p := range pools {
		byPool[p.HelmRelease] = p
	}
	require.Len(t, byPool, len(fl.Pools))

	edge := byPool["tenant-gamma/kubernetes-nodes-gamma-edge"]
	require.NotNil(t, edge.Running)
	assert.Equal(t, "v1.13.4", edge.Running.Version, "its own talos.version")
	assert.Equal(t, []report.BehindReason{
		{Kind: report.BehindCatalogPatch, From: "v1.13.4", To: "v1.13.6", Detail: "golden cozy-public/talos-worker-ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515-v1.13.6 (Succeeded)"},
		{Kind: report.BehindChartDefault, From: "v1.13.4", To: "v1.13.6", Detail: "the chart's Talos release for new pools (schematic ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515)"},
	}, edge.Behind, "the catalog's v1.13.6 and the chart's default; its factory is the one it was created with, the platform's")

	web := byPool["tenant-beta/kubernetes-nodes-beta-web"]
	assert.Equal(t, []report.BehindReason{{Kind: report.BehindFactory, From: "https://factory.talos.dev", To: "https://factory.mirror.internal", Detail: "the platform's factory URL for new pools"}},
		web.Behind, "created before the platform's mirror, it still imports from the public factory")
	assert.Equal(t, "v1.35.6", web.Running.Kubernetes)

	assert.Empty(t, byPool["tenant-acme/kubernetes-nodes-acme-workers"].Behind, "no cozystack-values: the built-in factory is its platform's")
	assert.Empty(t, byPool["tenant-acme/kubernetes-nodes-acme-golden"].Behind, "clones the newest golden of its minor")
	big := byPool["tenant-gamma/kubernetes-nodes-gamma-big"]
	assert.NotEmpty(t, big.Refusal, "refused: no such instancetype")
	require.NotNil(t, big.Running, "a refused pool still says what it resolves to")
	assert.Equal(t, []report.BehindReason{}, big.Behind)
}
