package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	charts "github.com/cozystack/golden-worker-images"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// The habits an operator brings from kubectl and Helm: their flag spellings,
// -f layered and "-", a positional values file, -o yaml, completion, version,
// and the kubectl plugin's name.

// runWith runs the command as main does, with standard input and a terminal
// check of the test's own.
func runWith(t *testing.T, name, stdin string, terminal func(io.Writer) (int, bool), args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	a := &app{name: name, stdin: strings.NewReader(stdin), stdout: &out, stderr: &errOut, dial: fakeDial(nil), terminal: terminal}
	code := a.run(args)
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
}

// The spellings of earlier versions (one dash) and kubectl's (two dashes,
// -n, =) give the same answer.
func TestFlagsAsKubectlAndHelmSpellThem(t *testing.T) {
	pool, state := td("pools", "builtin.yaml"), td("state", "golden.yaml")
	want := cli(t, "plan", "-values", pool, "-cluster", state, "-namespace", "tenant-x", "-release", "kubernetes-nodes-acme-builtin", "-o", "json")
	require.Equal(t, exitOK, want.code, want.stderr)
	for _, args := range [][]string{
		{"plan", "--values", pool, "--cluster", state, "--namespace", "tenant-x", "--release", "kubernetes-nodes-acme-builtin", "--output", "json"},
		{"plan", "-f", pool, "--cluster=" + state, "-n", "tenant-x", "--release=kubernetes-nodes-acme-builtin", "-o", "json"},
		{"plan", pool, "-cluster=" + state, "-ntenant-x", "-ojson"},
		{"plan", "-o", "json", pool, "-n", "tenant-x", "--cluster", state},
	} {
		got := cli(t, args...)
		require.Equal(t, exitOK, got.code, "%v: %s", args, got.stderr)
		assert.Equal(t, want.stdout, got.stdout, "%v", args)
	}
	assert.Equal(t, "tenant-x", decode[report.PlanReport](t, want).Namespace)

	// A value after "--" and the one-letter flags are left alone.
	root := (&app{name: "workerimage"}).root()
	assert.Equal(t,
		[]string{"plan", "--values", "a.yaml", "-f", "-", "-n", "ns", "--kubeconfig=k", "-o", "json", "--", "-values"},
		normalizeArgs(root, []string{"plan", "-values", "a.yaml", "-f", "-", "-n", "ns", "-kubeconfig=k", "-o", "json", "--", "-values"}))
	assert.Equal(t, []string{"pins", "-bogus", "--tree", "--help"}, normalizeArgs(root, []string{"pins", "-bogus", "-tree", "-help"}))
}

// -f files and a positional file layer as Helm layers them (compared with
// Helm's own merge in internal/report); "-" reads standard input; the pool
// is named by the first file.
func TestValuesLayeredAndFromStandardInput(t *testing.T) {
	pool := writeTemp(t, "edge.yaml", "cluster: acme\ndiskSize: 20Gi\nminReplicas: 1\n")
	over := writeTemp(t, "override.yaml", "diskSize: 30Gi\n")
	r := cli(t, "plan", pool, "-f", over, "-o", "json")
	require.Equal(t, exitOK, r.code, r.stderr)
	layered := decode[report.PlanReport](t, r)
	assert.Equal(t, "kubernetes-nodes-acme-edge", layered.Release, "named by the first file")

	manifest := cli(t, "plan", pool, "-f", over, "--manifests")
	assert.Contains(t, manifest.stdout, `storage: "30Gi"`, "the later file wins")
	reversed := cli(t, "plan", "-f", over, "-f", pool, "--manifests", "--release", "kubernetes-nodes-acme-edge")
	assert.Contains(t, reversed.stdout, `storage: "20Gi"`)

	fromStdin := runWith(t, "workerimage", "cluster: acme\ndiskSize: 30Gi\nminReplicas: 1\n", noTerminal, "plan", "-f", "-", "--release", "kubernetes-nodes-acme-edge", "--manifests")
	require.Equal(t, exitOK, fromStdin.code, fromStdin.stderr)
	assert.Equal(t, manifest.stdout, fromStdin.stdout, "the same values from standard input render the same objects")

	hint := runWith(t, "workerimage", "cluster: acme\n", noTerminal, "plan", "-", "-o", "json")
	assert.Contains(t, decode[report.PlanReport](t, hint).ReleaseHint, "the values came from standard input, which has no file name to name the pool by; name it with --release kubernetes-nodes-acme-<pool>")
}

