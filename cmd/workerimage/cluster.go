package main

import (
	"context"
	"errors"
	"os"

	"github.com/cozystack/golden-worker-images/internal/render"
	"helm.sh/helm/v3/pkg/engine"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
)

// target is where a render's lookups go: a cluster-state file, a live cluster,
// or nothing at all (helm template: every lookup answers empty).
type target struct {
	provider engine.ClientProvider
	desc     string
	// apiVersions are what the cluster serves of the API versions the charts
	// ask .Capabilities about, so a render sees what `helm install` would.
	apiVersions []string
}

// servedAPIVersions asks a provider that can tell (a live cluster, a state file).
func servedAPIVersions(p engine.ClientProvider) ([]string, error) {
	if s, ok := p.(interface{ APIVersions() ([]string, error) }); ok {
		return s.APIVersions()
	}
	return nil, nil
}

func (a app) connect(stateFile, kubeconfig string, required bool) (target, error) {
	switch {
	case stateFile != "" && kubeconfig != "":
		return target{}, problemf("-cluster and -kubeconfig are exclusive: give one")
	case stateFile != "":
		c, err := render.LoadState(stateFile)
		if err != nil {
			return target{}, problemf("cluster state %s: %v", stateFile, err)
		}
		served, _ := c.APIVersions()
		return target{provider: c, desc: "state file " + stateFile, apiVersions: served}, nil
	case kubeconfig != "":
		p, err := a.dial(kubeconfig)
		if err != nil {
			return target{}, err
		}
		served, err := servedAPIVersions(p)
		if err != nil {
			return target{}, problemf("kubeconfig %s: %v", kubeconfig, err)
		}
		return target{provider: p, desc: "kubeconfig " + kubeconfig, apiVersions: served}, nil
	case required:
		return target{}, problemf("give the cluster: -cluster STATE.yaml or -kubeconfig PATH")
	}
	return target{desc: "none (helm template preview: every lookup answers empty)"}, nil
}

func (t target) options(rel render.Release, values map[string]interface{}) render.Options {
	return render.Options{Release: rel, Values: values, Cluster: t.provider, APIVersions: t.apiVersions}
}

// list reads every object of a kind, in every namespace or in one.
func (t target) list(apiVersion, kind, namespace string) ([]unstructured.Unstructured, error) {
	c, namespaced, err := t.provider.GetClientFor(apiVersion, kind)
	if err != nil {
		return nil, problemf("listing %s %s: %v", kind, apiVersion, err)
	}
	var r dynamic.ResourceInterface = c
	if namespaced && namespace != "" {
		r = c.Namespace(namespace)
	}
	l, err := r.List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return nil, problemf("listing %s %s: %v", kind, apiVersion, err)
	}
	return l.Items, nil
}

// get reads one object; nil, without error, when the kind is not served or
// the object does not exist.
func (t target) get(apiVersion, kind, namespace, name string) (*unstructured.Unstructured, error) {
	c, namespaced, err := t.provider.GetClientFor(apiVersion, kind)
	if errors.Is(err, render.ErrKindNotServed) {
		return nil, nil
	}
	if err != nil {
		return nil, problemf("reading %s %s: %v", kind, apiVersion, err)
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
		return nil, problemf("reading %s %s: %v", kind, name, err)
	}
	return obj, nil
}

// dialKubeconfig connects to the cluster of a kubeconfig and checks that it
// answers, so an unreachable cluster is one line before anything renders.
func dialKubeconfig(path string) (engine.ClientProvider, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, problemf("kubeconfig %s: %v", path, unwrapPath(err))
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, problemf("kubeconfig %s: %v", path, err)
	}
	p, err := render.NewLive(cfg)
	if err != nil {
		return nil, problemf("kubeconfig %s: %v", path, err)
	}
	if err := p.Ping(); err != nil {
		return nil, problemf("cannot reach the cluster at %s (kubeconfig %s): %v", cfg.Host, path, err)
	}
	return p, nil
}

func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
