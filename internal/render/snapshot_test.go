package render_test

import (
	"context"
	"errors"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// countingState counts the gets and lists a State answers, and fails the
// gets of one name with an error that is not a not-found.
type countingState struct {
	*render.State
	calls   int
	failing string
}

func (c *countingState) GetClientFor(apiVersion, kind string) (dynamic.NamespaceableResourceInterface, bool, error) {
	r, namespaced, err := c.State.GetClientFor(apiVersion, kind)
	return &countingResource{NamespaceableResourceInterface: r, c: c}, namespaced, err
}

type countingResource struct {
	dynamic.NamespaceableResourceInterface
	c  *countingState
	ns string
}

func (r *countingResource) Namespace(ns string) dynamic.ResourceInterface {
	return &countingResource{NamespaceableResourceInterface: r.NamespaceableResourceInterface, c: r.c, ns: ns}
}

func (r *countingResource) Get(ctx context.Context, name string, o metav1.GetOptions, sub ...string) (*unstructured.Unstructured, error) {
	r.c.calls++
	if name == r.c.failing {
		return nil, errors.New("connection refused")
	}
	return r.NamespaceableResourceInterface.Namespace(r.ns).Get(ctx, name, o, sub...)
}

func (r *countingResource) List(ctx context.Context, o metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	r.c.calls++
	return r.NamespaceableResourceInterface.Namespace(r.ns).List(ctx, o)
}

// A Snapshot asks the cluster once per distinct get or list: a found
// object and a not-found are answered again without asking, each answer a
// copy a template may change; an error that is not a not-found is asked
// again. Namespaces are apart.
func TestSnapshotAsksOnce(t *testing.T) {
	objs, err := render.ParseObjects([]byte(`apiVersion: v1
kind: ConfigMap
metadata: {name: a, namespace: one}
data: {k: v}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: a, namespace: two}
data: {k: w}
`))
	require.NoError(t, err)
	c := &countingState{State: render.NewState(objs...), failing: "down"}
	p := render.Snapshot(c)
	ctx := t.Context()
	cm, _, err := p.GetClientFor("v1", "ConfigMap")
	require.NoError(t, err)

	for range 2 {
		got, err := cm.Namespace("one").Get(ctx, "a", metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, "v", got.Object["data"].(map[string]any)["k"])
		got.Object["data"].(map[string]any)["k"] = "changed by a template"
	}
	assert.Equal(t, 1, c.calls, "a found object is read once")

	got, err := cm.Namespace("two").Get(ctx, "a", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "w", got.Object["data"].(map[string]any)["k"], "another namespace is another object")
	assert.Equal(t, 2, c.calls)

	for range 2 {
		_, err = cm.Namespace("one").Get(ctx, "absent", metav1.GetOptions{})
		assert.True(t, apierrors.IsNotFound(err), "%v", err)
	}
	assert.Equal(t, 3, c.calls, "a not-found is read once")

	for range 2 {
		_, err = cm.Namespace("one").Get(ctx, "down", metav1.GetOptions{})
		assert.EqualError(t, err, "connection refused")
	}
	assert.Equal(t, 5, c.calls, "an error that is not a not-found is asked again")

	for range 2 {
		list, err := cm.List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		require.Len(t, list.Items, 2)
		list.Items[0].Object["data"] = nil
	}
	assert.Equal(t, 6, c.calls, "a list is read once, each answer a copy")
	assert.Nil(t, render.Snapshot(nil))
}
