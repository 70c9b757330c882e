// Package release checks what a release claims: every chart carries the
// version CHANGELOG.md names last, every dependency pin follows it, the
// previous release's archives are kept in releases/, and a release that says it
// rolls nothing rolls nothing against them, by `workerimage rollcheck`.
package release

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"
	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"sigs.k8s.io/yaml"
)

// charts are the chart folders a release versions: the Makefile's CHARTS.
var charts = support.ReleasedCharts

// rollsNothing is the claim the check holds a release to, word for word.
const rollsNothing = "rolls nothing."

// entry is one release of CHANGELOG.md (support.ReleaseEntry).
type entry = support.ReleaseEntry

// parseChangelog is support.ParseChangelog, held to its refusals below.
var parseChangelog = support.ParseChangelog

func changelog(t *testing.T) []entry {
	t.Helper()
	releases, err := support.Changelog()
	require.NoError(t, err)
	return releases
}

// The parser refuses what would make the check vacuous or wrong.
func TestChangelogParser(t *testing.T) {
	good := "# Changelog\n\n## 0.2.0\n\nRunning pools: rolls nothing.\n\n## 0.1.0\n\nRunning pools: first.\n"
	rel, err := parseChangelog(good)
	require.NoError(t, err)
	require.Len(t, rel, 2)
	assert.Equal(t, "0.2.0", rel[0].Version.String())
	assert.Equal(t, rollsNothing, rel[0].Pools)
	for text, want := range map[string]string{
		"# Changelog\n": "lists no release",
		"## v0.2.0\n\nRunning pools: rolls nothing.\n":                               `release "v0.2.0" is not a semantic version`,
		"## 0.2\n\nRunning pools: rolls nothing.\n":                                  `release "0.2" is not a semantic version`,
		"## 0.2.0\n\n- something\n":                                                  "release 0.2.0 has no \"Running pools:\" line",
		"## 0.2.0\n\n## 0.1.0\n\nRunning pools: first.\n":                            "release 0.2.0 has no \"Running pools:\" line",
		"## 0.1.0\n\nRunning pools: a.\n\n## 0.2.0\n\nRunning pools: b.\n":           "release 0.2.0 is listed below 0.1.0",
		"## 0.2.0\n\nRunning pools: a.\n\n## 0.2.0\n\nRunning pools: b.\n":           "release 0.2.0 is listed below 0.2.0",
		"## 0.2.0\n\nRunning pools: rolls nothing.\n\n## 0.1.0\n\n- no pools line\n": "release 0.1.0 has no \"Running pools:\" line",
	} {
		_, err := parseChangelog(text)
		require.Error(t, err, text)
		assert.Contains(t, err.Error(), want, text)
	}
}

