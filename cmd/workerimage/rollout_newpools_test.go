package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/cozystack/golden-worker-images/internal/rollout"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rolloutCatalogOf runs rollout with -o json from the repository's root and
// returns its plan; the factory is never asked (each target is known).
func rolloutCatalogOf(t *testing.T, args ...string) (*rollout.RolloutPlan, result) {
	t.Helper()
	res := cliFactory(t, &factoryStandIn{}, append(append([]string{"rollout"}, args...), "-o", "json")...)
	require.Contains(t, []int{exitOK, exitAttn}, res.code, res.stderr)
	var plan rollout.RolloutPlan
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &plan), res.stdout)
	return &plan, res
}

// previewRenders saves the Package (or platform values) a rollout printed
// and previews it with catalog -f against the same cluster: it must render.
func previewRenders(t *testing.T, values, cluster string) result {
	t.Helper()
	file := filepath.Join(t.TempDir(), "catalog.yaml")
	require.NoError(t, os.WriteFile(file, []byte(values), 0o600))
	res := cliFactory(t, &factoryStandIn{}, "catalog", "-f", file, "--cluster", cluster)
	require.Equal(t, exitOK, res.code, "the printed change renders: %s%s", res.stdout, res.stderr)
	return res
}

// A CVE rollout ends with the published default on the fix: on the stock
// example cluster new pools take v1.13.6 (the pool chart's built-in: the
// catalog publishes no version), so the Package rollout --to-talos v1.13.7
// prints sets tenantWorkers.talos.version: v1.13.7, says so above the
// YAML, and renders (catalog -f previews it publishing v1.13.7). Before,
// the Package moved no default: new pools stayed on v1.13.6.
func TestRolloutPackageMovesTheDefaultForNewPools(t *testing.T) {
	plan, _ := rolloutCatalogOf(t, "--to-talos", "v1.13.7", "-n", "tenant-beta", "--cluster", exampleCluster)
	require.NotNil(t, plan.Catalog)
	c := plan.Catalog
	assert.Equal(t, report.ShapePackage, c.ChangeShape)
	assert.Equal(t, []report.DefaultMove{{Key: "tenantWorkers.talos.version", From: report.Sourced{Value: "v1.13.6", Source: "the pool chart's built-in default"}, To: "v1.13.7"}}, c.NewPools)
	assert.Contains(t, c.Values, "        tenantWorkers:\n          talos:\n            imageFactoryURL: https://factory.mirror.internal\n            installerRepository: registry.mirror.internal/siderolabs/installer\n            version: v1.13.7 # new pools take it from then on; now v1.13.6 (the pool chart's built-in default)\n",
		"the published keys the cluster's Package holds are kept, the version added beside them")
	preview := previewRenders(t, c.Values, exampleCluster)
	assert.Regexp(t, `\n  talos\.version  v1\.13\.7  \(now: none\)\n`, preview.stdout, "the catalog publishes v1.13.7 for new pools")

	text := cliFactory(t, &factoryStandIn{}, "rollout", "--to-talos", "v1.13.7", "-n", "tenant-beta", "--cluster", exampleCluster)
	assert.Equal(t, exitAttn, text.code, "the exit code is the plan's: blocked for v1.13.7's entry")
	assert.Contains(t, text.stdout, "\nnew pools take v1.13.7 from then on: tenantWorkers.talos.version (now v1.13.6, the pool chart's built-in default); a pool takes it when created, so no running pool rolls for it\napiVersion: cozystack.io/v1alpha1\n")

	// The neighbour: a target new pools take already moves nothing, and no
	// catalog change is printed for it.
	plan, _ = rolloutCatalogOf(t, "--to-talos", "v1.13.6", "--pool", "tenant-beta/kubernetes-nodes-beta-web", "--to-factory", "https://factory.mirror.internal", "--cluster", exampleCluster)
	assert.Nil(t, plan.Catalog, "nothing waits and new pools take v1.13.6 already")
}

// A plan that can start, every target golden in place (here an HTTP pool:
// none needed), still ends with the Package that moves the default, and
// its exit code stays 0; the text says it moves the default, not goldens to
// wait for. Before, no catalog change was printed at all.
func TestRolloutThatCanStartPrintsTheDefaultsMove(t *testing.T) {
	args := []string{"--to-talos", "v1.13.7", "--to-factory", "https://factory.mirror.internal", "--pool", "tenant-beta/kubernetes-nodes-beta-web", "--cluster", exampleCluster}
	plan, res := rolloutCatalogOf(t, args...)
	require.Equal(t, exitOK, res.code, res.stderr)
	require.True(t, plan.CanStart)
	require.NotNil(t, plan.Catalog)
	require.True(t, plan.Catalog.Changed)
	assert.Len(t, plan.Catalog.NewPools, 1)
	for _, e := range plan.Catalog.Images {
		assert.NotEqual(t, report.ChangeNew, e.Change, "no golden is added: %s", e.Plain)
	}
	previewRenders(t, plan.Catalog.Values, exampleCluster)

	text := cliFactory(t, &factoryStandIn{}, append([]string{"rollout"}, args...)...)
	require.Equal(t, exitOK, text.code, text.stderr)
	assert.Contains(t, text.stdout, "catalog: the catalog's Package with the Talos release new pools take moved, complete: ")
	assert.Contains(t, text.stdout, "(or commit it where you keep that object). Every field and value it holds today is kept;\n")
	assert.Contains(t, text.stdout, "new pools take v1.13.7 from then on: tenantWorkers.talos.version")
	assert.Contains(t, text.stdout, "result  can start: 1 pool to move in 1 wave")
}

