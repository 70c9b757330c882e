package render

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chart"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/yaml"
)

const (
	testCluster   = "acme"
	testNamespace = support.PoolNamespace
	testRelease   = support.PoolRelease
	testPoolName  = support.PoolName
)

// vals parses a YAML snippet into chart values, so tests read like values files.
func vals(t testing.TB, snippet string) map[string]interface{} {
	t.Helper()
	out := map[string]interface{}{}
	require.NoError(t, yaml.Unmarshal([]byte(snippet), &out), "test values must parse")
	return out
}

// str reads a string value; anything else is "".
func str(v interface{}) string {
	s, _ := v.(string)
	return s
}

// loadCluster builds a fake cluster from fixture files under testdata/.
func loadCluster(t testing.TB, fixtures ...string) *support.Cluster {
	t.Helper()
	paths := make([]string, len(fixtures))
	for i, f := range fixtures {
		paths[i] = support.Fixture(f)
	}
	c, err := support.LoadCluster(paths...)
	require.NoError(t, err)
	return c
}

// clusterFromYAML builds a fake cluster from inline objects plus fixture files.
func clusterFromYAML(t testing.TB, objects string, fixtures ...string) *support.Cluster {
	t.Helper()
	objs, err := render.ParseObjects([]byte(objects))
	require.NoError(t, err)
	for _, f := range fixtures {
		more, err := render.LoadObjects(support.Fixture(f))
		require.NoError(t, err)
		objs = append(objs, more...)
	}
	return support.NewCluster(objs...)
}

// poolChart loads the pool chart fresh, so no test sees another's mutation.
func poolChart(t testing.TB) *chart.Chart {
	t.Helper()
	c, err := support.LoadChart(render.PoolChart)
	require.NoError(t, err)
	return c
}

// renderPool renders the pool chart as release kubernetes-nodes-acme-workers.
func renderPool(t testing.TB, values map[string]interface{}, cluster *support.Cluster) (*render.Manifest, error) {
	t.Helper()
	return renderPoolAs(t, render.Release{Name: testRelease, Namespace: testNamespace}, values, cluster)
}

func renderPoolAs(t testing.TB, rel render.Release, values map[string]interface{}, cluster *support.Cluster) (*render.Manifest, error) {
	t.Helper()
	return renderChartAs(t, poolChart(t), rel, values, cluster)
}

// renderChartAs renders a chart as a release; a nil cluster renders as `helm
// template` does.
func renderChartAs(t testing.TB, c *chart.Chart, rel render.Release, values map[string]interface{}, cluster *support.Cluster) (*render.Manifest, error) {
	t.Helper()
	return render.Render(c, render.Options{Release: rel, Values: values, Cluster: cluster})
}

func mustRenderPool(t testing.TB, values map[string]interface{}, cluster *support.Cluster) *render.Manifest {
	t.Helper()
	m, err := renderPool(t, values, cluster)
	require.NoError(t, err)
	return m
}

// requireRefusal asserts that the render failed and the message carries every fragment.
func requireRefusal(t testing.TB, err error, fragments ...string) {
	t.Helper()
	require.Error(t, err, "the render must refuse")
	for _, f := range fragments {
		require.Contains(t, err.Error(), f)
	}
}

func doc(t testing.TB, m *render.Manifest, kind string) render.Doc {
	t.Helper()
	d, err := m.One(kind)
	require.NoError(t, err)
	return d
}

// machineTemplateName reads the KubevirtMachineTemplate's name.
func machineTemplateName(t testing.TB, m *render.Manifest) string {
	return doc(t, m, "KubevirtMachineTemplate").Name()
}

// bodyHash recomputes the content hash from the KubevirtMachineTemplate's own
// text: the lines under `spec:`, de-indented, hashed with sha256.
func bodyHash(t testing.TB, d render.Doc) string {
	t.Helper()
	_, after, ok := strings.Cut(d.Text, "\nspec:\n  template:\n")
	require.True(t, ok, "KubevirtMachineTemplate has a spec.template")
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(after, "\n"), "\n") {
		require.True(t, strings.HasPrefix(l, "    "), "spec.template body line %q is indented", l)
		lines = append(lines, l[4:])
	}
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return hex.EncodeToString(sum[:])[:6]
}

// errFakeOutage is what a cluster that cannot answer returns.
var errFakeOutage = apierrors.NewServiceUnavailable("etcd leader election in progress")
