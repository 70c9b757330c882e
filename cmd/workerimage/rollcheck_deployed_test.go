package main

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chartutil"
	"sigs.k8s.io/yaml"
)

// deployedState is the example cluster as it runs once every pool that
// renders has been installed with the pool chart of this checkout: each
// pool's MachineDeployment as the chart renders it (naming its
// KubevirtMachineTemplate, with the example's status), and that template.
// It is committed (testdata/rollcheck/deployed.yaml, for the docs'
// example), pinned like a golden report: `make golden` rewrites it when the
// chart's templates change on purpose.
func deployedState(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("# The example cluster (examples/cluster-state.yaml) as it runs once each pool that\n")
	b.WriteString("# renders was installed with this checkout's pool chart: its MachineDeployment names\n")
	b.WriteString("# its KubevirtMachineTemplate, which is here too. Rewritten by `make golden`.\n")
	b.WriteString(deployedPools(t, support.Path("examples", "cluster-state.yaml")))
	return b.String()
}

// deployedPools is the cluster of a state file as it runs once every pool
// that renders has been installed with the pool chart of this checkout:
// its documents, each pool's MachineDeployment and KubevirtMachineTemplate
// rendered by the chart against it (the MachineDeployment keeping the
// file's status), each document after "---".
func deployedPools(t *testing.T, examplePath string) string {
	t.Helper()
	raw, err := os.ReadFile(examplePath)
	require.NoError(t, err)
	cluster, err := render.LoadState(examplePath)
	require.NoError(t, err)
	served, err := cluster.APIVersions()
	require.NoError(t, err)
	chrt, err := report.LoadPoolChart("")
	require.NoError(t, err)
	fl, err := fleet.Read(context.Background(), cluster, fleet.Options{Chart: chrt.Metadata.Name})
	require.NoError(t, err)

	statuses := map[string]any{}
	var kept []string
	for _, doc := range render.SplitDocuments(string(raw)) {
		var obj map[string]any
		require.NoError(t, yaml.Unmarshal([]byte(doc), &obj))
		if obj["kind"] == "MachineDeployment" {
			statuses[render.Get(obj, "metadata.namespace").(string)+"/"+render.Get(obj, "metadata.name").(string)] = obj["status"]
			continue
		}
		if obj["kind"] == "KubevirtMachineTemplate" {
			continue // rendered again below, with its MachineDeployment
		}
		kept = append(kept, doc)
	}
	var b strings.Builder
	for _, doc := range kept {
		b.WriteString("---\n" + doc)
	}
	for _, p := range fl.Pools {
		require.Empty(t, p.Unresolved, p.ID())
		m, err := render.Render(chrt, render.Options{Release: render.Release{Name: p.Release, Namespace: p.Namespace, Upgrade: true}, Values: p.Values, Cluster: cluster, APIVersions: served})
		if err != nil {
			continue // refused today: never deployed
		}
		md, err := m.One("MachineDeployment")
		require.NoError(t, err)
		kmt, err := m.One("KubevirtMachineTemplate")
		require.NoError(t, err)
		if st, ok := statuses[p.Namespace+"/"+md.Name()]; ok && st != nil {
			md.Object["status"] = st
		}
		mdText, err := yaml.Marshal(md.Object)
		require.NoError(t, err)
		b.WriteString("---\n# " + p.ID() + "\n" + string(mdText) + "---\n" + kmt.Text)
	}
	return b.String()
}

var deployedFixture = filepath.Join("testdata", "rollcheck", "deployed.yaml")

// The committed deployed cluster is what this checkout's chart deploys.
func TestDeployedFixtureIsWhatTheChartDeploys(t *testing.T) {
	got := deployedState(t)
	if *support.Update {
		require.NoError(t, os.MkdirAll(filepath.Dir(deployedFixture), 0o755))
		require.NoError(t, os.WriteFile(deployedFixture, []byte(got), 0o644))
	}
	want, err := os.ReadFile(deployedFixture)
	require.NoError(t, err, "run `make golden` deliberately")
	require.Equal(t, string(want), got, "%s is not what the pool chart deploys: run `make golden` deliberately", deployedFixture)
}

