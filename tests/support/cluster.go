// Package support is what the tests share and the product never imports: a
// fake cluster that counts API calls and fails them on demand, fixture and
// chart paths in this checkout, the pool chart's defaults, the contract's
// golden-name rule (internal/golden's), and the golden
// render case table.
package support

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/cozystack/golden-worker-images/internal/render"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
)

// Cluster is a fake API server: client-go's fake dynamic client seeded with
// fixture objects, served to Helm's lookup through engine.ClientProvider.
// It counts API calls and can be told to fail them.
type Cluster struct {
	client *fake.FakeDynamicClient

	mu     sync.Mutex
	calls  int
	byVerb map[string]int
	// FailWith, when set, is returned for every API call of that kind
	// (e.g. "StorageClass"), or for every call when the key is "*".
	FailWith map[string]error
	// FailNamespacedLists, when set, is returned for every list of a
	// namespaced kind: a render must never list a tenant namespace.
	FailNamespacedLists error
	// FailClusterWideLists, when set, is returned for every list of a
	// namespaced kind across all namespaces (namespace ""): the catalog
	// must make such lists only while a golden retires.
	FailClusterWideLists error
	// namespaced records the resources GetClientFor was asked for as
	// namespaced, so the reactor can tell a cluster-wide list from a list
	// of a cluster-scoped kind (both have namespace "").
	namespaced map[string]bool
	// clusterWide counts lists of namespaced kinds across all namespaces, by resource.
	clusterWide map[string]int
	// objectsRead counts the objects API answers carried: one per get that
	// found its object, and every item of every list.
	objectsRead int
}

// NewCluster returns a fake cluster holding objs.
func NewCluster(objs ...*unstructured.Unstructured) *Cluster {
	listKinds := map[schema.GroupVersionResource]string{}
	seeds := make([]runtime.Object, 0, len(objs))
	for _, o := range objs {
		gvr, _ := render.ResourceFor(o.GetAPIVersion(), o.GetKind())
		listKinds[gvr] = o.GetKind() + "List"
		// A Secret's stringData is stored as data, as the API server stores it.
		o = o.DeepCopy()
		render.StoreStringData(o)
		seeds = append(seeds, o)
	}
	for _, k := range lookedUpKinds {
		gvr, _ := render.ResourceFor(k[0], k[1])
		listKinds[gvr] = k[1] + "List"
	}
	c := &Cluster{client: fake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds, seeds...), byVerb: map[string]int{}, namespaced: map[string]bool{}, clusterWide: map[string]int{}}
	c.client.PrependReactor("*", "*", func(action k8stesting.Action) (bool, runtime.Object, error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.calls++
		c.byVerb[action.GetVerb()+" "+action.GetResource().Resource]++
		if err, ok := c.FailWith["*"]; ok {
			return true, nil, err
		}
		if c.FailNamespacedLists != nil && action.GetVerb() == "list" && action.GetNamespace() != "" {
			return true, nil, c.FailNamespacedLists
		}
		if action.GetVerb() == "list" && action.GetNamespace() == "" && c.namespaced[action.GetResource().Resource] {
			c.clusterWide[action.GetResource().Resource]++
			if c.FailClusterWideLists != nil {
				return true, nil, c.FailClusterWideLists
			}
		}
		for kind, err := range c.FailWith {
			gvr, _ := render.ResourceFor("", kind)
			if action.GetResource().Resource == gvr.Resource {
				return true, nil, err
			}
		}
		return false, nil, nil
	})
	return c
}

// lookedUpKinds are the kinds the charts list, registered so that listing
// them in a cluster that holds none answers an empty list, as a real API does.
var lookedUpKinds = [][2]string{
	{"cdi.kubevirt.io/v1beta1", "DataVolume"},
	{"v1", "PersistentVolumeClaim"},
	{"storage.k8s.io/v1", "StorageClass"},
	{"instancetype.kubevirt.io/v1beta1", "VirtualMachineClusterInstancetype"},
	{"cluster.x-k8s.io/v1beta1", "MachineDeployment"},
	// Cozystack's own pool chart lists them (the benchmarks render it).
	{"cluster.x-k8s.io/v1beta1", "MachineSet"},
	{"v1", "ConfigMap"},
	{"v1", "Secret"},
	{"helm.toolkit.fluxcd.io/v2", "HelmRelease"},
	{"infrastructure.cluster.x-k8s.io/v1alpha1", "KubevirtMachineTemplate"},
	{"cdi.kubevirt.io/v1beta1", "CDI"},
	{"cdi.kubevirt.io/v1beta1", "StorageProfile"},
	{"snapshot.storage.k8s.io/v1", "VolumeSnapshotClass"},
	{"cdi.kubevirt.io/v1beta1", "CDIConfig"},
	{"storage.k8s.io/v1", "CSIDriver"},
	{"v1", "PersistentVolume"},
}

// LoadCluster builds a fake cluster from fixture files.
func LoadCluster(paths ...string) (*Cluster, error) {
	objs, err := render.LoadObjects(paths...)
	if err != nil {
		return nil, err
	}
	return NewCluster(objs...), nil
}

