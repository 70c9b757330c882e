package render_test

import (
	"strings"
	"testing"
	"testing/fstest"

	charts "github.com/cozystack/golden-worker-images"
	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chart"
)

func fileMap(files []*chart.File) map[string]string {
	out := map[string]string{}
	for _, f := range files {
		out[f.Name] = string(f.Data)
	}
	return out
}

// ownFiles leaves out charts/: on disk the loader reads a dependency's files
// there through its symlink, while the embedded chart attaches it instead.
func ownFiles(files []*chart.File) map[string]string {
	out := fileMap(files)
	for name := range out {
		if strings.HasPrefix(name, "charts/") {
			delete(out, name)
		}
	}
	return out
}

// The chart built into the CLI is the chart folder, file for file.
func TestEmbeddedPoolChartIsTheFolder(t *testing.T) {
	embedded, err := render.LoadChartFS(charts.FS, render.PoolChart)
	require.NoError(t, err)
	folder, err := support.LoadChart(render.PoolChart)
	require.NoError(t, err)
	require.Equal(t, ownFiles(folder.Raw), ownFiles(embedded.Raw))
	require.Equal(t, fileMap(folder.Templates), fileMap(embedded.Templates))
	require.Equal(t, folder.Metadata, embedded.Metadata)
	require.Equal(t, folder.Values, embedded.Values)
	require.Equal(t, string(folder.Schema), string(embedded.Schema))
	require.Equal(t, len(folder.Dependencies()), len(embedded.Dependencies()))
	require.NotEmpty(t, embedded.Dependencies(), "the library chart comes along")
	embeddedDeps := map[string]*chart.Chart{}
	for _, dep := range embedded.Dependencies() {
		embeddedDeps[dep.Name()] = dep
	}
	for _, dep := range folder.Dependencies() {
		require.Contains(t, embeddedDeps, dep.Name())
		require.Equal(t, dep.Metadata, embeddedDeps[dep.Name()].Metadata)
		require.Equal(t, fileMap(dep.Templates), fileMap(embeddedDeps[dep.Name()].Templates), "library %s", dep.Name())
	}
	require.Contains(t, fileMap(embeddedDeps["kubernetes-nodes-lib"].Templates), "templates/_helpers.tpl", "the all: prefix keeps the library's _*.tpl helpers")
}

// A library chart the pool chart depends on through file://../../library/<name>
// is attached from the embedded packages/library, as the charts/<name> symlink
// attaches it on disk.
func TestLoadChartFSAttachesLibraryDependencies(t *testing.T) {
	fsys := fstest.MapFS{
		"packages/apps/pool/Chart.yaml":            {Data: []byte("apiVersion: v2\nname: pool\nversion: 0.1.0\ndependencies:\n  - name: lib\n    version: 0.1.0\n    repository: file://../../library/lib\n")},
		"packages/apps/pool/templates/cm.yaml":     {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ include \"lib.name\" . }}\n")},
		"packages/library/lib/Chart.yaml":          {Data: []byte("apiVersion: v2\nname: lib\nversion: 0.1.0\ntype: library\n")},
		"packages/library/lib/templates/_name.tpl": {Data: []byte(`{{- define "lib.name" -}}from-lib-{{ .Release.Name }}{{- end -}}`)},
	}
	chrt, err := render.LoadChartFS(fsys, "packages/apps/pool")
	require.NoError(t, err)
	require.Len(t, chrt.Dependencies(), 1)
	m, err := render.Render(chrt, render.Options{Release: render.Release{Name: "r", Namespace: "ns"}})
	require.NoError(t, err)
	d, err := m.One("ConfigMap")
	require.NoError(t, err)
	require.Equal(t, "from-lib-r", d.Name())

	delete(fsys, "packages/library/lib/Chart.yaml")
	_, err = render.LoadChartFS(fsys, "packages/apps/pool")
	require.ErrorContains(t, err, "dependency lib (file://../../library/lib)")
}
