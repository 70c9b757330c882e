package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/engine"
	"k8s.io/client-go/tools/clientcmd"
)

// TestMain keeps the tests off any cluster of the machine they run on:
// every verb reads KUBECONFIG and ~/.kube/config as kubectl does, and a test
// names its cluster (a state file, a test API server) or none.
func TestMain(m *testing.M) {
	os.Unsetenv(clientcmd.RecommendedConfigPathEnvVar)
	os.Unsetenv("KUBERNETES_SERVICE_HOST")
	clientcmd.RecommendedHomeFile = filepath.Join(os.TempDir(), "workerimage-tests-no-kubeconfig", "config")
	os.Exit(m.Run())
}

// The defaults the chart's values.yaml declares, read from the chart itself
// rather than from any output of the CLI.
var defaultSchematic, defaultVersion = func() (string, string) {
	d, err := support.PoolDefaults()
	if err != nil {
		panic(err)
	}
	return d.SchematicID, d.Version
}()

// goldenName is the golden of the chart's default schematic at version.
func goldenName(version string) string {
	return support.GoldenName(defaultSchematic, version)
}

func td(parts ...string) string {
	return filepath.Join(append([]string{"testdata"}, parts...)...)
}

// writeTemp writes text to a file of that name in a folder of the test's own.
func writeTemp(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
	return p
}

// stateWith is the cluster-state fixture testdata/state/<base>.yaml with
// more documents after it, so a test writes down only what it adds.
func stateWith(t *testing.T, base string, docs ...string) string {
	t.Helper()
	text, err := os.ReadFile(td("state", base+".yaml"))
	require.NoError(t, err)
	return writeTemp(t, base+"-with.yaml", string(text)+"\n"+strings.Join(docs, ""))
}

// result is one run of the command.
type result struct {
	code           int
	stdout, stderr string
}

// cli runs the command as main does, with the real kubeconfig dialer.
func cli(t *testing.T, args ...string) result {
	t.Helper()
	return cliWith(t, dialKubeconfig, args...)
}

// cliWith runs the command with dial standing in for a live cluster: the
// client-provider seam every -kubeconfig path goes through.
func cliWith(t *testing.T, dial func(kubeAccess) (engine.ClientProvider, string, error), args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	a := &app{name: "workerimage", stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, dial: dial, terminal: noTerminal}
	code := a.run(args)
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
}

// noTerminal: the tests' outputs are buffers, never a terminal.
func noTerminal(io.Writer) (int, bool) { return 0, false }

// fakeDial serves a -kubeconfig PATH from the cluster-state file at PATH,
// optionally failing API calls, so the live-cluster paths run on fixtures.
func fakeDial(failWith map[string]error) func(kubeAccess) (engine.ClientProvider, string, error) {
	return func(k kubeAccess) (engine.ClientProvider, string, error) {
		c, err := support.LoadCluster(k.kubeconfig)
		if err != nil {
			return nil, "", err
		}
		c.FailWith = failWith
		return c, "kubeconfig " + k.kubeconfig, nil
	}
}

func decode[T any](t *testing.T, r result) T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &v), "stdout is JSON: %s\nstderr: %s", r.stdout, r.stderr)
	return v
}

// requireProblem asserts the bad-input contract: exit 2, nothing on stdout,
// exactly one line on stderr, naming the problem.
func requireProblem(t *testing.T, r result, fragments ...string) {
	t.Helper()
	assert.Equal(t, exitProblem, r.code, "stderr: %s", r.stderr)
	assert.Empty(t, r.stdout, "nothing is written on bad input")
	assert.Equal(t, 1, strings.Count(r.stderr, "\n"), "one line: %q", r.stderr)
	assert.True(t, strings.HasSuffix(r.stderr, "\n"), "the line ends: %q", r.stderr)
	for _, f := range fragments {
		assert.Contains(t, r.stderr, f)
	}
}

