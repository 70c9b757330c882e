package render

import (
	"bytes"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/ignore"
)

// LoadChartFS loads the chart at dir of fsys (a binary's embedded charts) as
// LoadChart loads a folder: .helmignore applies, and a dependency whose
// repository is a file:// path to another chart of fsys, and that the chart's
// own files do not hold, is loaded from there and attached (a folder on disk
// links it into charts/ instead, which an embedded file system cannot hold).
func LoadChartFS(fsys fs.FS, dir string) (*chart.Chart, error) {
	rules := ignore.Empty()
	if raw, err := fs.ReadFile(fsys, path.Join(dir, ignore.HelmIgnore)); err == nil {
		if rules, err = ignore.Parse(bytes.NewReader(raw)); err != nil {
			return nil, fmt.Errorf("%s: %w", path.Join(dir, ignore.HelmIgnore), err)
		}
	}
	rules.AddDefaults()
	var files []*loader.BufferedFile
	err := fs.WalkDir(fsys, dir, func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(name, dir), "/")
		if rel == "" {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if rules.Ignore(rel, fi) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		files = append(files, &loader.BufferedFile{Name: rel, Data: data})
		return nil
	})
	if err != nil {
		return nil, err
	}
	chrt, err := loader.LoadFiles(files)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	have := map[string]bool{}
	for _, dep := range chrt.Dependencies() {
		have[dep.Name()] = true
	}
	for _, req := range chrt.Metadata.Dependencies {
		local, ok := strings.CutPrefix(req.Repository, "file://")
		if !ok || have[req.Name] {
			continue
		}
		depDir := path.Join(dir, local)
		dep, err := LoadChartFS(fsys, depDir)
		if err != nil {
			return nil, fmt.Errorf("%s: dependency %s (%s): %w", dir, req.Name, req.Repository, err)
		}
		if dep.Name() != req.Name {
			return nil, fmt.Errorf("%s: dependency %s at %s is chart %s", dir, req.Name, req.Repository, dep.Name())
		}
		chrt.AddDependency(dep)
	}
	return chrt, nil
}
