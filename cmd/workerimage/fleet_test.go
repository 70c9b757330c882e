package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// cozyRelease is a pool HelmRelease as Cozystack creates it in tenant-zeta:
// chartRef to the application artifact, valuesFrom cozystack-values.
func cozyRelease(name, artifact, values string) string {
	return `---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: ` + name + `, namespace: tenant-zeta}
spec:
  chartRef: {kind: ExternalArtifact, name: ` + artifact + `, namespace: cozy-system}
  valuesFrom: [{kind: Secret, name: cozystack-values}]
  values: ` + values + `
`
}

const (
	cozyArtifact = "cozystack-kubernetes-nodes-application-kubevirt-kubernetes-nodes"
	// zetaValues is tenant-zeta's cozystack-values: the platform defaults
	// new pools to clone goldens.
	zetaValues = `---
apiVersion: v1
kind: Secret
metadata: {name: cozystack-values, namespace: tenant-zeta}
stringData:
  values.yaml: |
    _cluster:
      osImage: {builtin: {}}
    _namespace: {host: zeta.example.org}
`
)

func pinsAllowingProblem(t *testing.T, state string, extra ...string) result {
	t.Helper()
	return cli(t, append([]string{"pins", "-cluster", state, "-o", "json"}, extra...)...)
}

// A pool that takes its golden only from the platform's _cluster.osImage
// (through cozystack-values) keeps that golden in use; without the Secret the
// pool is listed as not resolved, with Flux's reason, and never resolved
// without it.
func TestPinsPoolWhoseGoldenComesOnlyFromCluster(t *testing.T) {
	g5 := goldenName("v1.13.5")
	require.True(t, goldenIn(t, pinsOf(t, "cluster"), g5).SafeToDelete, "the neighbour: nothing uses v1.13.5 in the fixture")

	pool := cozyRelease("kubernetes-nodes-zeta-w", cozyArtifact, "{cluster: zeta, talos: {version: v1.13.5}}")
	r, text := pinsOfFile(t, pinsWith(t, "cluster", zetaValues, pool))
	g := goldenIn(t, r, g5)
	assert.False(t, g.SafeToDelete)
	require.Equal(t, []string{"tenant-zeta/kubernetes-nodes-zeta-w"}, helmReleases(g.Pools))
	assert.Equal(t, "spec.chartRef ExternalArtifact cozy-system/"+cozyArtifact, g.Pools[0].FoundBy)
	assert.NotContains(t, r.Unused, g5)
	assert.Contains(t, text, g5+"  (DataVolume, phase Succeeded)  in use: 1 pool, 0 disks\n")

	// The Secret gone: the pool is not resolved, and says why.
	r, text = pinsOfFile(t, pinsWith(t, "cluster", pool))
	require.Equal(t, []string{"tenant-acme/kubernetes-nodes-acme-broken", "tenant-zeta/kubernetes-nodes-zeta-w"}, helmReleases(r.Unresolved))
	assert.Equal(t, `could not resolve Secret chart values reference 'tenant-zeta/cozystack-values' with key 'values.yaml': secrets "cozystack-values" not found`, r.Unresolved[1].Unresolved)
	assert.Regexp(t, `\n  pool +tenant-zeta/kubernetes-nodes-zeta-w +values not resolved: could not resolve Secret chart values reference`, text)
	assert.Empty(t, goldenIn(t, r, g5).Pools)
}

// Another artifact is the pool chart when the operator names it with
// --artifact, with its namespace; a name alone is refused (any tenant can
// give a source of its own that name).
func TestPinsArtifactFlag(t *testing.T) {
	g5 := goldenName("v1.13.5")
	state := pinsWith(t, "cluster", zetaValues, cozyRelease("kubernetes-nodes-zeta-w", "tenant-workers", "{cluster: zeta, talos: {version: v1.13.5}}"))
	r, _ := pinsOfFile(t, state)
	assert.True(t, goldenIn(t, r, g5).SafeToDelete, "not a pool: its artifact is not the platform's pool chart")

	for _, flag := range []string{"cozy-system/tenant-workers", "ExternalArtifact/cozy-system/tenant-workers", "other/x,cozy-system/tenant-workers"} {
		res := pinsAllowingProblem(t, state, "-artifact", flag)
		require.Equal(t, exitOK, res.code, res.stderr)
		g := goldenIn(t, decode[report.PinsReport](t, res), g5)
		assert.Equal(t, []string{"tenant-zeta/kubernetes-nodes-zeta-w"}, helmReleases(g.Pools), flag)
	}
	requireProblem(t, pinsAllowingProblem(t, state, "--artifact", "tenant-workers"),
		`--artifact "tenant-workers" names no namespace: give NAMESPACE/tenant-workers or KIND/NAMESPACE/tenant-workers`)
}

