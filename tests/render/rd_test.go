package render

import (
	"encoding/json"
	"fmt"
	"helm.sh/helm/v3/pkg/chart"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/rdschema"
	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chartutil"
	internalapiext "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

const rdChart = "packages/system/kubernetes-nodes-rd"

// renderRD renders the kubernetes-nodes-rd chart as the Cozystack operator
// installs it (release kubernetes-nodes-golden-rd in cozy-system).
func renderRD(t testing.TB, values map[string]any) (*render.Manifest, error) {
	t.Helper()
	chrt, err := support.LoadChart(rdChart)
	require.NoError(t, err)
	return render.Render(chrt, render.Options{
		Release: render.Release{Name: "kubernetes-nodes-golden-rd", Namespace: "cozy-system"},
		Values:  values,
	})
}

// ourRD is the ApplicationDefinition the chart renders with its defaults.
func ourRD(t testing.TB) map[string]any {
	t.Helper()
	m, err := renderRD(t, nil)
	require.NoError(t, err)
	require.Len(t, m.Docs, 1, "the chart renders the ApplicationDefinition alone")
	d := doc(t, m, "ApplicationDefinition")
	require.Equal(t, "kubernetes-nodes", d.Name())
	return d.Object
}

// upstreamRD is upstream Cozystack's ApplicationDefinition kubernetes-nodes.
func upstreamRD(t testing.TB) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(support.Fixture("cozystack/kubernetes-nodes-rd.yaml"))
	require.NoError(t, err)
	out := map[string]any{}
	require.NoError(t, yaml.Unmarshal(raw, &out))
	return out
}

// poolInternalKeys are the pool chart's top-level keys no tenant writes
// (Helm's global, its dependencies' keys), from its Chart.yaml.
func poolInternalKeys(t testing.TB) []string {
	t.Helper()
	chartYAML, err := os.ReadFile(support.Path(rdschema.PoolChart, "Chart.yaml"))
	require.NoError(t, err)
	internal, err := rdschema.InternalKeys(chartYAML)
	require.NoError(t, err)
	return internal
}

// schemaDrift says how an ApplicationDefinition's openAPISchema differs from
// the pool chart's values.schema.json: byte for byte the generator's output
// (same JSON, key order kept), so nil only when `make generate` ran on this
// schema.
func schemaDrift(t testing.TB, openAPISchema string, poolSchema []byte) error {
	want, err := rdschema.OpenAPISchema(poolSchema, poolInternalKeys(t))
	if err != nil {
		return err
	}
	if openAPISchema == strings.TrimSpace(string(want)) {
		return nil
	}
	return fmt.Errorf("the ApplicationDefinition's openAPISchema is not %s (%d bytes against %d): run make generate", rdschema.PoolSchema, len(openAPISchema), len(strings.TrimSpace(string(want))))
}

// The rendered openAPISchema is the pool chart's schema as the generator
// writes it, and the check fails when they drift: a schema with one
// description changed, or a key moved.
func TestRDOpenAPISchemaIsThePoolChartsSchema(t *testing.T) {
	got := render.Get(ourRD(t), "spec.application.openAPISchema").(string)
	pool, err := os.ReadFile(support.Path(rdschema.PoolSchema))
	require.NoError(t, err)
	require.NoError(t, schemaDrift(t, got, pool))

	for _, unsupported := range []string{`"$schema"`, `"$ref"`, `"definitions"`, `"if"`, `"then"`, `"x-not-defaulted"`} {
		assert.NotContains(t, got, unsupported, "cozystack-api's structural schema refuses it, or it is the generator's own")
	}

	drifted := strings.Replace(string(pool), `"GPUs passed through to each worker."`, `"GPUs."`, 1)
	require.NotEqual(t, string(pool), drifted)
	assert.ErrorContains(t, schemaDrift(t, got, []byte(drifted)), "run make generate")
	// Same JSON, another key order: the form's order would move.
	var top map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(pool, &top))
	reordered, err := json.Marshal(top) // keys sorted
	require.NoError(t, err)
	assert.Error(t, schemaDrift(t, got, reordered))
	_, err = rdschema.OpenAPISchema([]byte("{"), nil)
	assert.ErrorContains(t, err, rdschema.PoolSchema+" is not JSON")
}

