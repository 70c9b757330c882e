package render

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// Live is the CLI's client provider for a real cluster, which Render hands
// to Helm's engine.RenderWithClientProvider (and internal/fleet reads
// with): it finds a kind's resource by discovery of its group version and
// hands out a dynamic client. Helm's own (behind engine.RenderWithClient,
// which helm-controller uses) makes a discovery client, asks discovery and
// makes a dynamic client at every lookup; this one keeps one client, caches
// discovery per group version, and answers a kind its group version does not
// serve with ErrKindNotServed (Helm's would ask for a resource with no name).
// Errors of discovery read as Helm's do.
type Live struct {
	disc discovery.DiscoveryInterface
	dyn  dynamic.Interface

	mu     sync.Mutex
	groups map[string]*metav1.APIResourceList
}

// NewLive builds the clients for cfg; it does not contact the cluster (Ping does).
func NewLive(cfg *rest.Config) (*Live, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = 20 * time.Second
	// A pins report renders every pool: do not throttle it to client-go's default 5 QPS.
	cfg.QPS, cfg.Burst = 50, 100
	cfg.WarningHandler = rest.NoWarnings{}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &Live{disc: disc, dyn: dyn, groups: map[string]*metav1.APIResourceList{}}, nil
}

// Ping asks the cluster its version, so an unreachable cluster is one error
// before anything renders.
func (p *Live) Ping() error {
	_, err := p.disc.ServerVersion()
	return err
}

// GetClientFor implements Helm's engine.ClientProvider.
func (p *Live) GetClientFor(apiVersion, kind string) (dynamic.NamespaceableResourceInterface, bool, error) {
	gvk := schema.FromAPIVersionAndKind(apiVersion, kind)
	gv := gvk.GroupVersion().String()
	p.mu.Lock()
	list, ok := p.groups[gv]
	p.mu.Unlock()
	if !ok {
		var err error
		list, err = p.disc.ServerResourcesForGroupVersion(gv)
		if apierrors.IsNotFound(err) {
			return nil, false, fmt.Errorf("%w: no group version %s: %w", ErrKindNotServed, gv, err)
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
	return nil, false, fmt.Errorf("%w: no kind %s in %s", ErrKindNotServed, kind, gv)
}

// ErrKindNotServed: the cluster has no such kind, as when its CRD is not
// installed (as opposed to an API error while asking).
var ErrKindNotServed = errors.New("the cluster serves no such kind")

// CapabilityAPIVersions are the API versions the charts ask
// .Capabilities.APIVersions about before looking a kind of them up.
var CapabilityAPIVersions = []string{"snapshot.storage.k8s.io/v1"}

// APIVersions says which of CapabilityAPIVersions the cluster serves, each as
// "group/version" and "group/version/Kind" the way Helm fills .Capabilities
// from discovery, so a render through the CLI sees what `helm install` would.
func (p *Live) APIVersions() ([]string, error) {
	var out []string
	for _, gv := range CapabilityAPIVersions {
		list, err := p.disc.ServerResourcesForGroupVersion(gv)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("discovery of %s: %w", gv, err)
		}
		out = append(out, gv)
		for _, r := range list.APIResources {
			if !strings.Contains(r.Name, "/") {
				out = append(out, gv+"/"+r.Kind)
			}
		}
	}
	return out, nil
}
