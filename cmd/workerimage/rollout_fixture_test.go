package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// rolloutFixture is the example cluster as the pool chart deploys it
// (deployedState), settled as its controllers leave it (settled), with the
// golden of the next Talos patch imported
// (testdata/rollout/golden-v1.13.7.yaml): a fleet rollout can move. It is
// committed for the docs' examples, and rewritten by `make golden`.
var rolloutFixture = filepath.Join("testdata", "rollout", "cluster.yaml")

func rolloutState(t *testing.T) string {
	t.Helper()
	next, err := os.ReadFile(filepath.Join("testdata", "rollout", "golden-v1.13.7.yaml"))
	require.NoError(t, err)
	var b strings.Builder
	b.WriteString("# The example cluster as the pool chart deploys it (testdata/rollcheck/deployed.yaml),\n")
	b.WriteString("# each HelmRelease released and each MachineDeployment rolled out as helm-controller\n")
	b.WriteString("# and Cluster API leave them, and the golden of testdata/rollout/golden-v1.13.7.yaml.\n")
	b.WriteString("# Rewritten by `make golden`.\n")
	for _, doc := range render.SplitDocuments(deployedState(t)) {
		b.WriteString("---\n" + settled(t, doc))
	}
	b.WriteString("---\n" + string(next))
	return b.String()
}

// settled is a document of the deployed cluster as its controller leaves
// it once done: a HelmRelease at generation 1, released (observedGeneration
// 1, Ready True); a MachineDeployment at generation 1, observed, every
// worker updated. Other documents stay as they are.
func settled(t *testing.T, doc string) string {
	t.Helper()
	var obj map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(doc), &obj))
	switch obj["kind"] {
	case "HelmRelease":
		obj["metadata"].(map[string]any)["generation"] = 1
		obj["status"] = map[string]any{
			"observedGeneration": 1,
			"conditions": []any{map[string]any{
				"type": "Ready", "status": "True", "reason": "UpgradeSucceeded", "observedGeneration": 1,
				"message": "Helm upgrade succeeded", "lastTransitionTime": "2026-08-21T00:00:00Z",
			}},
		}
	case "MachineDeployment":
		obj["metadata"].(map[string]any)["generation"] = 1
		status, _ := obj["status"].(map[string]any)
		if status == nil {
			return doc
		}
		status["observedGeneration"] = 1
		status["updatedReplicas"] = status["replicas"]
		status["availableReplicas"] = status["readyReplicas"]
	default:
		return doc
	}
	text, err := yaml.Marshal(obj)
	require.NoError(t, err)
	return string(text)
}

func TestRolloutFixtureIsCurrent(t *testing.T) {
	got := rolloutState(t)
	if *support.Update {
		require.NoError(t, os.WriteFile(rolloutFixture, []byte(got), 0o644))
	}
	want, err := os.ReadFile(rolloutFixture)
	require.NoError(t, err, "run `make golden` deliberately")
	require.Equal(t, string(want), got, "%s is not the deployed example with the v1.13.7 golden: run `make golden` deliberately", rolloutFixture)
}
