package fleet_test

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

var opts = fleet.Options{Chart: "kubernetes-nodes"}

func state(t *testing.T, docs ...string) *render.State {
	t.Helper()
	objs, err := render.ParseObjects([]byte(strings.Join(docs, "\n---\n")))
	require.NoError(t, err)
	return render.NewState(objs...)
}

func record(t *testing.T, name, ns, chart string, version int, status string, config map[string]interface{}) string {
	t.Helper()
	obj, err := fleet.EncodeRecord(name, ns, chart, version, status, config)
	require.NoError(t, err)
	b, err := (&unstructured.Unstructured{Object: obj}).MarshalJSON()
	require.NoError(t, err)
	return string(b)
}

func read(t *testing.T, o fleet.Options, docs ...string) *fleet.Fleet {
	t.Helper()
	f, err := fleet.Read(context.Background(), state(t, docs...), o)
	require.NoError(t, err)
	return f
}

func ids(f *fleet.Fleet) []string {
	out := []string{}
	for _, p := range f.Pools {
		out = append(out, p.ID())
	}
	return out
}

// hr is a HelmRelease in tenant-a; spec is YAML indented by four spaces.
func hr(name, spec string) string {
	return `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: ` + name + `, namespace: tenant-a}
spec:
` + spec
}

const cozystackValues = `apiVersion: v1
kind: Secret
metadata: {name: cozystack-values, namespace: tenant-a}
type: Opaque
stringData:
  values.yaml: |
    _cluster:
      osImage:
        builtin: {}
      talos:
        imageFactoryURL: https://mirror.example
    _namespace:
      host: tenant-a.example`

const (
	poolRef       = `  chartRef: {kind: ExternalArtifact, name: cozystack-kubernetes-nodes-application-kubevirt-kubernetes-nodes, namespace: cozy-system}`
	goldenRef     = `  chartRef: {kind: ExternalArtifact, name: kubernetes-nodes-golden-kubevirt-kubernetes-nodes, namespace: cozy-system}`
	appDefinition = `apiVersion: cozystack.io/v1alpha1
kind: ApplicationDefinition
metadata: {name: kubernetes-nodes}
spec:
  application: {kind: KubernetesNodes, plural: kubernetesnodeses, singular: kubernetesnodes}
  release:
    prefix: kubernetes-nodes-
    chartRef: {kind: ExternalArtifact, name: kubernetes-nodes-golden-kubevirt-kubernetes-nodes, namespace: cozy-system}`
)