// The openAPISchema accepts and refuses what the pool chart's own schema
// states, its x-form rules merged (references inlined and internal keys left
// out change nothing), and refuses all that Helm's reading of it (x-form
// left to the templates) refuses: the pool
// chart with its schema replaced by the ApplicationDefinition's, over every
// example pool, every committed golden pool's values, and values each
// reference's target refuses. The ApplicationDefinition's validates what a
// tenant's form holds: the values without the keys Helm adds (global, the
// libraries') and the platform's "_" keys (cozystack-api strips them).
func TestRDSchemaValidatesAsThePoolChartsSchema(t *testing.T) {
	openAPI := render.Get(ourRD(t), "spec.application.openAPISchema").(string)
	inputs := map[string]map[string]any{}
	for _, glob := range []string{"examples/pools/*.yaml", "tests/render/testdata/golden/pool-*.values.yaml"} {
		files, err := filepath.Glob(support.Path(glob))
		require.NoError(t, err)
		require.NotEmpty(t, files, glob)
		for _, f := range files {
			v, err := render.ReadValues(f)
			require.NoError(t, err)
			inputs[f] = v
		}
	}
	for _, snippet := range []string{
		"{cluster: acme, diskSize: 20Gx}",
		"{cluster: acme, diskSize: -1}",
		"{cluster: acme, podCpuLimit: abc}",
		"{cluster: acme, resources: {cpu: 2, memory: 4G0}}",
		"{cluster: acme, talos: {registryMirrors: {docker.io: {endpoints: [1]}}}}",
		"{cluster: acme, talos: {imageFactoryCA: not-a-pem}}",
		"{cluster: acme, osImage: {builtin: {storageClass: BAD}}}",
		"{cluster: acme, diskSize: 30Gi, podCpuLimit: 2, podCpuRequest: 500m, resources: {cpu: 2, memory: 4Gi}}",
		"{cluster: acme, roles: [a, a]}",
		"{cluster: acme, roles: [" + strings.Repeat("r,", 32) + "r]}",
		"{cluster: acme, roles: [" + strings.Repeat("r,", 31) + "s]}",
		"{cluster: acme, gpus: [{name: 'bad name'}]}",
		"{cluster: acme, gpus: [" + strings.Repeat("{name: nvidia.com/x},", 16) + "{name: nvidia.com/x}]}",
		"{cluster: acme, gpus: [{name: nvidia.com/AD102GL_L40S}]}",
		"{cluster: acme, talos: {registryMirrors: {docker.io: {endpoints: []}}}}",
		"{cluster: acme, talos: {registryMirrors: {docker.io: {endpoints: [" + strings.Repeat("'https://m.example',", 16) + "'https://m.example']}}}}",
		"{cluster: acme, talos: {registryMirrors: {docker.io: {endpoints: ['https://m.example']}}}}",
		"{cluster: acme, talos: {version: v1.13}}",
		"{cluster: acme, talos: {schematicID: ABC}}",
		"{cluster: acme, osImage: {factory: {imageFactoryURL: 'https://f.internal:99999'}}}",
		"{cluster: acme, osImage: {builtin: {}, factory: {}}}",
		"{cluster: acme, osImage: null}",
		"{cluster: acme, osImage: {builtin: false}}",
		"{cluster: acme, version: v1.35.99}",
		"{cluster: ''}",
		"{storageClass: fast}",
	} {
		inputs[snippet] = vals(t, snippet)
	}
	internal := poolInternalKeys(t)
	raw, err := os.ReadFile(support.Path(rdschema.PoolSchema))
	require.NoError(t, err)
	form, err := rdschema.Form(raw, rdschema.PoolSchema)
	require.NoError(t, err)
	refused := 0
	for name, v := range inputs {
		pool, err := support.LoadChart(render.PoolChart)
		require.NoError(t, err)
		full, err := chartutil.CoalesceValues(pool, v)
		require.NoError(t, err)
		asHelm := chartutil.ValidateAgainstSchema(pool, full)
		asPool := chartutil.ValidateAgainstSingleSchema(full, form)
		spec := map[string]interface{}{}
		for k, val := range full {
			if !strings.HasPrefix(k, "_") && !slices.Contains(internal, k) {
				spec[k] = val
			}
		}
		asApp := chartutil.ValidateAgainstSingleSchema(spec, []byte(openAPI))
		assert.Equal(t, asPool == nil, asApp == nil, "%s: the pool chart's schema says %v, the ApplicationDefinition's %v", name, asPool, asApp)
		if asHelm != nil {
			assert.Error(t, asApp, "%s: what Helm's schema refuses, the form refuses", name)
		}
		if asPool != nil {
			refused++
		}
	}
	assert.GreaterOrEqual(t, refused, 22, "the refusals above must reach the schema")
}

