package fleet_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Tenants write Secrets (a release record is one) and HelmReleases in their
// own namespaces: a pool is where its objects are, never what a body says.

// cozyPool is a pool HelmRelease as Cozystack creates one in ns, with the
// cozystack-values Secret the platform writes there.
func cozyPool(ns, name, values string) []string {
	return []string{
		`apiVersion: v1
kind: Secret
metadata: {name: cozystack-values, namespace: ` + ns + `}
type: Opaque
stringData:
  values.yaml: |
    _cluster: {osImage: {builtin: {}}}
    _namespace: {host: ` + ns + `.example.org}`,
		`apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: ` + name + `, namespace: ` + ns + `}
spec:
  chartRef: {kind: ExternalArtifact, name: cozystack-kubernetes-nodes-application-kubevirt-kubernetes-nodes, namespace: cozy-system}
  valuesFrom: [{kind: Secret, name: cozystack-values}]
  values: ` + values,
	}
}

// bodyRecord is a record Secret, with Helm's type, name and labels for
// release name in ns, holding body as its release.
func bodyRecord(t *testing.T, ns, name string, body string) string {
	t.Helper()
	obj, err := fleet.EncodeRecordBody(name, ns, 1, "deployed", []byte(body))
	require.NoError(t, err)
	b, err := (&unstructured.Unstructured{Object: obj}).MarshalJSON()
	require.NoError(t, err)
	return string(b)
}

// releaseBody is a release as Helm's JSON writes it: name, info, chart,
// config, manifest, version, namespace.
func releaseBody(name, ns, chart, config string) string {
	return fmt.Sprintf(`{"name":%q,"info":{"status":"deployed","notes":"x"},"chart":{"metadata":{"name":%q,"version":"0.1.0"},"templates":[{"name":"templates/a.yaml","data":"eA=="}],"values":{}},"config":%s,"manifest":"---\n","version":1,"namespace":%q}`, name, chart, config, ns)
}

func poolByKey(f *fleet.Fleet) map[string]fleet.Pool {
	out := map[string]fleet.Pool{}
	for _, p := range f.Pools {
		out[p.Key()] = p
	}
	return out
}