// A release of the pool chart installed with plain helm install (only its
// Helm release record) is a pool with the values it was installed with.
func TestPinsPlainHelmInstall(t *testing.T) {
	g5 := goldenName("v1.13.5")
	rec, err := fleet.EncodeRecord("kubernetes-nodes-zeta-w", "tenant-zeta", "kubernetes-nodes", 2, "deployed",
		map[string]any{"cluster": "zeta", "talos": map[string]any{"version": "v1.13.5"}, "osImage": map[string]any{"builtin": map[string]any{}}})
	require.NoError(t, err)
	b, err := (&unstructured.Unstructured{Object: rec}).MarshalJSON()
	require.NoError(t, err)
	r, _ := pinsOfFile(t, pinsWith(t, "cluster", "---\n"+string(b)+"\n"))
	g := goldenIn(t, r, g5)
	require.Equal(t, []string{"tenant-zeta/kubernetes-nodes-zeta-w"}, helmReleases(g.Pools))
	assert.Equal(t, "Helm release record tenant-zeta/sh.helm.release.v1.kubernetes-nodes-zeta-w.v2 (no HelmRelease)", g.Pools[0].FoundBy)
	assert.False(t, g.SafeToDelete)
}

// A pool at zero workers whose values no longer name the golden still holds
// it through its KubevirtMachineTemplate: the catalog's rule counts it, so it
// is not safe to delete. A template cloning a same-named PVC elsewhere does not.
func TestPinsIdlePoolHeldByItsTemplateOnly(t *testing.T) {
	g5 := goldenName("v1.13.5")
	template := func(ns, sourceNS string) string {
		return fmt.Sprintf(`---
apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1
kind: KubevirtMachineTemplate
metadata: {name: kubernetes-zeta-idle-abc123, namespace: %s}
spec: {template: {spec: {virtualMachineTemplate: {spec: {dataVolumeTemplates: [{metadata: {name: disk-system}, spec: {source: {pvc: {namespace: %s, name: %s}}}}]}}}}}
`, ns, sourceNS, g5)
	}
	// The idle pool itself: its values now clone the default flavor.
	idle := zetaValues + cozyRelease("kubernetes-nodes-zeta-idle", cozyArtifact, "{cluster: zeta, minReplicas: 0}")
	r, text := pinsOfFile(t, pinsWith(t, "cluster", template("tenant-zeta", "cozy-public"), idle))
	g := goldenIn(t, r, g5)
	assert.False(t, g.SafeToDelete)
	assert.Empty(t, g.Pools)
	assert.Equal(t, []string{"tenant-zeta/KubevirtMachineTemplate/kubernetes-zeta-idle-abc123"}, g.Templates)
	assert.NotContains(t, r.Unused, g5)
	assert.Contains(t, text, g5+"  (DataVolume, phase Succeeded)  in use: 0 pools, 0 disks, 1 KubevirtMachineTemplate\n")
	assert.Regexp(t, `\n  template +tenant-zeta/kubernetes-zeta-idle-abc123 +KubevirtMachineTemplate cloning it\n`, text)

	r, _ = pinsOfFile(t, pinsWith(t, "cluster", template("tenant-zeta", "tenant-zeta"), idle))
	assert.True(t, goldenIn(t, r, g5).SafeToDelete)
	assert.Contains(t, r.Unused, g5)
}

