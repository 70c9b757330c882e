package report_test

import (
	"path/filepath"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pins over the example clusters: each pool rendered by the chart, judged
// against the goldens cozy-public holds, read once; only the pools behind
// are listed. On the stock Cozystack the factory new pools get is the one
// the catalog publishes, and every pool importing from another is behind
// it, the older release without cozystack-values too (the published
// defaults are read by name, not through it); where the platform carries
// _cluster, that is the platform's, and a pool whose namespace has none
// takes the built-in.
func TestPinsListsThePoolsBehindOverTheExampleCluster(t *testing.T) {
	const catalogFactory = "the factory URL for new pools of " + report.CatalogChannel
	edgeBehind := []report.BehindReason{
		{Kind: report.BehindCatalogPatch, From: "v1.13.4", To: "v1.13.6", Detail: "golden cozy-public/talos-worker-ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515-v1.13.6 (Succeeded)"},
		{Kind: report.BehindChartDefault, From: "v1.13.4", To: "v1.13.6", Detail: "the chart's Talos release for new pools (schematic ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515)"},
	}
	for _, c := range []struct {
		example string
		behind  map[string][]report.BehindReason
	}{
		{filepath.Join("examples", "cluster-state.yaml"), map[string][]report.BehindReason{
			"tenant-gamma/kubernetes-nodes-gamma-edge":  edgeBehind,
			"tenant-beta/kubernetes-nodes-beta-web":     {{Kind: report.BehindFactory, From: "https://factory.talos.dev", To: "https://factory.mirror.internal", Detail: catalogFactory}},
			"tenant-acme/kubernetes-nodes-acme-workers": {{Kind: report.BehindFactory, From: "https://factory.talos.dev", To: "https://factory.mirror.internal", Detail: catalogFactory}},
		}},
		{filepath.Join("examples", "platform", "cluster-state.yaml"), map[string][]report.BehindReason{
			"tenant-gamma/kubernetes-nodes-gamma-edge": edgeBehind,
			"tenant-beta/kubernetes-nodes-beta-web":    {{Kind: report.BehindFactory, From: "https://factory.talos.dev", To: "https://factory.mirror.internal", Detail: "the platform's factory URL for new pools"}},
		}},
	} {
		t.Run(c.example, func(t *testing.T) {
			st, err := render.LoadState(filepath.Join("..", "..", c.example))
			require.NoError(t, err)
			chrt, err := report.LoadPoolChart("")
			require.NoError(t, err)
			served, err := st.APIVersions()
			require.NoError(t, err)
			f, err := report.ReadPins(chrt, report.Target{Provider: st, Desc: "state", APIVersions: served}, fleet.Options{Chart: chrt.Metadata.Name})
			require.NoError(t, err)
			byPool := map[string]report.PoolBehind{}
			for _, p := range report.Pins(f, "state", chrt.Metadata.Name).PoolsBehind {
				byPool[p.HelmRelease] = p
			}
			for pool, want := range c.behind {
				got := byPool[pool]
				require.NotNil(t, got.Running, pool)
				assert.Equal(t, want, got.Behind, pool)
			}
			assert.Equal(t, "v1.13.4", byPool["tenant-gamma/kubernetes-nodes-gamma-edge"].Running.Version, "its own talos.version")
			assert.Equal(t, "v1.35.6", byPool["tenant-beta/kubernetes-nodes-beta-web"].Running.Kubernetes)
			assert.NotContains(t, byPool, "tenant-acme/kubernetes-nodes-acme-golden", "clones the newest golden of its minor")
			assert.NotContains(t, byPool, "tenant-gamma/kubernetes-nodes-gamma-big", "refused (no such instancetype), and what it resolves to is on what a new pool gets")
			assert.Len(t, byPool, len(c.behind))
		})
	}
}

// plan says how the pool it renders is behind, beside the Kubernetes
// release its MachineDeployment runs; pins lists the fleet's pools behind.
func TestPlanAndPinsSayWhichPoolsAreBehind(t *testing.T) {
	// The platform example: its pools' values carry _cluster.
	st, err := render.LoadState(filepath.Join("..", "..", "examples", "platform", "cluster-state.yaml"))
	require.NoError(t, err)
	served, err := st.APIVersions()
	require.NoError(t, err)
	chrt, err := report.LoadPoolChart("")
	require.NoError(t, err)
	target := report.Target{Provider: st, Desc: "state", APIVersions: served}

	edge, _, err := report.Plan(chrt, target, render.Release{Name: "kubernetes-nodes-gamma-edge", Namespace: "tenant-gamma", Upgrade: true},
		map[string]any{"cluster": "gamma", "talos": map[string]any{"version": "v1.13.4"}, "_cluster": map[string]any{"talos": map[string]any{"imageFactoryURL": "https://factory.mirror.internal"}}})
	require.NoError(t, err)
	assert.Equal(t, &report.Sourced{Value: "v1.35.6", Source: "version v1.35: kept from what the pool runs, MachineDeployment tenant-gamma/kubernetes-gamma-edge"}, edge.Kubernetes)
	assert.Equal(t, []string{report.BehindCatalogPatch, report.BehindChartDefault}, []string{edge.Behind[0].Kind, edge.Behind[1].Kind})

	workers, _, err := report.Plan(chrt, target, render.Release{Name: "kubernetes-nodes-acme-workers", Namespace: "tenant-acme", Upgrade: true}, map[string]any{"cluster": "acme"})
	require.NoError(t, err)
	assert.NotNil(t, workers.Behind, "judged")
	assert.Empty(t, workers.Behind, "on what a new pool gets")

	preview, _, err := report.Plan(chrt, report.Target{Desc: "preview"}, render.Release{Name: "kubernetes-nodes-acme-workers", Namespace: "tenant-acme"}, map[string]any{"cluster": "acme", "talos": map[string]any{"version": "v1.13.5"}})
	require.NoError(t, err)
	assert.Equal(t, []string{report.BehindChartDefault}, []string{preview.Behind[0].Kind}, "without a cluster only the chart's defaults are compared")

	f, err := report.ReadPins(chrt, target, fleet.Options{Chart: chrt.Metadata.Name})
	require.NoError(t, err)
	pins := report.Pins(f, "state", chrt.Metadata.Name)
	var behind []string
	for _, p := range pins.PoolsBehind {
		behind = append(behind, p.HelmRelease)
	}
	assert.Equal(t, []string{"tenant-beta/kubernetes-nodes-beta-web", "tenant-gamma/kubernetes-nodes-gamma-edge"}, behind)
	one, err := report.OneGolden(pins, "talos-worker-ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515-v1.13.6")
	require.NoError(t, err)
	assert.Empty(t, one.PoolsBehind, "no pool cloning that golden is behind")
}
