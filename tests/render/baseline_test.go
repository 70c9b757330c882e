package render

import (
	"os"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/require"
)

// update is -update (`make golden`): the baseline files are the pre-feature
// chart, so rewriting one is a deliberate re-baseline.
var update = support.Update

// baselineKinds are the objects the no-roll promise covers. A later feature may
// add objects to a release; it may not change these.
var baselineKinds = []string{"KubevirtMachineTemplate", "MachineDeployment", "MachineHealthCheck", "TalosConfigTemplate"}

// poolKinds is every document a pool release renders, in manifest order: the
// baseline objects alone (the creation record is an annotation of the
// MachineDeployment, written only when a platform default applied).
var poolKinds = baselineKinds

// baselineText is the part of a render the baseline pins: the four objects, in order.
func baselineText(t testing.TB, m *render.Manifest) string {
	t.Helper()
	var b strings.Builder
	for _, kind := range baselineKinds {
		d := doc(t, m, kind)
		b.WriteString("---\n")
		b.WriteString(d.Text)
	}
	return b.String()
}

func baselineCorners(t testing.TB) []support.Case {
	t.Helper()
	corners, err := support.BaselineCases()
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(corners), 12, "the baseline covers at least 12 corners")
	return corners
}

// TestBaselineRendersAreByteIdentical is the no-roll promise: every corner of
// the pre-feature chart renders exactly the committed bytes, with a cluster and
// with none (helm template).
func TestBaselineRendersAreByteIdentical(t *testing.T) {
	for _, c := range baselineCorners(t) {
		t.Run(strings.TrimPrefix(c.Name, "baseline/"), func(t *testing.T) {
			m, err := c.Render(render.Render, true)
			require.NoError(t, err)
			withCluster := baselineText(t, m)
			if *update {
				require.NoError(t, os.WriteFile(c.GoldenFile, []byte(withCluster), 0o644))
			}
			want, err := os.ReadFile(c.GoldenFile)
			require.NoError(t, err, "golden render missing: run `make golden` deliberately")
			require.Equal(t, string(want), withCluster, "render of %s differs from %s: this renames or changes the pool's objects", c.ValuesFile, c.GoldenFile)

			m, err = c.Render(render.Render, false)
			require.NoError(t, err)
			noCluster := baselineText(t, m)
			require.Equal(t, string(want), noCluster, "helm template (no cluster) must render the same bytes")
		})
	}
}