// A namespace that runs pool objects none of whose pools can be read keeps
// every golden out of "safe to delete", and pins exits 2 naming it, however
// many other namespaces' pools read: a record forged elsewhere, naming its
// pool, changes nothing. Its neighbour with its pool readable concludes.
func TestPinsWillNotConcludePerNamespace(t *testing.T) {
	g5 := goldenName("v1.13.5")
	zetaObjects := `---
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata: {name: kubernetes-zeta-w, namespace: tenant-zeta}
spec: {template: {spec: {infrastructureRef: {kind: KubevirtMachineTemplate, name: kubernetes-zeta-w-abc123}}}}
`
	rec, err := fleet.EncodeRecordBody("kubernetes-nodes-zeta-w", "tenant-evil", 1, "deployed",
		[]byte(`{"name":"kubernetes-nodes-zeta-w","namespace":"tenant-zeta","info":{"status":"deployed"},"chart":{"metadata":{"name":"kubernetes-nodes"}},"config":{"cluster":"zeta"}}`))
	require.NoError(t, err)
	forged, err := (&unstructured.Unstructured{Object: rec}).MarshalJSON()
	require.NoError(t, err)
	state := pinsWith(t, "cluster", zetaObjects, "---\n"+string(forged)+"\n")

	res := cli(t, "pins", "-cluster", state, "-o", "json")
	require.Equal(t, exitProblem, res.code, res.stderr)
	r := decode[report.PinsReport](t, res)
	assert.Equal(t, []fleet.UnreadNamespace{{Namespace: "tenant-zeta", Objects: []string{"tenant-zeta/MachineDeployment/kubernetes-zeta-w"}}}, r.UnreadNamespaces)
	assert.Empty(t, r.Unused, "no golden is safe while tenant-zeta's pools are unread")
	g := goldenIn(t, r, g5)
	assert.False(t, g.SafeToDelete)
	assert.True(t, g.NotConcluded)
	assert.Equal(t, []fleet.Ignored{{Object: "Secret tenant-evil/sh.helm.release.v1.kubernetes-nodes-zeta-w.v1", Reason: `Helm release record tenant-evil/sh.helm.release.v1.kubernetes-nodes-zeta-w.v1: its body names release "kubernetes-nodes-zeta-w" in namespace "tenant-zeta", not release kubernetes-nodes-zeta-w of its labels in its own namespace tenant-evil`}}, r.Ignored)
	assert.Equal(t, "workerimage pins: will not conclude: the pools of 1 namespace could not be read (tenant-zeta), though they hold pool objects, so no golden is called safe to delete; make their HelmReleases or Helm release records readable, or name their chart artifact with --artifact\n", res.stderr)

	text := cli(t, "pins", "-cluster", state)
	require.Equal(t, exitProblem, text.code)
	assert.Contains(t, text.stdout, g5+"  (DataVolume, phase Succeeded)  not concluded: nothing read uses it, but some namespaces' pools could not be read (below)\n")
	assert.Contains(t, text.stdout, "\nunused goldens (safe to delete): not concluded while the pools of 1 namespace could not be read (below)\n")
	assert.Regexp(t, `\nnamespaces that run pools none of which could be read \(.*\):\n  namespace tenant-zeta: 1 pool object: tenant-zeta/MachineDeployment/kubernetes-zeta-w\n`, text.stdout)
	assert.Regexp(t, `\nobjects not read as pools \(.*\):\n  Secret tenant-evil/sh.helm.release.v1.kubernetes-nodes-zeta-w.v1: Helm release record`, text.stdout)

	// The neighbour: tenant-zeta's pool readable, the report concludes.
	r, _ = pinsOfFile(t, pinsWith(t, "cluster", zetaObjects, "---\n"+string(forged)+"\n", zetaValues, cozyRelease("kubernetes-nodes-zeta-w", cozyArtifact, "{cluster: zeta}")))
	assert.Empty(t, r.UnreadNamespaces)
	assert.True(t, goldenIn(t, r, g5).SafeToDelete)
	assert.Len(t, r.Ignored, 1, "the forged record is still listed")
}

