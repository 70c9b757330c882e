package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lookalikePool is a HelmRelease in tenant-acme shaped as a pool, named as
// one, whose chart reference is ref: with a tenant's own OCIRepository
// named kubernetes-nodes it is a look-alike; with the platform's artifact,
// a pool.
func lookalikePool(ref string) string {
	return `---
apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata: {name: kubernetes-nodes, namespace: tenant-acme}
spec: {url: oci://registry.tenant-acme.example/kubernetes-nodes, ref: {tag: 0.0.1}}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: kubernetes-nodes-acme-mimic, namespace: tenant-acme, generation: 1}
spec:
  chartRef: ` + ref + `
  valuesFrom: [{kind: Secret, name: cozystack-values}]
  values: {cluster: acme, talos: {version: v1.13.6}, osImage: {builtin: {}}}
`
}

// withoutIgnored is a JSON report with its ignored list taken out: what is
// left is what the verb read as pools.
func withoutIgnored(t *testing.T, r result) (rest string, ignored []map[string]any) {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &m), "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	if l, ok := m["ignored"].([]any); ok {
		for _, i := range l {
			ignored = append(ignored, i.(map[string]any))
		}
	}
	delete(m, "ignored")
	b, err := json.Marshal(m)
	require.NoError(t, err)
	return string(b), ignored
}

// A pool is a pool by its chart: a tenant's HelmRelease whose chartRef is
// its own OCIRepository named kubernetes-nodes is no pool to rollout, pins or
// rollcheck (listed as ignored, with why); the same HelmRelease naming the
// platform's artifact (the example's ApplicationDefinition's, after the
// takeover) is one.
func TestLookalikeChartRefIsNoPool(t *testing.T) {
	const mimic = "kubernetes-nodes-acme-mimic"
	const artifact = "kubernetes-nodes-golden-kubevirt-kubernetes-nodes"
	verbs := map[string][]string{
		"rollout":   {"rollout", "--to-talos", "v1.13.7", "-o", "json"},
		"pins":      {"pins", "-o", "json"},
		"rollcheck": {"rollcheck", "../../packages/apps/kubernetes-nodes", "-o", "json"},
	}
	lookalike := writeTemp(t, "lookalike.yaml", fixtureText(t, rolloutFixture)+lookalikePool(`{kind: OCIRepository, name: kubernetes-nodes}`))
	real := writeTemp(t, "real.yaml", fixtureText(t, rolloutFixture)+lookalikePool(`{kind: ExternalArtifact, name: `+artifact+`, namespace: cozy-system}`))
	for verb, args := range verbs {
		r := cli(t, append(args, "--cluster", lookalike)...)
		require.NotEqual(t, exitProblem, r.code, "%s: %s", verb, r.stderr)
		rest, ignored := withoutIgnored(t, r)
		assert.NotContains(t, rest, mimic, "%s reads the look-alike as a pool", verb)
		var found bool
		for _, i := range ignored {
			if i["object"] == "HelmRelease tenant-acme/"+mimic {
				found = true
				assert.Contains(t, i["reason"], "its spec.chartRef OCIRepository tenant-acme/kubernetes-nodes is not the platform's pool chart ExternalArtifact cozy-system/"+artifact, verb)
			}
		}
		assert.True(t, found, "%s lists the look-alike as ignored: %v", verb, ignored)

		r = cli(t, append(args, "--cluster", real)...)
		require.NotEqual(t, exitProblem, r.code, "%s: %s", verb, r.stderr)
		rest, _ = withoutIgnored(t, r)
		assert.Contains(t, rest, mimic, "%s: the platform's artifact makes it a pool", verb)
	}
}

func fixtureText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return strings.TrimRight(string(b), "\n") + "\n"
}

// A head chart reaches only the kinds the pool chart reads: one that looks
// up every Secret of the cluster to print them in its refusal is stopped at
// that lookup (exit 2), and no Secret's data is printed.
func TestRollcheckHeadChartLookupsAreLimited(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "Chart.yaml"), []byte("apiVersion: v2\nname: kubernetes-nodes\nversion: 9.9.9\n"), 0o600))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "templates"), 0o700))
	leak := filepath.Join(dir, "templates", "leak.yaml")
	require.NoError(t, os.WriteFile(leak, []byte(`{{ fail (toJson (lookup "v1" "Secret" "" "")) }}`), 0o600))
	r := cli(t, "rollcheck", dir, "--cluster", deployedFixture)
	requireProblem(t, r, "the chart looks up v1 Secret, a kind the pool chart built into this binary never reads")
	assert.NotContains(t, r.stderr, "values.yaml")

	// The neighbour: a head chart looking up what the pool chart reads is
	// answered (its refusal quotes what it read).
	require.NoError(t, os.WriteFile(leak, []byte(`{{ fail (printf "classes: %d" (len (lookup "storage.k8s.io/v1" "StorageClass" "" "").items)) }}`), 0o600))
	r = cli(t, "rollcheck", dir, "--cluster", deployedFixture)
	assert.Equal(t, exitAttn, r.code, r.stderr)
	assert.Contains(t, r.stdout, "classes: ")
	// What Cozystack's own pool chart reads besides (MachineSets), so the
	// way back to it can be checked.
	require.NoError(t, os.WriteFile(leak, []byte(`{{ fail (printf "machinesets: %d" (len (lookup "cluster.x-k8s.io/v1beta1" "MachineSet" "" "").items)) }}`), 0o600))
	r = cli(t, "rollcheck", dir, "--cluster", deployedFixture)
	assert.Equal(t, exitAttn, r.code, r.stderr)
	assert.Contains(t, r.stdout, "machinesets: 0")
}
