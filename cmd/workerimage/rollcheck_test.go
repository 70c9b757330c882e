package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// The repository's own baseline corners rendered as the default release (01 to
// 39 of the grid of Cozystack's values), with their committed renders (an
// independent record of each template's name).
var baselineGlob = filepath.Join(support.RepoRoot(), "tests", "render", "testdata", "golden", "pool-cozystack-[0-3]*.values.yaml")

func baselineFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(baselineGlob)
	require.NoError(t, err)
	require.NotEmpty(t, files)
	sort.Strings(files)
	return files
}

// committedTemplate reads the KubevirtMachineTemplate of a corner's committed render.
func committedTemplate(t *testing.T, valuesFile string) render.Doc {
	t.Helper()
	raw, err := os.ReadFile(strings.TrimSuffix(valuesFile, ".values.yaml") + ".golden.yaml")
	require.NoError(t, err)
	for _, text := range render.SplitDocuments(string(raw)) {
		objs, err := render.ParseObjects([]byte(text))
		require.NoError(t, err)
		if len(objs) == 1 && objs[0].GetKind() == "KubevirtMachineTemplate" {
			return render.Doc{Text: text, Object: objs[0].Object}
		}
	}
	t.Fatalf("no KubevirtMachineTemplate in the committed render of %s", valuesFile)
	return render.Doc{}
}

// chartCopy copies this checkout's pool chart and library charts into a temp
// "checkout" and applies edit to one of its files (a path from the checkout's root).
func chartCopy(t *testing.T, file string, edit func(string) string) string {
	t.Helper()
	root := t.TempDir()
	// The chart and the library chart its charts/ symlink points at, laid out
	// as in a checkout so the relative link resolves inside the copy.
	for _, dir := range []string{render.PoolChart, "packages/library"} {
		src := filepath.Join(support.RepoRoot(), dir)
		dst := filepath.Join(root, dir)
		require.NoError(t, filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(src, path)
			if d.Type()&fs.ModeSymlink != 0 {
				target, err := os.Readlink(path)
				if err != nil {
					return err
				}
				return os.Symlink(target, filepath.Join(dst, rel))
			}
			if d.IsDir() {
				return os.MkdirAll(filepath.Join(dst, rel), 0o755)
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dst, rel), raw, 0o644)
		}))
	}
	if edit != nil {
		path := filepath.Join(root, file)
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		edited := edit(string(raw))
		require.NotEqual(t, string(raw), edited, "the edit changes %s", file)
		require.NoError(t, os.WriteFile(path, []byte(edited), 0o644))
	}
	return root
}

func rollcheckArgs(base, head, glob string, extra ...string) []string {
	return append([]string{"rollcheck", "-base", base, "-head", head, "-values", glob, "-release", testRelease, "-namespace", testNamespace}, extra...)
}

func TestRollcheckBaselineAgainstItselfRollsNothing(t *testing.T) {
	root := support.RepoRoot()
	files := baselineFiles(t)
	res := cli(t, rollcheckArgs(root, root, baselineGlob, "-o", "json")...)
	require.Equal(t, exitOK, res.code, "stderr: %s", res.stderr)
	r := decode[report.RollReport](t, res)
	require.Len(t, r.Pools, len(files))
	assert.Equal(t, len(files), r.Summary.NoRoll)
	assert.Zero(t, r.Summary.Rolls)
	for i, p := range r.Pools {
		assert.Equal(t, files[i], p.Values)
		assert.Equal(t, "no roll", p.Status, p.Values)
		assert.False(t, p.Rolls)
		want := committedTemplate(t, p.Values).Name()
		assert.Equal(t, want, p.Base.MachineTemplate, "%s: the committed render's template", p.Values)
		assert.Equal(t, want, p.Head.MachineTemplate)
		assert.Empty(t, p.Diff)
		assert.Empty(t, p.OtherChanges)
	}
}

func TestRollcheckDetectsAOneByteChangeInTheTemplateBody(t *testing.T) {
	// "disk-system" -> "disk-systen" in the worker disk's name: one byte.
	head := chartCopy(t, "packages/library/kubernetes-nodes-lib/templates/_machinetemplate.tpl", func(s string) string {
		return strings.Replace(s, "name: disk-system", "name: disk-systen", 1)
	})
	root := support.RepoRoot()
	files := baselineFiles(t)
	res := cli(t, rollcheckArgs(root, head, baselineGlob, "-o", "json")...)
	require.Equal(t, exitAttn, res.code, "stderr: %s", res.stderr)
	r := decode[report.RollReport](t, res)
	require.Len(t, r.Pools, len(files))
	assert.Equal(t, len(files), r.Summary.Rolls, "every pool rolls")
	for _, p := range r.Pools {
		assert.Equal(t, "rolls", p.Status, p.Values)
		assert.True(t, p.Rolls)
		kmt := committedTemplate(t, p.Values)
		assert.Equal(t, kmt.Name(), p.Base.MachineTemplate)
		assert.NotEqual(t, kmt.Name(), p.Head.MachineTemplate)
		// The first changed line of the committed body, and its edited twin.
		_, body, ok := strings.Cut(kmt.Text, "\nspec:\n")
		require.True(t, ok)
		lines := strings.Split(body, "\n")
		at := -1
		for i, l := range lines {
			if strings.HasSuffix(l, "name: disk-system") {
				at = i
				break
			}
		}
		require.GreaterOrEqual(t, at, 0)
		assert.Equal(t, at+1, p.FirstDiffLine, p.Values)
		assert.Equal(t, []string{"-" + lines[at], "+" + strings.Replace(lines[at], "disk-system", "disk-systen", 1)}, p.Diff, p.Values)
		assert.Empty(t, p.OtherChanges, "the MachineDeployment's reference to the new name is the roll, not another change")
	}

	text := cli(t, rollcheckArgs(root, head, baselineGlob)...)
	assert.Equal(t, exitAttn, text.code)
	assert.Contains(t, text.stdout, "template body, first change at line")
	assert.Contains(t, text.stdout, "      +")
	behind := ""
	if r.Summary.Behind > 0 {
		behind = "; " + strconv.Itoa(r.Summary.Behind) + " behind what the head chart gives a new pool (the upgrade moves none of them; workerimage rollout does)"
	}
	assert.True(t, strings.HasSuffix(text.stdout, "\n"+strconv.Itoa(len(files))+" pools: "+strconv.Itoa(len(files))+" roll, 0 refused at head, 0 refused at base only, 0 refused at both (not counted against the upgrade), 0 no roll"+behind+"\n"), text.stdout)
}

