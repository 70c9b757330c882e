package render

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// goldenCase is one entry of testdata/golden/cases.yaml.
type goldenCase struct {
	Name    string   `json:"name"`
	Chart   string   `json:"chart"`
	Cluster []string `json:"cluster"`
	Release struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
		Upgrade   bool   `json:"upgrade"`
	} `json:"release"`
}

// goldenChartReleases maps a case's chart to its folder and default release.
var goldenChartReleases = map[string]struct {
	path string
	rel  Release
}{
	"pool":     {PoolChart, Release{Name: testRelease, Namespace: testNamespace}},
	"catalog":  {CatalogChart, Release{Name: "kubernetes-worker-image", Namespace: catalogNamespace}},
	"platform": {PlatformChart, Release{Name: "cozystack-platform", Namespace: "cozy-system"}},
}

func goldenCases(t testing.TB) []goldenCase {
	t.Helper()
	raw, err := os.ReadFile(fixture("golden/cases.yaml"))
	require.NoError(t, err)
	var cases []goldenCase
	require.NoError(t, yaml.UnmarshalStrict(raw, &cases))
	require.NotEmpty(t, cases)
	return cases
}

// renderGoldenCase renders a case as its cases.yaml entry says, with the fake
// cluster its fixtures describe.
func renderGoldenCase(t testing.TB, c goldenCase) (*Manifest, error) {
	t.Helper()
	chartRelease, ok := goldenChartReleases[c.Chart]
	require.True(t, ok, "case %s: unknown chart %q", c.Name, c.Chart)
	rel := chartRelease.rel
	if c.Release.Name != "" {
		rel.Name = c.Release.Name
	}
	if c.Release.Namespace != "" {
		rel.Namespace = c.Release.Namespace
	}
	rel.Upgrade = c.Release.Upgrade
	values, err := ReadValues(fixture("golden/" + c.Name + ".values.yaml"))
	require.NoError(t, err)
	chrt, err := LoadChart(chartRelease.path)
	require.NoError(t, err)
	return renderChartAs(t, chrt, rel, values, loadCluster(t, c.Cluster...))
}

// TestGoldenRendersAreByteIdentical pins every chart output by its committed
// bytes: a change to any of them is a deliberate re-baseline (`make golden`),
// never a side effect.
func TestGoldenRendersAreByteIdentical(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range goldenCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			require.False(t, seen[c.Name], "case %s is listed twice", c.Name)
			seen[c.Name] = true
			require.True(t, strings.HasPrefix(c.Name, c.Chart+"-"), "case %s: name it after its chart (%s-...)", c.Name, c.Chart)
			m, err := renderGoldenCase(t, c)
			require.NoError(t, err, "golden cases render; refusals are refusal tests")
			got := m.Text()
			path := fixture("golden/" + c.Name + ".golden.yaml")
			if *update {
				require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "golden render missing: run `make golden` deliberately")
			require.Equal(t, string(want), got, "render of case %s differs from %s", c.Name, path)
			if c.Chart == "pool" {
				d := doc(t, m, "KubevirtMachineTemplate")
				require.Equal(t, testPoolName+"-"+bodyHash(t, d), d.Name(), "the template is named by the hash of its own body")
			}
		})
	}
}