// Everything upstream's ApplicationDefinition says is said the same, but for
// chartRef, the schema, and keysOrder (upstream's order, this chart's keys
// added): annotations, kind and names, release prefix and labels, dashboard,
// secrets and services.
func TestRDIsUpstreamsButTheChartAndSchema(t *testing.T) {
	ours, up := ourRD(t), upstreamRD(t)
	assert.Equal(t, map[string]any{"kind": "ExternalArtifact", "name": "kubernetes-nodes-golden-kubevirt-kubernetes-nodes", "namespace": "cozy-system"}, render.Get(ours, "spec.release.chartRef"))
	assert.Equal(t, "cozystack-kubernetes-nodes-application-kubevirt-kubernetes-nodes", render.Get(up, "spec.release.chartRef.name"))
	upKeys := render.Get(up, "spec.dashboard.keysOrder").([]any)
	ourKeys := render.Get(ours, "spec.dashboard.keysOrder").([]any)

	strip := func(o map[string]any) map[string]any {
		c := deepCopy(o)
		spec := c["spec"].(map[string]any)
		delete(spec["application"].(map[string]any), "openAPISchema")
		delete(spec["release"].(map[string]any), "chartRef")
		delete(spec["dashboard"].(map[string]any), "keysOrder")
		return c
	}
	assert.Equal(t, strip(up), strip(ours))
	assert.Equal(t, "15m", render.Get(ours, "metadata.annotations[release.cozystack.io/helm-install-timeout]"))
	assert.Equal(t, "true", render.Get(ours, "metadata.annotations[release.cozystack.io/helm-install-disable-wait]"))

	// keysOrder: upstream's entries, in upstream's order, each once.
	i := 0
	for _, k := range ourKeys {
		if i < len(upKeys) && reflect.DeepEqual(k, upKeys[i]) {
			i++
		}
	}
	assert.Equal(t, len(upKeys), i, "upstream's keysOrder is not kept in order; first missing: %v", upKeys[min(i, len(upKeys)-1)])
	seen := map[string]bool{}
	for _, k := range ourKeys {
		key := fmt.Sprint(k)
		assert.False(t, seen[key], "keysOrder names %s twice", key)
		seen[key] = true
	}
	// The form holds every field a tenant sets, each in its place, and no key
	// a tenant never sets: Helm's global, the platform's _* and the
	// libraries' keys are not in the schema at all.
	var schema map[string]any
	require.NoError(t, json.Unmarshal([]byte(render.Get(ours, "spec.application.openAPISchema").(string)), &schema))
	properties := schema["properties"].(map[string]any)
	for _, internal := range append([]string{"_cluster", "_namespace"}, poolInternalKeys(t)...) {
		assert.NotContains(t, properties, internal, "the form would show %s", internal)
	}
	assert.Contains(t, poolInternalKeys(t), "worker-image-lib")
	assert.Contains(t, poolInternalKeys(t), "kubernetes-nodes-lib")
	for name := range properties {
		assert.True(t, seen[fmt.Sprint([]any{"spec", name})], "keysOrder has no [spec %s]", name)
	}
}

