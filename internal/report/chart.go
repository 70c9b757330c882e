package report

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	charts "github.com/cozystack/golden-worker-images"

	"github.com/cozystack/golden-worker-images/internal/render"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// ReleaseFor names the release as the chart requires, from the flags or from
// the values: kubernetes-nodes-<cluster>-<pool>, where <pool> is the values
// file's name without its extension, in namespace tenant-<cluster>.
func ReleaseFor(valuesPath string, vals map[string]any, name, namespace string) render.Release {
	cluster, _ := vals["cluster"].(string)
	if name == "" {
		_, pool := poolFromFile(valuesPath)
		name = fmt.Sprintf("kubernetes-nodes-%s-%s", cluster, pool)
	}
	if namespace == "" {
		namespace = "tenant-" + cluster
	}
	return render.Release{Name: name, Namespace: namespace}
}

// ReleaseHint explains a release name taken from the values file's name when
// that name cannot name a pool ("" when it can, or -release was given).
func ReleaseHint(valuesPath string, vals map[string]any) string {
	cluster, _ := vals["cluster"].(string)
	base, pool := poolFromFile(valuesPath)
	if cluster != "" && len(validation.IsDNS1123Label(pool)) == 0 {
		return ""
	}
	if cluster == "" {
		cluster = "<cluster>"
	}
	if valuesPath == "" {
		return fmt.Sprintf("the values came from standard input, which has no file name to name the pool by; name it with --release kubernetes-nodes-%s-<pool>, where <pool> is a DNS label", cluster)
	}
	return fmt.Sprintf("the release name was taken from the values file's name %q (kubernetes-nodes-<cluster>-<file name>); name the pool with --release kubernetes-nodes-%s-<pool>, where <pool> is a DNS label, or rename the file", base, cluster)
}

// PoolFile is the values file a pool is named by: the first file given that
// is not standard input; "" when there is none.
func PoolFile(paths []string) string {
	for _, p := range paths {
		if p != Stdin {
			return p
		}
	}
	return ""
}

// poolFromFile is a values file's base name and the pool name it gives: the
// base name without its extension.
func poolFromFile(valuesPath string) (base, pool string) {
	if valuesPath == "" {
		return "", ""
	}
	base = filepath.Base(valuesPath)
	return base, strings.TrimSuffix(base, filepath.Ext(base))
}

// ReadValues reads a pool values file.
func ReadValues(path string) (map[string]any, error) {
	vals, err := readValuesFile(path)
	if err != nil {
		return nil, err
	}
	if len(vals) == 0 {
		return nil, fmt.Errorf("values %s is empty: %s", path, render.ValuesFileIs)
	}
	return vals, nil
}

// Stdin is how a values file named "-" is read: standard input, as Helm's
// `-f -` reads it.
const Stdin = "-"

// ReadValuesFiles reads values files and layers them in order as Helm layers
// its -f files (render.MergeValues); "-" reads stdin, once. Each file is
// refused as ReadValues refuses it, except that a layer may be empty; the
// merged values may not.
func ReadValuesFiles(paths []string, stdin io.Reader) (map[string]any, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("no values file: give the pool's values as a file (-f POOL.yaml, or POOL.yaml), or - for standard input")
	}
	merged := map[string]any{}
	readStdin := false
	for _, path := range paths {
		var vals map[string]any
		var err error
		if path == Stdin {
			if readStdin {
				return nil, fmt.Errorf("values - (standard input) is given twice; it can be read once")
			}
			readStdin = true
			if vals, err = render.ReadValuesFrom(stdin); err != nil {
				return nil, fmt.Errorf("values from standard input %v", err)
			}
		} else if vals, err = readValuesFile(path); err != nil {
			return nil, err
		}
		merged = render.MergeValues(merged, vals)
	}
	if len(merged) == 0 {
		if len(paths) == 1 {
			return nil, fmt.Errorf("values %s is empty: %s", paths[0], render.ValuesFileIs)
		}
		return nil, fmt.Errorf("values %s are empty: %s", strings.Join(paths, ", "), render.ValuesFileIs)
	}
	return merged, nil
}

// readValuesFile reads one file, naming it in any error.
func readValuesFile(path string) (map[string]any, error) {
	vals, err := render.ReadValues(path)
	if err != nil {
		var pathErr *os.PathError
		if errors.As(err, &pathErr) {
			return nil, fmt.Errorf("values %s: %v", path, pathErr.Err)
		}
		return nil, fmt.Errorf("values %s %v", path, err)
	}
	return vals, nil
}

// LoadPoolChart loads the chart at dir, or with no dir the pool chart built
// into this binary.
func LoadPoolChart(dir string) (*chart.Chart, error) {
	if dir == "" {
		c, err := render.LoadChartFS(charts.FS, render.PoolChart)
		if err != nil {
			return nil, fmt.Errorf("built-in chart %s: %v", render.PoolChart, err)
		}
		return c, nil
	}
	if err := CheckChartLinks(dir); err != nil {
		return nil, fmt.Errorf("chart %s: %v", dir, err)
	}
	c, err := render.LoadChart(dir)
	if err != nil {
		return nil, fmt.Errorf("chart %s: %v", dir, err)
	}
	return c, nil
}

