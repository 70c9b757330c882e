package render

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
)

// State serves a fixed set of objects (a cluster-state file) to Helm's lookup:
// get by name and list, in one namespace or all, the only calls lookup makes.
// Lists come sorted by namespace and name, as a real API server returns them.
// It is read-only: every write answers errReadOnly.
type State struct {
	byResource map[schema.GroupVersionResource][]*unstructured.Unstructured
	// byName is each object by resource, then namespace and name: a get
	// answered without reading every object of its resource (a fleet's
	// state file holds thousands, a plan gets each pool's).
	byName map[schema.GroupVersionResource]map[string]*unstructured.Unstructured
	// crdKinds, when the file holds CustomResourceDefinitions, are the
	// kinds they serve, as "group/version/Kind": the file then says what the
	// cluster serves, as discovery does (servedKind).
	crdKinds map[string]bool
}

// LoadState reads cluster-state files into a State.
func LoadState(paths ...string) (*State, error) {
	objs, err := LoadObjects(paths...)
	if err != nil {
		return nil, err
	}
	return NewState(objs...), nil
}

// NewState holds copies of objs.
func NewState(objs ...*unstructured.Unstructured) *State {
	s := &State{byResource: map[schema.GroupVersionResource][]*unstructured.Unstructured{}, byName: map[schema.GroupVersionResource]map[string]*unstructured.Unstructured{}}
	for _, o := range objs {
		gvr, _ := ResourceFor(o.GetAPIVersion(), o.GetKind())
		o = o.DeepCopy()
		StoreStringData(o)
		s.byResource[gvr] = append(s.byResource[gvr], o)
		if s.byName[gvr] == nil {
			s.byName[gvr] = map[string]*unstructured.Unstructured{}
		}
		// The first of two objects of the same name is the one a get answers, as before.
		if key := o.GetNamespace() + "/" + o.GetName(); s.byName[gvr][key] == nil {
			s.byName[gvr][key] = o
		}
	}
	crds, _ := ResourceFor("apiextensions.k8s.io/v1", "CustomResourceDefinition")
	for _, crd := range s.byResource[crds] {
		if s.crdKinds == nil {
			s.crdKinds = map[string]bool{}
		}
		group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
		versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
		for _, v := range versions {
			v, _ := v.(map[string]any)
			if name, _ := v["name"].(string); name != "" && v["served"] == true && group != "" && kind != "" {
				s.crdKinds[group+"/"+name+"/"+kind] = true
			}
		}
	}
	for _, list := range s.byResource {
		sort.SliceStable(list, func(i, j int) bool {
			if list[i].GetNamespace() != list[j].GetNamespace() {
				return list[i].GetNamespace() < list[j].GetNamespace()
			}
			return list[i].GetName() < list[j].GetName()
		})
	}
	return s
}

// StoreStringData does what the API server does with a Secret's stringData
// on write: each key goes into data, base64-encoded, over a key of the same
// name, and stringData is not kept. A state file can then write values Secrets
// readably and still hold them as a cluster does.
func StoreStringData(o *unstructured.Unstructured) {
	if o.GetAPIVersion() != "v1" || o.GetKind() != "Secret" {
		return
	}
	str, ok := o.Object["stringData"].(map[string]any)
	if !ok {
		return
	}
	data, _ := o.Object["data"].(map[string]any)
	if data == nil {
		data = map[string]any{}
	}
	for k, v := range str {
		if t, ok := v.(string); ok {
			data[k] = base64.StdEncoding.EncodeToString([]byte(t))
		}
	}
	o.Object["data"] = data
	delete(o.Object, "stringData")
}

// APIVersions says which of CapabilityAPIVersions a cluster-state file
// serves, as Live does ("group/version", then "group/version/Kind"): those
// it holds an object of, and those a CustomResourceDefinition in it serves.
// A state file has no discovery, and a cluster can serve a kind it holds no
// object of (snapshot.storage.k8s.io/v1 without a VolumeSnapshotClass): only
// the file's CRDs, as `kubectl get customresourcedefinitions` writes them,
// say so, and a chart then refuses as it does on that cluster.
func (s *State) APIVersions() ([]string, error) {
	kinds := map[string][]string{}
	add := func(gv, kind string) {
		if !slices.Contains(kinds[gv], kind) {
			kinds[gv] = append(kinds[gv], kind)
		}
	}
	for gvr, objs := range s.byResource {
		for _, o := range objs {
			add(gvr.GroupVersion().String(), o.GetKind())
		}
	}
	for gvk := range s.crdKinds {
		i := strings.LastIndex(gvk, "/")
		add(gvk[:i], gvk[i+1:])
	}
	var out []string
	for _, gv := range CapabilityAPIVersions {
		if len(kinds[gv]) == 0 {
			continue
		}
		out = append(out, gv)
		sort.Strings(kinds[gv])
		for _, k := range kinds[gv] {
			out = append(out, gv+"/"+k)
		}
	}
	return out, nil
}

