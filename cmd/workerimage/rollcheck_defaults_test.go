package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// movedDefaultsChart is a copy of the pool chart as a release that only
// moves its defaults would ship it (what Cozystack does for each CVE): the
// Talos version a new pool gets, v1.13.6 to v1.13.7, and the Kubernetes
// patch of v1.35 (v1.35.6 to v1.35.7). It returns the chart's folder.
func movedDefaultsChart(t *testing.T) string {
	t.Helper()
	lib := filepath.Join("packages", "library", "kubernetes-nodes-lib", "templates")
	// The built-in flavor is worker-image-lib's (the catalog reads it too).
	root := chartCopy(t, filepath.Join("packages", "library", "worker-image-lib", "templates", "_golden.tpl"), func(s string) string {
		return strings.Replace(s, "\nversion: v1.13.6\n", "\nversion: v1.13.7\n", 1)
	})
	versions := filepath.Join(root, lib, "_versions.tpl")
	raw, err := os.ReadFile(versions)
	require.NoError(t, err)
	moved := strings.Replace(string(raw), "v1.35: v1.35.6\n", "v1.35: v1.35.7\n", 1)
	require.NotEqual(t, string(raw), moved)
	require.NoError(t, os.WriteFile(versions, []byte(moved), 0o644))
	return filepath.Join(root, render.PoolChart)
}

// The Day 2 promise: a chart that only moves the pool chart's defaults rolls
// no running pool and refuses none over the example fleet, against what runs
// (the example cluster as this chart deploys it) and against this chart
// (pools read from the example cluster), and names each pool now behind it.
func TestRollcheckOfMovedDefaultsRollsNothing(t *testing.T) {
	moved := movedDefaultsChart(t)
	talosMoved := report.BehindReason{Kind: report.BehindChartDefault, From: "v1.13.6", To: "v1.13.7", Detail: "the chart's Talos release for new pools (schematic " + defaultSchematic + ")"}
	kubernetesMoved := report.BehindReason{Kind: report.BehindKubernetesPatch, From: "v1.35.6", To: "v1.35.7", Detail: "the chart's Kubernetes release for v1.35"}
	// The example is a stock Cozystack: the factory new pools get is the
	// catalog's published mirror, and the pools created before it import
	// from the public factory.
	mirror := report.BehindReason{Kind: report.BehindFactory, From: "https://factory.talos.dev", To: "https://factory.mirror.internal", Detail: "the factory URL for new pools of " + report.CatalogChannel}
	wantBehind := map[string][]report.BehindReason{
		"kubernetes-nodes-acme-golden":  {talosMoved, kubernetesMoved},
		"kubernetes-nodes-acme-workers": {talosMoved, kubernetesMoved, mirror},
		"kubernetes-nodes-beta-batch":   {talosMoved, kubernetesMoved},
		"kubernetes-nodes-beta-spot":    {talosMoved, kubernetesMoved},
		"kubernetes-nodes-beta-web":     {talosMoved, kubernetesMoved, mirror},
		"kubernetes-nodes-gamma-edge": {
			{Kind: report.BehindCatalogPatch, From: "v1.13.4", To: "v1.13.6", Detail: "golden cozy-public/talos-worker-" + defaultSchematic + "-v1.13.6 (Succeeded)"},
			{Kind: report.BehindChartDefault, From: "v1.13.4", To: "v1.13.7", Detail: talosMoved.Detail},
			kubernetesMoved,
		},
	}
	check := func(t *testing.T, r report.RollReport) {
		t.Helper()
		assert.Zero(t, r.Summary.Rolls, "no worker rolls")
		assert.Equal(t, 6, r.Summary.NoRoll)
		assert.Equal(t, 6, r.Summary.Behind)
		got := map[string][]report.BehindReason{}
		for _, p := range r.Pools {
			if p.Release == "kubernetes-nodes-gamma-big" {
				assert.Contains(t, p.Head.Refusal, `instanceType "u1.4xlarge" is not a VirtualMachineClusterInstancetype`, "refused for its instancetype, as today")
				continue
			}
			assert.Equal(t, "no roll", p.Status, p.Values)
			assert.Equal(t, p.Base.MachineTemplate, p.Head.MachineTemplate, p.Values)
			got[p.Release] = p.Behind
		}
		assert.Equal(t, wantBehind, got)
	}

	deployed := cli(t, "rollcheck", moved, "--cluster", deployedFixture, "-o", "json")
	require.Equal(t, exitAttn, deployed.code, "gamma-big never rendered, and head refuses it, as this chart does: %s", deployed.stderr)
	r := decode[report.RollReport](t, deployed)
	check(t, r)
	assert.Equal(t, 1, r.Summary.RefusedAtHead, "only gamma-big, never deployed")

	current := support.Path(render.PoolChart)
	twoCharts := cli(t, "rollcheck", "--base", current, "--head", moved, "--cluster", support.Path("examples", "cluster-state.yaml"), "-o", "json")
	require.Equal(t, exitOK, twoCharts.code, twoCharts.stderr)
	r = decode[report.RollReport](t, twoCharts)
	check(t, r)
	assert.Zero(t, r.Summary.RefusedAtHead, "no pool refused at head")
	assert.Equal(t, 1, r.Summary.RefusedAtBoth, "gamma-big is refused by both charts")

	text := cli(t, "rollcheck", moved, "--cluster", deployedFixture)
	assert.Contains(t, text.stdout, "    behind at head: Talos v1.13.6 -> v1.13.7: the chart's Talos release for new pools")
	assert.Contains(t, text.stdout, "    behind at head: Kubernetes v1.35.6 -> v1.35.7: the chart's Kubernetes release for v1.35 (kubernetes-patch)")
	assert.Contains(t, text.stdout, "0 roll, 1 refused at head")
	assert.Contains(t, text.stdout, "; 6 behind what the head chart gives a new pool (the upgrade moves none of them; workerimage rollout does)")

	// The same chart as head names nothing the fleet lacks beyond today's.
	same := decode[report.RollReport](t, cli(t, "rollcheck", current, "--cluster", deployedFixture, "-o", "json"))
	assert.Equal(t, 3, same.Summary.Behind, "acme-workers' and beta-web's factory and gamma-edge's flavor only")
}