// A record in tenant-evil whose body names acme's pool is listed as
// inconsistent, never read as acme's pool: acme's pool is read once, from its
// own objects, with its own values. The record imitates acme's own record,
// which sits beside it; a consistent record in tenant-evil is evil's pool.
func TestForgedRecordsNeverSpeakForAnotherTenant(t *testing.T) {
	acme := append(cozyPool("tenant-acme", "kubernetes-nodes-acme-workers", "{cluster: acme, talos: {version: v1.13.6}}"),
		record(t, "kubernetes-nodes-acme-workers", "tenant-acme", "kubernetes-nodes", 3, "deployed", map[string]any{"cluster": "acme", "talos": map[string]any{"version": "v1.13.6"}}),
		record(t, "kubernetes-nodes-acme-legacy", "tenant-acme", "kubernetes-nodes", 1, "deployed", map[string]any{"cluster": "acme"}))
	forgedValues := `{"cluster":"acme","osImage":{"builtin":{"schematicID":"evil"}}}`
	docs := append(append([]string{}, acme...),
		// The body names acme's pool; the labels name it too, in evil's namespace.
		bodyRecord(t, "tenant-evil", "kubernetes-nodes-acme-workers", releaseBody("kubernetes-nodes-acme-workers", "tenant-acme", "kubernetes-nodes", forgedValues)),
		// The labels name an evil release; the body names acme's plain helm pool.
		bodyRecord(t, "tenant-evil", "kubernetes-nodes-evil-x", releaseBody("kubernetes-nodes-acme-legacy", "tenant-acme", "kubernetes-nodes", forgedValues)),
	)
	f := read(t, opts, docs...)
	assert.Equal(t, []string{"tenant-acme/kubernetes-nodes-acme-legacy", "tenant-acme/kubernetes-nodes-acme-workers"}, ids(f), "acme's pools, once each, and no other")
	byKey := poolByKey(f)
	assert.Equal(t, "acme", byKey["tenant-acme/kubernetes-nodes-acme-workers"].Values["cluster"])
	assert.NotContains(t, byKey["tenant-acme/kubernetes-nodes-acme-workers"].Values, "osImage", "acme's values, not the forged ones")
	assert.Equal(t, map[string]any{"cluster": "acme"}, byKey["tenant-acme/kubernetes-nodes-acme-legacy"].Values)
	assert.Equal(t, []fleet.Ignored{
		{Object: "Secret tenant-evil/sh.helm.release.v1.kubernetes-nodes-acme-workers.v1", Reason: `Helm release record tenant-evil/sh.helm.release.v1.kubernetes-nodes-acme-workers.v1: its body names release "kubernetes-nodes-acme-workers" in namespace "tenant-acme", not release kubernetes-nodes-acme-workers of its labels in its own namespace tenant-evil`},
		{Object: "Secret tenant-evil/sh.helm.release.v1.kubernetes-nodes-evil-x.v1", Reason: `Helm release record tenant-evil/sh.helm.release.v1.kubernetes-nodes-evil-x.v1: its body names release "kubernetes-nodes-acme-legacy" in namespace "tenant-acme", not release kubernetes-nodes-evil-x of its labels in its own namespace tenant-evil`},
	}, f.Ignored)

	// The neighbour: evil's own record, consistent, is evil's own pool.
	f = read(t, opts, append(append([]string{}, acme...), bodyRecord(t, "tenant-evil", "kubernetes-nodes-evil-x", releaseBody("kubernetes-nodes-evil-x", "tenant-evil", "kubernetes-nodes", `{"cluster":"evil"}`)))...)
	assert.Equal(t, []string{"tenant-acme/kubernetes-nodes-acme-legacy", "tenant-acme/kubernetes-nodes-acme-workers", "tenant-evil/kubernetes-nodes-evil-x"}, ids(f))
	assert.Empty(t, f.Ignored)

	// A record Secret whose name is not the one Helm gives the release its
	// labels name is listed and never read.
	misnamed := strings.Replace(bodyRecord(t, "tenant-evil", "kubernetes-nodes-evil-x", releaseBody("kubernetes-nodes-evil-x", "tenant-evil", "kubernetes-nodes", `{}`)), `"name":"sh.helm.release.v1.kubernetes-nodes-evil-x.v1"`, `"name":"sh.helm.release.v1.kubernetes-nodes-acme-workers.v1"`, 1)
	f = read(t, opts, misnamed)
	assert.Empty(t, f.Pools)
	assert.Equal(t, []fleet.Ignored{{Object: "Secret tenant-evil/sh.helm.release.v1.kubernetes-nodes-acme-workers.v1", Reason: `a Helm release record that names another: its labels name release "kubernetes-nodes-evil-x" version 1, whose record Helm names sh.helm.release.v1.kubernetes-nodes-evil-x.v1`}}, f.Ignored)
}