// A pool is a pool by where its chart is: Cozystack's artifact (no
// ApplicationDefinition says otherwise), or spec.chart from the cozystack-apps
// repository of earlier releases. A tenant's own source whose name ends in
// the chart's (OCIRepository, HelmChart, ExternalArtifact of its namespace,
// a HelmRepository of its own) is a look-alike: listed with why, never read.
func TestPoolsByTheirChartSource(t *testing.T) {
	f := read(t, opts,
		hr("kubernetes-nodes-a-ea", poolRef),
		hr("kubernetes-nodes-a-legacy", `  chart: {spec: {chart: kubernetes-nodes, sourceRef: {kind: HelmRepository, name: cozystack-apps, namespace: cozy-public}}}`),
		hr("kubernetes-nodes-a-oci", `  chartRef: {kind: OCIRepository, name: kubernetes-nodes}`),
		hr("kubernetes-nodes-a-hc", `  chartRef: {kind: HelmChart, name: tenant-a-kubernetes-nodes, namespace: flux-system}`),
		hr("kubernetes-nodes-a-own-ea", `  chartRef: {kind: ExternalArtifact, name: cozystack-kubernetes-nodes-application-kubevirt-kubernetes-nodes}`),
		hr("kubernetes-nodes-a-own-repo", `  chart: {spec: {chart: kubernetes-nodes, sourceRef: {kind: HelmRepository, name: cozystack-apps}}}`),
		hr("postgres-db", `  chartRef: {kind: ExternalArtifact, name: cozystack-postgres-application-default-postgres, namespace: cozy-system}`),
		hr("legacy-postgres", `  chart: {spec: {chart: postgres}}`),
		hr("wrong-kind", `  chartRef: {kind: GitRepository, name: kubernetes-nodes}`),
	)
	assert.Equal(t, []string{"tenant-a/kubernetes-nodes-a-ea", "tenant-a/kubernetes-nodes-a-legacy"}, ids(f))
	assert.Equal(t, "spec.chartRef ExternalArtifact cozy-system/cozystack-kubernetes-nodes-application-kubevirt-kubernetes-nodes", f.Pools[0].FoundBy)
	assert.Equal(t, "spec.chart kubernetes-nodes from HelmRepository cozy-public/cozystack-apps", f.Pools[1].FoundBy)
	var ignored []string
	for _, i := range f.Ignored {
		ignored = append(ignored, i.Object)
		assert.Contains(t, i.Reason, "never by a name a tenant can copy", i.Object)
	}
	assert.Equal(t, []string{"HelmRelease tenant-a/kubernetes-nodes-a-hc", "HelmRelease tenant-a/kubernetes-nodes-a-oci", "HelmRelease tenant-a/kubernetes-nodes-a-own-ea", "HelmRelease tenant-a/kubernetes-nodes-a-own-repo"}, ignored,
		"the look-alikes are listed; postgres and a kind no HelmRelease takes are not")
	assert.Contains(t, f.Ignored[1].Reason, "its spec.chartRef OCIRepository tenant-a/kubernetes-nodes is not the platform's pool chart ExternalArtifact cozy-system/cozystack-kubernetes-nodes-application-kubevirt-kubernetes-nodes (Cozystack's default")
	assert.Contains(t, f.Ignored[1].Reason, "--artifact OCIRepository/tenant-a/kubernetes-nodes")
	assert.Contains(t, f.Ignored[3].Reason, "names chart kubernetes-nodes by spec.chart from HelmRepository tenant-a/cozystack-apps")
}

// The ApplicationDefinition names the pool chart: with it in the cluster,
// its artifact is the pool chart, and Cozystack's default is not.
func TestPoolChartFromTheApplicationDefinition(t *testing.T) {
	docs := []string{hr("kubernetes-nodes-a-golden", goldenRef), hr("kubernetes-nodes-a-upstream", poolRef)}
	f := read(t, opts, docs...)
	assert.Equal(t, []string{"tenant-a/kubernetes-nodes-a-upstream"}, ids(f), "without the ApplicationDefinition, Cozystack's default")
	assert.Equal(t, fleet.DefaultPoolArtifact, f.PoolChart.ChartRef)

	f = read(t, opts, append(docs, appDefinition)...)
	require.Equal(t, []string{"tenant-a/kubernetes-nodes-a-golden"}, ids(f))
	assert.Equal(t, "spec.chartRef ExternalArtifact cozy-system/kubernetes-nodes-golden-kubevirt-kubernetes-nodes", f.Pools[0].FoundBy)
	assert.Equal(t, "ExternalArtifact cozy-system/kubernetes-nodes-golden-kubevirt-kubernetes-nodes (named by ApplicationDefinition kubernetes-nodes)", f.PoolChart.String())
	require.Len(t, f.Ignored, 1)
	assert.Equal(t, "HelmRelease tenant-a/kubernetes-nodes-a-upstream", f.Ignored[0].Object)

	// An ApplicationDefinition that names no source is a broken platform,
	// never silently Cozystack's default.
	broken := strings.Replace(appDefinition, "chartRef: {kind: ExternalArtifact, name: kubernetes-nodes-golden-kubevirt-kubernetes-nodes, namespace: cozy-system}", "chartRef: {kind: ExternalArtifact, name: kubernetes-nodes-golden-kubevirt-kubernetes-nodes}", 1)
	_, err := fleet.Read(context.Background(), state(t, append(docs, broken)...), opts)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `ApplicationDefinition kubernetes-nodes: its spec.release.chartRef (kind "ExternalArtifact", namespace "", name "kubernetes-nodes-golden-kubevirt-kubernetes-nodes") names no chart source`)
}

