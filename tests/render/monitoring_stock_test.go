package render

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// On a stock Cozystack, without this repository's platform chart, an operator
// applies what `make monitoring-agents` prints (docs/monitoring.md): it must be
// the Package the platform chart writes with its metrics on, byte for byte, as
// the committed platform-metrics-on render pins it, so the two never drift.
func TestMonitoringAgentsTargetPrintsThePlatformsPackage(t *testing.T) {
	if testing.Short() {
		t.Skip("runs make, which builds the pinned Helm CLI when it is missing")
	}
	root := support.RepoRoot()
	printed, err := support.MakePrints("monitoring-agents")
	require.NoError(t, err)

	raw, err := os.ReadFile(filepath.Join(root, "tests", "render", "testdata", "golden", "platform-metrics-on.values.yaml"))
	require.NoError(t, err)
	var values map[string]interface{}
	require.NoError(t, yaml.Unmarshal(raw, &values))
	pkg, found := mustRenderPlatform(t, values).Find("Package", support.MonitoringAgentsPackage)
	require.True(t, found, "the platform with its metrics on writes the monitoring-agents Package")
	assert.Equal(t, "---\n# Source: platform/templates/monitoring-agents.yaml\n"+pkg.Text, string(printed))

	pinned, err := os.ReadFile(filepath.Join(root, "tests", "render", "testdata", "golden", "platform-metrics-on.golden.yaml"))
	require.NoError(t, err)
	assert.Contains(t, string(pinned), pkg.Text, "the pinned platform render holds the same Package")

	// What it adds to monitoring-agents: the goldens' and pools' resources and read rules.
	assert.Contains(t, string(printed), "metricNamePrefix: kubernetes_worker_image")
	assert.Contains(t, string(printed), "- datavolumes")
}