// The dashboard's hints (x-cozystack-options: the form's pickers for classes,
// instancetypes and GPUs) sit where upstream's schema has them.
func TestRDKeepsUpstreamsFormHints(t *testing.T) {
	var ours, up any
	require.NoError(t, json.Unmarshal([]byte(render.Get(ourRD(t), "spec.application.openAPISchema").(string)), &ours))
	require.NoError(t, json.Unmarshal([]byte(render.Get(upstreamRD(t), "spec.application.openAPISchema").(string)), &up))
	hints := func(s any) map[string]any {
		out := map[string]any{}
		var walk func(path string, v any)
		walk = func(path string, v any) {
			switch n := v.(type) {
			case map[string]any:
				for k, c := range n {
					if k == "x-cozystack-options" {
						out[path] = c
						continue
					}
					walk(path+"/"+k, c)
				}
			case []any:
				for i, c := range n {
					walk(fmt.Sprintf("%s/%d", path, i), c)
				}
			}
		}
		walk("", s)
		return out
	}
	upHints := hints(up)
	require.Len(t, upHints, 3, "upstream's schema: storageClass, instanceType, gpus[].name")
	assert.Equal(t, upHints, hints(ours))
}

// The chart refuses upstream's own pool chart artifact, saying why and what
// to do; another artifact (an operator's PackageSource of another name) renders.
func TestRDRefusesUpstreamsArtifact(t *testing.T) {
	_, err := renderRD(t, vals(t, "chartRef: {kind: ExternalArtifact, name: cozystack-kubernetes-nodes-application-kubevirt-kubernetes-nodes, namespace: cozy-system}"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `chartRef.name "cozystack-kubernetes-nodes-application-kubevirt-kubernetes-nodes" is upstream Cozystack's pool chart artifact`)
	assert.Contains(t, err.Error(), "rollcheck")

	m, err := renderRD(t, vals(t, "chartRef: {kind: ExternalArtifact, name: addons-kubernetes-nodes-kubevirt-kubernetes-nodes, namespace: cozy-system}"))
	require.NoError(t, err)
	assert.Equal(t, "addons-kubernetes-nodes-kubevirt-kubernetes-nodes", render.Get(doc(t, m, "ApplicationDefinition").Object, "spec.release.chartRef.name"))

	_, err = renderRD(t, vals(t, "chartRef: {kind: GitRepository, name: x, namespace: cozy-system}"))
	assert.ErrorContains(t, err, "/chartRef/kind", "kind outside Flux's chartRef kinds is refused by the schema")
}

func deepCopy(o map[string]any) map[string]any {
	raw, err := json.Marshal(o)
	if err != nil {
		panic(err)
	}
	out := map[string]any{}
	if err := json.Unmarshal(raw, &out); err != nil {
		panic(err)
	}
	return out
}

// specSchema builds the structural schema cozystack-api defaults with, as it
// does (pkg/registry/apps/application/rest.go, buildSpecSchema, upstream main
// 3c780acd4): JSON into apiextensions v1, converted to internal, made
// structural.
func specSchema(raw string) (*structuralschema.Structural, error) {
	var v1 apiextv1.JSONSchemaProps
	if err := json.Unmarshal([]byte(raw), &v1); err != nil {
		return nil, err
	}
	scheme := runtime.NewScheme()
	if err := internalapiext.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := apiextv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	var internal internalapiext.JSONSchemaProps
	if err := scheme.Convert(&v1, &internal, nil); err != nil {
		return nil, err
	}
	return structuralschema.NewStructural(&internal)
}

// applyDefaults is cozystack-api's defaulting on read (rest_defaulting.go,
// upstream main 3c780acd4), which the next edit of a pool persists: a property
// left out takes its default; objects and arrays that are present are walked
// (properties, items, additionalProperties); a present null object or array
// becomes its default, else {} or []; a null scalar takes its default. The
// root object takes no default of its own.
func applyDefaults(v any, s *structuralschema.Structural, root bool) any {
	if s == nil {
		return v
	}
	kind := s.Type
	if kind == "" {
		switch {
		case len(s.Properties) > 0 || (s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil):
			kind = "object"
		case s.Items != nil:
			kind = "array"
		}
	}
	switch kind {
	case "object":
		m, ok := v.(map[string]any)
		if !ok || m == nil {
			if d, isMap := s.Default.Object.(map[string]any); isMap && !root {
				m = cloneJSON(d).(map[string]any)
			}
			if m == nil {
				m = map[string]any{}
			}
		}
		for name, ps := range s.Properties {
			if _, present := m[name]; !present && ps.Default.Object != nil {
				m[name] = cloneJSON(ps.Default.Object)
			}
			if cur, present := m[name]; present {
				m[name] = applyDefaults(cur, &ps, false)
			}
		}
		if s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil {
			for k, cur := range m {
				if _, known := s.Properties[k]; !known {
					m[k] = applyDefaults(cur, s.AdditionalProperties.Structural, false)
				}
			}
		}
		return m
	case "array":
		l, ok := v.([]any)
		if !ok || l == nil {
			if d, isList := s.Default.Object.([]any); isList {
				l = cloneJSON(d).([]any)
			}
			if l == nil {
				l = []any{}
			}
		}
		for i := range l {
			l[i] = applyDefaults(l[i], s.Items, false)
		}
		return l
	default:
		if v == nil && s.Default.Object != nil {
			return cloneJSON(s.Default.Object)
		}
		return v
	}
}

// The defaulting above, on a schema that has defaults, writes them where
// cozystack-api does: so the test below, on a schema with few or none, is
// the real walk and not a no-op.
func TestCozystackDefaultingWritesDefaults(t *testing.T) {
	s, err := specSchema(`{"type":"object","default":{"root":1},"properties":{
		"a":{"type":"string","default":"x"},
		"b":{"type":"object","properties":{"c":{"type":"integer","default":3}}},
		"n":{"type":"object","default":{"k":"v"}},
		"l":{"type":"array","items":{"type":"object","properties":{"d":{"type":"boolean","default":true}}}}}}`)
	require.NoError(t, err)
	got := applyDefaults(map[string]any{"b": map[string]any{}, "n": nil, "l": []any{map[string]any{}}}, s, true)
	assert.Equal(t, map[string]any{
		"a": "x",
		"b": map[string]any{"c": int64(3)},
		"n": map[string]any{"k": "v"},
		"l": []any{map[string]any{"d": true}},
	}, normalise(t, got))
}

func normalise(t testing.TB, v any) any {
	t.Helper()
	raw, err := json.Marshal(v)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m))
	return fixInts(m)
}