// Another source holds the pool chart when the operator names it, with its
// namespace (a name alone is refused: any tenant can copy it). A Helm
// release record never makes a HelmRelease a pool (a tenant writes its
// namespace's Secrets); a HelmRelease's own release is never read as a
// release no HelmRelease manages.
func TestArtifactNamedByFlag(t *testing.T) {
	docs := []string{
		hr("nodes-x", `  chartRef: {kind: ExternalArtifact, name: tenant-nodes, namespace: cozy-system}`),
		hr("nodes-y", `  chartRef: {kind: OCIRepository, name: workers}`),
		hr("nodes-z", `  chart: {spec: {chart: kubernetes-nodes, sourceRef: {kind: HelmRepository, name: apps, namespace: platform}}}`),
	}
	assert.Empty(t, read(t, opts, docs...).Pools)

	flagged := read(t, fleet.Options{Chart: "kubernetes-nodes", Artifacts: []string{"cozy-system/tenant-nodes", "HelmRepository/platform/apps"}}, docs...)
	require.Equal(t, []string{"tenant-a/nodes-x", "tenant-a/nodes-z"}, ids(flagged))
	assert.Equal(t, "spec.chartRef ExternalArtifact cozy-system/tenant-nodes (named by --artifact)", flagged.Pools[0].FoundBy)
	assert.Equal(t, "spec.chart kubernetes-nodes from HelmRepository platform/apps (named by --artifact)", flagged.Pools[1].FoundBy)
	assert.Equal(t, []string{"tenant-a/nodes-x"}, ids(read(t, fleet.Options{Chart: "kubernetes-nodes", Artifacts: []string{"ExternalArtifact/cozy-system/tenant-nodes"}}, docs...)))
	assert.Empty(t, read(t, fleet.Options{Chart: "kubernetes-nodes", Artifacts: []string{"OCIRepository/cozy-system/tenant-nodes"}}, docs...).Pools, "a flag naming another kind")
	assert.Empty(t, read(t, fleet.Options{Chart: "kubernetes-nodes", Artifacts: []string{"other/tenant-nodes"}}, docs...).Pools, "a flag naming another namespace")

	for flag, want := range map[string]string{
		"tenant-nodes":        `--artifact "tenant-nodes" names no namespace: give NAMESPACE/tenant-nodes or KIND/NAMESPACE/tenant-nodes`,
		"GitRepository2/ns/x": `--artifact "GitRepository2/ns/x": GitRepository2 is not a kind a HelmRelease takes its chart from (want one of ExternalArtifact, HelmChart, OCIRepository, Bucket, GitRepository, HelmRepository)`,
		"a/b/c/d":             `--artifact "a/b/c/d": want KIND/NAMESPACE/NAME or NAMESPACE/NAME, such as ExternalArtifact/cozy-system/cozystack-kubernetes-nodes-application-kubevirt-kubernetes-nodes`,
		"cozy-system/":        `--artifact "cozy-system/": want KIND/NAMESPACE/NAME`,
	} {
		_, err := fleet.Read(context.Background(), state(t, docs...), fleet.Options{Chart: "kubernetes-nodes", Artifacts: []string{flag}})
		require.Error(t, err, flag)
		assert.Contains(t, err.Error(), want)
	}

	// nodes-y's record names the pool chart: it is no pool all the same,
	// and its release is not read as one no HelmRelease manages.
	withRecords := append(docs,
		record(t, "nodes-y", "tenant-a", "kubernetes-nodes", 2, "deployed", nil),
		record(t, "kubernetes-nodes-a-plain", "tenant-a", "kubernetes-nodes", 1, "deployed", nil),
	)
	f := read(t, opts, withRecords...)
	require.Equal(t, []string{"tenant-a/kubernetes-nodes-a-plain"}, ids(f))
	assert.Equal(t, "Helm release record tenant-a/sh.helm.release.v1.kubernetes-nodes-a-plain.v1 (no HelmRelease)", f.Pools[0].FoundBy)
}