// goldensOnly is a cluster holding one golden and nothing else of a pool.
const goldensOnly = `apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata:
  name: talos-worker-ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515-v1.13.5
  namespace: cozy-public
spec:
  source: {http: {url: "https://factory.talos.dev/image/ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515/v1.13.5/openstack-amd64.raw.xz"}}
  storage: {storageClassName: replicated, resources: {requests: {storage: 6Gi}}}
status: {phase: Succeeded}
`

// With pool objects in the cluster and no pool readable, pins and adopt
// refuse to conclude; with none, the golden is reported unused.
func TestFleetReportsRefuseToConcludeWithoutPools(t *testing.T) {
	g5 := goldenName("v1.13.5")
	empty := writeTemp(t, "goldens-only.yaml", goldensOnly)
	r, _ := pinsOfFile(t, empty)
	assert.Equal(t, []string{g5}, r.Unused, "no pool and nothing that runs one: the golden is unused")
	assert.Equal(t, 0, r.PoolsRead)

	md := `---
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata: {name: kubernetes-zeta-w, namespace: tenant-zeta}
spec: {template: {spec: {infrastructureRef: {kind: KubevirtMachineTemplate, name: kubernetes-zeta-w-abc123}}}}
`
	otherProvider := `---
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata: {name: metal, namespace: tenant-zeta}
spec: {template: {spec: {infrastructureRef: {kind: Metal3MachineTemplate, name: m}}}}
`
	r, _ = pinsOfFile(t, writeTemp(t, "metal.yaml", goldensOnly+otherProvider))
	assert.Equal(t, []string{g5}, r.Unused, "another provider's MachineDeployment is no pool")

	withMD := writeTemp(t, "with-md.yaml", goldensOnly+md)
	for _, verb := range []string{"pins", "adopt"} {
		requireProblem(t, cli(t, verb, "-cluster", withMD), "could not read the pools: no HelmRelease of the pool chart ExternalArtifact cozy-system/cozystack-kubernetes-nodes-application-kubevirt-kubernetes-nodes (Cozystack's default; the cluster holds no ApplicationDefinition kubernetes-nodes) or Helm release record of chart kubernetes-nodes was found", "tenant-zeta/MachineDeployment/kubernetes-zeta-w", "no golden can be called unused")
	}
	// Pools found, but none whose values resolve.
	unresolved := writeTemp(t, "unresolved.yaml", goldensOnly+md+cozyRelease("kubernetes-nodes-zeta-w", cozyArtifact, "{cluster: zeta}"))
	requireProblem(t, cli(t, "pins", "-cluster", unresolved), "could not read the pools: none of the 1 pool found has values that resolve (first: tenant-zeta/kubernetes-nodes-zeta-w: could not resolve Secret chart values reference 'tenant-zeta/cozystack-values'")
	// The Secret there: the pool reads, and the report concludes.
	res := cli(t, "pins", "-cluster", writeTemp(t, "resolved.yaml", goldensOnly+md+zetaValues+cozyRelease("kubernetes-nodes-zeta-w", cozyArtifact, "{cluster: zeta}")), "-o", "json")
	require.Equal(t, exitOK, res.code, res.stderr)
	assert.Equal(t, 1, decode[report.PinsReport](t, res).PoolsRead)
}