func TestBadInputIsOneLineAndExit2(t *testing.T) {
	pool := td("pools", "http.yaml")
	state := td("state", "golden.yaml")
	cases := []struct {
		name      string
		args      []string
		fragments []string
	}{
		{"no command", nil, []string{"missing command"}},
		{"unknown command", []string{"apply"}, []string{`unknown command "apply"`}},
		{"plan unknown flag", []string{"plan", "-values", pool, "-bogus"}, []string{"-bogus"}},
		{"plan stray argument", []string{"plan", pool, "extra"}, []string{`accepts at most 1 arg(s), received 2`}},
		{"plan missing positional file", []string{"plan", "-values", pool, "extra"}, []string{"values extra: no such file"}},
		{"plan without values", []string{"plan", "-cluster", state}, []string{"no values file: give the pool's values as a file (-f POOL.yaml, or POOL.yaml)"}},
		{"plan stdin twice", []string{"plan", "-f", "-", "-f", "-"}, []string{"values - (standard input) is given twice"}},
		{"plan manifests as json", []string{"plan", pool, "--manifests", "-o", "json"}, []string{"--manifests prints the rendered objects"}},
		{"plan missing values file", []string{"plan", "-values", td("pools", "nope.yaml")}, []string{"nope.yaml", "no such file"}},
		{"plan unparsable values", []string{"plan", "-values", td("pools", "unparsable.yaml")}, []string{"unparsable.yaml"}},
		{"plan missing state file", []string{"plan", "-values", pool, "-cluster", td("state", "nope.yaml")}, []string{"nope.yaml"}},
		{"plan unparsable state file", []string{"plan", "-values", pool, "-cluster", td("pools", "unparsable.yaml")}, []string{"unparsable.yaml"}},
		{"plan bad output", []string{"plan", "-values", pool, "-o", "xml"}, []string{`--output "xml": want text, json, yaml`}},
		{"plan both clusters", []string{"plan", "-values", pool, "-cluster", state, "-kubeconfig", state}, []string{"exclusive"}},
		{"plan missing kubeconfig", []string{"plan", "-values", pool, "-kubeconfig", td("nope.kubeconfig")}, []string{"nope.kubeconfig", "no such file"}},
		{"plan unparsable kubeconfig", []string{"plan", "-values", pool, "-kubeconfig", td("pools", "unparsable.yaml")}, []string{"kubeconfig", "unparsable.yaml"}},
		{"plan missing chart", []string{"plan", "-values", pool, "-chart", td("nochart")}, []string{"nochart"}},
		{"rollcheck without head", []string{"rollcheck", "-base", ".", "-values", pool}, []string{"give the head chart"}},
		{"rollcheck head twice", []string{"rollcheck", ".", "-head", ".", "-values", pool}, []string{"the head chart is given twice"}},
		{"rollcheck head is no chart", []string{"rollcheck", td(), "-cluster", state}, []string{"no pool chart there: give a chart folder (with Chart.yaml), a chart archive (.tgz), or a checkout"}},
		{"rollcheck head is no archive", []string{"rollcheck", pool, "-cluster", state}, []string{"not a chart archive"}},
		{"rollcheck OCI head unreachable", []string{"rollcheck", "oci://127.0.0.1:1/charts/kubernetes-nodes:0.2.0", "-cluster", state}, []string{"chart oci://127.0.0.1:1/charts/kubernetes-nodes:0.2.0: ", "connection refused", "needs --plain-http", "your own CA signed, --ca-file with that CA"}},
		{"rollcheck OCI head names nothing", []string{"rollcheck", "oci://", "-cluster", state}, []string{"chart oci://: not an OCI reference; name a chart in a registry as oci://HOST[:PORT]/PATH/NAME:VERSION"}},
		{"rollcheck OCI half a client pair", []string{"rollcheck", "oci://127.0.0.1:1/charts/kubernetes-nodes:0.2.0", "--cert-file", pool, "-cluster", state}, []string{"--cert-file and --key-file go together"}},
		{"rollcheck glob matches nothing", []string{"rollcheck", "-base", support.RepoRoot(), "-head", support.RepoRoot(), "-values", td("pools", "*.nope")}, []string{"matches no file"}},
		{"rollcheck base is not a checkout", []string{"rollcheck", "-base", td(), "-head", support.RepoRoot(), "-values", pool}, []string{"no pool chart there"}},
		{"rollcheck unparsable values", []string{"rollcheck", "-base", support.RepoRoot(), "-head", support.RepoRoot(), "-values", td("pools", "unparsable.yaml")}, []string{"unparsable.yaml"}},
		{"rollcheck bad output", []string{"rollcheck", "-base", support.RepoRoot(), "-head", support.RepoRoot(), "-values", pool, "-o", "xml"}, []string{`--output "xml"`}},
		{"pins without cluster", []string{"pins"}, []string{"give the cluster: --cluster STATE.yaml, --kubeconfig PATH"}},
		{"pins unknown flag", []string{"pins", "-cluster", state, "-all"}, []string{"-all"}},
		{"pins bad output", []string{"pins", "-cluster", state, "-o", "xml"}, []string{`--output "xml"`}},
		{"pins tree as json", []string{"pins", "-cluster", state, "--tree", "-o", "json"}, []string{"--tree draws the text report"}},
		{"pins unknown golden", []string{"pins", "talos-worker-nope-v1.0.0", "-cluster", state}, []string{`golden "talos-worker-nope-v1.0.0": no DataVolume or PersistentVolumeClaim of that name`}},
		{"catalog bad output", []string{"catalog", "-cluster", state, "-o", "xml"}, []string{`--output "xml"`}},
		{"catalog stray argument", []string{"catalog", "-cluster", state, "extra"}, []string{"unknown command \"extra\""}},
		{"version stray argument", []string{"version", "extra"}, []string{"unknown command \"extra\""}},
		{"pins missing state file", []string{"pins", "-cluster", td("state", "nope.yaml")}, []string{"nope.yaml"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			requireProblem(t, cli(t, c.args...), c.fragments...)
		})
	}
}