// A HelmRelease claims its release (so the record is not read twice) only
// when it is a pool, and only in its own namespace: an unrelated chart's
// HelmRelease in tenant-evil whose releaseName and storageNamespace name
// acme's plain helm pool does not hide it; neither does a pool HelmRelease
// that does the same.
func TestHelmReleasesClaimOnlyTheirOwnNamespacesPools(t *testing.T) {
	acmeRecord := record(t, "kubernetes-nodes-acme-legacy", "tenant-acme", "kubernetes-nodes", 2, "deployed", map[string]any{"cluster": "acme"})
	evil := func(chart, extra string) string {
		return `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: hider, namespace: tenant-evil}
spec:
  ` + chart + `
  valuesFrom: [{kind: Secret, name: cozystack-values}]
  releaseName: kubernetes-nodes-acme-legacy
` + extra
	}
	postgres := `chart: {spec: {chart: postgres, sourceRef: {kind: HelmRepository, name: cozystack-apps}}}`
	artifact := `chartRef: {kind: ExternalArtifact, name: cozystack-postgres-application-default-postgres, namespace: cozy-system}`
	pool := `chartRef: {kind: ExternalArtifact, name: cozystack-kubernetes-nodes-application-kubevirt-kubernetes-nodes, namespace: cozy-system}`
	for name, hider := range map[string]string{
		"another chart, spec.storageNamespace":          evil(postgres, "  storageNamespace: tenant-acme\n"),
		"another chart, status.storageNamespace":        evil(postgres, "status: {storageNamespace: tenant-acme}\n"),
		"an artifact naming no chart, storageNamespace": evil(artifact, "  storageNamespace: tenant-acme\n"),
		"the pool chart, spec.storageNamespace":         evil(pool, "  storageNamespace: tenant-acme\n"),
		"the pool chart, targetNamespace":               evil(pool, "  targetNamespace: tenant-acme\n  storageNamespace: tenant-acme\n"),
	} {
		f := read(t, opts, append(cozyPool("tenant-evil", "x", "{}")[:1], acmeRecord, hider)...)
		require.Equal(t, []string{"tenant-acme/kubernetes-nodes-acme-legacy"}, ids(f), name)
		assert.Equal(t, map[string]any{"cluster": "acme"}, f.Pools[0].Values, name)
		assert.Equal(t, "Helm release record tenant-acme/sh.helm.release.v1.kubernetes-nodes-acme-legacy.v2 (no HelmRelease)", f.Pools[0].FoundBy, name)
		if !strings.HasPrefix(name, "the pool chart") {
			assert.Empty(t, f.Ignored, "%s: a HelmRelease of another chart is no pool: nothing to list", name)
		} else {
			// A pool's HelmRelease that speaks for another namespace: listed.
			require.Len(t, f.Ignored, 1, name)
			assert.Equal(t, "HelmRelease tenant-evil/hider", f.Ignored[0].Object, name)
			assert.Contains(t, f.Ignored[0].Reason, "keeps its release record in namespace tenant-acme, not its own namespace tenant-evil", name)
		}
	}

	// The neighbour: acme's own pool HelmRelease claims its record, read once.
	f := read(t, opts, append(cozyPool("tenant-acme", "kubernetes-nodes-acme-legacy", "{cluster: acme, minReplicas: 2}"), acmeRecord)...)
	require.Equal(t, []string{"tenant-acme/kubernetes-nodes-acme-legacy"}, ids(f))
	assert.Equal(t, "spec.chartRef ExternalArtifact cozy-system/cozystack-kubernetes-nodes-application-kubevirt-kubernetes-nodes", f.Pools[0].FoundBy)
	assert.EqualValues(t, 2, f.Pools[0].Values["minReplicas"], "the HelmRelease's values, Flux's")

	// Two pool HelmReleases of one namespace deploying one release: one pool,
	// not resolved, naming both.
	two := append(cozyPool("tenant-acme", "kubernetes-nodes-acme-legacy", "{cluster: acme}"), `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: second, namespace: tenant-acme}
spec:
  chartRef: {kind: ExternalArtifact, name: cozystack-kubernetes-nodes-application-kubevirt-kubernetes-nodes, namespace: cozy-system}
  releaseName: kubernetes-nodes-acme-legacy`)
	f = read(t, opts, two...)
	require.Len(t, f.Pools, 1)
	assert.Equal(t, "HelmReleases tenant-acme/kubernetes-nodes-acme-legacy and tenant-acme/second both deploy release tenant-acme/kubernetes-nodes-acme-legacy; which values it runs with is not known", f.Pools[0].Unresolved)
	assert.Nil(t, f.Pools[0].Values)
}

