package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	sigsyaml "sigs.k8s.io/yaml"
)

const (
	testRelease   = support.PoolRelease
	testNamespace = support.PoolNamespace
	testPool      = support.PoolName
)

// harnessRender renders a pool with the harness directly, against the test
// fake rather than the CLI's state-file reader: the independent reference for
// names the CLI reports. apiVersions are served on top of Helm's defaults.
func harnessRender(t *testing.T, valuesFile, stateFile string, apiVersions ...string) *render.Manifest {
	t.Helper()
	c, err := support.LoadChart(render.PoolChart)
	require.NoError(t, err)
	vals, err := render.ReadValues(valuesFile)
	require.NoError(t, err)
	opts := render.Options{Release: render.Release{Name: testRelease, Namespace: testNamespace}, Values: vals, APIVersions: apiVersions}
	if stateFile != "" {
		opts.Cluster, err = support.LoadCluster(stateFile)
		require.NoError(t, err)
	}
	m, err := render.Render(c, opts)
	require.NoError(t, err)
	return m
}

func planArgs(pool, state string, extra ...string) []string {
	args := []string{"plan", "-values", td("pools", pool+".yaml"), "-release", testRelease, "-namespace", testNamespace}
	if state != "" {
		args = append(args, "-cluster", td("state", state+".yaml"))
	}
	return append(args, extra...)
}

func TestPlanReportsEachOutcome(t *testing.T) {
	golden := goldenName(defaultVersion)
	goldenSpec := "spec.storage.storageClassName of DataVolume cozy-public/" + golden
	cases := []struct {
		name        string
		pool, state string
		code        int
		check       func(t *testing.T, r report.PlanReport)
	}{
		{"http import", "http", "golden", exitOK, func(t *testing.T, r report.PlanReport) {
			d := r.DiskSource
			assert.Equal(t, "http", d.Path)
			assert.Equal(t, "https://factory.talos.dev/image/"+defaultSchematic+"/"+defaultVersion+"/openstack-amd64.raw.xz", d.URL)
			assert.Empty(t, d.Golden, "an HTTP pool names no golden")
			assert.Equal(t, &report.Sourced{Value: "replicated", Source: "storageClass"}, d.PoolClass)
			assert.Nil(t, d.GoldenClass)
			assert.Equal(t, report.Sourced{Value: defaultSchematic, Source: "talos.schematicID unset: the chart's default for a new pool"}, d.SchematicID)
			assert.Equal(t, "https://factory.talos.dev", d.ImageFactoryURL.Value)
		}},
		{"http import with no class", "http-default-class", "golden", exitOK, func(t *testing.T, r report.PlanReport) {
			assert.Equal(t, "", r.DiskSource.PoolClass.Value, "the HTTP path leaves an empty class to the cluster")
			assert.Contains(t, r.DiskSource.PoolClass.Source, "none written")
		}},
		{"clone of an imported golden", "builtin", "golden", exitOK, func(t *testing.T, r report.PlanReport) {
			d := r.DiskSource
			assert.Equal(t, "clone", d.Path)
			assert.Equal(t, golden, d.Golden)
			assert.Equal(t, "DataVolume", d.GoldenFoundAs)
			assert.Equal(t, "Succeeded", d.GoldenPhase)
			assert.Equal(t, "6Gi", d.GoldenSize)
			assert.Equal(t, &report.Sourced{Value: "replicated", Source: "storageClass"}, d.PoolClass)
			assert.Equal(t, &report.Sourced{Value: "replicated", Source: goldenSpec}, d.GoldenClass)
			assert.True(t, d.Checked)
		}},
		{"clone of a golden still importing", "builtin", "golden-importing", exitOK, func(t *testing.T, r report.PlanReport) {
			assert.Equal(t, "ImportInProgress", r.DiskSource.GoldenPhase)
		}},
		{"clone of a golden kept only as its PVC", "builtin", "golden-pvc-only", exitOK, func(t *testing.T, r report.PlanReport) {
			d := r.DiskSource
			assert.Equal(t, "PersistentVolumeClaim", d.GoldenFoundAs)
			assert.Equal(t, "", d.GoldenPhase)
			assert.Equal(t, "replicated", d.GoldenClass.Value)
			assert.Equal(t, "the golden's PersistentVolumeClaim cozy-public/"+golden, d.GoldenClass.Source)
		}},
		{"clone with the class from the cluster default", "builtin-default-class", "golden", exitOK, func(t *testing.T, r report.PlanReport) {
			assert.Equal(t, "replicated", r.DiskSource.PoolClass.Value)
			assert.Contains(t, r.DiskSource.PoolClass.Source, `resolved from the cluster default class "replicated"`)
		}},
		{"clone with the class frozen by the pool's current template", "builtin-default-class", "default-moved", exitOK, func(t *testing.T, r report.PlanReport) {
			d := r.DiskSource
			assert.Equal(t, "replicated", d.PoolClass.Value, "not today's default (local)")
			assert.Contains(t, d.PoolClass.Source, "frozen on the class written in the pool's current KubevirtMachineTemplate tenant-acme/kubernetes-acme-workers-5f6a7b")
			assert.Equal(t, "kubernetes-acme-workers-5f6a7b", d.RunningTemplate)
			assert.Equal(t, "1", d.ReadyWorkers)
		}},
		{"clone previewed with no cluster", "builtin", "", exitOK, func(t *testing.T, r report.PlanReport) {
			assert.True(t, r.DiskSource.Preview)
			assert.Equal(t, golden, r.DiskSource.Golden)
			assert.Empty(t, r.DiskSource.GoldenFoundAs, "nothing was looked up")
			assert.Contains(t, r.Cluster, "none")
		}},
		{"refused: golden absent", "builtin", "cluster", exitAttn, func(t *testing.T, r report.PlanReport) {
			assert.Contains(t, r.Refusal, "golden "+golden+" is absent from cozy-public")
			assert.Equal(t, golden, r.DiskSource.Golden, "the golden the pool names is still reported")
			assert.False(t, r.DiskSource.Checked)
			assert.Empty(t, r.MachineTemplate)
		}},
		{"refused: golden failed", "builtin", "golden-failed", exitAttn, func(t *testing.T, r report.PlanReport) {
			assert.Contains(t, r.Refusal, "failed to import (status.phase Failed)")
		}},
		{"refused: classes differ", "builtin-local", "golden", exitAttn, func(t *testing.T, r report.PlanReport) {
			assert.Contains(t, r.Refusal, `its disks would be on StorageClass "local"`)
			assert.Contains(t, r.Refusal, `is on "replicated"`)
		}},
		{"refused: unknown instancetype, disk source still resolved", "unknown-instancetype", "golden", exitAttn, func(t *testing.T, r report.PlanReport) {
			assert.Contains(t, r.Refusal, `instanceType "u1.4xlarge" is not a VirtualMachineClusterInstancetype`)
			assert.Equal(t, "http", r.DiskSource.Path)
			assert.True(t, r.DiskSource.Checked)
		}},
		{"refused: malformed schematicID, nothing resolves", "malformed", "golden", exitAttn, func(t *testing.T, r report.PlanReport) {
			assert.Contains(t, r.Refusal, "not-Lower_case")
			assert.Nil(t, r.DiskSource)
		}},
		{"refused: schema", "schema", "golden", exitAttn, func(t *testing.T, r report.PlanReport) {
			assert.Contains(t, r.Refusal, "diskSize")
			assert.NotContains(t, r.Refusal, "\n")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := cli(t, planArgs(c.pool, c.state, "-o", "json")...)
			require.Equal(t, c.code, res.code, "stderr: %s", res.stderr)
			assert.Empty(t, res.stderr)
			r := decode[report.PlanReport](t, res)
			assert.Equal(t, testRelease, r.Release)
			assert.Equal(t, testNamespace, r.Namespace)
			if c.code == exitOK {
				assert.Equal(t, "renders", r.Result)
				state := ""
				if c.state != "" {
					state = td("state", c.state+".yaml")
				}
				m := harnessRender(t, td("pools", c.pool+".yaml"), state)
				kmt, err := m.One("KubevirtMachineTemplate")
				require.NoError(t, err)
				assert.Equal(t, kmt.Name(), r.MachineTemplate)
				assert.Len(t, r.Objects, len(m.Docs), "every object of the chart, and not the facts document")
				assert.Equal(t, testPool, r.Pool)
			} else {
				assert.Equal(t, "refused", r.Result)
				assert.NotEmpty(t, r.Refusal)
			}
			c.check(t, r)
		})
	}
}

