package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sigsyaml "sigs.k8s.io/yaml"
)

// End to end: PVC annotations a tenant sets reach pins' text escaped and its
// JSON exact; a hostile file name reaches rollcheck's text escaped; the one
// line of a problem on stderr is escaped too.
func TestHostileClusterStringsAreEscapedInText(t *testing.T) {
	pvc := fmt.Sprintf(`---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: kubernetes-acme-evil-1a2b3c-aaaaa-disk-system
  namespace: tenant-acme
  annotations:
    kubernetes-worker-image.cozystack.io/golden: %q
    kubernetes-worker-image.cozystack.io/pool: kubernetes-acme-evil
    cdi.kubevirt.io/cloneType: %q
    cdi.kubevirt.io/cloneFallbackReason: %q
`, goldenName("v1.13.6"), support.HostileText, support.HostileText)
	state := stateWith(t, "cluster", pvc)
	report, text := pinsOfFile(t, state)
	support.RequireTerminalSafe(t, "pins", text)
	assert.Contains(t, text, `\x1b]52;c;cm0gLXJm\a`, "the clipboard write is shown, not sent")
	found := false
	for _, d := range report.HostAssisted {
		if d.Name == "kubernetes-acme-evil-1a2b3c-aaaaa-disk-system" {
			found = true
			assert.Equal(t, support.HostileText, d.FallbackReason, "JSON holds the annotation exactly")
			assert.Equal(t, support.HostileText, d.CloneType)
		}
	}
	assert.True(t, found, "the disk is reported as a host-assisted copy")

	missing := cli(t, "plan", "-values", "/nonexistent/\x1b[2J\u202e\xff.yaml")
	assert.Equal(t, exitProblem, missing.code)
	support.RequireTerminalSafe(t, "stderr", strings.TrimSuffix(missing.stderr, "\n"))
	assert.Contains(t, missing.stderr, `\x1b[2J\u202e\xff.yaml`)

	// rollcheck lists each values file by its name.
	dir := t.TempDir()
	name := filepath.Join(dir, "evil\x1b]52;c;cm0gLXJm\x07\u202e.yaml")
	require.NoError(t, os.WriteFile(name, []byte("cluster: acme\n"), 0o600))
	roll := cli(t, "rollcheck", "-base", support.RepoRoot(), "-head", support.RepoRoot(), "-values", filepath.Join(dir, "*.yaml"))
	require.NotEqual(t, exitProblem, roll.code, "stderr: %s", roll.stderr)
	support.RequireTerminalSafe(t, "rollcheck", roll.stdout)
	assert.Contains(t, roll.stdout, `evil\x1b]52;c;cm0gLXJm\a\u202e.yaml`)
}

// plan --manifests writes a refusal as YAML comments: escaped, so no refusal
// quoting a hostile name ends a comment and starts data. plan -o yaml, the
// report, holds the name exactly, as -o json does.
func TestPlanManifestsRefusalCommentsAreEscaped(t *testing.T) {
	evil := "evil\x1b[2J\r\nkind: Secret\u202e"
	res := cli(t, "plan", "-values", td("pools", "http.yaml"), "-release", evil, "--manifests")
	require.Equal(t, exitAttn, res.code, res.stderr)
	support.RequireTerminalSafe(t, "plan --manifests", res.stdout)
	for _, line := range strings.Split(strings.TrimSuffix(res.stdout, "\n"), "\n") {
		assert.True(t, strings.HasPrefix(line, "# "), "only comments: %q", line)
	}
	assert.Contains(t, res.stdout, `evil\x1b[2J\r\nkind: Secret\u202e`)

	res = cli(t, "plan", "-values", td("pools", "http.yaml"), "-release", evil, "-o", "yaml")
	require.Equal(t, exitAttn, res.code, res.stderr)
	var back report.PlanReport
	require.NoError(t, sigsyaml.Unmarshal([]byte(res.stdout), &back))
	assert.Equal(t, evil, back.Release, "the YAML report reads back exactly")
}
