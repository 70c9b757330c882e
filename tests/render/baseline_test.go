package render

import (
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// -update rewrites the committed baseline renders (`make golden`). Those files
// are the pre-feature chart: rewriting one is a deliberate re-baseline.
var update = flag.Bool("update", false, "rewrite the committed golden renders")

// baselineKinds are the objects the no-roll promise covers. A later feature may
// add objects to a release; it may not change these.
var baselineKinds = []string{"KubevirtMachineTemplate", "MachineDeployment", "MachineHealthCheck", "TalosConfigTemplate"}

// poolKinds is every document a pool release renders, in manifest order: the
// baseline objects around the per-pool record of its creation defaults.
var poolKinds = []string{"KubevirtMachineTemplate", "MachineDeployment", "MachineHealthCheck", "ConfigMap", "TalosConfigTemplate"}

// baselineText is the part of a render the baseline pins: the four objects, in order.
func baselineText(t testing.TB, m *Manifest) string {
	t.Helper()
	var b strings.Builder
	for _, kind := range baselineKinds {
		d := doc(t, m, kind)
		b.WriteString("---\n")
		b.WriteString(d.Text)
	}
	return b.String()
}

type corner struct {
	name       string
	valuesPath string
	goldenPath string
}

func baselineCorners(t testing.TB) []corner {
	t.Helper()
	paths, err := filepath.Glob(fixture("baseline/*.values.yaml"))
	require.NoError(t, err)
	sort.Strings(paths)
	require.GreaterOrEqual(t, len(paths), 12, "the baseline covers at least 12 corners")
	var out []corner
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".values.yaml")
		out = append(out, corner{name: name, valuesPath: p, goldenPath: strings.TrimSuffix(p, ".values.yaml") + ".golden.yaml"})
	}
	return out
}

// TestBaselineRendersAreByteIdentical is the no-roll promise: every corner of
// the pre-feature chart renders exactly the committed bytes, with a cluster and
// with none (helm template).
func TestBaselineRendersAreByteIdentical(t *testing.T) {
	for _, c := range baselineCorners(t) {
		t.Run(c.name, func(t *testing.T) {
			values, err := ReadValues(c.valuesPath)
			require.NoError(t, err)
			withCluster := baselineText(t, mustRenderPool(t, values, loadCluster(t, "cluster/instancetypes.yaml")))
			if *update {
				require.NoError(t, os.WriteFile(c.goldenPath, []byte(withCluster), 0o644))
			}
			want, err := os.ReadFile(c.goldenPath)
			require.NoError(t, err, "golden render missing: run `make golden` deliberately")
			require.Equal(t, string(want), withCluster, "render of %s differs from %s: this renames or changes the pool's objects", c.valuesPath, c.goldenPath)

			noCluster := baselineText(t, mustRenderPool(t, values, nil))
			require.Equal(t, string(want), noCluster, "helm template (no cluster) must render the same bytes")
		})
	}
}