// GetClientFor implements engine.ClientProvider, as Helm's discovery-backed
// provider does for a real cluster.
func (c *Cluster) GetClientFor(apiVersion, kind string) (dynamic.NamespaceableResourceInterface, bool, error) {
	if strings.TrimSpace(kind) == "" {
		return nil, false, fmt.Errorf("lookup of apiVersion %q without a kind", apiVersion)
	}
	gvr, namespaced := render.ResourceFor(apiVersion, kind)
	if namespaced {
		c.mu.Lock()
		c.namespaced[gvr.Resource] = true
		c.mu.Unlock()
	}
	return countingResource{c.client.Resource(gvr), c}, namespaced, nil
}

// countingResource counts the objects each get and list answers with.
type countingResource struct {
	dynamic.NamespaceableResourceInterface
	c *Cluster
}

func (r countingResource) Namespace(ns string) dynamic.ResourceInterface {
	return countingNamespaced{r.NamespaceableResourceInterface.Namespace(ns), r.c}
}

func (r countingResource) Get(ctx context.Context, name string, opts metav1.GetOptions, sub ...string) (*unstructured.Unstructured, error) {
	return r.c.countOne(r.NamespaceableResourceInterface.Get(ctx, name, opts, sub...))
}

func (r countingResource) List(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	return r.c.countList(r.NamespaceableResourceInterface.List(ctx, opts))
}

type countingNamespaced struct {
	dynamic.ResourceInterface
	c *Cluster
}

func (r countingNamespaced) Get(ctx context.Context, name string, opts metav1.GetOptions, sub ...string) (*unstructured.Unstructured, error) {
	return r.c.countOne(r.ResourceInterface.Get(ctx, name, opts, sub...))
}

func (r countingNamespaced) List(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	return r.c.countList(r.ResourceInterface.List(ctx, opts))
}

func (c *Cluster) countOne(u *unstructured.Unstructured, err error) (*unstructured.Unstructured, error) {
	if err == nil && u != nil {
		c.mu.Lock()
		c.objectsRead++
		c.mu.Unlock()
	}
	return u, err
}

func (c *Cluster) countList(l *unstructured.UnstructuredList, err error) (*unstructured.UnstructuredList, error) {
	if err == nil && l != nil {
		c.mu.Lock()
		c.objectsRead += len(l.Items)
		c.mu.Unlock()
	}
	return l, err
}

// ObjectsRead is how many objects the API answers carried so far (a get that
// found its object counts one, a list counts its items).
func (c *Cluster) ObjectsRead() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.objectsRead
}

// Calls is the number of API requests served so far.
func (c *Cluster) Calls() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls
}

// CallsByVerb counts requests by "verb resource", e.g. "list datavolumes".
func (c *Cluster) CallsByVerb() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.byVerb))
	for k, v := range c.byVerb {
		out[k] = v
	}
	return out
}

// ClusterWideLists counts lists of namespaced kinds across every namespace
// (namespace ""), by resource, e.g. "datavolumes".
func (c *Cluster) ClusterWideLists() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.clusterWide))
	for k, v := range c.clusterWide {
		out[k] = v
	}
	return out
}

// ResetCalls zeroes the request counters.
func (c *Cluster) ResetCalls() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = 0
	c.objectsRead = 0
	c.byVerb = map[string]int{}
	c.clusterWide = map[string]int{}
}

// Add stores more objects, as if another controller had created them.
func (c *Cluster) Add(objs ...*unstructured.Unstructured) error {
	for _, o := range objs {
		gvr, _ := render.ResourceFor(o.GetAPIVersion(), o.GetKind())
		if err := c.client.Tracker().Create(gvr, o.DeepCopy(), o.GetNamespace()); err != nil {
			return fmt.Errorf("add %s %s/%s: %w", o.GetKind(), o.GetNamespace(), o.GetName(), err)
		}
	}
	return nil
}

// Apply creates or replaces the manifest's objects in the cluster, as a
// `helm install` or `helm upgrade` would leave them (namespace defaulted).
func (c *Cluster) Apply(m *render.Manifest, namespace string) error {
	for _, d := range m.Docs {
		u := &unstructured.Unstructured{Object: deepCopyMap(d.Object)}
		if u.GetNamespace() == "" {
			if _, namespaced := render.ResourceFor(u.GetAPIVersion(), u.GetKind()); namespaced {
				u.SetNamespace(namespace)
			}
		}
		gvr, _ := render.ResourceFor(u.GetAPIVersion(), u.GetKind())
		tracker := c.client.Tracker()
		if _, err := tracker.Get(gvr, u.GetNamespace(), u.GetName()); err == nil {
			if err := tracker.Update(gvr, u, u.GetNamespace()); err != nil {
				return err
			}
			continue
		}
		if err := tracker.Create(gvr, u, u.GetNamespace()); err != nil {
			return err
		}
	}
	return nil
}

func deepCopyMap(in map[string]any) map[string]any {
	return runtime.DeepCopyJSON(in)
}

// Delete removes an object, as if another controller had deleted it.
func (c *Cluster) Delete(apiVersion, kind, namespace, name string) error {
	gvr, _ := render.ResourceFor(apiVersion, kind)
	return c.client.Tracker().Delete(gvr, namespace, name)
}

// Get returns a stored object, as a test reads back what a render left.
func (c *Cluster) Get(apiVersion, kind, namespace, name string) (*unstructured.Unstructured, error) {
	gvr, _ := render.ResourceFor(apiVersion, kind)
	o, err := c.client.Tracker().Get(gvr, namespace, name)
	if err != nil {
		return nil, err
	}
	u, ok := o.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("%s %s/%s is a %T", kind, namespace, name, o)
	}
	return u, nil
}