// -o yaml is the same report as -o json on every verb.
func TestYAMLIsTheReportOnEveryVerb(t *testing.T) {
	root := support.RepoRoot()
	for _, args := range [][]string{
		{"plan", "-f", td("pools", "builtin.yaml"), "--cluster", td("state", "golden.yaml")},
		{"rollcheck", "--base", root, "--head", root, "-f", td("pools", "http.yaml")},
		{"rollcheck", filepath.Join(root, "packages", "apps", "kubernetes-nodes"), "--cluster", deployedFixture},
		{"pins", "--cluster", td("pins", "cluster.yaml")},
		{"adopt", "--cluster", td("adopt", "fleet.yaml")},
		{"catalog", "--cluster", td("state", "golden.yaml")},
		{"version"},
	} {
		j := cli(t, append(args, "-o", "json")...)
		y := cli(t, append(args, "-o", "yaml")...)
		require.Equal(t, j.code, y.code, "%v: %s", args, y.stderr)
		require.NotEqual(t, exitProblem, j.code, "%v: %s", args, j.stderr)
		var fromJSON, fromYAML any
		require.NoError(t, yaml.Unmarshal([]byte(j.stdout), &fromJSON), args)
		require.NoError(t, yaml.Unmarshal([]byte(y.stdout), &fromYAML), args)
		assert.Equal(t, fromJSON, fromYAML, "%v", args)
		assert.False(t, strings.HasPrefix(strings.TrimSpace(y.stdout), "{"), "%v -o yaml is block YAML", args)
	}
}

// Shell completion scripts are generated for bash, zsh and fish, and the
// flags' values complete.
func TestCompletionScriptsAreGenerated(t *testing.T) {
	for shell, marks := range map[string][]string{
		"bash": {"# bash completion V2 for workerimage", "__start_workerimage", "complete -o default -F __start_workerimage workerimage"},
		"zsh":  {"#compdef workerimage", "compdef _workerimage workerimage"},
		"fish": {"# fish completion for workerimage", "complete -c workerimage"},
	} {
		r := cli(t, "completion", shell)
		require.Equal(t, exitOK, r.code, "%s: %s", shell, r.stderr)
		for _, m := range marks {
			assert.Contains(t, r.stdout, m, shell)
		}
	}
	r := cli(t, "__complete", "plan", "-o", "")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.True(t, strings.HasPrefix(r.stdout, "text\njson\nyaml\n"), r.stdout)
	r = cli(t, "__complete", "pl")
	assert.Contains(t, r.stdout, "plan\t")
	if bash, err := exec.LookPath("bash"); err == nil {
		script := cli(t, "completion", "bash").stdout
		out, err := exec.Command(bash, "-n", "-c", script).CombinedOutput()
		assert.NoError(t, err, "bash reads the script: %s", out)
	}
}

// version names the binary's build and every chart it carries, each with the
// name and version of its Chart.yaml.
func TestVersionNamesTheBinaryAndItsCharts(t *testing.T) {
	r := cli(t, "version", "-o", "json")
	require.Equal(t, exitOK, r.code, r.stderr)
	v := decode[report.VersionReport](t, r)
	want, err := report.EmbeddedCharts(charts.FS)
	require.NoError(t, err)
	assert.Equal(t, want, v.Charts)
	var paths []string
	for _, c := range v.Charts {
		paths = append(paths, c.Path)
		raw, err := os.ReadFile(support.Path(c.Path, "Chart.yaml"))
		require.NoError(t, err)
		assert.Contains(t, string(raw), "\nversion: "+c.Version+"\n", c.Path)
		assert.Contains(t, string(raw), "\nname: "+c.Name+"\n", c.Path)
	}
	assert.Equal(t, []string{"packages/apps/kubernetes-nodes", "packages/core/platform", "packages/library/kubernetes-nodes-lib", "packages/library/worker-image-lib", "packages/system/kubernetes-worker-image"}, paths)
	text := cli(t, "version").stdout
	assert.Contains(t, text, "\nchart  kubernetes-nodes         0.2.0  packages/apps/kubernetes-nodes\n")

	// What `go install module@version` and a checkout's build stamp.
	installed := func() (*debug.BuildInfo, bool) {
		return &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/cozystack/golden-worker-images", Version: "v0.3.0"}}, true
	}
	assert.Equal(t, report.BinaryVersion{Module: "github.com/cozystack/golden-worker-images", Version: "v0.3.0", GoVersion: "go1.26.8"}, report.BinaryVersionOf(installed))
	checkout := func() (*debug.BuildInfo, bool) {
		return &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/cozystack/golden-worker-images", Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "5f31374abc"}, {Key: "vcs.time", Value: "2026-12-01T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}, true
	}
	assert.Equal(t, report.BinaryVersion{Module: "github.com/cozystack/golden-worker-images", Version: "(devel)", Revision: "5f31374abc", Time: "2026-12-01T10:00:00Z", Modified: true, GoVersion: "go1.26.8"}, report.BinaryVersionOf(checkout))
}