// Flux names the release <name> unless releaseName is set, or, once
// installed, as its status records it (the controller shortens a name longer
// than Helm allows). A HelmRelease is read only as a pool of its own
// namespace: one whose release or record is elsewhere is listed, not read.
func TestReleaseNameAndNamespaceAsFlux(t *testing.T) {
	f := read(t, opts,
		hr("kubernetes-nodes-a-r", poolRef+`
  releaseName: own-name`),
		hr("kubernetes-nodes-a-t", poolRef+`
  targetNamespace: tenant-b`),
		hr("plain-ref", poolRef+`
  releaseName: rel
  storageNamespace: flux-store`),
	)
	require.Equal(t, []string{"tenant-a/kubernetes-nodes-a-r"}, ids(f))
	assert.Equal(t, "own-name", f.Pools[0].Release)
	assert.Equal(t, "tenant-a", f.Pools[0].Namespace)
	assert.Equal(t, []fleet.Ignored{
		{Object: "HelmRelease tenant-a/kubernetes-nodes-a-t", Reason: "installs its release tenant-b-kubernetes-nodes-a-t into namespace tenant-b, not its own namespace tenant-a: a HelmRelease is read only as a pool of its own namespace"},
		{Object: "HelmRelease tenant-a/plain-ref", Reason: "keeps its release record in namespace flux-store, not its own namespace tenant-a: a HelmRelease is read only as a pool of its own namespace"},
	}, f.Ignored)

	long := "kubernetes-nodes-a-pool-with-a-name-longer-than-helm-allows"
	f = read(t, opts, hr(long, poolRef+`
status:
  storageNamespace: tenant-a
  history: [{name: kubernetes-nodes-a-pool-with-a-name-longer-0123456789ab, namespace: tenant-a, chartName: kubernetes-nodes}]`),
		record(t, "kubernetes-nodes-a-pool-with-a-name-longer-0123456789ab", "tenant-a", "kubernetes-nodes", 1, "deployed", nil))
	require.Len(t, f.Pools, 1, "the release its status names")
	assert.Equal(t, "kubernetes-nodes-a-pool-with-a-name-longer-0123456789ab", f.Pools[0].Release)
	assert.Equal(t, "tenant-a", f.Pools[0].Namespace)
	assert.Empty(t, f.Ignored)

	// The status is written by whoever writes the HelmRelease too.
	f = read(t, opts, hr(long, poolRef+`
status:
  history: [{name: kubernetes-nodes-b-w, namespace: tenant-b, chartName: kubernetes-nodes}]`))
	assert.Empty(t, f.Pools)
	require.Len(t, f.Ignored, 1)
	assert.Contains(t, f.Ignored[0].Reason, "installs its release kubernetes-nodes-b-w into namespace tenant-b")
	f = read(t, opts, hr(long, poolRef+`
status: {storageNamespace: tenant-b}`))
	assert.Empty(t, f.Pools)
	assert.Contains(t, f.Ignored[0].Reason, "keeps its release record in namespace tenant-b")
}

// A release of the pool chart that no HelmRelease manages (helm install) is a
// pool with the values it was installed with; one uninstalled with its
// history kept, or one a HelmRelease manages, is not another pool.
func TestPlainHelmInstallIsAPool(t *testing.T) {
	f := read(t, opts,
		record(t, "kubernetes-nodes-c-p", "tenant-c", "kubernetes-nodes", 1, "superseded", map[string]interface{}{"cluster": "old"}),
		record(t, "kubernetes-nodes-c-p", "tenant-c", "kubernetes-nodes", 3, "deployed", map[string]interface{}{"cluster": "c"}),
		record(t, "kubernetes-nodes-c-gone", "tenant-c", "kubernetes-nodes", 2, "uninstalled", nil),
		record(t, "postgres", "tenant-c", "postgres", 1, "deployed", nil),
		hr("kubernetes-nodes-a-x", poolRef),
		record(t, "kubernetes-nodes-a-x", "tenant-a", "kubernetes-nodes", 1, "deployed", nil),
	)
	require.Equal(t, []string{"tenant-a/kubernetes-nodes-a-x", "tenant-c/kubernetes-nodes-c-p"}, ids(f))
	p := f.Pools[1]
	assert.Equal(t, "", p.HelmRelease)
	assert.Equal(t, map[string]interface{}{"cluster": "c"}, p.Values, "the newest version's values")
	assert.Equal(t, "Helm release record tenant-c/sh.helm.release.v1.kubernetes-nodes-c-p.v3 (no HelmRelease)", p.FoundBy)
}

