package render

import (
	"context"
	"sync"

	"helm.sh/helm/v3/pkg/engine"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// LookupError is a render that failed because the cluster answered one of its
// lookups with an error (an API error, a kind it does not serve), as opposed to
// the chart refusing its values. It is told apart by structure, never by text:
// the render's client provider records each error it hands to Helm's lookup,
// and Helm's lookup ends the render on any error it gets (a template cannot
// catch one), so a failed render with a recorded error failed on that error.
// A refusal quoting a tenant's value stays a refusal whatever the value says.
type LookupError struct {
	// Err is the error the cluster answered, as the provider returned it.
	Err error
	// render is Helm's error for the whole render, which quotes Err.
	render error
}

// Error is Helm's own message for the render.
func (e *LookupError) Error() string { return e.render.Error() }

// Unwrap gives the cluster's error, so errors.Is and errors.As reach it.
func (e *LookupError) Unwrap() error { return e.Err }

// recordingProvider hands Helm's lookup what inner hands out, and keeps the
// first error lookup will return: every error of GetClientFor (lookup returns
// them all), and every error of a get or list except NotFound, which lookup
// turns into an empty answer. One per render.
type recordingProvider struct {
	inner engine.ClientProvider

	mu    sync.Mutex
	first error
}

func (p *recordingProvider) record(err error) error {
	if err != nil {
		p.mu.Lock()
		if p.first == nil {
			p.first = err
		}
		p.mu.Unlock()
	}
	return err
}

func (p *recordingProvider) recordAPI(err error) error {
	if err != nil && !apierrors.IsNotFound(err) {
		p.record(err)
	}
	return err
}

// failure is the error a render failed on, when the cluster gave one.
func (p *recordingProvider) failure() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.first
}

// GetClientFor implements engine.ClientProvider.
func (p *recordingProvider) GetClientFor(apiVersion, kind string) (dynamic.NamespaceableResourceInterface, bool, error) {
	c, namespaced, err := p.inner.GetClientFor(apiVersion, kind)
	if err != nil {
		return nil, false, p.record(err)
	}
	return recordingResource{c, p}, namespaced, nil
}

// recordingResource and recordingNamespaced record the errors of the two
// calls lookup makes, get and list; every other call goes straight through.
type recordingResource struct {
	dynamic.NamespaceableResourceInterface
	p *recordingProvider
}

func (r recordingResource) Namespace(ns string) dynamic.ResourceInterface {
	return recordingNamespaced{r.NamespaceableResourceInterface.Namespace(ns), r.p}
}

func (r recordingResource) Get(ctx context.Context, name string, opts metav1.GetOptions, sub ...string) (*unstructured.Unstructured, error) {
	u, err := r.NamespaceableResourceInterface.Get(ctx, name, opts, sub...)
	return u, r.p.recordAPI(err)
}

func (r recordingResource) List(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	l, err := r.NamespaceableResourceInterface.List(ctx, opts)
	return l, r.p.recordAPI(err)
}

type recordingNamespaced struct {
	dynamic.ResourceInterface
	p *recordingProvider
}

func (r recordingNamespaced) Get(ctx context.Context, name string, opts metav1.GetOptions, sub ...string) (*unstructured.Unstructured, error) {
	u, err := r.ResourceInterface.Get(ctx, name, opts, sub...)
	return u, r.p.recordAPI(err)
}

func (r recordingNamespaced) List(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	l, err := r.ResourceInterface.List(ctx, opts)
	return l, r.p.recordAPI(err)
}