// cloneJSON copies a decoded JSON value, so a default written into one pool's
// values is never shared with the schema.
func cloneJSON(v any) any {
	switch n := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(n))
		for k, c := range n {
			out[k] = cloneJSON(c)
		}
		return out
	case []any:
		out := make([]any, len(n))
		for i, c := range n {
			out[i] = cloneJSON(c)
		}
		return out
	}
	return v
}

// fixInts turns JSON's float64 whole numbers into int64, as the schema's
// defaults decode.
func fixInts(v any) any {
	switch n := v.(type) {
	case map[string]any:
		for k, c := range n {
			n[k] = fixInts(c)
		}
	case []any:
		for i, c := range n {
			n[i] = fixInts(c)
		}
	case float64:
		if n == float64(int64(n)) {
			return int64(n)
		}
	}
	return v
}

// cozystack-api applies the schema's defaults when it reads a pool, and the
// next edit (the dashboard's form, kubectl edit) writes them into the pool's
// values: every example pool, with every default of the schema the
// ApplicationDefinition carries written in, renders byte for byte as without
// (or is refused the same way).
func TestSchemaDefaultsWrittenRenderTheSame(t *testing.T) {
	s, err := specSchema(render.Get(ourRD(t), "spec.application.openAPISchema").(string))
	require.NoError(t, err, "cozystack-api could not build the schema and would default nothing")
	pools, err := filepath.Glob(support.Path("examples/pools/*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, pools)
	cluster := support.Path("examples/cluster-state.yaml")
	for _, path := range pools {
		t.Run(filepath.Base(path), func(t *testing.T) {
			values, err := render.ReadValues(path)
			require.NoError(t, err)
			defaulted := applyDefaults(deepCopy(values), s, true).(map[string]any)
			t.Logf("defaults written: %v", added(values, defaulted))
			renderWith := func(v map[string]any) (*render.Manifest, error) {
				chrt, err := support.LoadChart(render.PoolChart)
				require.NoError(t, err)
				c, err := support.LoadCluster(cluster)
				require.NoError(t, err)
				return render.Render(chrt, render.Options{Release: render.Release{Name: support.PoolRelease, Namespace: support.PoolNamespace}, Values: v, Cluster: c})
			}
			before, errBefore := renderWith(values)
			after, errAfter := renderWith(defaulted)
			if errBefore != nil {
				require.Error(t, errAfter, "refused without the defaults (%v), rendered with them", errBefore)
				assert.Equal(t, errBefore.Error(), errAfter.Error())
				return
			}
			require.NoError(t, errAfter)
			assert.Equal(t, before.Text(), after.Text())
		})
	}
}

// added lists the value paths the defaulting wrote.
func added(before, after any) []string {
	var out []string
	var walk func(path string, b, a any)
	walk = func(path string, b, a any) {
		am, ok := a.(map[string]any)
		if !ok {
			if !reflect.DeepEqual(b, a) {
				out = append(out, path)
			}
			return
		}
		bm, _ := b.(map[string]any)
		for k, v := range am {
			bv, present := bm[k]
			if !present {
				out = append(out, strings.TrimPrefix(path+"."+k, "."))
				continue
			}
			walk(strings.TrimPrefix(path+"."+k, "."), bv, v)
		}
	}
	walk("", before, after)
	return out
}

// A chart packaged without the generated schema (make generate not run, or
// the file left out) refuses to render rather than give cozystack-api an
// empty openAPISchema; with the file, it renders (ourRD).
func TestRDRefusesAChartWithoutItsSchema(t *testing.T) {
	chrt, err := support.LoadChart(rdChart)
	require.NoError(t, err)
	var kept []*chart.File
	for _, f := range chrt.Files {
		if f.Name != "files/openAPISchema.json" {
			kept = append(kept, f)
		}
	}
	require.Len(t, kept, len(chrt.Files)-1, "the chart carries files/openAPISchema.json")
	chrt.Files = kept
	_, err = render.Render(chrt, render.Options{Release: render.Release{Name: "kubernetes-nodes-golden-rd", Namespace: "cozy-system"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "files/openAPISchema.json is missing or empty")
	assert.Contains(t, err.Error(), "make generate")

	assert.NotEmpty(t, render.Get(ourRD(t), "spec.application.openAPISchema"), "the chart as committed renders its schema")
}

// The settings rollcheck names a pool for taking from upstream's
// ApplicationDefinition (report.UpstreamImageFactoryURL,
// report.UpstreamInstallerRepository) are what cozystack-api's read-time
// defaulting of upstream's schema writes into a pool's values; this
// repository's schema defaults neither, so under it nothing writes them.
func TestRollcheckKnowsUpstreamsDefaults(t *testing.T) {
	upstream, err := specSchema(render.Get(upstreamRD(t), "spec.application.openAPISchema").(string))
	require.NoError(t, err)
	defaulted := applyDefaults(map[string]any{"cluster": "x"}, upstream, true)
	assert.Equal(t, report.UpstreamImageFactoryURL, render.Get(defaulted, "talos.imageFactoryURL"))
	assert.Equal(t, report.UpstreamInstallerRepository, render.Get(defaulted, "talos.installerRepository"))

	ours, err := specSchema(render.Get(ourRD(t), "spec.application.openAPISchema").(string))
	require.NoError(t, err)
	defaulted = applyDefaults(map[string]any{"cluster": "x"}, ours, true)
	for _, field := range []string{"talos.imageFactoryURL", "talos.installerRepository"} {
		v := render.Get(defaulted, field)
		assert.True(t, v == nil || v == "", "this chart's schema defaults %s to %v: cozystack-api would write it over the pool's creation record", field, v)
	}
}