// Cozystack's shape: the cozystack-values Secret brings _cluster, the
// tenant's spec.values go on top.
func TestValuesFromCozystackValues(t *testing.T) {
	f := read(t, opts, cozystackValues,
		hr("kubernetes-nodes-a-w", `  chartRef: {kind: ExternalArtifact, name: cozystack-kubernetes-nodes-application-kubevirt-kubernetes-nodes, namespace: cozy-system}
  valuesFrom: [{kind: Secret, name: cozystack-values}]
  values:
    cluster: a
    _namespace: {host: own}`))
	require.Len(t, f.Pools, 1)
	p := f.Pools[0]
	assert.Empty(t, p.Unresolved)
	assert.Equal(t, map[string]interface{}{
		"cluster": "a",
		"_cluster": map[string]interface{}{
			"osImage": map[string]interface{}{"builtin": map[string]interface{}{}},
			"talos":   map[string]interface{}{"imageFactoryURL": "https://mirror.example"},
		},
		"_namespace": map[string]interface{}{"host": "own"},
	}, p.Values)
}

// A Secret as the API server returns it (data, base64) reads the same.
func TestValuesFromSecretData(t *testing.T) {
	enc := base64.StdEncoding.EncodeToString([]byte("cluster: from-data\n"))
	f := read(t, opts, `apiVersion: v1
kind: Secret
metadata: {name: v, namespace: tenant-a}
data: {values.yaml: `+enc+`}`,
		hr("kubernetes-nodes-a-w", poolRef+`
  valuesFrom: [{kind: Secret, name: v}]`))
	assert.Equal(t, map[string]interface{}{"cluster": "from-data"}, f.Pools[0].Values)
}

func configMap(name, key, value string) string {
	return `apiVersion: v1
kind: ConfigMap
metadata: {name: ` + name + `, namespace: tenant-a}
data:
  ` + key + `: |
    ` + strings.ReplaceAll(value, "\n", "\n    ")
}

func valuesOf(t *testing.T, spec string, docs ...string) fleet.Pool {
	t.Helper()
	f := read(t, opts, append(docs, hr("kubernetes-nodes-a-w", poolRef+"\n"+spec))...)
	require.Len(t, f.Pools, 1)
	return f.Pools[0]
}

// valuesFrom merges in order, later over earlier, maps deeply; spec.values last.
func TestValuesFromOrder(t *testing.T) {
	docs := []string{
		configMap("first", "values.yaml", "diskSize: 10Gi\ntalos: {version: v1.9.0, schematicID: aaa}"),
		configMap("second", "values.yaml", "diskSize: 30Gi\ntalos: {version: v1.10.0}"),
	}
	p := valuesOf(t, `  valuesFrom: [{kind: ConfigMap, name: first}, {kind: ConfigMap, name: second}]
  values: {cluster: a}`, docs...)
	assert.Equal(t, map[string]interface{}{"cluster": "a", "diskSize": "30Gi", "talos": map[string]interface{}{"version": "v1.10.0", "schematicID": "aaa"}}, p.Values)

	p = valuesOf(t, `  valuesFrom: [{kind: ConfigMap, name: second}, {kind: ConfigMap, name: first}]
  values: {diskSize: 50Gi}`, docs...)
	assert.Equal(t, map[string]interface{}{"diskSize": "50Gi", "talos": map[string]interface{}{"version": "v1.9.0", "schematicID": "aaa"}}, p.Values)
}

