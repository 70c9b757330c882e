package report

import (
	"fmt"
	"io/fs"
	"path"
	"runtime/debug"
	"sort"

	charts "github.com/cozystack/golden-worker-images"
	"sigs.k8s.io/yaml"
)

// VersionReport is what `workerimage version` answers: the binary, as Go
// recorded its build, and the charts it carries and renders.
type VersionReport struct {
	Binary BinaryVersion `json:"binary"`
	Charts []ChartInfo   `json:"charts"`
}

// BinaryVersion is the build information the Go toolchain stamps into the
// binary: the release tag for `go install module@v0.2.0` or a build of a
// tagged checkout, a pseudo-version naming the commit for any other checkout
// (with the VCS revision), "(devel)" when the build recorded no VCS
// information (-buildvcs=false).
type BinaryVersion struct {
	Module  string `json:"module"`
	Version string `json:"version"`
	// Revision and Time are the commit built from (vcs.revision, vcs.time);
	// Modified: the work tree had uncommitted changes.
	Revision  string `json:"revision,omitempty"`
	Time      string `json:"time,omitempty"`
	Modified  bool   `json:"modified,omitempty"`
	GoVersion string `json:"goVersion"`
}

// ChartInfo is one chart built into the binary: its name and version from
// its Chart.yaml, and where it lives in the repository.
type ChartInfo struct {
	Name       string `json:"name"`
	Version    string `json:"version"`
	AppVersion string `json:"appVersion,omitempty"`
	Path       string `json:"path"`
}

// Version reads the binary's build information and the embedded charts'
// Chart.yaml files.
func Version() (VersionReport, error) {
	rep := VersionReport{Binary: BinaryVersionOf(debug.ReadBuildInfo)}
	var err error
	rep.Charts, err = EmbeddedCharts(charts.FS)
	return rep, err
}

// BinaryVersionOf reads the build information read returns
// (debug.ReadBuildInfo for this binary's).
func BinaryVersionOf(read func() (*debug.BuildInfo, bool)) BinaryVersion {
	info, ok := read()
	if !ok {
		return BinaryVersion{Version: "unknown (built without module support)"}
	}
	v := BinaryVersion{Module: info.Main.Path, Version: info.Main.Version, GoVersion: info.GoVersion}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

// EmbeddedCharts lists every Chart.yaml of fsys, sorted by path.
func EmbeddedCharts(fsys fs.FS) ([]ChartInfo, error) {
	var out []ChartInfo
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Base(name) != "Chart.yaml" {
			return err
		}
		raw, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		var meta struct {
			Name       string `json:"name"`
			Version    string `json:"version"`
			AppVersion string `json:"appVersion"`
		}
		if err := yaml.Unmarshal(raw, &meta); err != nil {
			return fmt.Errorf("%s: %v", name, err)
		}
		out = append(out, ChartInfo{Name: meta.Name, Version: meta.Version, AppVersion: meta.AppVersion, Path: path.Dir(name)})
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, err
}