// GetClientFor implements Helm's engine.ClientProvider.
func (s *State) GetClientFor(apiVersion, kind string) (dynamic.NamespaceableResourceInterface, bool, error) {
	if strings.TrimSpace(kind) == "" {
		return nil, false, fmt.Errorf("lookup of apiVersion %q without a kind", apiVersion)
	}
	gvr, namespaced := ResourceFor(apiVersion, kind)
	if !s.servedKind(gvr, apiVersion, kind) {
		return nil, false, fmt.Errorf("%w: no kind %s in %s: none of the state file's CustomResourceDefinitions serves it, it holds no such object, and it is not built into Kubernetes; if the cluster serves it, take the file again with its CRD (docs/cli.md, \"A state file of a live cluster\")", ErrKindNotServed, kind, apiVersion)
	}
	return stateResource{state: s, gvr: gvr, apiVersion: apiVersion, kind: kind}, namespaced, nil
}

// servedKind says whether the cluster the file was taken from serves a kind:
// a file without CustomResourceDefinitions cannot tell, and serves every
// kind (those it holds no object of as empty); one with them serves, as that
// cluster's discovery did, the kinds they serve, the kinds built into
// Kubernetes, and any kind it holds an object of. So a kind the cluster did
// not serve reads as not served (ErrKindNotServed) on its file as live.
func (s *State) servedKind(gvr schema.GroupVersionResource, apiVersion, kind string) bool {
	if s.crdKinds == nil || len(s.byResource[gvr]) > 0 || s.crdKinds[apiVersion+"/"+kind] {
		return true
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	return err == nil && builtInGroups[gv.Group]
}

// builtInGroups are the API groups kube-apiserver serves itself (no CRD
// names them; snapshot.storage.k8s.io, say, is a CRD's).
var builtInGroups = map[string]bool{
	"": true, "apps": true, "batch": true, "autoscaling": true, "policy": true,
	"admissionregistration.k8s.io": true, "apiextensions.k8s.io": true, "apiregistration.k8s.io": true,
	"authentication.k8s.io": true, "authorization.k8s.io": true, "certificates.k8s.io": true,
	"coordination.k8s.io": true, "discovery.k8s.io": true, "events.k8s.io": true,
	"flowcontrol.apiserver.k8s.io": true, "internal.apiserver.k8s.io": true, "networking.k8s.io": true,
	"node.k8s.io": true, "rbac.authorization.k8s.io": true, "resource.k8s.io": true,
	"scheduling.k8s.io": true, "storage.k8s.io": true, "storagemigration.k8s.io": true,
}

var errReadOnly = errors.New("a cluster-state file is read-only")

// stateResource is one resource of a State, in one namespace or ("") all.
type stateResource struct {
	state            *State
	gvr              schema.GroupVersionResource
	apiVersion, kind string
	namespace        string
}

func (r stateResource) Namespace(ns string) dynamic.ResourceInterface {
	r.namespace = ns
	return r
}

func (r stateResource) Get(_ context.Context, name string, _ metav1.GetOptions, subresources ...string) (*unstructured.Unstructured, error) {
	if len(subresources) == 0 {
		if o := r.state.byName[r.gvr][r.namespace+"/"+name]; o != nil {
			return o.DeepCopy(), nil
		}
	}
	return nil, apierrors.NewNotFound(r.gvr.GroupResource(), name)
}

func (r stateResource) List(context.Context, metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	list := &unstructured.UnstructuredList{Object: map[string]any{
		"apiVersion": r.apiVersion,
		"kind":       r.kind + "List",
		"metadata":   map[string]any{"resourceVersion": ""},
	}}
	for _, o := range r.state.byResource[r.gvr] {
		if r.namespace == "" || o.GetNamespace() == r.namespace {
			list.Items = append(list.Items, *o.DeepCopy())
		}
	}
	return list, nil
}

func (stateResource) Create(context.Context, *unstructured.Unstructured, metav1.CreateOptions, ...string) (*unstructured.Unstructured, error) {
	return nil, errReadOnly
}

func (stateResource) Update(context.Context, *unstructured.Unstructured, metav1.UpdateOptions, ...string) (*unstructured.Unstructured, error) {
	return nil, errReadOnly
}

func (stateResource) UpdateStatus(context.Context, *unstructured.Unstructured, metav1.UpdateOptions) (*unstructured.Unstructured, error) {
	return nil, errReadOnly
}

func (stateResource) Delete(context.Context, string, metav1.DeleteOptions, ...string) error {
	return errReadOnly
}

func (stateResource) DeleteCollection(context.Context, metav1.DeleteOptions, metav1.ListOptions) error {
	return errReadOnly
}

func (stateResource) Watch(context.Context, metav1.ListOptions) (watch.Interface, error) {
	return nil, errReadOnly
}

func (stateResource) Patch(context.Context, string, types.PatchType, []byte, metav1.PatchOptions, ...string) (*unstructured.Unstructured, error) {
	return nil, errReadOnly
}

func (stateResource) Apply(context.Context, string, *unstructured.Unstructured, metav1.ApplyOptions, ...string) (*unstructured.Unstructured, error) {
	return nil, errReadOnly
}

func (stateResource) ApplyStatus(context.Context, string, *unstructured.Unstructured, metav1.ApplyOptions) (*unstructured.Unstructured, error) {
	return nil, errReadOnly
}
