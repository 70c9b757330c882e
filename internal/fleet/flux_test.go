package fleet_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/render"
	fluxmeta "github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/chartutil"
	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// fluxValues is Flux's own computation, chartutil.ChartValuesFromReferences
// (v1.30.0, the newest that builds with this Go), over the same state.
func fluxValues(t *testing.T, st *render.State, hr *unstructured.Unstructured) (map[string]interface{}, string) {
	t.Helper()
	own, _, _ := unstructured.NestedMap(hr.Object, "spec", "values")
	var refs []fluxmeta.ValuesReference
	if raw, ok, _ := unstructured.NestedFieldNoCopy(hr.Object, "spec", "valuesFrom"); ok {
		b, err := json.Marshal(raw)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, &refs))
	}
	out, err := chartutil.ChartValuesFromReferences(context.Background(), logr.Discard(), stateClient{st}, hr.GetNamespace(), own, refs...)
	var ref *chartutil.ErrValuesReference
	if errors.As(err, &ref) {
		return nil, ref.Error()
	}
	require.NoError(t, err)
	return out, ""
}

// Every valuesFrom case is computed by internal/fleet exactly as by Flux's
// own code: same values, same reason for an unresolved pool.
func TestValuesAsFluxComputesThem(t *testing.T) {
	objects := []string{
		cozystackValues,
		configMap("first", "values.yaml", "diskSize: 10Gi\ntalos: {version: v1.9.0, schematicID: aaa}\nroles: [a, b]"),
		configMap("second", "values.yaml", "diskSize: 30Gi\ntalos: {version: v1.10.0}\nroles: {x: 1}"),
		configMap("pool", "pool.yaml", "cluster: a\ntalos: {version: v1.9.0}"),
		configMap("empty", "values.yaml", ""),
		configMap("bad", "values.yaml", "a: [unclosed"),
		configMap("anchors", "values.yaml", "a: &a {x: 1, y: [2]}\nb: *a\nhost: '*.example.org'"),
		`apiVersion: v1
kind: ConfigMap
metadata: {name: scalars, namespace: tenant-a}
data: {v: v1.11.2, quoted: "'0x10'", num: "42", list: "{a,b}", odd: "a,b=c", nl: "line\n", commas: "v1.13.6,k[2]=1,m.n=x"}`,
		`apiVersion: v1
kind: Secret
metadata: {name: data-secret, namespace: tenant-a}
data: {values.yaml: Y2x1c3RlcjogZnJvbS1kYXRhCg==}`,
	}
	cases := map[string]string{
		"no valuesFrom":           `  values: {cluster: a}`,
		"no values at all":        ``,
		"cozystack-values":        "  valuesFrom: [{kind: Secret, name: cozystack-values}]\n  values: {cluster: a, _namespace: {host: own}}",
		"order first second":      "  valuesFrom: [{kind: ConfigMap, name: first}, {kind: ConfigMap, name: second}]\n  values: {cluster: a}",
		"order second first":      "  valuesFrom: [{kind: ConfigMap, name: second}, {kind: ConfigMap, name: first}]\n  values: {diskSize: 50Gi}",
		"same object twice":       "  valuesFrom: [{kind: ConfigMap, name: first}, {kind: ConfigMap, name: second}, {kind: ConfigMap, name: first}]",
		"valuesKey":               "  valuesFrom: [{kind: ConfigMap, name: pool, valuesKey: pool.yaml}]",
		"targetPath":              "  valuesFrom: [{kind: ConfigMap, name: pool, valuesKey: pool.yaml}, {kind: ConfigMap, name: scalars, valuesKey: v, targetPath: talos.version}]",
		"targetPath over values":  "  valuesFrom: [{kind: ConfigMap, name: scalars, valuesKey: v, targetPath: talos.version}]\n  values: {talos: {version: v1.8.0, schematicID: own}}",
		"targetPath quoted":       "  valuesFrom: [{kind: ConfigMap, name: scalars, valuesKey: quoted, targetPath: a.b}]",
		"targetPath number":       "  valuesFrom: [{kind: ConfigMap, name: scalars, valuesKey: num, targetPath: a.n}]",
		"targetPath set list":     "  valuesFrom: [{kind: ConfigMap, name: scalars, valuesKey: list, targetPath: a.l}]",
		"targetPath literal":      "  valuesFrom: [{kind: ConfigMap, name: scalars, valuesKey: odd, targetPath: a.l, literal: true}]",
		"targetPath newline":      "  valuesFrom: [{kind: ConfigMap, name: scalars, valuesKey: nl, targetPath: a.l}]",
		"targetPath then merge":   "  valuesFrom: [{kind: ConfigMap, name: scalars, valuesKey: v, targetPath: talos.version}, {kind: ConfigMap, name: first}]",
		"empty document":          "  valuesFrom: [{kind: ConfigMap, name: empty}]\n  values: {cluster: a}",
		"unparsable document":     "  valuesFrom: [{kind: ConfigMap, name: bad}]",
		"secret data":             "  valuesFrom: [{kind: Secret, name: data-secret}]",
		"missing secret":          "  valuesFrom: [{kind: Secret, name: cozystack-values-gone}]\n  values: {cluster: a}",
		"missing optional secret": "  valuesFrom: [{kind: Secret, name: gone, optional: true}, {kind: Secret, name: cozystack-values}]",
		"missing key":             "  valuesFrom: [{kind: ConfigMap, name: pool}]",
		"missing optional key":    "  valuesFrom: [{kind: ConfigMap, name: pool, optional: true}]\n  values: {cluster: a}",
		"missing configmap":       "  valuesFrom: [{kind: ConfigMap, name: gone}]",
		"unsupported kind":        "  valuesFrom: [{kind: Service, name: x}]",
		"yaml aliases":            "  valuesFrom: [{kind: ConfigMap, name: anchors}]",
		"targetPath commas":       "  valuesFrom: [{kind: ConfigMap, name: scalars, valuesKey: commas, targetPath: talos.version}]\n  values: {talos: {schematicID: own}}",
		"one object many times":   "  valuesFrom: [{kind: ConfigMap, name: first}, {kind: ConfigMap, name: scalars, valuesKey: v, targetPath: talos.version}, {kind: ConfigMap, name: first}, {kind: ConfigMap, name: first}]",
		"targetPath into a list":  "  valuesFrom: [{kind: ConfigMap, name: first}, {kind: ConfigMap, name: scalars, valuesKey: v, targetPath: 'roles[1]'}, {kind: ConfigMap, name: first}]",
		"optional then required":  "  valuesFrom: [{kind: Secret, name: gone, optional: true}, {kind: Secret, name: gone}]",
	}
	for name, spec := range cases {
		t.Run(name, func(t *testing.T) {
			docs := append(append([]string{}, objects...), hr("kubernetes-nodes-a-w", "  chartRef: {kind: ExternalArtifact, name: cozystack-kubernetes-nodes-application-kubevirt-kubernetes-nodes, namespace: cozy-system}\n"+spec))
			st := state(t, docs...)
			objs, err := render.ParseObjects([]byte(docs[len(docs)-1]))
			require.NoError(t, err)
			wantVals, wantWhy := fluxValues(t, st, objs[0])
			gotVals, gotWhy, err := fleet.Values(context.Background(), st, objs[0])
			require.NoError(t, err)
			assert.Equal(t, wantWhy, gotWhy)
			if wantWhy == "" {
				assert.Equal(t, map[string]interface{}(wantVals), gotVals)
			} else {
				assert.Nil(t, gotVals)
			}
		})
	}
}

