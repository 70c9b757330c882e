package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	fluxmeta "github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/chartutil"
	"github.com/go-logr/logr"
	"helm.sh/helm/v3/pkg/engine"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Values computes a HelmRelease's values as helm-controller does, with Flux's
// own code (chartutil.ChartValuesFromReferences): each spec.valuesFrom in
// order, then spec.values on top. unresolved is set, with Flux's reason, when
// a required reference is missing (Flux fails the release the same way); err
// is a cluster that answered with an error.
func Values(ctx context.Context, p engine.ClientProvider, hr *unstructured.Unstructured) (values map[string]interface{}, unresolved string, err error) {
	own, _, _ := unstructured.NestedMap(hr.Object, "spec", "values")
	var refs []fluxmeta.ValuesReference
	if raw, ok, _ := unstructured.NestedFieldNoCopy(hr.Object, "spec", "valuesFrom"); ok && raw != nil {
		b, err := json.Marshal(raw)
		if err == nil {
			err = json.Unmarshal(b, &refs)
		}
		if err != nil {
			return nil, fmt.Sprintf("spec.valuesFrom is not a list of values references: %v", err), nil
		}
	}
	out, err := chartutil.ChartValuesFromReferences(ctx, logr.Discard(), reader{p}, hr.GetNamespace(), own, refs...)
	var ref *chartutil.ErrValuesReference
	if errors.As(err, &ref) {
		return nil, ref.Error(), nil
	}
	if err != nil {
		return nil, "", err
	}
	if out == nil {
		out = map[string]interface{}{}
	}
	return out, "", nil
}

// reader is the one read Flux's values code makes (Get of a Secret or a
// ConfigMap), answered through Helm's client provider: the same cluster-state
// file or live cluster the charts' lookups read. Every other call of the
// client interface is refused: the fleet tools never write.
type reader struct{ p engine.ClientProvider }

var errReadOnly = errors.New("the fleet tools only read the cluster")

func (r reader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	var kind string
	switch obj.(type) {
	case *corev1.Secret:
		kind = "Secret"
	case *corev1.ConfigMap:
		kind = "ConfigMap"
	default:
		return fmt.Errorf("reading %T: only Secrets and ConfigMaps hold values", obj)
	}
	c, _, err := r.p.GetClientFor("v1", kind)
	if err != nil {
		return err
	}
	u, err := c.Namespace(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj)
}

func (reader) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return errReadOnly
}
func (reader) Apply(context.Context, runtime.ApplyConfiguration, ...client.ApplyOption) error {
	return errReadOnly
}
func (reader) Create(context.Context, client.Object, ...client.CreateOption) error {
	return errReadOnly
}
func (reader) Delete(context.Context, client.Object, ...client.DeleteOption) error {
	return errReadOnly
}
func (reader) Update(context.Context, client.Object, ...client.UpdateOption) error {
	return errReadOnly
}
func (reader) Patch(context.Context, client.Object, client.Patch, ...client.PatchOption) error {
	return errReadOnly
}
func (reader) DeleteAllOf(context.Context, client.Object, ...client.DeleteAllOfOption) error {
	return errReadOnly
}
func (reader) Status() client.SubResourceWriter                { return subWriter{} }
func (reader) SubResource(string) client.SubResourceClient     { return subWriter{} }
func (reader) Scheme() *runtime.Scheme                         { return runtime.NewScheme() }
func (reader) RESTMapper() meta.RESTMapper                     { return nil }
func (reader) IsObjectNamespaced(runtime.Object) (bool, error) { return true, nil }
func (reader) GroupVersionKindFor(runtime.Object) (schema.GroupVersionKind, error) {
	return schema.GroupVersionKind{}, errReadOnly
}

type subWriter struct{}

func (subWriter) Get(context.Context, client.Object, client.Object, ...client.SubResourceGetOption) error {
	return errReadOnly
}
func (subWriter) Create(context.Context, client.Object, client.Object, ...client.SubResourceCreateOption) error {
	return errReadOnly
}
func (subWriter) Update(context.Context, client.Object, ...client.SubResourceUpdateOption) error {
	return errReadOnly
}
func (subWriter) Patch(context.Context, client.Object, client.Patch, ...client.SubResourcePatchOption) error {
	return errReadOnly
}
func (subWriter) Apply(context.Context, runtime.ApplyConfiguration, ...client.SubResourceApplyOption) error {
	return errReadOnly
}
