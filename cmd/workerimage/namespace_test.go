package main

import (
	"strings"
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
		for _, p := range g.Pools {
			assert.Equal(t, "tenant-beta", p.Namespace)
		}
		for _, d := range g.Disks {
			assert.Equal(t, "tenant-beta", d.Namespace)
		}
		for _, tpl := range g.Templates {
			assert.True(t, strings.HasPrefix(tpl, "tenant-beta/"), tpl)
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

// A namespace narrows the pools, never the goldens or what cozy-public
// holds: pins -n lists every golden there, each with only the namespace's
// pools, disks and templates, counts the namespace's pools, and keeps the
// cluster's verdicts (a golden in use elsewhere is in use, an unused one is
// listed as such whatever the namespace).
func TestNamespaceNarrowsPoolsNeverGoldens(t *testing.T) {
	state := td("stock", "cluster.yaml")
	all := decode[report.PinsReport](t, cli(t, "pins", "--cluster", state, "-o", "json"))
	require.Equal(t, 4, all.PoolsRead)
	stored := []string{goldenName("v1.13.5"), goldenName("v1.13.6")}

	for ns, pools := range map[string]int{"tenant-gamma": 2, "tenant-alpha": 2} {
		res := cli(t, "pins", "--cluster", state, "-n", ns, "-o", "json")
		require.Equal(t, exitOK, res.code, res.stderr)
		r := decode[report.PinsReport](t, res)
		assert.Equal(t, pools, r.PoolsRead, "%s: the pools of the namespace, not the cluster's %d", ns, all.PoolsRead)
		var names []string
		for _, g := range r.Goldens {
			names = append(names, g.Name)
			assert.Equal(t, goldenIn(t, all, g.Name).SafeToDelete, g.SafeToDelete, "%s: the verdict is the cluster's", g.Name)
			for _, p := range g.Pools {
				assert.Equal(t, ns, p.Namespace)
			}
		}
		assert.Equal(t, stored, names, "%s: every golden cozy-public holds", ns)
		assert.Equal(t, all.Unused, r.Unused)
		text := cli(t, "pins", "--cluster", state, "-n", ns).stdout
		assert.Contains(t, text, "\npools    "+report.Count(pools, "pool")+" in namespace "+ns+" of chart kubernetes-nodes")
		assert.NotContains(t, text, "no golden in cozy-public")
	}

	// tenant-alpha's pools all import over HTTP: the golden gamma-db clones
	// is still listed, in use, by no pool of tenant-alpha.
	text := cli(t, "pins", "--cluster", state, "-n", "tenant-alpha").stdout
	assert.Contains(t, text, goldenName("v1.13.6")+"  (DataVolume, phase Succeeded)  in use: 0 pools, 0 disks in namespace tenant-alpha; in use by other namespaces (workerimage pins without -n lists by what)\n")
	assert.NotContains(t, text, "kubernetes-nodes-gamma-db")
	text = cli(t, "pins", "--cluster", state, "-n", "tenant-gamma").stdout
	assert.Contains(t, text, goldenName("v1.13.6")+"  (DataVolume, phase Succeeded)  in use: 1 pool, 1 disk in namespace tenant-gamma\n")
}

func anys[T any](s []T) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
