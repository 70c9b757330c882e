package support

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cozystack/golden-worker-images/internal/render"
	"helm.sh/helm/v3/pkg/chart"
	"sigs.k8s.io/yaml"
)

// Case is one committed golden render: a chart, its values, a release and the
// cluster it renders against.
type Case struct {
	Name  string `json:"name"`
	Chart string `json:"chart"` // pool, catalog or platform
	// Cluster lists fixture files (under tests/render/testdata). An empty list
	// is a reachable cluster holding nothing; nil renders with no cluster.
	Cluster []string    `json:"cluster"`
	Release CaseRelease `json:"release"`
	// Baseline marks a pool case without osImage and without the platform's
	// new defaults: its KubevirtMachineTemplate and MachineDeployment are the
	// bytes Cozystack's own kubernetes-nodes chart renders for the same values
	// (docs/upstream.md), the objects a platform switching charts keeps.
	Baseline bool `json:"baseline"`

	// ValuesFile and GoldenFile are absolute paths, filled in by the readers.
	ValuesFile string `json:"-"`
	GoldenFile string `json:"-"`
}

// CaseRelease is the release a case renders as; empty fields take the
// chart's default release (see defaultReleases).
type CaseRelease struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	Upgrade   bool   `json:"upgrade"`
}

// caseCharts maps a case's chart to its folder and the release it is installed as.
var caseCharts = map[string]struct {
	dir                string
	release, namespace string
}{
	"pool":     {render.PoolChart, PoolRelease, PoolNamespace},
	"catalog":  {render.CatalogChart, "kubernetes-worker-image", "cozy-public"},
	"platform": {render.PlatformChart, "cozystack-platform", "cozy-system"},
}

// GoldenCasesFile is the case table of the committed golden renders.
var GoldenCasesFile = Fixture("golden/cases.yaml")

// GoldenCases reads the case table. found is false, with no error, when the
// table does not exist (yet), so a test can skip.
func GoldenCases() (cases []Case, found bool, err error) {
	raw, err := os.ReadFile(GoldenCasesFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if err := yaml.UnmarshalStrict(raw, &cases); err != nil {
		return nil, true, fmt.Errorf("%s: %w", GoldenCasesFile, err)
	}
	dir := filepath.Dir(GoldenCasesFile)
	seen := map[string]bool{}
	for i := range cases {
		c := &cases[i]
		if c.Name == "" || seen[c.Name] {
			return nil, true, fmt.Errorf("%s: case %d: empty or repeated name %q", GoldenCasesFile, i, c.Name)
		}
		seen[c.Name] = true
		if _, ok := caseCharts[c.Chart]; !ok {
			return nil, true, fmt.Errorf("%s: case %s: chart %q is not pool, catalog or platform", GoldenCasesFile, c.Name, c.Chart)
		}
		if c.Baseline && c.Chart != "pool" {
			return nil, true, fmt.Errorf("%s: case %s: only a pool case can be a baseline", GoldenCasesFile, c.Name)
		}
		c.ValuesFile = filepath.Join(dir, c.Name+".values.yaml")
		c.GoldenFile = filepath.Join(dir, c.Name+".golden.yaml")
	}
	return cases, true, nil
}

// BaselineCases are the golden cases marked baseline (pool cases without
// osImage and the platform's new defaults), in table order.
func BaselineCases() ([]Case, error) {
	cases, found, err := GoldenCases()
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("%s: the golden case table is missing", GoldenCasesFile)
	}
	var out []Case
	for _, c := range cases {
		if c.Baseline {
			out = append(out, c)
		}
	}
	return out, nil
}

// ChartDir is the case's chart folder, from the checkout's root.
func (c Case) ChartDir() string { return caseCharts[c.Chart].dir }

// ReleaseOf is the release the case renders as, defaults filled in.
func (c Case) ReleaseOf() render.Release {
	def := caseCharts[c.Chart]
	rel := render.Release{Name: c.Release.Name, Namespace: c.Release.Namespace, Upgrade: c.Release.Upgrade}
	if rel.Name == "" {
		rel.Name = def.release
	}
	if rel.Namespace == "" {
		rel.Namespace = def.namespace
	}
	return rel
}

// Renderer is one Helm engine's render: render.Render (Helm v3) or helmv4.Render.
type Renderer func(*chart.Chart, render.Options) (*render.Manifest, error)

// Render renders the case with engine, against its cluster when withCluster
// is true and with no cluster (helm template) otherwise.
func (c Case) Render(engine Renderer, withCluster bool) (*render.Manifest, error) {
	chrt, err := LoadChart(c.ChartDir())
	if err != nil {
		return nil, err
	}
	return c.RenderChart(chrt, engine, withCluster)
}

// RenderChart renders the case as Render does, with chrt in place of the
// case's chart folder (the same chart packaged, or pulled from a registry).
func (c Case) RenderChart(chrt *chart.Chart, engine Renderer, withCluster bool) (*render.Manifest, error) {
	vals, err := render.ReadValues(c.ValuesFile)
	if err != nil {
		return nil, err
	}
	opts := render.Options{Release: c.ReleaseOf(), Values: vals}
	if withCluster {
		cluster, err := LoadCluster(fixtures(c.Cluster)...)
		if err != nil {
			return nil, err
		}
		opts.Cluster = cluster
	}
	return engine(chrt, opts)
}

func fixtures(rel []string) []string {
	out := make([]string, len(rel))
	for i, r := range rel {
		out[i] = Fixture(r)
	}
	return out
}

// LoadCluster is the fake cluster the case renders against (its fixtures).
func (c Case) LoadCluster() (*Cluster, error) {
	return LoadCluster(fixtures(c.Cluster)...)
}
