package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"
)

// checkChartLinks refuses a -chart folder holding a symbolic link that leaves
// it: Helm's loader follows links, and a template linked to any file would be
// read, rendered and quoted in a refusal. The one link allowed out is a
// dependency as this repository links one: charts/<name>, where Chart.yaml
// lists <name> with repository file://<path> and the link resolves to <path>;
// that chart's folder is then held to the same rule.
func checkChartLinks(dir string) error {
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
			return fmt.Errorf("%s is a symbolic link that does not resolve: %w", rel, unwrapPath(err))
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
