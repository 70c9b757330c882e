package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What a newcomer meets first: a values file that is not a map, a release
// name taken from a file name, a schema refusal, a preview without a cluster.

// A values file that is a list, a scalar, empty or not YAML is one line naming
// the file once and what a values file must be; a map renders.
func TestValuesFilesThatAreNotAMapAreOneLine(t *testing.T) {
	for _, tc := range []struct{ name, text, says string }{
		{"a list", "- cluster: acme\n", "is a list, not a map"},
		{"a string", "cluster acme\n", "is a single string value, not a map"},
		{"empty", "", "is empty"},
		{"only comments", "# cluster: acme\n", "is empty"},
		{"not YAML", "cluster: [acme\n", "is not YAML (line 1: did not find expected"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := writeTemp(t, "workers.yaml", tc.text)
			r := cli(t, "plan", "-values", file)
			requireProblem(t, r, "workerimage plan: values "+file+" "+tc.says, render.ValuesFileIs)
			assert.Equal(t, 1, strings.Count(r.stderr, file), "the file is named once: %s", r.stderr)
		})
	}
	r := cli(t, "plan", "-values", writeTemp(t, "workers.yaml", "cluster: acme\n"))
	assert.Equal(t, exitOK, r.code, r.stderr)
}

// A release name taken from a file name that cannot name a pool says so and
// shows -release; a file name that can, or -release, gets no such line.
func TestReleaseNameFromTheFileNameIsExplained(t *testing.T) {
	r := cli(t, "plan", "-values", writeTemp(t, "my_pool.yaml", "cluster: acme\n"))
	assert.Equal(t, exitAttn, r.code)
	assert.Contains(t, r.stdout, "\nrelease  the release name was taken from the values file's name \"my_pool.yaml\" (kubernetes-nodes-<cluster>-<file name>); name the pool with --release kubernetes-nodes-acme-<pool>")
	rep := decode[report.PlanReport](t, cli(t, "plan", "-values", writeTemp(t, "my_pool.yaml", "cluster: acme\n"), "-o", "json"))
	assert.Contains(t, rep.ReleaseHint, "--release kubernetes-nodes-acme-<pool>")

	r = cli(t, "plan", "-values", writeTemp(t, "my_pool.yaml", "cluster: acme\n"), "-release", "kubernetes-nodes-acme-mypool")
	assert.Equal(t, exitOK, r.code, r.stdout)
	assert.NotContains(t, r.stdout, "\nrelease ")
	r = cli(t, "plan", "-values", writeTemp(t, "my-pool.yaml", "cluster: acme\n"))
	assert.Equal(t, exitOK, r.code, r.stdout)
	assert.NotContains(t, r.stdout, "\nrelease ")
}

