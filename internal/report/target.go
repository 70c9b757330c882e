package report

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cozystack/golden-worker-images/internal/render"
	"helm.sh/helm/v3/pkg/engine"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// Target is where a render's lookups go: a cluster-state file, a live cluster,
// or nothing at all (helm template: every lookup answers empty).
type Target struct {
	// Provider answers the lookups; nil for none.
	Provider engine.ClientProvider
	// Desc names the cluster in a report's first lines.
	Desc string
	// APIVersions are what the cluster serves of the API versions the charts
	// ask .Capabilities about, so a render sees what `helm install` would.
	APIVersions []string
}

func (t Target) options(rel render.Release, values map[string]any) render.Options {
	return render.Options{Release: rel, Values: values, Cluster: t.Provider, APIVersions: t.APIVersions}
}

// list reads every object of a kind, in every namespace or in one.
func (t Target) list(apiVersion, kind, namespace string) ([]unstructured.Unstructured, error) {
	c, namespaced, err := t.Provider.GetClientFor(apiVersion, kind)
	if err != nil {
		return nil, fmt.Errorf("listing %s %s: %v", kind, apiVersion, err)
	}
	var r dynamic.ResourceInterface = c
	if namespaced && namespace != "" {
		r = c.Namespace(namespace)
	}
	l, err := r.List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing %s %s: %v", kind, apiVersion, err)
	}
	return l.Items, nil
}

// get reads one object; nil, without error, when the kind is not served or
// the object does not exist.
func (t Target) get(apiVersion, kind, namespace, name string) (*unstructured.Unstructured, error) {
	c, namespaced, err := t.Provider.GetClientFor(apiVersion, kind)
	if errors.Is(err, render.ErrKindNotServed) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s %s: %v", kind, apiVersion, err)
	}
	var r dynamic.ResourceInterface = c
	if namespaced {
		r = c.Namespace(namespace)
	}
	obj, err := r.Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s %s: %v", kind, name, err)
	}
	return obj, nil
}
