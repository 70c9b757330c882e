package render

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chart"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestGoldenRendersAreByteIdentical pins every chart output by its committed
// bytes (testdata/golden/cases.yaml): a change to any of them is a deliberate
// re-baseline (`make golden`), never a side effect.
func TestGoldenRendersAreByteIdentical(t *testing.T) {
	cases, found, err := support.GoldenCases()
	require.NoError(t, err)
	require.True(t, found, "the golden case table %s exists", support.GoldenCasesFile)
	require.NotEmpty(t, cases)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			require.True(t, strings.HasPrefix(c.Name, c.Chart+"-"), "case %s: name it after its chart (%s-...)", c.Name, c.Chart)
			m, err := c.Render(render.Render, true)
			require.NoError(t, err, "golden cases render; refusals are refusal tests")
			got := m.Text()
			if *update {
				require.NoError(t, os.WriteFile(c.GoldenFile, []byte(got), 0o644))
			}
			want, err := os.ReadFile(c.GoldenFile)
			require.NoError(t, err, "golden render missing: run `make golden` deliberately")
			require.Equal(t, string(want), got, "render of case %s differs from %s", c.Name, c.GoldenFile)
			if c.Chart == "pool" {
				d := doc(t, m, "KubevirtMachineTemplate")
				pool := "kubernetes-" + strings.TrimPrefix(c.ReleaseOf().Name, "kubernetes-nodes-")
				require.Equal(t, pool+"-"+bodyHash(t, d), d.Name(), "the template is named by the hash of its own body")
			}
		})
	}
}

// No pool render lists a namespaced kind: every pool golden case and baseline
// corner renders the same bytes against a cluster that fails any such list (a
// tenant namespace may hold thousands of DataVolumes; a render reads fixed
// objects by name).
func TestPoolRendersListNoNamespacedKind(t *testing.T) {
	pools := committedPoolCases(t)
	for _, c := range pools {
		t.Run(c.Name, func(t *testing.T) {
			requireCommittedBytes(t, c, func(chrt *chart.Chart, opts render.Options) (*render.Manifest, error) {
				cluster := opts.Cluster.(*support.Cluster)
				cluster.FailNamespacedLists = errors.New("listed a namespaced kind")
				return render.Render(chrt, opts)
			})
		})
	}
	require.GreaterOrEqual(t, len(pools), 24, "every pool case is covered")
}

// committedPoolCases are every pool golden case and baseline corner.
func committedPoolCases(t *testing.T) []support.Case {
	t.Helper()
	cases, _, err := support.GoldenCases()
	require.NoError(t, err)
	baseline, err := support.BaselineCases()
	require.NoError(t, err)
	var pools []support.Case
	for _, c := range append(cases, baseline...) {
		if c.Chart == "pool" {
			pools = append(pools, c)
		}
	}
	return pools
}

// requireCommittedBytes renders a pool case against its cluster through
// engine (which may change the cluster first) and requires its committed bytes.
func requireCommittedBytes(t *testing.T, c support.Case, engine support.Renderer) {
	t.Helper()
	m, err := c.Render(engine, true)
	require.NoError(t, err)
	want, err := os.ReadFile(c.GoldenFile)
	require.NoError(t, err)
	got := m.Text()
	require.Equal(t, string(want), got)
}

// The control: the strict cluster does refuse a namespaced list, and still
// answers a cluster-scoped one.
func TestStrictClusterRefusesNamespacedLists(t *testing.T) {
	cluster := loadCluster(t, "cluster/storageclasses.yaml")
	cluster.FailNamespacedLists = errors.New("listed a namespaced kind")
	dvs, _, err := cluster.GetClientFor("cdi.kubevirt.io/v1beta1", "DataVolume")
	require.NoError(t, err)
	_, err = dvs.Namespace(testNamespace).List(context.Background(), metav1.ListOptions{})
	require.ErrorContains(t, err, "listed a namespaced kind")
	classes, _, err := cluster.GetClientFor("storage.k8s.io/v1", "StorageClass")
	require.NoError(t, err)
	list, err := classes.List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	require.NotEmpty(t, list.Items)
}