// A record that cannot be decoded is listed and skipped, as helm list skips
// it; every other pool is read.
func TestUndecodableRecordsAreListedAndSkipped(t *testing.T) {
	secret := func(ns, name, release string) string {
		return fmt.Sprintf(`apiVersion: v1
kind: Secret
type: helm.sh/release.v1
metadata:
  name: sh.helm.release.v1.%[2]s.v1
  namespace: %[1]s
  labels: {owner: helm, name: %[2]s, status: deployed, version: "1"}
data: {release: %[3]s}`, ns, name, release)
	}
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	cases := map[string]struct{ doc, reason string }{
		"not base64":     {secret("tenant-evil", "a", "'!!!'"), "data.release is not base64"},
		"inner base64":   {secret("tenant-evil", "a", b64("!!!")), "the release is not base64"},
		"not gzip":       {secret("tenant-evil", "a", b64(base64.StdEncoding.EncodeToString([]byte("\x1f\x8b\x08garbage")))), "the release is not gzip"},
		"not JSON":       {bodyRecord(t, "tenant-evil", "a", "{not json"), "the release is not JSON of a Helm release"},
		"a JSON list":    {bodyRecord(t, "tenant-evil", "a", "[1]"), "the release is not JSON of a Helm release"},
		"truncated JSON": {bodyRecord(t, "tenant-evil", "a", `{"name":"a","chart":{"metadata":{"name":"kubernetes-nodes"}},"config":{`), "the release is not JSON of a Helm release"},
	}
	acme := append(cozyPool("tenant-acme", "kubernetes-nodes-acme-w", "{cluster: acme}"),
		record(t, "kubernetes-nodes-acme-plain", "tenant-acme", "kubernetes-nodes", 1, "deployed", map[string]any{"cluster": "acme"}))
	for name, c := range cases {
		f := read(t, opts, append(append([]string{}, acme...), c.doc)...)
		assert.Equal(t, []string{"tenant-acme/kubernetes-nodes-acme-plain", "tenant-acme/kubernetes-nodes-acme-w"}, ids(f), name)
		require.Len(t, f.Ignored, 1, name)
		assert.Equal(t, "Secret tenant-evil/sh.helm.release.v1.a.v1", f.Ignored[0].Object, name)
		assert.Contains(t, f.Ignored[0].Reason, c.reason, name)
	}

	// A pool record whose values are not a map: the pool is there, its
	// values are not readable, so it is listed as not resolved.
	f := read(t, opts, bodyRecord(t, "tenant-evil", "kubernetes-nodes-evil-w", releaseBody("kubernetes-nodes-evil-w", "tenant-evil", "kubernetes-nodes", `"cluster: evil"`)))
	require.Equal(t, []string{"tenant-evil/kubernetes-nodes-evil-w"}, ids(f))
	assert.Equal(t, "its Helm release record's values: its values (config) are a string, not a map", f.Pools[0].Unresolved)
	// Another chart's record with a string config is never read that far.
	f = read(t, opts, bodyRecord(t, "tenant-evil", "db", releaseBody("db", "tenant-evil", "postgres", `"x"`)))
	assert.Empty(t, f.Pools)
	assert.Empty(t, f.Ignored)

	// A HelmRelease whose chart reference is not the pool chart is no pool,
	// whatever its record says (a tenant writes its own Secrets): its
	// record, readable or not, is not read.
	hrOf := func(name string) string {
		return `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: ` + name + `, namespace: tenant-evil}
spec: {chartRef: {kind: OCIRepository, name: workers}}`
	}
	f = read(t, opts, hrOf("a"), cases["not JSON"].doc, hrOf("b"), record(t, "b", "tenant-evil", "kubernetes-nodes", 1, "deployed", nil))
	assert.Empty(t, f.Pools)
	assert.Empty(t, f.Ignored)
}

