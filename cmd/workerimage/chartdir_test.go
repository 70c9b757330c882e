package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// copyChart copies the pool chart into a folder of the test's own, its
// library charts beside it and linked as the repository links them.
func copyChart(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for _, dir := range []string{"packages/apps/kubernetes-nodes", "packages/library/kubernetes-nodes-lib", "packages/library/worker-image-lib"} {
		src := filepath.Join(support.RepoRoot(), dir)
		require.NoError(t, filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
			require.NoError(t, err)
			rel, _ := filepath.Rel(src, path)
			dst := filepath.Join(root, dir, rel)
			switch {
			case d.Type()&os.ModeSymlink != 0:
				link, err := os.Readlink(path)
				require.NoError(t, err)
				return os.Symlink(link, dst)
			case d.IsDir():
				return os.MkdirAll(dst, 0o755)
			}
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			return os.WriteFile(dst, data, 0o644)
		}))
	}
	return filepath.Join(root, "packages/apps/kubernetes-nodes")
}

// -chart reads the chart's own files and the dependencies it links as the
// repository does; a link out of the folder anywhere else is refused, and
// its target is never read or quoted.
func TestChartFolderLinksOutAreRefused(t *testing.T) {
	pool := td("pools", "http.yaml")
	chart := copyChart(t)
	ok := cli(t, "plan", "-values", pool, "-chart", chart)
	require.NotEqual(t, exitProblem, ok.code, "the chart as the repository links it: %s", ok.stderr)

	secret := writeTemp(t, "secret.txt", "root:x:0:0:SECRET-CONTENT:/root:/bin/bash\n")
	for name, link := range map[string]struct{ at, to string }{
		"a template linked out":            {"templates/evil.yaml", secret},
		"a values file linked out":         {"values.yaml", secret},
		"a folder linked out":              {"templates/more", filepath.Dir(secret)},
		"a dependency not in Chart.yaml":   {"charts/other-lib", filepath.Join(filepath.Dir(filepath.Dir(chart)), "../library/worker-image-lib")},
		"a relative link climbing out":     {"templates/up.yaml", "../../../../" + filepath.Base(filepath.Dir(secret)) + "/secret.txt"},
		"a link that does not resolve out": {"templates/gone.yaml", "/nonexistent/file"},
	} {
		t.Run(name, func(t *testing.T) {
			chart := copyChart(t)
			at := filepath.Join(chart, link.at)
			_ = os.Remove(at)
			require.NoError(t, os.Symlink(link.to, at))
			res := cli(t, "plan", "-values", pool, "-chart", chart)
			assert.Equal(t, exitProblem, res.code, res.stdout)
			assert.Contains(t, res.stderr, "chart "+chart+": "+link.at)
			assert.NotContains(t, res.stderr+res.stdout, "SECRET-CONTENT")
			for _, verb := range []string{"pins", "adopt"} {
				res := cli(t, verb, "-cluster", td("state", "cluster.yaml"), "-chart", chart)
				assert.Equal(t, exitProblem, res.code, verb)
				assert.Contains(t, res.stderr, link.at, verb)
			}
		})
	}

	// A link inside the folder is the chart's own file.
	inside := copyChart(t)
	require.NoError(t, os.Symlink("NOTES.txt", filepath.Join(inside, "templates", "notes-link.txt")))
	require.NoError(t, os.WriteFile(filepath.Join(inside, "templates", "NOTES.txt"), []byte("pool notes\n"), 0o644))
	res := cli(t, "plan", "-values", pool, "-chart", inside)
	assert.NotEqual(t, exitProblem, res.code, res.stderr)
}