func TestHelpIsUsageOnStdout(t *testing.T) {
	for _, args := range [][]string{{"-help"}, {"--help"}, {"-h"}, {"help"}} {
		r := cli(t, args...)
		assert.Equal(t, exitOK, r.code, args)
		assert.Empty(t, r.stderr)
		for _, verb := range []string{"plan", "rollcheck", "pins", "adopt", "rollout", "catalog", "version", "completion"} {
			assert.Contains(t, r.stdout, "\n  "+verb+" ", "%v lists %s", args, verb)
		}
		assert.Contains(t, r.stdout, "\nExit codes:\n  0  ")
	}
	requireProblem(t, cli(t), "workerimage: missing command: plan, rollcheck, pins, adopt, rollout, catalog, version")
	requireProblem(t, cli(t, "plna"), `unknown command "plna"`, "did you mean plan?")
}

// Each verb's help says what it answers, every flag with its default, an
// example and its exit codes; `help VERB`, `VERB -h`, `VERB --help` and the
// earlier `VERB -help` print the same.
func TestEveryVerbHasItsOwnHelp(t *testing.T) {
	flags := map[string][]string{
		"plan":      {"-f, --values", "-n, --namespace", "--release", "--cluster", "--kubeconfig", "--context", "--chart", "-o, --output", "--manifests"},
		"rollcheck": {"--base", "--head", "-f, --values", "--cluster", "--kubeconfig", "--context", "--artifact", "--release", "-n, --namespace", "-o, --output"},
		"pins":      {"-n, --namespace", "--cluster", "--kubeconfig", "--context", "--artifact", "--chart", "-o, --output", "--tree"},
		"adopt":     {"-n, --namespace", "--cluster", "--kubeconfig", "--context", "--artifact", "--chart", "-o, --output"},
		"rollout":   {"-n, --namespace", "--pool", "--exclude", "--strict", "--max-workers", "--max-clones", "--factory-ca", "--flavor", "--behind", "--to-talos", "--to-schematic", "--to-defaults", "--to-builtin", "--to-factory", "--apply", "--wave", "--timeout", "--cluster", "--kubeconfig", "--context", "--artifact", "--chart", "-o, --output"},
		"catalog":   {"-f, --values", "-n, --namespace", "--cluster", "--kubeconfig", "--context", "-o, --output"},
		"version":   {"-o, --output"},
	}
	for verb, want := range flags {
		help := cli(t, "help", verb)
		require.Equal(t, exitOK, help.code, verb)
		assert.Empty(t, help.stderr)
		for _, f := range want {
			assert.Contains(t, help.stdout, " "+f+" ", "%s documents %s", verb, f)
		}
		assert.Contains(t, help.stdout, `(default "text")`, "%s says -o's default", verb)
		assert.Contains(t, help.stdout, "\nUsage:\n  workerimage "+verb)
		assert.Contains(t, help.stdout, "\nExamples:\n  workerimage "+verb)
		assert.Contains(t, help.stdout, "\nExit codes:\n  0  ")
		assert.Contains(t, help.stdout, "\n  2  bad input")
		for _, alt := range [][]string{{verb, "-h"}, {verb, "--help"}, {verb, "-help"}} {
			r := cli(t, alt...)
			assert.Equal(t, exitOK, r.code)
			assert.Equal(t, help.stdout, r.stdout, alt)
		}
	}
	assert.Contains(t, cli(t, "help", "plan").stdout, "\n  1  the chart refuses the pool")
	assert.Contains(t, cli(t, "help", "pins").stdout, "\n  1  GOLDEN is not created yet", "pins exits 1 only for a golden on its way")

	r := cli(t, "help", "plna")
	assert.Equal(t, exitProblem, r.code)
	assert.Equal(t, "workerimage help: unknown command \"plna\" (want plan, rollcheck, pins, adopt, rollout, catalog, version, completion); did you mean plan?\n", r.stderr)
}