// Cluster access as kubectl's: -context picks a context of the kubeconfig,
// and KUBECONFIG (a list of files) is read when -kubeconfig is not given.
func TestKubeconfigContextAndKubeconfigList(t *testing.T) {
	srv := newAPIServer(t, td("pins", "cluster.yaml"))
	dir := t.TempDir()
	two := filepath.Join(dir, "two")
	require.NoError(t, os.WriteFile(two, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
  - {name: dead, cluster: {server: "http://127.0.0.1:1"}}
  - {name: live, cluster: {server: %q}}
users:
  - {name: u, user: {token: test}}
contexts:
  - {name: dead, context: {cluster: dead, user: u}}
  - {name: live, context: {cluster: live, user: u}}
current-context: dead
`, srv.URL)), 0o600))
	requireProblem(t, cli(t, "pins", "-kubeconfig", two), "cannot reach the cluster at http://127.0.0.1:1")
	res := cli(t, "pins", "-kubeconfig", two, "-context", "live", "-o", "json")
	require.Equal(t, exitOK, res.code, res.stderr)
	assert.Equal(t, "kubeconfig "+two+" context live", decode[report.PinsReport](t, res).Cluster)
	requireProblem(t, cli(t, "pins", "-kubeconfig", two, "-context", "nope"), `context "nope" does not exist`)
	requireProblem(t, cli(t, "pins", "-cluster", td("pins", "cluster.yaml"), "-context", "live"), "--cluster and --kubeconfig/--context are exclusive")

	// KUBECONFIG: the first file names the current context, the second
	// holds it; kubectl merges them.
	first := filepath.Join(dir, "first")
	require.NoError(t, os.WriteFile(first, []byte("apiVersion: v1\nkind: Config\ncurrent-context: live\n"), 0o600))
	second := filepath.Join(dir, "second")
	require.NoError(t, os.WriteFile(second, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: live, cluster: {server: %q}}]
users: [{name: u, user: {token: test}}]
contexts: [{name: live, context: {cluster: live, user: u}}]
`, srv.URL)), 0o600))
	t.Setenv("KUBECONFIG", first+string(os.PathListSeparator)+second)
	res = cli(t, "pins", "-o", "json")
	require.Equal(t, exitOK, res.code, res.stderr)
	assert.Equal(t, "kubeconfig "+first+string(os.PathListSeparator)+second, decode[report.PinsReport](t, res).Cluster)
	// plan reads KUBECONFIG as every verb does; --cluster none previews.
	res = cli(t, "plan", "-values", td("pools", "http.yaml"), "-o", "json")
	require.NotEqual(t, exitProblem, res.code, res.stderr)
	assert.Equal(t, "kubeconfig "+first+string(os.PathListSeparator)+second, decode[report.PlanReport](t, res).Cluster)
	res = cli(t, "plan", "-values", td("pools", "http.yaml"), "--cluster", "none", "-o", "json")
	require.Equal(t, exitOK, res.code, res.stderr)
	assert.Equal(t, "none (helm template preview: every lookup answers empty)", decode[report.PlanReport](t, res).Cluster)
	// rollcheck --base reads it too, and previews with --cluster none.
	res = cli(t, "rollcheck", "--base", "../..", "--head", "../..", "-f", td("pools", "http.yaml"), "-o", "json")
	require.NotEqual(t, exitProblem, res.code, res.stderr)
	assert.Equal(t, "kubeconfig "+first+string(os.PathListSeparator)+second, decode[report.RollReport](t, res).Cluster)
	res = cli(t, "rollcheck", "--base", "../..", "--head", "../..", "-f", td("pools", "http.yaml"), "--cluster", "none", "-o", "json")
	require.Equal(t, exitOK, res.code, res.stderr)
	assert.Equal(t, "none (helm template preview: every lookup answers empty)", decode[report.RollReport](t, res).Cluster)
	// A verb that reads a cluster's pools cannot preview.
	for _, verb := range [][]string{{"pins"}, {"adopt"}, {"catalog"}, {"rollcheck", "../.."}, {"rollcheck", "--base", "../..", "--head", "../.."}} {
		requireProblem(t, cli(t, append(verb, "--cluster", "none")...), "--cluster none previews without a cluster, and this command reads one")
	}
}

// With no kubeconfig anywhere (no KUBECONFIG, no ~/.kube/config, not in a
// pod), plan previews and says why; a verb that reads a cluster says how to
// give one.
func TestNoKubeconfigAnywhere(t *testing.T) {
	require.False(t, kubeconfigFound(), "TestMain hides the machine's kubeconfig")
	res := cli(t, "plan", "-values", td("pools", "http.yaml"), "-o", "json")
	require.Equal(t, exitOK, res.code, res.stderr)
	assert.Equal(t, "none (no kubeconfig in KUBECONFIG or ~/.kube/config, not in a pod: helm template preview: every lookup answers empty)", decode[report.PlanReport](t, res).Cluster)
	requireProblem(t, cli(t, "pins"), "give the cluster: --cluster STATE.yaml, --kubeconfig PATH")
}