// What a record costs is bounded before it is decoded: a record unzipping
// past the bound is listed unread; a record of another chart is read no
// further than its chart's name, whatever follows, in any order; a pool
// record's values are bounded in elements before they are decoded.
func TestRecordBoundsBeforeDecoding(t *testing.T) {
	lists := func(n int) string { return "[" + strings.TrimSuffix(strings.Repeat("[],", n), ",") + "]" }
	// A gzip bomb: a few KiB that unzip to 6 MiB.
	bomb := bodyRecord(t, "tenant-evil", "kubernetes-nodes-evil-w", releaseBody("kubernetes-nodes-evil-w", "tenant-evil", "kubernetes-nodes", lists(2<<20)))
	require.Less(t, len(bomb), 64<<10)
	f := read(t, opts, bomb)
	assert.Empty(t, f.Pools)
	require.Len(t, f.Ignored, 1)
	assert.Contains(t, f.Ignored[0].Reason, "larger than 2 MiB unzipped")

	// Another chart's record: its config, before or after the chart, and
	// anything after the chart's name, are never decoded.
	for name, body := range map[string]string{
		"config first":       `{"config":` + lists(100000) + `,"name":"db","chart":{"metadata":{"name":"postgres"}}}`,
		"garbage after name": `{"name":"db","chart":{"metadata":{"name":"postgres"}},"config": not json at all`,
	} {
		f = read(t, opts, bodyRecord(t, "tenant-evil", "db", body))
		assert.Empty(t, f.Pools, name)
		assert.Empty(t, f.Ignored, name)
	}
	// The pool chart with its config first: read, in the same bounds.
	f = read(t, opts, bodyRecord(t, "tenant-evil", "kubernetes-nodes-evil-w", `{"config":{"cluster":"evil"},"name":"kubernetes-nodes-evil-w","chart":{"metadata":{"name":"kubernetes-nodes"}},"namespace":"tenant-evil"}`))
	require.Len(t, f.Pools, 1)
	assert.Equal(t, map[string]any{"cluster": "evil"}, f.Pools[0].Values)

	// A pool record whose values hold more elements than a pool's values may.
	f = read(t, opts, bodyRecord(t, "tenant-evil", "kubernetes-nodes-evil-w", releaseBody("kubernetes-nodes-evil-w", "tenant-evil", "kubernetes-nodes", `{"_namespace":{"x":`+lists(fleet.MaxValuesElements)+`}}`)))
	require.Len(t, f.Pools, 1)
	assert.Contains(t, f.Pools[0].Unresolved, fmt.Sprintf("more than %d elements", fleet.MaxValuesElements))
	assert.Nil(t, f.Pools[0].Values)
	// The neighbour at the bound is read.
	f = read(t, opts, bodyRecord(t, "tenant-evil", "kubernetes-nodes-evil-w", releaseBody("kubernetes-nodes-evil-w", "tenant-evil", "kubernetes-nodes", `{"_namespace":{"x":`+lists(fleet.MaxValuesElements-4)+`}}`)))
	require.Len(t, f.Pools, 1)
	assert.Empty(t, f.Pools[0].Unresolved)
}

// A namespace that holds pool objects and no readable pool is listed,
// whatever other namespaces hold: a record forged in another namespace does
// not make it read.
func TestUnreadNamespaces(t *testing.T) {
	objects := []string{
		`apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata: {name: kubernetes-acme-w, namespace: tenant-acme}
spec: {template: {spec: {infrastructureRef: {kind: KubevirtMachineTemplate, name: kubernetes-acme-w-abc123}}}}`,
		`apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1
kind: KubevirtMachineTemplate
metadata: {name: kubernetes-acme-w-abc123, namespace: tenant-acme}`,
		`apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata: {name: kubernetes-beta-w, namespace: tenant-beta}`,
	}
	forged := bodyRecord(t, "tenant-evil", "kubernetes-nodes-acme-w", releaseBody("kubernetes-nodes-acme-w", "tenant-acme", "kubernetes-nodes", `{"cluster":"acme"}`))
	beta := record(t, "kubernetes-nodes-beta-w", "tenant-beta", "kubernetes-nodes", 1, "deployed", map[string]any{"cluster": "beta"})
	f := read(t, opts, append(append([]string{}, objects...), forged, beta)...)
	assert.Equal(t, []fleet.UnreadNamespace{{Namespace: "tenant-acme", Objects: []string{"tenant-acme/KubevirtMachineTemplate/kubernetes-acme-w-abc123", "tenant-acme/MachineDeployment/kubernetes-acme-w"}}}, f.Unread())
	assert.Equal(t, 1, f.Resolved(), "beta's pool reads")

	// acme's pool readable: nothing unread. A pool whose values do not
	// resolve does not count as read.
	f = read(t, opts, append(append(append([]string{}, objects...), beta), cozyPool("tenant-acme", "kubernetes-nodes-acme-w", "{cluster: acme}")...)...)
	assert.Empty(t, f.Unread())
	f = read(t, opts, append(append(append([]string{}, objects...), beta), cozyPool("tenant-acme", "kubernetes-nodes-acme-w", "{cluster: acme}")[1])...)
	assert.Equal(t, "tenant-acme", f.Unread()[0].Namespace)
}

