package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/cozystack/golden-worker-images/tests/render"
	"helm.sh/helm/v3/pkg/engine"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// target is where a render's lookups go: a cluster-state file, a live cluster,
// or nothing at all (helm template: every lookup answers empty).
type target struct {
	provider engine.ClientProvider
	desc     string
}

func (a app) connect(stateFile, kubeconfig string, required bool) (target, error) {
	switch {
	case stateFile != "" && kubeconfig != "":
		return target{}, problemf("-cluster and -kubeconfig are exclusive: give one")
	case stateFile != "":
		c, err := render.LoadCluster(stateFile)
		if err != nil {
			return target{}, problemf("cluster state %s: %v", stateFile, err)
		}
		return target{provider: c, desc: "state file " + stateFile}, nil
	case kubeconfig != "":
		p, err := a.dial(kubeconfig)
		if err != nil {
			return target{}, err
		}
		return target{provider: p, desc: "kubeconfig " + kubeconfig}, nil
	case required:
		return target{}, problemf("give the cluster: -cluster STATE.yaml or -kubeconfig PATH")
	}
	return target{desc: "none (helm template preview: every lookup answers empty)"}, nil
}

func (t target) options(rel render.Release, values map[string]interface{}) render.Options {
	opts := render.Options{Release: rel, Values: values}
	if t.provider != nil {
		opts.Cluster = t.provider
	}
	return opts
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
	return newLiveProvider(cfg, path)
}

func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

func newLiveProvider(cfg *rest.Config, from string) (*liveProvider, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = 20 * time.Second
	// A pins report renders every pool: do not throttle it to client-go's default 5 QPS.
	cfg.QPS, cfg.Burst = 50, 100
	cfg.WarningHandler = rest.NoWarnings{}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, problemf("kubeconfig %s: %v", from, err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, problemf("kubeconfig %s: %v", from, err)
	}
	if _, err := disc.ServerVersion(); err != nil {
		return nil, problemf("cannot reach the cluster at %s (kubeconfig %s): %v", cfg.Host, from, err)
	}
	return &liveProvider{disc: disc, dyn: dyn, groups: map[string]*metav1.APIResourceList{}}, nil
}

// liveProvider is Helm's client provider for a real cluster (the one behind
// engine.RenderWithClient, which Helm does not export): it finds a kind's
// resource by discovery of its group version and hands out a dynamic client.
// Unlike Helm's it keeps one client and caches discovery per group version.
type liveProvider struct {
	disc discovery.DiscoveryInterface
	dyn  dynamic.Interface

	mu     sync.Mutex
	groups map[string]*metav1.APIResourceList
}

func (p *liveProvider) GetClientFor(apiVersion, kind string) (dynamic.NamespaceableResourceInterface, bool, error) {
	gvk := schema.FromAPIVersionAndKind(apiVersion, kind)
	gv := gvk.GroupVersion().String()
	p.mu.Lock()
	list, ok := p.groups[gv]
	p.mu.Unlock()
	if !ok {
		var err error
		list, err = p.disc.ServerResourcesForGroupVersion(gv)
		if apierrors.IsNotFound(err) {
			return nil, false, fmt.Errorf("%w: no group version %s: %w", errKindNotServed, gv, err)
		}
		if err != nil {
			return nil, false, fmt.Errorf("unable to get apiresource from unstructured: %s: %w", gvk, err)
		}
		p.mu.Lock()
		p.groups[gv] = list
		p.mu.Unlock()
	}
	for _, r := range list.APIResources {
		// a "/" names a subresource, as in Helm's lookup
		if r.Kind == kind && !strings.Contains(r.Name, "/") {
			gvr := schema.GroupVersionResource{Group: gvk.Group, Version: gvk.Version, Resource: r.Name}
			return p.dyn.Resource(gvr), r.Namespaced, nil
		}
	}
	return nil, false, fmt.Errorf("%w: no kind %s in %s", errKindNotServed, kind, gv)
}

// errKindNotServed: the cluster has no such kind, as when its CRD is not
// installed (as opposed to an API error while asking).
var errKindNotServed = errors.New("the cluster serves no such kind")
