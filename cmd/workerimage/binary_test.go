package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/require"
)

// A -trimpath build copied to an empty folder, far from any checkout, answers
// every command from the chart it carries.
func TestTrimpathBinaryRunsAnywhere(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	build := t.TempDir()
	bin := filepath.Join(build, "workerimage")
	built, err := exec.Command("go", "build", "-trimpath", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "go build -trimpath: %s", built)

	// Only the binary in an empty folder, run from there.
	dir := t.TempDir()
	raw, err := os.ReadFile(bin)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "workerimage"), raw, 0o755))
	run := func(args ...string) (int, string) {
		t.Helper()
		cmd := exec.Command("./workerimage", args...)
		cmd.Dir = dir
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode(), stdout.String() + stderr.String()
		}
		require.NoError(t, err)
		return 0, stdout.String()
	}

	pools, err := filepath.Glob(support.Path("examples", "pools", "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, pools)
	state := support.Path("examples", "cluster-state.yaml")
	for _, pool := range pools {
		code, out := run("plan", "-values", pool, "-cluster", state)
		require.Contains(t, []int{exitOK, exitAttn}, code, "plan %s: %s", pool, out)
		require.Contains(t, out, "\nresult ", "plan %s answers", pool)
	}
	root := support.RepoRoot()
	code, outText := run("rollcheck", "-base", root, "-head", root, "-values", pools[0], "-cluster", state)
	require.Contains(t, []int{exitOK, exitAttn}, code, "rollcheck: %s", outText)
	code, outText = run("pins", "-cluster", support.Path("cmd", "workerimage", "testdata", "pins", "cluster.yaml"))
	require.Equal(t, exitOK, code, "pins: %s", outText)
	code, outText = run("adopt", "-cluster", state)
	require.Equal(t, exitOK, code, "adopt: %s", outText)
	require.Contains(t, outText, "\nkind: Package\n", "adopt renders the pools with the built-in chart, and the catalog change as its Package")
	code, outText = run("catalog", "-f", support.Path("examples", "platform", "closed-network-cutover.yaml"), "--cluster", state)
	require.Equal(t, exitOK, code, "catalog renders the built-in catalog with the built-in platform chart's forward: %s", outText)
	code, outText = run("version", "-o", "json")
	require.Equal(t, exitOK, code, outText)
	require.Contains(t, outText, `"module": "github.com/cozystack/golden-worker-images"`, "the build's module, from its build info")
	require.Contains(t, outText, `"path": "packages/system/kubernetes-worker-image"`)

	// Installed as kubectl-workerimage, it is the kubectl plugin.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "kubectl-workerimage"), raw, 0o755))
	plugin := exec.Command("./kubectl-workerimage", "pins", "--help")
	plugin.Dir = dir
	help, err := plugin.CombinedOutput()
	require.NoError(t, err, "%s", help)
	require.Contains(t, string(help), "\nUsage:\n  kubectl workerimage pins [GOLDEN] [flags]\n")
}

// The CLI is product code: its dependency graph holds no test package of this
// repository and none of client-go's test fakes (docs/design.md, Layout).
func TestCLILinksNoTestCode(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	require.NoError(t, err, "go list -deps: %s", out)
	deps := strings.Fields(string(out))
	require.Contains(t, deps, "helm.sh/helm/v3/pkg/engine", "the listing is the CLI's graph")
	for _, dep := range deps {
		for _, banned := range []string{"k8s.io/client-go/testing", "k8s.io/client-go/dynamic/fake", "github.com/cozystack/golden-worker-images/tests/"} {
			require.False(t, strings.HasPrefix(dep, banned), "the CLI links %s", dep)
		}
	}
}