// The values Flux would compute are bounded before they are merged: a
// targetPath value whose commas spell keys of long lists, a document whose
// YAML aliases expand past the bound, a document merged too many times.
// Each neighbour within the bounds reads as Flux computes it.
func TestValuesBoundsBeforeMerging(t *testing.T) {
	var commas strings.Builder
	commas.WriteString("v1.13.6")
	for i := 0; i < 3; i++ {
		fmt.Fprintf(&commas, ",k%d[65535]=1", i)
	}
	p := valuesOf(t, "  valuesFrom: [{kind: ConfigMap, name: v, valuesKey: v, targetPath: talos.version}]",
		`apiVersion: v1
kind: ConfigMap
metadata: {name: v, namespace: tenant-a}
data: {v: "`+commas.String()+`"}`)
	assert.Contains(t, p.Unresolved, fmt.Sprintf("merges more than %d elements", fleet.MaxValuesElements))
	assert.Nil(t, p.Values)
	p = valuesOf(t, "  valuesFrom: [{kind: ConfigMap, name: v, valuesKey: v, targetPath: talos.version}]",
		`apiVersion: v1
kind: ConfigMap
metadata: {name: v, namespace: tenant-a}
data: {v: "v1.13.6,k[2]=1"}`)
	assert.Empty(t, p.Unresolved)
	assert.Equal(t, map[string]any{"talos": map[string]any{"version": "v1.13.6"}, "k": []any{nil, nil, int64(1)}}, p.Values)

	bomb := "a: &a [" + strings.TrimSuffix(strings.Repeat("{a: 1},", 1300), ",") + "]\nb: [" + strings.TrimSuffix(strings.Repeat("*a,", 98), ",") + "]\n"
	p = valuesOf(t, "  valuesFrom: [{kind: ConfigMap, name: aliases}]", configMap("aliases", "values.yaml", bomb))
	assert.Contains(t, p.Unresolved, fmt.Sprintf("its YAML aliases expand to more than %d values", fleet.MaxValuesElements))
	p = valuesOf(t, "  valuesFrom: [{kind: ConfigMap, name: aliases}]", configMap("aliases", "values.yaml", "a: &a {x: 1}\nb: *a\nhost: '*.example.org'"))
	assert.Equal(t, map[string]any{"a": map[string]any{"x": float64(1)}, "b": map[string]any{"x": float64(1)}, "host": "*.example.org"}, p.Values)

	big := configMap("big", "values.yaml", "_namespace:\n"+strings.Repeat("  k: v\n", 1)+func() string {
		var b strings.Builder
		for i := 0; i < 2000; i++ {
			fmt.Fprintf(&b, "  k%05d: v\n", i)
		}
		return b.String()
	}())
	refs := func(n int) string {
		return "  valuesFrom: [" + strings.TrimSuffix(strings.Repeat("{kind: ConfigMap, name: big},", n), ",") + "]"
	}
	p = valuesOf(t, refs(200), big)
	assert.Contains(t, p.Unresolved, fmt.Sprintf("merges more than %d elements", fleet.MaxValuesElements))
	p = valuesOf(t, refs(2), big)
	assert.Empty(t, p.Unresolved)
	assert.Len(t, p.Values["_namespace"], 2001)

	// spec.values itself is counted.
	huge := make([]any, fleet.MaxValuesElements+1)
	for i := range huge {
		huge[i] = 0
	}
	own, err := json.Marshal(map[string]any{"roles": huge})
	require.NoError(t, err)
	p = valuesOf(t, "  values: "+string(own))
	assert.Contains(t, p.Unresolved, fmt.Sprintf("merges more than %d elements", fleet.MaxValuesElements))
}
