package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A chart that defines kubernetes-nodes.behindFacts but lacks a helper the
// CLI's facts template reaches cannot be read: every render with the facts
// fails for the chart, not for the pool. rollcheck refuses it (exit 2),
// naming the chart and the helper, before rendering any pool, where it said
// "refused at base" for every pool, "0 roll", exit 0 (issue 60).
func TestRollcheckRefusesAChartItCannotReadFactsFrom(t *testing.T) {
	lacking := chartCopy(t, "packages/library/kubernetes-nodes-lib/templates/_platformdefaults.tpl", func(s string) string {
		return strings.Replace(s, `define "kubernetes-nodes.machineConfigFacts"`, `define "kubernetes-nodes.machineConfigFactsGone"`, 1)
	})
	root := support.RepoRoot()
	pools := filepath.Join(root, "examples", "pools", "*.yaml")
	state := filepath.Join(root, "examples", "cluster-state.yaml")
	args := func(base, head string) []string {
		return []string{"rollcheck", "-base", base, "-head", head, "-values", pools, "-cluster", state, "-o", "json"}
	}

	for _, c := range []struct{ side, base, head string }{
		{"base", lacking, root},
		{"head", root, lacking},
	} {
		res := cli(t, args(c.base, c.head)...)
		assert.Equal(t, exitProblem, res.code, "%s: stdout %s", c.side, res.stdout)
		assert.Empty(t, res.stdout, "%s: no report: nothing was compared", c.side)
		assert.Contains(t, res.stderr, "the "+c.side+" chart "+lacking, c.side)
		assert.Contains(t, res.stderr, `but not "kubernetes-nodes.machineConfigFacts"`, c.side)
	}
	// Against what runs: the head chart alone.
	res := cli(t, "rollcheck", lacking, "--cluster", deployedFixture, "-o", "json")
	assert.Equal(t, exitProblem, res.code, res.stdout)
	assert.Contains(t, res.stderr, `but not "kubernetes-nodes.machineConfigFacts"`)

	// The neighbour: the real chart as base compares every pool, and a pool
	// a base chart itself refuses stays "refused at base" (TestRollcheckRefusals).
	res = cli(t, args(root, root)...)
	require.Equal(t, exitOK, res.code, res.stderr)
	r := decode[report.RollReport](t, res)
	require.NotEmpty(t, r.Pools)
	assert.Zero(t, r.Summary.RefusedAtBase, "%+v", r.Summary)
	assert.Equal(t, len(r.Pools), r.Summary.NoRoll+r.Summary.RefusedAtBoth, "%+v", r.Summary)
	assert.Greater(t, r.Summary.NoRoll, r.Summary.RefusedAtBoth, "%+v", r.Summary)
}

// plan, pins, adopt and rollout read every pool through the facts template:
// a --chart lacking a helper it reaches is an error (exit 2) naming the
// chart and the helper, not every pool "refused" in the words of a missing
// template. The neighbour: the same chart whole reads.
func TestChartFlagTheCLICannotReadFactsFromIsAnError(t *testing.T) {
	lacking := chartCopy(t, "packages/library/kubernetes-nodes-lib/templates/_platformdefaults.tpl", func(s string) string {
		return strings.Replace(s, `define "kubernetes-nodes.machineConfigFacts"`, `define "kubernetes-nodes.machineConfigFactsGone"`, 1)
	})
	chart := filepath.Join(lacking, "packages", "apps", "kubernetes-nodes")
	whole := filepath.Join(chartCopy(t, "", nil), "packages", "apps", "kubernetes-nodes")
	pool := td("pools", "http.yaml")
	for _, args := range [][]string{
		{"plan", "-values", pool},
		{"pins", "-cluster", td("state", "cluster.yaml")},
		{"adopt", "-cluster", td("state", "cluster.yaml")},
		{"rollout", "--to-talos", "v1.13.7", "-cluster", rolloutFixture},
	} {
		res := cli(t, append(args, "-chart", chart)...)
		requireProblem(t, res, "workerimage "+args[0]+": --chart "+chart+` cannot be read: it does not define "kubernetes-nodes.machineConfigFacts", which workerimage's facts template reaches`)
		ok := cli(t, append(args, "-chart", whole)...)
		assert.NotEqual(t, exitProblem, ok.code, "%s: %s", args[0], ok.stderr)
	}
}