// valuesKey picks another key; targetPath sets one value at a path.
func TestValuesKeyAndTargetPath(t *testing.T) {
	p := valuesOf(t, `  valuesFrom:
  - {kind: ConfigMap, name: pool, valuesKey: pool.yaml}
  - {kind: ConfigMap, name: version, valuesKey: v, targetPath: talos.version}`,
		configMap("pool", "pool.yaml", "cluster: a\ntalos: {version: v1.9.0}"),
		`apiVersion: v1
kind: ConfigMap
metadata: {name: version, namespace: tenant-a}
data: {v: v1.11.2}`)
	assert.Equal(t, map[string]interface{}{"cluster": "a", "talos": map[string]interface{}{"version": "v1.11.2"}}, p.Values)

	// The neighbour: without valuesKey the key values.yaml is read, absent here.
	p = valuesOf(t, `  valuesFrom: [{kind: ConfigMap, name: pool}]`, configMap("pool", "pool.yaml", "cluster: a"))
	assert.Nil(t, p.Values)
	assert.Equal(t, "could not resolve ConfigMap chart values reference 'tenant-a/pool' with key 'values.yaml': key not found", p.Unresolved)
}

// An optional reference that is missing is skipped; a required one leaves
// the pool unresolved with Flux's reason, never resolved without it.
func TestMissingReferences(t *testing.T) {
	p := valuesOf(t, `  valuesFrom: [{kind: Secret, name: cozystack-values}, {kind: Secret, name: extra, optional: true}]
  values: {cluster: a}`, cozystackValues)
	assert.Empty(t, p.Unresolved)
	assert.Equal(t, "a", p.Values["cluster"])

	p = valuesOf(t, `  valuesFrom: [{kind: Secret, name: cozystack-values}]
  values: {cluster: a}`)
	assert.Nil(t, p.Values)
	assert.Contains(t, p.Unresolved, "could not resolve Secret chart values reference 'tenant-a/cozystack-values' with key 'values.yaml'")

	p = valuesOf(t, `  valuesFrom: [{kind: Secret, name: cozystack-values, valuesKey: other.yaml}]`, cozystackValues)
	assert.Equal(t, "could not resolve Secret chart values reference 'tenant-a/cozystack-values' with key 'other.yaml': key not found", p.Unresolved)

	p = valuesOf(t, `  valuesFrom: [{kind: Secret, name: cozystack-values, valuesKey: other.yaml, optional: true}]
  values: {cluster: a}`, cozystackValues)
	assert.Equal(t, map[string]interface{}{"cluster": "a"}, p.Values)

	p = valuesOf(t, `  valuesFrom: [{kind: Service, name: x}]`)
	assert.Contains(t, p.Unresolved, "unsupported values reference kind")

	p = valuesOf(t, `  valuesFrom: {kind: Secret}`)
	assert.Contains(t, p.Unresolved, "spec.valuesFrom is not a list")
}

// An empty cluster holds no pool and nothing that runs one; a cluster with a
// pool's template or MachineDeployment says so even with no pool readable.
func TestPoolObjects(t *testing.T) {
	f := read(t, opts)
	assert.Empty(t, f.Pools)
	assert.Empty(t, f.PoolObjects)
	assert.Equal(t, 0, f.Resolved())

	f = read(t, opts, `apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1
kind: KubevirtMachineTemplate
metadata: {name: kubernetes-a-w-abc123, namespace: tenant-a}`, `apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata: {name: kubernetes-a-w, namespace: tenant-a}
spec: {template: {spec: {infrastructureRef: {kind: KubevirtMachineTemplate, name: kubernetes-a-w-abc123}}}}`, `apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata: {name: metal, namespace: tenant-a}
spec: {template: {spec: {infrastructureRef: {kind: Metal3MachineTemplate, name: m}}}}`)
	assert.Equal(t, []string{"tenant-a/KubevirtMachineTemplate/kubernetes-a-w-abc123", "tenant-a/MachineDeployment/kubernetes-a-w"}, f.PoolObjects)
}