// ChartAt loads the pool chart rollcheck names with -base or -head: a chart
// folder (it holds Chart.yaml), a packaged chart (a .tgz archive as `helm
// package` builds it), a checkout of this repository (its
// packages/apps/kubernetes-nodes), or an OCI reference (oci://..., pulled with
// Helm's registry client as reg says). The name is ref as a report shows it:
// an OCI reference with the version it resolved to.
func ChartAt(ref string, reg RegistryOptions) (c *chart.Chart, name string, err error) {
	if strings.HasPrefix(ref, ociPrefix) {
		return reg.PullChart(ref)
	}
	c, err = localChartAt(ref)
	return c, ref, err
}

// localChartAt loads a chart folder, archive or checkout.
func localChartAt(ref string) (*chart.Chart, error) {
	st, err := os.Stat(ref)
	if err != nil {
		return nil, fmt.Errorf("chart %s: %v", ref, WithoutPath(err))
	}
	if !st.IsDir() {
		if err := checkArchiveFile(ref); err != nil {
			return nil, fmt.Errorf("chart %s: %v", ref, WithoutPath(err))
		}
		// Helm's own archive loader, as `helm install CHART.tgz` reads it:
		// every file comes out of the archive, so no link can leave it.
		c, err := loader.LoadFile(ref)
		if err != nil {
			return nil, fmt.Errorf("chart %s: not a chart archive (a .tgz as helm package builds it): %v", ref, err)
		}
		return c, nil
	}
	if _, err := os.Stat(filepath.Join(ref, "Chart.yaml")); err == nil {
		abs, err := filepath.Abs(ref)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", ref, err)
		}
		return LoadPoolChart(abs)
	}
	path := filepath.Join(ref, render.PoolChart)
	if st, err := os.Stat(path); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("%s: no pool chart there: give a chart folder (with Chart.yaml), a chart archive (.tgz), or a checkout of this repository (with %s)", ref, render.PoolChart)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return LoadPoolChart(abs)
}

// CheckChartLinks refuses a -chart folder holding a symbolic link that leaves
// it: Helm's loader follows links, and a template linked to any file would be
// read, rendered and quoted in a refusal. The one link allowed out is a
// dependency as this repository links one: charts/<name>, where Chart.yaml
// lists <name> with repository file://<path> and the link resolves to <path>;
// that chart's folder is then held to the same rule.
// It bounds the folder as it walks it, dependencies included: its files and
// folders are counted and sized before Helm's loader reads any (chartBudget).
func CheckChartLinks(dir string) error {
	return checkChartLinksIn(dir, map[string]bool{}, &chartBudget{})
}

func checkChartLinksIn(dir string, seen map[string]bool, budget *chartBudget) error {
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	if seen[root] {
		return nil
	}
	seen[root] = true
	deps, err := fileDependencies(dir, root)
	if err != nil {
		return err
	}
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink == 0 {
			var size int64
			if d.Type().IsRegular() {
				if info, err := d.Info(); err == nil {
					size = info.Size()
				}
			}
			rel, _ := filepath.Rel(dir, path)
			return budget.add(rel, size)
		}
		rel, _ := filepath.Rel(dir, path)
		target, err := filepath.EvalSymlinks(path)
		if err != nil {
			return fmt.Errorf("%s is a symbolic link that does not resolve: %w", rel, WithoutPath(err))
		}
		if within(root, target) {
			return nil
		}
		if dep, ok := deps[filepath.ToSlash(rel)]; ok && dep == target {
			return checkChartLinksIn(target, seen, budget)
		}
		return fmt.Errorf("%s is a symbolic link out of the chart folder; a chart is read from its own files only (a dependency may be linked as charts/<name> when Chart.yaml lists it with repository file://<its folder>): copy the file in, or give --chart the folder it belongs to", rel)
	})
}

// fileDependencies maps charts/<name> to the folder each file:// dependency
// of the chart at dir resolves to.
func fileDependencies(dir, root string) (map[string]string, error) {
	chartFile := filepath.Join(dir, "Chart.yaml")
	if fi, err := os.Lstat(chartFile); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if target, err := filepath.EvalSymlinks(chartFile); err != nil || !within(root, target) {
			return nil, errors.New("Chart.yaml is a symbolic link out of the chart folder; a chart is read from its own files only")
		}
	}
	raw, err := os.ReadFile(chartFile)
	if err != nil {
		// Helm's loader says what is missing.
		return map[string]string{}, nil
	}
	var meta struct {
		Dependencies []struct {
			Name       string `json:"name"`
			Repository string `json:"repository"`
		} `json:"dependencies"`
	}
	if err := yaml.Unmarshal(raw, &meta); err != nil {
		return map[string]string{}, nil
	}
	deps := map[string]string{}
	for _, d := range meta.Dependencies {
		local, ok := strings.CutPrefix(d.Repository, "file://")
		if !ok || d.Name == "" || strings.ContainsAny(d.Name, `/\`) {
			continue
		}
		if target, err := filepath.EvalSymlinks(filepath.Join(dir, filepath.FromSlash(local))); err == nil {
			deps["charts/"+d.Name] = target
		}
	}
	return deps, nil
}

// within: path is root or below it (both resolved).
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