// stateClient answers Flux's one call (Get of a Secret or ConfigMap) from a
// cluster-state file.
type stateClient struct{ st *render.State }

var errOnlyGet = errors.New("only Get is served")

func (c stateClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	var kind string
	switch obj.(type) {
	case *corev1.Secret:
		kind = "Secret"
	case *corev1.ConfigMap:
		kind = "ConfigMap"
	default:
		return errOnlyGet
	}
	r, _, err := c.st.GetClientFor("v1", kind)
	if err != nil {
		return err
	}
	u, err := r.Namespace(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj)
}

func (stateClient) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return errOnlyGet
}
func (stateClient) Apply(context.Context, runtime.ApplyConfiguration, ...client.ApplyOption) error {
	return errOnlyGet
}
func (stateClient) Create(context.Context, client.Object, ...client.CreateOption) error {
	return errOnlyGet
}
func (stateClient) Delete(context.Context, client.Object, ...client.DeleteOption) error {
	return errOnlyGet
}
func (stateClient) Update(context.Context, client.Object, ...client.UpdateOption) error {
	return errOnlyGet
}
func (stateClient) Patch(context.Context, client.Object, client.Patch, ...client.PatchOption) error {
	return errOnlyGet
}
func (stateClient) DeleteAllOf(context.Context, client.Object, ...client.DeleteAllOfOption) error {
	return errOnlyGet
}
func (stateClient) Status() client.SubResourceWriter                { return nil }
func (stateClient) SubResource(string) client.SubResourceClient     { return nil }
func (stateClient) Scheme() *runtime.Scheme                         { return runtime.NewScheme() }
func (stateClient) RESTMapper() meta.RESTMapper                     { return nil }
func (stateClient) IsObjectNamespaced(runtime.Object) (bool, error) { return true, nil }
func (stateClient) GroupVersionKindFor(runtime.Object) (schema.GroupVersionKind, error) {
	return schema.GroupVersionKind{}, errOnlyGet
}