// Who uses a golden is answered by the catalog chart: its annotated disks in
// any namespace (apart those of no pool), and every KubevirtMachineTemplate
// cloning it, an idle pool's too; a golden nothing uses has none.
func TestGoldenUsersAskTheCatalog(t *testing.T) {
	catalog, err := fleet.CatalogChart()
	require.NoError(t, err)
	st := state(t, `apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata:
  name: disk-1
  namespace: tenant-a
  annotations: {kubernetes-worker-image.cozystack.io/golden: talos-worker-aaa-v1.9.0, kubernetes-worker-image.cozystack.io/pool: kubernetes-a-w}`,
		`apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: stray
  namespace: tenant-b
  annotations: {kubernetes-worker-image.cozystack.io/golden: talos-worker-aaa-v1.9.0, kubernetes-worker-image.cozystack.io/pool: kubernetes-b-gone}`,
		`apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata: {name: kubernetes-a-w, namespace: tenant-a}`,
		`apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1
kind: KubevirtMachineTemplate
metadata: {name: kubernetes-c-idle-abc123, namespace: tenant-c}
spec: {template: {spec: {virtualMachineTemplate: {spec: {dataVolumeTemplates: [{metadata: {name: disk-system}, spec: {source: {pvc: {namespace: cozy-public, name: talos-worker-bbb-v1.9.0}}}}]}}}}}`,
		`apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1
kind: KubevirtMachineTemplate
metadata: {name: elsewhere, namespace: tenant-c}
spec: {template: {spec: {virtualMachineTemplate: {spec: {dataVolumeTemplates: [{metadata: {name: disk-system}, spec: {source: {pvc: {namespace: other, name: talos-worker-ccc-v1.9.0}}}}]}}}}}`,
	)
	u, err := fleet.GoldenUsers(catalog, st, []string{"talos-worker-aaa-v1.9.0", "talos-worker-bbb-v1.9.0", "talos-worker-ccc-v1.9.0"}, nil)
	require.NoError(t, err)
	assert.Equal(t, map[string][]string{
		"talos-worker-aaa-v1.9.0": {"tenant-a/DataVolume/disk-1", "tenant-b/PersistentVolumeClaim/stray"},
		"talos-worker-bbb-v1.9.0": {"tenant-c/KubevirtMachineTemplate/kubernetes-c-idle-abc123"},
		"talos-worker-ccc-v1.9.0": {},
	}, u.Users)
	assert.Equal(t, map[string][]string{"talos-worker-aaa-v1.9.0": {"tenant-b/PersistentVolumeClaim/stray"}}, u.NoPool)

	// An empty cluster, and no names at all.
	u, err = fleet.GoldenUsers(catalog, state(t), []string{"talos-worker-aaa-v1.9.0"}, nil)
	require.NoError(t, err)
	assert.Equal(t, map[string][]string{"talos-worker-aaa-v1.9.0": {}}, u.Users)
	u, err = fleet.GoldenUsers(catalog, state(t), nil, nil)
	require.NoError(t, err)
	assert.Empty(t, u.Users)
}

// crd is a CustomResourceDefinition serving kind at group/version, as
// `kubectl get customresourcedefinitions -o yaml` writes one into a state file.
func crd(group, version, kind, plural string) string {
	return `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: ` + plural + `.` + group + `}
spec:
  group: ` + group + `
  names: {kind: ` + kind + `, plural: ` + plural + `}
  scope: Namespaced
  versions: [{name: ` + version + `, served: true, storage: true}]`
}

// A state file taken with the cluster's CRDs (as docs/cli.md makes one)
// tells a cluster that serves no HelmRelease from one that holds none, as
// discovery does live: pins then says "the cluster serves no HelmRelease"
// on the file too (before, every kind of a file was served, and it said no
// HelmRelease of the pool chart was found).
func TestStateFileWithCRDsServesNoHelmReleaseAsLive(t *testing.T) {
	kmt := crd("infrastructure.cluster.x-k8s.io", "v1alpha1", "KubevirtMachineTemplate", "kubevirtmachinetemplates")
	idle := `apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1
kind: KubevirtMachineTemplate
metadata: {name: kubernetes-a-idle-111111, namespace: tenant-a}`
	f := read(t, opts, kmt, idle)
	assert.False(t, f.HelmReleasesServed, "no CRD serves HelmRelease")
	assert.Equal(t, []string{"tenant-a/KubevirtMachineTemplate/kubernetes-a-idle-111111"}, f.PoolObjects)

	f = read(t, opts, kmt, idle, crd("helm.toolkit.fluxcd.io", "v2", "HelmRelease", "helmreleases"))
	assert.True(t, f.HelmReleasesServed, "its CRD serves HelmRelease, and the file holds none")
}
