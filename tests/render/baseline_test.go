package render

import (
	"regexp"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/require"
)

// update is -update (`make golden`): rewriting a golden file is a deliberate
// re-baseline.
var update = support.Update

// baselineKinds are the objects the no-roll promise covers: for a pool
// without osImage and the platform's new defaults they are Cozystack's own
// chart's bytes (docs/upstream.md). A later feature may add objects to a
// release; it may not change these.
var baselineKinds = []string{"KubevirtMachineTemplate", "MachineDeployment"}

// poolKinds is every document a pool release renders, in manifest order (the
// creation record is an annotation of the MachineDeployment, written only
// when a platform default applied).
// The TalosConfigTemplate is not among them: the reconcile Job applies it.
var poolKinds = []string{"KubevirtMachineTemplate", "MachineDeployment", "MachineHealthCheck",
	"ConfigMap", "ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding", "Job"}

// baselineText is the part of a render the no-roll promise pins: the baseline
// objects, in order.
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
	require.GreaterOrEqual(t, len(corners), 50, "the baseline grid covers every value of Cozystack's chart")
	return corners
}

// capacityAnnotations are the MachineDeployment's cluster-autoscaler capacity
// lines, computed from the instancetype the render reads from the cluster.
var capacityAnnotations = regexp.MustCompile(`(?m)^    capacity\.cluster-autoscaler\.kubernetes\.io/(memory|cpu): "[0-9]+(Mi|m)"\n`)

// TestBaselinePreviewRendersTheSameTemplate: with no cluster (helm template,
// a preview) every baseline corner renders the same KubevirtMachineTemplate,
// so a preview names the template the cluster will get; the MachineDeployment
// differs only by the capacity annotations of a pool sized by an instancetype,
// which a preview cannot read (TestGoldenRendersAreByteIdentical pins the rest).
func TestBaselinePreviewRendersTheSameTemplate(t *testing.T) {
	sizedByInstancetype := 0
	for _, c := range baselineCorners(t) {
		t.Run(c.Name, func(t *testing.T) {
			m, err := c.Render(render.Render, true)
			require.NoError(t, err)
			withCluster := baselineText(t, m)
			m, err = c.Render(render.Render, false)
			require.NoError(t, err)
			noCluster := baselineText(t, m)
			if strings.Contains(withCluster, "kind: VirtualMachineClusterInstancetype") {
				sizedByInstancetype++
				require.Regexp(t, capacityAnnotations, withCluster, "a pool sized by an instancetype publishes its capacity")
				withCluster = capacityAnnotations.ReplaceAllString(withCluster, "")
			}
			require.Equal(t, withCluster, noCluster, "helm template (no cluster) renders the same template and MachineDeployment")
		})
	}
	require.NotZero(t, sizedByInstancetype)
}