// rollcheck without -values checks every pool of the cluster, found and
// valued as pins finds them; a pool whose values do not resolve is listed
// as not checked (exit 1), never counted as "no roll".
func TestRollcheckReadsTheClustersPools(t *testing.T) {
	root := filepath.Join("..", "..")
	state := filepath.Join(root, "examples", "cluster-state.yaml")
	res := cli(t, "rollcheck", "-base", root, "-head", root, "-cluster", state, "-o", "json")
	require.Equal(t, exitOK, res.code, "gamma-big is refused at both, which does not fail the check: %s", res.stderr)
	r := decode[report.RollReport](t, res)
	var sources []string
	for _, p := range r.Pools {
		sources = append(sources, p.Values)
	}
	assert.Equal(t, []string{
		"helmrelease tenant-acme/kubernetes-nodes-acme-golden",
		"helmrelease tenant-acme/kubernetes-nodes-acme-workers",
		"helmrelease tenant-beta/kubernetes-nodes-beta-batch",
		"helmrelease tenant-beta/kubernetes-nodes-beta-spot",
		"helmrelease tenant-beta/kubernetes-nodes-beta-web",
		"helmrelease tenant-gamma/kubernetes-nodes-gamma-big",
		"helmrelease tenant-gamma/kubernetes-nodes-gamma-edge",
	}, sources)
	assert.Equal(t, 6, r.Summary.NoRoll)
	assert.Equal(t, 0, r.Summary.RefusedAtHead)
	assert.Equal(t, 1, r.Summary.RefusedAtBoth)
	// beta-spot renders its clone of the golden it takes from _cluster.
	assert.Equal(t, "kubernetes-nodes-beta-spot", r.Pools[3].Release)
	assert.NotEmpty(t, r.Pools[3].Head.MachineTemplate)

	// A pool whose cozystack-values is missing is not checked.
	unresolved := writeTemp(t, "unresolved-pool.yaml", goldensOnly+cozyRelease("kubernetes-nodes-zeta-w", cozyArtifact, "{cluster: zeta}"))
	res = cli(t, "rollcheck", "-base", root, "-head", root, "-cluster", unresolved)
	require.Equal(t, exitAttn, res.code, res.stderr)
	assert.Contains(t, res.stdout, "    not checked: could not resolve Secret chart values reference 'tenant-zeta/cozystack-values'")
	assert.Contains(t, res.stdout, "1 pool: 0 roll, 0 refused at head, 0 refused at base only, 0 refused at both (not counted against the upgrade), 0 no roll, 1 not resolved (not checked)\n")
	// Its Secret there: checked (this bare cluster has no instancetype, so
	// the chart refuses it at both sides, as it would any pool there).
	res = cli(t, "rollcheck", "-base", root, "-head", root, "-cluster", writeTemp(t, "resolved-pool.yaml", goldensOnly+zetaValues+cozyRelease("kubernetes-nodes-zeta-w", cozyArtifact, "{cluster: zeta}")), "-o", "json")
	require.Equal(t, exitOK, res.code, res.stderr)
	checked := decode[report.RollReport](t, res)
	assert.Equal(t, 0, checked.Summary.Unresolved)
	require.Len(t, checked.Pools, 1)
	assert.Equal(t, "refused at both", checked.Pools[0].Status)
	assert.Contains(t, checked.Pools[0].Head.Refusal, "pool kubernetes-zeta-w")

	requireProblem(t, cli(t, "rollcheck", "-base", root, "-head", root), "give -f pool values files, or a cluster")
	requireProblem(t, cli(t, "rollcheck", "-base", root, "-head", root, "-cluster", state, "-release", "x"), "--release applies to -f files")
	md := "---\napiVersion: cluster.x-k8s.io/v1beta1\nkind: MachineDeployment\nmetadata: {name: kubernetes-zeta-w, namespace: tenant-zeta}\n"
	requireProblem(t, cli(t, "rollcheck", "-base", root, "-head", root, "-cluster", writeTemp(t, "md-only.yaml", goldensOnly+md)), "could not read the pools", "tenant-zeta/MachineDeployment/kubernetes-zeta-w")
}