func TestPlanManifestsAreTheChartsManifest(t *testing.T) {
	res := cli(t, planArgs("builtin", "golden", "--manifests")...)
	require.Equal(t, exitOK, res.code, res.stderr)
	want := harnessRender(t, td("pools", "builtin.yaml"), td("state", "golden.yaml")).Text()
	assert.Equal(t, want, res.stdout, "the same bytes the chart renders, without the CLI's facts template")
	assert.NotContains(t, res.stdout, report.FactsKind)

	res = cli(t, planArgs("builtin-local", "golden", "--manifests")...)
	assert.Equal(t, exitAttn, res.code)
	assert.True(t, strings.HasPrefix(res.stdout, "# "+testRelease+": refused\n# pool "+testPool+": "), res.stdout)

	// -o yaml is the report, as -o json is; --manifests with it is refused.
	yamlRep := cli(t, planArgs("builtin", "golden", "-o", "yaml")...)
	require.Equal(t, exitOK, yamlRep.code, yamlRep.stderr)
	var fromYAML, fromJSON report.PlanReport
	require.NoError(t, sigsyaml.Unmarshal([]byte(yamlRep.stdout), &fromYAML))
	require.NoError(t, json.Unmarshal([]byte(cli(t, planArgs("builtin", "golden", "-o", "json")...).stdout), &fromJSON))
	assert.Equal(t, fromJSON, fromYAML)
	assert.Equal(t, "renders", fromYAML.Result)
	requireProblem(t, cli(t, planArgs("builtin", "golden", "--manifests", "-o", "yaml")...), "--manifests prints the rendered objects as YAML already")
}