// rollcheck without --base answers against what runs: the same chart rolls
// nothing, whether named as a chart folder, a packaged archive or a
// checkout; a chart whose default disk grows rolls exactly the pools that
// take the default, naming the template each runs now. A pool never
// deployed that the head refuses is refused at head.
func TestRollcheckAgainstWhatIsDeployed(t *testing.T) {
	chartDir := support.Path(render.PoolChart)
	archive := packageChart(t, chartDir)
	var reports []report.RollReport
	for _, head := range []string{chartDir, archive, support.RepoRoot()} {
		res := cli(t, "rollcheck", head, "--cluster", deployedFixture, "-o", "json")
		require.Equal(t, exitAttn, res.code, "gamma-big never rendered, and head refuses it: %s", res.stderr)
		r := decode[report.RollReport](t, res)
		assert.True(t, r.Deployed)
		assert.Equal(t, 0, r.Summary.Rolls, head)
		assert.Equal(t, 6, r.Summary.NoRoll, head)
		assert.Equal(t, 1, r.Summary.RefusedAtHead, head)
		for _, p := range r.Pools {
			if p.Status == "no roll" {
				assert.Equal(t, p.Base.MachineTemplate, p.Head.MachineTemplate)
				assert.Equal(t, "MachineDeployment "+p.Namespace+"/kubernetes-"+strings.TrimPrefix(p.Release, "kubernetes-nodes-"), p.Base.RunningFrom)
				assert.Empty(t, p.Diff, "the stored template's spec is the rendered one")
			}
		}
		r.Head = ""
		reports = append(reports, r)
	}
	assert.Equal(t, reports[0], reports[1], "a .tgz as helm package builds it answers as its folder")
	assert.Equal(t, reports[0], reports[2], "a checkout answers as its chart folder")

	grown := chartCopy(t, render.PoolChart+"/values.yaml", func(v string) string {
		return strings.Replace(v, "diskSize: 20Gi", "diskSize: 25Gi", 1)
	})
	res := cli(t, "rollcheck", filepath.Join(grown, render.PoolChart), "--cluster", deployedFixture, "-o", "json")
	require.Equal(t, exitAttn, res.code, res.stderr)
	r := decode[report.RollReport](t, res)
	assert.Equal(t, 4, r.Summary.Rolls, "every deployed pool that takes the default diskSize")
	var kept []string
	for _, p := range r.Pools {
		if p.Rolls {
			assert.Contains(t, p.Diff, "-                  storage: 20Gi", p.Values)
			assert.Contains(t, p.Diff, "+                  storage: 25Gi", p.Values)
		} else if p.Status == "no roll" {
			kept = append(kept, p.Release)
		}
	}
	assert.ElementsMatch(t, []string{"kubernetes-nodes-acme-golden", "kubernetes-nodes-beta-web"}, kept,
		"created through upstream's form, their own values carry diskSize: 20Gi")

	// -n keeps one namespace; a pool with no MachineDeployment is "not deployed".
	res = cli(t, "rollcheck", chartDir, "--cluster", deployedFixture, "-n", "tenant-beta", "-o", "json")
	require.Equal(t, exitOK, res.code, res.stderr)
	assert.Len(t, decode[report.RollReport](t, res).Pools, 3)
	res = cli(t, "rollcheck", chartDir, "--cluster", support.Path("examples", "cluster-state.yaml"), "-f", td("pools", "http.yaml"), "-o", "json")
	require.Equal(t, exitOK, res.code, res.stderr)
	notDeployed := decode[report.RollReport](t, res)
	assert.Equal(t, "not deployed", notDeployed.Pools[0].Status)
	assert.Equal(t, 1, notDeployed.Summary.NotDeployed)
}

// packageChart writes the chart folder as `helm package` does (Helm's own
// chartutil.Save: a gzipped tar of <name>/..., its dependencies under
// charts/), into a .tgz of the test's own.
func packageChart(t *testing.T, dir string) string {
	t.Helper()
	chrt, err := report.LoadPoolChart(dir)
	require.NoError(t, err)
	out, err := chartutil.Save(chrt, t.TempDir())
	require.NoError(t, err)
	f, err := os.Open(out)
	require.NoError(t, err)
	defer f.Close()
	gz, err := gzip.NewReader(f)
	require.NoError(t, err)
	tr := tar.NewReader(gz)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		names = append(names, h.Name)
	}
	assert.Contains(t, names, "kubernetes-nodes/Chart.yaml", "an archive as helm package writes it")
	assert.Contains(t, names, "kubernetes-nodes/charts/worker-image-lib/Chart.yaml", "with its library inside")
	return out
}
