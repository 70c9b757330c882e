package main

import (
	"testing"

	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A namespace that holds no pool is a mistake, never "0 roll": every verb
// that selects pools by -n exits 2 naming the nearest namespace that holds
// one; the namespace that does is read, and only it.
func TestNamespaceSelectingNothingIsBadInput(t *testing.T) {
	const example = "../../examples/cluster-state.yaml"
	for _, verb := range [][]string{
		{"rollcheck", "../../packages/apps/kubernetes-nodes", "--cluster", deployedFixture},
		{"pins", "--cluster", example},
		{"adopt", "--cluster", example},
	} {
		requireProblem(t, cli(t, append(verb, "-n", "tenant-zzz")...),
			`namespace "tenant-zzz" holds no pool`, "(the namespaces that hold one: tenant-acme, tenant-beta, tenant-gamma)")
		requireProblem(t, cli(t, append(verb, "-n", "tenant-acmee")...), "did you mean tenant-acme?")
	}

	// The neighbours: a namespace with pools is read, and only its pools.
	res := cli(t, "rollcheck", "../../packages/apps/kubernetes-nodes", "--cluster", deployedFixture, "-n", "tenant-beta", "-o", "json")
	require.NotEqual(t, exitProblem, res.code, res.stderr)
	roll := decode[report.RollReport](t, res)
	require.NotEmpty(t, roll.Pools)
	for _, p := range roll.Pools {
		assert.Equal(t, "tenant-beta", p.Namespace, p.Values)
	}

	res = cli(t, "pins", "--cluster", example, "-n", "tenant-beta", "-o", "json")
	require.Equal(t, exitOK, res.code, res.stderr)
	pins := decode[report.PinsReport](t, res)
	assert.Equal(t, "tenant-beta", pins.Namespace)
	all := decode[report.PinsReport](t, cli(t, "pins", "--cluster", example, "-o", "json"))
	require.NotEmpty(t, pins.Goldens)
	for _, g := range pins.Goldens {
		require.NotEmpty(t, append(append([]any{}, anys(g.Pools)...), anys(g.Disks)...), "%s: listed only when tenant-beta uses it", g.Name)
		for _, p := range g.Pools {
			assert.Equal(t, "tenant-beta", p.Namespace)
		}
		for _, d := range g.Disks {
			assert.Equal(t, "tenant-beta", d.Namespace)
		}
		// The verdict stays the cluster's.
		assert.Equal(t, goldenIn(t, all, g.Name).SafeToDelete, g.SafeToDelete, g.Name)
	}
	for _, p := range append(append([]report.PoolPin{}, pins.HTTPPools...), pins.Unresolved...) {
		assert.Equal(t, "tenant-beta", p.Namespace)
	}

	res = cli(t, "adopt", "--cluster", example, "-n", "tenant-acme", "-o", "json")
	require.Equal(t, exitOK, res.code, res.stderr)
	adopt := decode[report.AdoptReport](t, res)
	require.NotEmpty(t, adopt.Flavors)
	for _, f := range adopt.Flavors {
		for _, c := range f.Classes {
			for _, p := range c.Pools {
				assert.Equal(t, "tenant-acme", p.Namespace, p.HelmRelease)
			}
		}
	}
	for _, p := range adopt.Cloning {
		assert.Equal(t, "tenant-acme", p.Namespace, p.HelmRelease)
	}
}

// -n on catalog names the catalog release's namespace, as helm -n does: it
// installs into cozy-public only, so any other is refused with why.
func TestCatalogNamespace(t *testing.T) {
	const example = "../../examples/cluster-state.yaml"
	requireProblem(t, cli(t, "catalog", "--cluster", example, "-n", "tenant-acme"),
		"-n tenant-acme: the catalog is the release kubernetes-worker-image in cozy-public", "leave out -n, or give -n cozy-public")
	with := cli(t, "catalog", "--cluster", example, "-n", "cozy-public", "-o", "json")
	require.NotEqual(t, exitProblem, with.code, with.stderr)
	without := cli(t, "catalog", "--cluster", example, "-o", "json")
	assert.Equal(t, without.stdout, with.stdout)
}

func anys[T any](s []T) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