func TestPlanTextIsAlignedAndNamesTheSources(t *testing.T) {
	res := cli(t, planArgs("builtin-default-class", "golden")...)
	require.Equal(t, exitOK, res.code, res.stderr)
	lines := strings.Split(strings.TrimRight(res.stdout, "\n"), "\n")
	// Every value starts in the same column: after the widest label and two spaces.
	col := len("machine template") + 2
	for _, l := range lines {
		require.Greater(t, len(l), col, l)
		assert.NotEqual(t, ' ', l[col], "value starts at column %d: %q", col, l)
		assert.Equal(t, "  ", l[col-2:col], "label padded to column %d: %q", col, l)
	}
	text := res.stdout
	assert.Contains(t, text, "disk source       clone of golden "+goldenName(defaultVersion)+"\n")
	assert.Contains(t, text, "golden            found as DataVolume, phase Succeeded, size 6Gi\n")
	assert.Contains(t, text, `pool class        replicated  (storageClass "", resolved from the cluster default class "replicated")`)
	assert.Contains(t, text, "golden class      replicated  (spec.storage.storageClassName of DataVolume cozy-public/"+goldenName(defaultVersion)+")")
	assert.True(t, strings.HasSuffix(text, "result            renders\n"), text)

	// A refused clone pool is reported as far as the chart's report-only
	// render reads, checks included: "fallback checks" is its widest label.
	res = cli(t, planArgs("builtin", "golden-failed")...)
	assert.Equal(t, exitAttn, res.code)
	assert.Contains(t, res.stdout, "\nresult           refused: pool "+testPool+": golden "+goldenName(defaultVersion)+" in cozy-public failed to import")
	assert.Contains(t, res.stdout, "\ngolden           found as DataVolume, phase Failed, size 6Gi\n")
}

func TestPlanNamesTheReleaseFromTheValuesFile(t *testing.T) {
	res := cli(t, "plan", "-values", td("pools", "http.yaml"), "-cluster", td("state", "golden.yaml"), "-o", "json")
	require.Equal(t, exitOK, res.code, res.stderr)
	r := decode[report.PlanReport](t, res)
	assert.Equal(t, "kubernetes-nodes-acme-http", r.Release)
	assert.Equal(t, "tenant-acme", r.Namespace)
	assert.Equal(t, "kubernetes-acme-http", r.Pool)
}

// -kubeconfig goes through the same code with another provider: the fake
// dial serves the same state, so the reports agree but for where they looked.
func TestPlanThroughTheKubeconfigSeam(t *testing.T) {
	for _, pool := range []string{"builtin", "builtin-default-class", "builtin-local", "http"} {
		t.Run(pool, func(t *testing.T) {
			state := td("state", "golden.yaml")
			viaFile := cli(t, planArgs(pool, "golden", "-o", "json")...)
			args := []string{"plan", "-values", td("pools", pool+".yaml"), "-release", testRelease, "-namespace", testNamespace, "-kubeconfig", state, "-o", "json"}
			viaSeam := cliWith(t, fakeDial(nil), args...)
			assert.Equal(t, viaFile.code, viaSeam.code)
			a, b := decode[report.PlanReport](t, viaFile), decode[report.PlanReport](t, viaSeam)
			assert.Equal(t, "kubeconfig "+state, b.Cluster)
			b.Cluster = a.Cluster
			assert.Equal(t, a, b)
		})
	}
}

func TestPlanLookupErrorIsAProblemNotARefusal(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "storage.k8s.io", Resource: "storageclasses"}, "", nil)
	args := []string{"plan", "-values", td("pools", "builtin.yaml"), "-release", testRelease, "-namespace", testNamespace, "-kubeconfig", td("state", "golden.yaml")}
	res := cliWith(t, fakeDial(map[string]error{"StorageClass": forbidden}), args...)
	requireProblem(t, res, "the cluster answered a lookup with an error", "storageclasses", "forbidden")
}

// `make render` plans every example pool against the example state: each
// either renders or is refused on purpose; none is bad input.
func TestExamplesPlan(t *testing.T) {
	root := support.RepoRoot()
	refused := map[string]string{
		"oversized.yaml":    `instanceType "u1.4xlarge" is not a VirtualMachineClusterInstancetype`,
		"golden-local.yaml": `its disks would be on StorageClass "local"`,
	}
	files, err := filepath.Glob(filepath.Join(root, "examples", "pools", "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	seen := 0
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			res := cli(t, "plan", "-values", f, "-cluster", filepath.Join(root, "examples", "cluster-state.yaml"), "-o", "json")
			r := decode[report.PlanReport](t, res)
			if why, ok := refused[filepath.Base(f)]; ok {
				seen++
				assert.Equal(t, exitAttn, res.code)
				assert.Contains(t, r.Refusal, why)
				return
			}
			assert.Equal(t, exitOK, res.code, r.Refusal)
		})
	}
	assert.Equal(t, len(refused), seen, "the refused examples exist")
}