// When values.schema.json refuses, plan leads with what the chart's own check
// says of the same values, which names the fix, and gives the schema's rule
// after. A rule the schema leaves to the chart (a pattern: the form's x-form,
// issue 60) is the chart's words alone, with no schema line. An unknown key
// gets the known key nearest to it.
func TestRefusalsLeadWithTheChartsWords(t *testing.T) {
	values := writeTemp(t, "workers.yaml", "cluster: acme\ndiskSize: true\n")
	r := cli(t, "plan", "-values", values)
	assert.Equal(t, exitAttn, r.code)
	assert.Contains(t, r.stdout, "\nresult       refused: pool kubernetes-acme-workers: diskSize true (a boolean) is not a plain value: it is not a string; it is written into an object as it is, so set diskSize to a quantity such as 20Gi (at most 32 characters, below 8Ei, no finer than 1n)\n")
	assert.Contains(t, r.stdout, "\nschema says  values don't meet the specifications of the schema(s)")
	assert.Contains(t, r.stdout, "- at '/diskSize': got boolean, want string")
	assert.Less(t, strings.Index(r.stdout, "\nresult "), strings.Index(r.stdout, "\nschema says "), "the chart's words first")

	rep := decode[report.PlanReport](t, cli(t, "plan", "-values", values, "-o", "json"))
	assert.Contains(t, rep.SchemaRefusal, "- at '/diskSize': got boolean, want integer")
	assert.Contains(t, rep.Refusal, "such as 20Gi")
	assert.False(t, rep.SchemaOnly)
	assert.Empty(t, rep.Suggestions, "no unknown key")

	pattern := writeTemp(t, "workers.yaml", "cluster: acme\ndiskSize: 20GB\n")
	r = cli(t, "plan", "-values", pattern)
	assert.Equal(t, exitAttn, r.code)
	assert.Contains(t, r.stdout, "refused: pool kubernetes-acme-workers: diskSize \"20GB\" is not a plain value: it is not a Kubernetes quantity; it is written into an object as it is, so set diskSize to a quantity such as 20Gi (at most 32 characters, below 8Ei, no finer than 1n)\n")
	assert.NotContains(t, r.stdout, "\nschema says ")
	assert.Empty(t, decode[report.PlanReport](t, cli(t, "plan", "-values", pattern, "-o", "json")).SchemaRefusal)

	typoFile := writeTemp(t, "workers.yaml", "cluster: acme\nosimage: {}\ntalos:\n  schematicId: abc\n")
	typo := decode[report.PlanReport](t, cli(t, "plan", "-values", typoFile, "-o", "json"))
	assert.Contains(t, typo.SchemaRefusal, "additional properties 'osimage' not allowed")
	assert.Contains(t, typo.Refusal, `the values have the key "osimage", which the chart does not take`)
	assert.Equal(t, []report.KeySuggestion{{Path: "osimage", Key: "osimage", Nearest: "osImage"}, {Path: "talos.schematicId", Key: "schematicId", Nearest: "schematicID"}}, typo.Suggestions)
	text := cli(t, "plan", "-values", typoFile)
	assert.Contains(t, text.stdout, "\ndid you mean  osImage instead of osimage?\n")
	assert.Contains(t, text.stdout, "\ndid you mean  talos.schematicID instead of talos.schematicId?\n")

	// The neighbour: a quantity renders, and says nothing of a schema.
	ok := decode[report.PlanReport](t, cli(t, "plan", "-values", writeTemp(t, "workers.yaml", "cluster: acme\ndiskSize: 20Gi\n"), "-o", "json"))
	assert.Equal(t, "renders", ok.Result)
	assert.Empty(t, ok.SchemaRefusal)
	assert.Empty(t, ok.Suggestions)
}

// A chart whose schema refuses what its templates accept: plan says only the
// schema refuses.
func TestSchemaOnlyRefusalIsSaid(t *testing.T) {
	dir := t.TempDir()
	cp := exec.Command("cp", "-R", support.Path("packages"), dir)
	out, err := cp.CombinedOutput()
	require.NoError(t, err, "%s", out)
	schemaPath := filepath.Join(dir, "packages", "apps", "kubernetes-nodes", "values.schema.json")
	raw, err := os.ReadFile(schemaPath)
	require.NoError(t, err)
	// A schema that also demands (for Helm, beside its x-form) a maximum of 1
	// worker, which the templates allow.
	stricter := strings.Replace(string(raw), `"maxReplicas": {
      "type": "integer",`, `"maxReplicas": {
      "type": "integer",
      "maximum": 1,`, 1)
	require.NotEqual(t, string(raw), stricter, "the schema declares maxReplicas")
	require.NoError(t, os.WriteFile(schemaPath, []byte(stricter), 0o600))
	chartDir := filepath.Join(dir, "packages", "apps", "kubernetes-nodes")

	r := cli(t, "plan", "-values", writeTemp(t, "workers.yaml", "cluster: acme\nmaxReplicas: 3\n"), "-chart", chartDir)
	assert.Equal(t, exitAttn, r.code)
	assert.Contains(t, r.stdout, "\nchart says  nothing: only values.schema.json refuses these values, the chart's own checks accept them\n")
	r = cli(t, "plan", "-values", writeTemp(t, "workers.yaml", "cluster: acme\nmaxReplicas: 1\n"), "-chart", chartDir)
	assert.Equal(t, exitOK, r.code, r.stdout)
}

// A preview renders without reading a cluster; its result line says which
// checks did not run. Against a cluster the same pool's line is plain.
func TestPreviewResultSaysWhatDidNotRun(t *testing.T) {
	r := cli(t, planArgs("builtin", "")...)
	assert.Equal(t, exitOK, r.code)
	assert.Contains(t, r.stdout, "\nresult            renders in a preview: no cluster was read, so the golden, class, clone and instancetype checks did not run; give --cluster or --kubeconfig to run them\n")
	assert.True(t, decode[report.PlanReport](t, cli(t, planArgs("builtin", "", "-o", "json")...)).Preview)

	r = cli(t, planArgs("builtin", "golden")...)
	assert.Equal(t, exitOK, r.code)
	assert.Contains(t, r.stdout, "\nresult            renders\n")
	assert.False(t, decode[report.PlanReport](t, cli(t, planArgs("builtin", "golden", "-o", "json")...)).Preview)
}