func TestRollcheckChangeOutsideTheBodyDoesNotRoll(t *testing.T) {
	// A change to the MachineHealthCheck's text, whose name is stable.
	head := chartCopy(t, render.PoolChart+"/templates/machinehealthcheck.yaml", func(s string) string {
		return strings.Replace(s, "status: Unknown", "status: \"Unknown\"", 1)
	})
	res := cli(t, rollcheckArgs(support.RepoRoot(), head, td("pools", "http.yaml"), "-o", "json")...)
	require.Equal(t, exitOK, res.code, "stderr: %s", res.stderr)
	r := decode[report.RollReport](t, res)
	require.Len(t, r.Pools, 1)
	p := r.Pools[0]
	assert.Equal(t, "no roll", p.Status)
	assert.Equal(t, p.Base.MachineTemplate, p.Head.MachineTemplate)
	assert.Equal(t, []string{"MachineHealthCheck/" + testPool + " (changed)"}, p.OtherChanges)
}

func TestRollcheckRefusals(t *testing.T) {
	// A head that refuses every pool of cluster acme.
	refusing := chartCopy(t, render.PoolChart+"/templates/machinehealthcheck.yaml", func(s string) string {
		return `{{- if eq .Values.cluster "acme" }}{{ fail "acme is refused at head" }}{{ end }}` + "\n" + s
	})
	root := support.RepoRoot()
	pool := td("pools", "http.yaml")

	res := cli(t, rollcheckArgs(root, refusing, pool, "-o", "json")...)
	assert.Equal(t, exitAttn, res.code, "a pool refused at head fails the upgrade: stderr %s", res.stderr)
	r := decode[report.RollReport](t, res)
	assert.Equal(t, "refused at head", r.Pools[0].Status)
	assert.Equal(t, "acme is refused at head", r.Pools[0].Head.Refusal)
	assert.Equal(t, 1, r.Summary.RefusedAtHead)

	res = cli(t, rollcheckArgs(refusing, root, pool, "-o", "json")...)
	assert.Equal(t, exitOK, res.code, "head fixes the pool: nothing rolls")
	assert.Equal(t, "refused at base", decode[report.RollReport](t, res).Pools[0].Status)

	res = cli(t, rollcheckArgs(refusing, refusing, pool)...)
	assert.Equal(t, exitOK, res.code, "refused at both sides: refused today too, which the upgrade does not change")
	assert.Contains(t, res.stdout, "    refused at base and head (refused today too, so the upgrade changes nothing for it): acme is refused at head\n", "one line for the same refusal")
	assert.True(t, strings.HasSuffix(res.stdout, "\n1 pool: 0 roll, 0 refused at head, 0 refused at base only, 1 refused at both (not counted against the upgrade), 0 no roll\n"), res.stdout)

	res = cli(t, rollcheckArgs(root, refusing, pool)...)
	assert.Contains(t, res.stdout, "    refused at head: acme is refused at head\n")
	assert.NotContains(t, res.stdout, "refused at base:")
	assert.True(t, strings.HasSuffix(res.stdout, "\n1 pool: 0 roll, 1 refused at head, 0 refused at base only, 0 refused at both (not counted against the upgrade), 0 no roll\n"), res.stdout)
}

func TestRollcheckAgainstAClusterAndItsErrors(t *testing.T) {
	root := support.RepoRoot()
	// A clone pool against a state with its golden: renders, no roll.
	res := cli(t, rollcheckArgs(root, root, td("pools", "builtin.yaml"), "-cluster", td("state", "golden.yaml"), "-o", "json")...)
	require.Equal(t, exitOK, res.code, res.stderr)
	r := decode[report.RollReport](t, res)
	want := harnessRender(t, td("pools", "builtin.yaml"), td("state", "golden.yaml"))
	kmt, err := want.One("KubevirtMachineTemplate")
	require.NoError(t, err)
	assert.Equal(t, kmt.Name(), r.Pools[0].Head.MachineTemplate)

	// Without its golden, both sides refuse it: reported, not failing.
	res = cli(t, rollcheckArgs(root, root, td("pools", "builtin.yaml"), "-cluster", td("state", "cluster.yaml"), "-o", "json")...)
	assert.Equal(t, exitOK, res.code)
	assert.Equal(t, "refused at both", decode[report.RollReport](t, res).Pools[0].Status)

	// A cluster that answers with errors is a problem, not a refusal.
	unavailable := apierrors.NewServiceUnavailable("etcd is down")
	res = cliWith(t, fakeDial(map[string]error{"*": unavailable}), rollcheckArgs(root, root, td("pools", "builtin.yaml"), "-kubeconfig", td("state", "golden.yaml"))...)
	requireProblem(t, res, "etcd is down")
}