// On a Cozystack whose platform release writes the catalog (the platform
// example with its Helm release record), the change is the platform's
// values with tenantWorkers.talos.version moved. Its new pools clone
// (tenantWorkers.osImage.builtin, which the platform writes into
// _cluster.osImage): the change adds the v1.13.7 entry for them, though the
// selected pool imports over HTTP and waits for none, and renders.
func TestRolloutPlatformValuesMoveTheDefaultAndKeepItCloneable(t *testing.T) {
	base, err := os.ReadFile(filepath.Join(support.RepoRoot(), "examples", "platform", "cluster-state.yaml"))
	require.NoError(t, err)
	values := map[string]any{
		"bundles":               map[string]any{"enabledPackages": []any{"cozystack.kubernetes-worker-image"}},
		"kubernetesWorkerImage": map[string]any{"storageClass": "replicated"},
		"tenantWorkers":         map[string]any{"osImage": map[string]any{"builtin": map[string]any{}}, "talos": map[string]any{"imageFactoryURL": "https://factory.mirror.internal"}},
	}
	state := writeTemp(t, "platform.yaml", string(base)+platformRecord(t, values))
	plan, _ := rolloutCatalogOf(t, "--to-talos", "v1.13.7", "--pool", "tenant-beta/kubernetes-nodes-beta-web", "--cluster", state)
	require.NotNil(t, plan.Catalog)
	c := plan.Catalog
	assert.Equal(t, report.ShapePlatform, c.ChangeShape)
	assert.Equal(t, []report.DefaultMove{{Key: "tenantWorkers.talos.version", From: report.Sourced{Value: "v1.13.6", Source: "the pool chart's built-in default"}, To: "v1.13.7"}}, c.NewPools)
	assert.Equal(t, []string{goldenName("v1.13.7")}, newEntries(c), "new pools clone it")
	assert.Contains(t, c.Values, "\ntenantWorkers:\n  osImage:\n    builtin: {}\n  talos:\n    imageFactoryURL: https://factory.mirror.internal\n    version: v1.13.7 # new pools take it from then on;")
	assert.Contains(t, c.Values, "    # new, golden "+goldenName("v1.13.7")+", for new pools\n")
	previewRenders(t, c.Values, state)

	// The neighbour: new pools that import over HTTP clone nothing, so no
	// entry is added for them.
	values["tenantWorkers"] = map[string]any{"talos": map[string]any{"imageFactoryURL": "https://factory.mirror.internal"}}
	state = writeTemp(t, "platform.yaml", string(base)+platformRecord(t, values))
	plan, _ = rolloutCatalogOf(t, "--to-talos", "v1.13.7", "--pool", "tenant-beta/kubernetes-nodes-beta-web", "--cluster", state)
	require.NotNil(t, plan.Catalog)
	assert.Len(t, plan.Catalog.NewPools, 1)
	assert.Empty(t, newEntries(plan.Catalog))
}

// On the stock example cluster whose Package publishes osImage.builtin (new
// pools clone), the Package that moves the default adds the entry of the
// flavor they will clone, and catalog -f previews it rendering; without
// that entry the catalog refuses it (exit 1): a published flavor no entry
// imports.
func TestRolloutPackageKeepsTheMovedDefaultCloneable(t *testing.T) {
	base, err := os.ReadFile(filepath.Join(support.RepoRoot(), exampleCluster))
	require.NoError(t, err)
	const published = "        tenantWorkers:\n          talos:\n"
	require.Contains(t, string(base), published)
	state := writeTemp(t, "cluster.yaml", strings.Replace(string(base), published, "        tenantWorkers:\n          osImage: {builtin: {}}\n          talos:\n", 1))
	args := []string{"--to-talos", "v1.13.7", "--to-factory", "https://factory.mirror.internal", "--pool", "tenant-beta/kubernetes-nodes-beta-web", "--cluster", state}
	plan, _ := rolloutCatalogOf(t, args...)
	require.NotNil(t, plan.Catalog)
	c := plan.Catalog
	assert.Equal(t, []string{goldenName("v1.13.7")}, newEntries(c))
	previewRenders(t, c.Values, state)

	entry := "          # new, golden " + goldenName("v1.13.7") + ", for new pools\n" +
		"          # note: new pools clone it once the default moves (tenantWorkers.osImage is builtin): without its golden a new pool is refused\n" +
		"          - schematicID: " + defaultSchematic + "\n            version: v1.13.7\n"
	require.Contains(t, c.Values, entry)
	file := filepath.Join(t.TempDir(), "catalog.yaml")
	require.NoError(t, os.WriteFile(file, []byte(strings.Replace(c.Values, entry, "", 1)), 0o600))
	res := cliFactory(t, &factoryStandIn{}, "catalog", "-f", file, "--cluster", state)
	assert.Equal(t, exitAttn, res.code, res.stdout+res.stderr)
	assert.Contains(t, res.stdout+res.stderr, "but no images[] entry imports that flavor")
}

// newEntries are the golden names of the entries a catalog change adds.
func newEntries(c *report.AdoptCatalog) []string {
	var out []string
	for _, e := range c.Images {
		if e.Change == report.ChangeNew {
			out = append(out, support.GoldenName(e.Entry.SchematicID, e.Entry.Version))
		}
	}
	return out
}