// chartMeta is what a Chart.yaml says of versions.
type chartMeta struct {
	Name         string `json:"name"`
	Version      string `json:"version"`
	Dependencies []struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"dependencies"`
}

// Every chart, library charts too, carries the newest release's version, and
// every dependency pin names the version of the chart it links.
func TestChartsCarryTheNewestRelease(t *testing.T) {
	newest := changelog(t)[0].Version.String()
	versions := map[string]string{}
	metas := map[string]chartMeta{}
	for _, dir := range charts {
		raw, err := os.ReadFile(support.Path(dir, "Chart.yaml"))
		require.NoError(t, err)
		var m chartMeta
		require.NoError(t, yaml.Unmarshal(raw, &m), dir)
		_, err = semver.StrictNewVersion(m.Version)
		require.NoError(t, err, "%s: version %q is not a semantic version", dir, m.Version)
		assert.Equal(t, newest, m.Version, "%s: its version is not the newest release of CHANGELOG.md", dir)
		versions[m.Name] = m.Version
		metas[dir] = m
	}
	for dir, m := range metas {
		for _, d := range m.Dependencies {
			want, ok := versions[d.Name]
			require.True(t, ok, "%s depends on %s, which is no chart of this repository", dir, d.Name)
			assert.Equal(t, want, d.Version, "%s pins %s at %s, but that chart is %s", dir, d.Name, d.Version, want)
		}
	}
}

// previous is the release before the newest, and the folder its archives are
// kept in.
func previous(t *testing.T) (entry, string) {
	t.Helper()
	prev, dir, err := support.PreviousRelease()
	require.NoError(t, err)
	return prev, dir
}

// The previous release's archives are kept: each one in releases/<version>/
// is a chart of this repository at that version, as Helm's archive loader
// reads it, and the pool chart's is there, the base of the rolls-nothing
// check in a clone without history. (A chart added since has no archive
// there, and needs none.)
func TestPreviousReleaseIsKept(t *testing.T) {
	prev, dir := previous(t)
	names := map[string]bool{}
	for _, chartDir := range charts {
		raw, err := os.ReadFile(support.Path(chartDir, "Chart.yaml"))
		require.NoError(t, err)
		var m chartMeta
		require.NoError(t, yaml.Unmarshal(raw, &m))
		names[m.Name] = true
	}
	archives, err := filepath.Glob(filepath.Join(dir, "*.tgz"))
	require.NoError(t, err)
	found := map[string]bool{}
	for _, archive := range archives {
		c, err := loader.LoadFile(archive)
		require.NoError(t, err, archive)
		assert.True(t, names[c.Metadata.Name], "%s holds chart %s, which is none of this repository's", archive, c.Metadata.Name)
		assert.Equal(t, prev.Version.String(), c.Metadata.Version, archive)
		assert.Equal(t, c.Metadata.Name+"-"+prev.Version.String()+".tgz", filepath.Base(archive), "named as helm package names it")
		found[c.Metadata.Name] = true
	}
	require.True(t, found["kubernetes-nodes"], "release %s keeps no archive of the pool chart in releases/%s/: package that release's charts there (make package DIST=releases/%s at its tag)", prev.Version, prev.Version, prev.Version)
}

// workerimage builds the CLI once per test binary.
func workerimage(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "workerimage")
	build := exec.Command("go", "build", "-o", bin, "./cmd/workerimage")
	build.Dir = support.RepoRoot()
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build ./cmd/workerimage: %s", out)
	return bin
}

// check is one set of pools the claim is checked over: rollcheck's
// arguments, and the summary the claim needs of it.
type check struct {
	args    []string
	summary *regexp.Regexp
}

var (
	// Every pool checked renders at both sides, or is refused at both.
	everyPool = regexp.MustCompile(`\n\d+ pools: 0 roll, 0 refused at head, 0 refused at base only`)
	// No pool rolls and none is refused at head; a pool the base refuses
	// was made by what the head brings (a creation record naming the
	// catalog's published defaults, fromCatalog, is 0.2.0's) and never ran
	// under the base, so the claim, about running pools, is not about it.
	runningPools = regexp.MustCompile(`\n\d+ pools: 0 roll, 0 refused at head, \d+ refused at base only`)
)

// pools are the pools the claim is checked over: the example pools as
// pools of the _cluster example (a pool's own values, which is what -f
// gives), every baseline corner without a cluster, and both example fleets
// as Cozystack deploys them (their HelmReleases, valuesFrom and platform
// defaults, read from the cluster). The stock example's fleet is read from
// what runs there: a new pool on it takes the factory the catalog publishes
// at creation, which no release before 0.2.0 reads, so an example pool the
// stock example does not run is no running pool to hold the claim to.
var pools = map[string]check{
	"example pools":          {[]string{"-f", "examples/pools/*.yaml", "--cluster", "examples/platform/cluster-state.yaml"}, everyPool},
	"baseline corners":       {[]string{"-f", "tests/render/testdata/golden/pool-cozystack-*.values.yaml", "--release", "kubernetes-nodes-acme-workers", "-n", "tenant-acme"}, everyPool},
	"example fleet":          {[]string{"--cluster", "cmd/workerimage/testdata/rollcheck/deployed.yaml"}, runningPools},
	"_cluster example fleet": {[]string{"--cluster", "examples/platform/cluster-state.yaml"}, everyPool},
}

// rollcheck runs `workerimage rollcheck --base BASE --head HEAD ARGS...` from
// the repository root: its exit code and output.
func rollcheck(t *testing.T, bin, base, head string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"rollcheck", "--base", base, "--head", head}, args...)...)
	cmd.Dir = support.RepoRoot()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), out.String()
	}
	require.NoError(t, err)
	return 0, out.String()
}

// madeByTheHead holds runningPools' premise: each pool the base alone
// refuses was created by the head, its MachineDeployment's creation record
// naming the catalog's published defaults (fromCatalog), which the base
// predates.
func madeByTheHead(t *testing.T, bin, base string, args []string) {
	t.Helper()
	_, out := rollcheck(t, bin, base, render.PoolChart, append(append([]string{}, args...), "-o", "json")...)
	var r struct {
		Pools []struct {
			Namespace, Release, Status string
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &r), out)
	state := args[len(args)-1]
	objs, err := render.LoadObjects(support.Path(state))
	require.NoError(t, err)
	records := map[string]string{}
	for _, o := range objs {
		if o.GetKind() == "MachineDeployment" {
			records[o.GetNamespace()+"/"+o.GetName()] = o.GetAnnotations()["kubernetes-worker-image.cozystack.io/created-with"]
		}
	}
	refused := 0
	for _, p := range r.Pools {
		if p.Status != "refused at base" {
			continue
		}
		refused++
		md := p.Namespace + "/kubernetes-" + strings.TrimPrefix(p.Release, "kubernetes-nodes-")
		assert.Contains(t, records[md], `"fromCatalog"`, "%s is refused by the base, and was not created with what only the head brings (MachineDeployment %s)", p.Release, md)
	}
	t.Logf("%s: %d pools created with what only the head brings, refused by the base", state, refused)
}

// A release that says it rolls nothing rolls nothing: the previous release's
// pool chart (its kept archive) as the base, this checkout's as the head, over
// every pool above, with the rollcheck the operator runs. A release that says
// otherwise is not held to it (its line names what rolls). The same check with
// a head whose default disk size moved must fail, so a pass means something.
func TestRollsNothingAsClaimed(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the CLI")
	}
	newest := changelog(t)[0]
	prev, _ := previous(t)
	_, base, err := support.PreviousPoolChart()
	require.NoError(t, err)
	bin := workerimage(t)

	if newest.Pools != rollsNothing {
		t.Skipf("release %s says %q, not %q: rollcheck it against your cluster before upgrading", newest.Version, newest.Pools, rollsNothing)
	}
	for what, c := range pools {
		code, out := rollcheck(t, bin, base, render.PoolChart, c.args...)
		assert.Equal(t, 0, code, "release %s says it rolls nothing, but against %s (release %s) %s rolls a pool or could not check one:\n%s", newest.Version, base, prev.Version, what, out)
		assert.Regexp(t, c.summary, out, what)
		if c.summary == runningPools {
			madeByTheHead(t, bin, base, c.args)
		}
	}

	// The control: the previous release with another default diskSize, packaged
	// as helm package would, rolls the pools that take the default.
	c, err := loader.LoadFile(base)
	require.NoError(t, err)
	edited := false
	for _, f := range c.Raw {
		if f.Name == chartutil.ValuesfileName {
			moved := regexp.MustCompile(`(?m)^diskSize: .*$`).ReplaceAll(f.Data, []byte("diskSize: 21Gi"))
			edited = !bytes.Equal(moved, f.Data)
			f.Data = moved
		}
	}
	require.True(t, edited, "the control found no top-level diskSize in the pool chart's values.yaml")
	moved, err := chartutil.Save(c, t.TempDir())
	require.NoError(t, err)
	code, out := rollcheck(t, bin, base, moved, pools["example pools"].args...)
	assert.Equal(t, 1, code, out)
	assert.Regexp(t, `\n\d+ pools: [1-9]\d* roll`, out)
}

// The charts a release versions are the ones `make package` builds.
func TestReleasedChartsAreTheMakefiles(t *testing.T) {
	raw, err := os.ReadFile(support.Path("Makefile"))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^CHARTS := (.+)$`).FindStringSubmatch(string(raw))
	require.NotNil(t, m, "the Makefile sets no CHARTS")
	assert.Equal(t, strings.Fields(m[1]), charts)
}
