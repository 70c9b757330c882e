package render

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"helm.sh/helm/v3/pkg/engine"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// Snapshot answers each distinct lookup (a get, a list) once, from p, and
// every later one like it from what p answered: a report rendering many
// pools reads the objects every pool looks up (StorageClasses, the goldens
// of cozy-public, instancetypes, CDI's configuration) once, not once a
// render. A found object and a not-found are kept; any other error is not
// (the next lookup asks again). Each answer is a copy: a template may change
// what it looked up. For a report's reads only: what it answers does not
// move while a rollout waits. nil stays nil.
func Snapshot(p engine.ClientProvider) engine.ClientProvider {
	if p == nil {
		return nil
	}
	return &snapshot{inner: p, gets: map[string]snapshotGet{}, lists: map[string]*unstructured.UnstructuredList{}}
}

type snapshot struct {
	inner engine.ClientProvider
	mu    sync.Mutex
	gets  map[string]snapshotGet
	lists map[string]*unstructured.UnstructuredList
}

type snapshotGet struct {
	obj *unstructured.Unstructured
	err error
}

func (s *snapshot) GetClientFor(apiVersion, kind string) (dynamic.NamespaceableResourceInterface, bool, error) {
	r, namespaced, err := s.inner.GetClientFor(apiVersion, kind)
	if err != nil {
		return nil, namespaced, err
	}
	return &snapshotResource{NamespaceableResourceInterface: r, s: s, key: apiVersion + "\x00" + kind}, namespaced, nil
}

// snapshotResource is one resource, all namespaces (or cluster-scoped);
// snapshotNamespace is it in one namespace. Anything but a get or a list
// goes to p as it is.
type snapshotResource struct {
	dynamic.NamespaceableResourceInterface
	s   *snapshot
	key string
}

type snapshotNamespace struct {
	dynamic.ResourceInterface
	s   *snapshot
	key string
}

func (r *snapshotResource) Namespace(ns string) dynamic.ResourceInterface {
	return &snapshotNamespace{ResourceInterface: r.NamespaceableResourceInterface.Namespace(ns), s: r.s, key: r.key + "\x00" + ns}
}

func (r *snapshotResource) Get(ctx context.Context, name string, o metav1.GetOptions, sub ...string) (*unstructured.Unstructured, error) {
	return r.s.get(ctx, r.NamespaceableResourceInterface, r.key, name, o, sub)
}

func (r *snapshotResource) List(ctx context.Context, o metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	return r.s.list(ctx, r.NamespaceableResourceInterface, r.key, o)
}

func (r *snapshotNamespace) Get(ctx context.Context, name string, o metav1.GetOptions, sub ...string) (*unstructured.Unstructured, error) {
	return r.s.get(ctx, r.ResourceInterface, r.key, name, o, sub)
}

func (r *snapshotNamespace) List(ctx context.Context, o metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	return r.s.list(ctx, r.ResourceInterface, r.key, o)
}

func (s *snapshot) get(ctx context.Context, from dynamic.ResourceInterface, key, name string, o metav1.GetOptions, sub []string) (*unstructured.Unstructured, error) {
	key += "\x00get\x00" + name + "\x00" + strings.Join(sub, "/") + "\x00" + o.ResourceVersion
	s.mu.Lock()
	got, ok := s.gets[key]
	s.mu.Unlock()
	if !ok {
		got.obj, got.err = from.Get(ctx, name, o, sub...)
		if got.err != nil && !apierrors.IsNotFound(got.err) {
			return nil, got.err
		}
		s.mu.Lock()
		s.gets[key] = got
		s.mu.Unlock()
	}
	if got.err != nil {
		return nil, got.err
	}
	return got.obj.DeepCopy(), nil
}

func (s *snapshot) list(ctx context.Context, from dynamic.ResourceInterface, key string, o metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	key += fmt.Sprintf("\x00list\x00%s\x00%s\x00%d\x00%s\x00%s", o.LabelSelector, o.FieldSelector, o.Limit, o.Continue, o.ResourceVersion)
	s.mu.Lock()
	list, ok := s.lists[key]
	s.mu.Unlock()
	if !ok {
		var err error
		if list, err = from.List(ctx, o); err != nil {
			return nil, err
		}
		s.mu.Lock()
		s.lists[key] = list
		s.mu.Unlock()
	}
	return list.DeepCopy(), nil
}
