package report

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	charts "github.com/cozystack/golden-worker-images"

	"github.com/cozystack/golden-worker-images/internal/render"
	"helm.sh/helm/v3/pkg/chart"
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
	return fmt.Sprintf("the release name was taken from the values file's name %q (kubernetes-nodes-<cluster>-<file name>); name the pool with -release kubernetes-nodes-%s-<pool>, where <pool> is a DNS label, or rename the file", base, cluster)
}

// poolFromFile is a values file's base name and the pool name it gives: the
// base name without its extension.
func poolFromFile(valuesPath string) (base, pool string) {
	base = filepath.Base(valuesPath)
	return base, strings.TrimSuffix(base, filepath.Ext(base))
}

// ReadValues reads a pool values file.
func ReadValues(path string) (map[string]any, error) {
	vals, err := render.ReadValues(path)
	if err != nil {
		var pathErr *os.PathError
		if errors.As(err, &pathErr) {
			return nil, fmt.Errorf("values %s: %v", path, pathErr.Err)
		}
		return nil, fmt.Errorf("values %s %v", path, err)
	}
	if len(vals) == 0 {
		return nil, fmt.Errorf("values %s is empty: %s", path, render.ValuesFileIs)
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

// ChartAt loads the pool chart of a checkout of this repository (rollcheck's -base and -head).
func ChartAt(dir string) (*chart.Chart, error) {
	path := filepath.Join(dir, render.PoolChart)
	if st, err := os.Stat(path); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("%s: no pool chart there (want a checkout of this repository)", path)
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
func CheckChartLinks(dir string) error {
	return checkChartLinksIn(dir, map[string]bool{})
}

func checkChartLinksIn(dir string, seen map[string]bool) error {
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
			return nil
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
			return checkChartLinksIn(target, seen)
		}
		return fmt.Errorf("%s is a symbolic link out of the chart folder; a chart is read from its own files only (a dependency may be linked as charts/<name> when Chart.yaml lists it with repository file://<its folder>): copy the file in, or give -chart the folder it belongs to", rel)
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