// Installed as kubectl-workerimage, kubectl runs it as `kubectl
// workerimage`, and it names itself so in help, examples and problems.
func TestKubectlPluginNamesItselfAsKubectlShowsIt(t *testing.T) {
	name := commandName("/usr/local/bin/kubectl-workerimage")
	assert.Equal(t, "kubectl workerimage", name)
	assert.Equal(t, "workerimage", commandName("bin/workerimage"))
	assert.Equal(t, "kubectl worker-image", commandName("kubectl-worker_image"), "kubectl reads _ in a plugin's name as -")

	help := runWith(t, name, "", noTerminal, "help", "plan")
	require.Equal(t, exitOK, help.code)
	assert.Contains(t, help.stdout, "\nUsage:\n  kubectl workerimage plan [POOL.yaml]")
	assert.Contains(t, help.stdout, "\nExamples:\n  kubectl workerimage plan ")
	assert.NotContains(t, help.stdout, "  workerimage plan")
	root := runWith(t, name, "", noTerminal, "--help")
	assert.Contains(t, root.stdout, "Use \"kubectl workerimage [command] --help\"")
	problem := runWith(t, name, "", noTerminal, "plan", "-n", "tenant-acme")
	assert.Equal(t, "kubectl workerimage plan: no values file: give the pool's values as a file (-f POOL.yaml, or POOL.yaml), or - for standard input\n", problem.stderr)
}

// Long reads of a cluster show what they do on stderr, one line over the
// last, and clear it: on a terminal only, never on a pipe; stdout is the
// same either way.
func TestProgressOnATerminalOnly(t *testing.T) {
	state := td("adopt", "fleet.yaml")
	var stderrIsTerminal io.Writer
	fakeTerminal := func(w io.Writer) (int, bool) { return 60, w == stderrIsTerminal }
	var out, errOut bytes.Buffer
	stderrIsTerminal = &errOut
	a := &app{name: "workerimage", stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, dial: fakeDial(nil), terminal: fakeTerminal}
	require.Equal(t, exitOK, a.run([]string{"adopt", "--cluster", state}))
	progress := errOut.String()
	for _, step := range []string{"reading the pools (HelmReleases and Helm release records)", "reading the goldens and worker disks", "rendering pool 1 of ", "asking the catalog chart who uses ", "rendering HTTP pool 1 of "} {
		assert.Contains(t, progress, "\r\x1b[Kworkerimage: "+step[:min(len(step), 40)], "progress says %q", step)
	}
	for _, line := range strings.Split(progress, "\r\x1b[K") {
		assert.LessOrEqual(t, len([]rune(line)), 59, "a line fits the terminal: %q", line)
	}
	assert.True(t, strings.HasSuffix(progress, "\r\x1b[K"), "the last line is cleared")
	assert.NotContains(t, progress, "\n", "never a line of its own")

	piped := cli(t, "adopt", "--cluster", state)
	assert.Empty(t, piped.stderr, "nothing on a pipe")
	assert.Equal(t, piped.stdout, out.String(), "the report is the same")

	// A problem after progress is still one line, after the cleared progress.
	errOut.Reset()
	out.Reset()
	a = &app{name: "workerimage", stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, dial: fakeDial(nil), terminal: fakeTerminal}
	require.Equal(t, exitProblem, a.run([]string{"pins", "nope", "--cluster", state}))
	_, last, _ := strings.Cut(errOut.String()[strings.LastIndex(errOut.String(), "\r\x1b[K"):], "\r\x1b[K")
	assert.Equal(t, 1, strings.Count(last, "\n"), last)
	assert.True(t, strings.HasPrefix(last, "workerimage pins: golden \"nope\""), last)
}

// On a terminal, a long refusal wraps under its column; on a pipe it stays
// one line, and JSON is never wrapped.
func TestLongRefusalsWrapOnATerminalOnly(t *testing.T) {
	args := []string{"plan", "-f", td("pools", "builtin-local.yaml"), "--cluster", td("state", "golden.yaml")}
	terminal := func(w io.Writer) (int, bool) { return 100, true }
	wrapped := runWith(t, "workerimage", "", terminal, args...)
	piped := runWith(t, "workerimage", "", noTerminal, args...)
	require.Equal(t, exitAttn, wrapped.code, wrapped.stderr)
	var result string
	for _, l := range strings.Split(piped.stdout, "\n") {
		if strings.HasPrefix(l, "result ") {
			result = l
		}
	}
	require.Greater(t, len(result), 300, "the refusal is long: %s", result)
	wraps := 0
	for _, l := range strings.Split(wrapped.stdout, "\n") {
		if strings.HasPrefix(l, "                 ") {
			wraps++
		}
		if len([]rune(l)) <= 100 {
			continue
		}
		// Over the width only where one word is wider than the room.
		long := false
		for _, w := range strings.Fields(l) {
			long = long || len(w) > 100-len("fallback checks  ")-20
		}
		assert.True(t, long, "%q", l)
	}
	assert.Greater(t, wraps, 5, "the long lines wrap under their column")
	assert.Equal(t, strings.Fields(piped.stdout), strings.Fields(wrapped.stdout), "the same words")
	assert.Equal(t, runWith(t, "workerimage", "", noTerminal, append(args, "-o", "json")...).stdout, runWith(t, "workerimage", "", terminal, append(args, "-o", "json")...).stdout)
}
