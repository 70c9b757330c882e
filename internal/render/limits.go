// Bounds on what a chart the operator names (rollcheck's head and base) can
// make a render do: how long it may take, and which kinds its lookups reach.

package render

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"runtime/metrics"
	"sort"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/engine"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// RenderTimeout bounds one render. Helm's engine has no time bound of its
// own and cannot be stopped: a template that loops runs as long as it likes.
// A pool renders in well under a second, its lookups included, and each
// lookup of a live cluster has its own 20 s timeout; a render still running
// after this is abandoned and reported (ErrTooSlow), and the command ends,
// taking it with it.
var RenderTimeout = 2 * time.Minute

// ErrTooSlow: a render did not finish within RenderTimeout, or built more
// than RenderHeapBytes on the way.
var ErrTooSlow = errors.New("the render was stopped")

// RenderHeapBytes bounds the heap while a render runs: a pool renders in a
// few megabytes, and a template that builds gigabytes (`until 2000000000`
// allocates 16 GB at once; a long loop's output grows without end) would
// exhaust the machine long before RenderTimeout. The heap is the process's,
// read every renderPoll: far above what any report of a fleet holds.
var RenderHeapBytes uint64 = 2 << 30

const renderPoll = 50 * time.Millisecond

// heapBytes is the live heap, as the runtime counts it without stopping
// the world.
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// renderFiles runs Helm's engine within RenderTimeout.
func renderFiles(chrt *chart.Chart, run func() (map[string]string, error)) (map[string]string, error) {
	type result struct {
		files map[string]string
		err   error
	}
	done := make(chan result, 1)
	go func() {
		files, err := run()
		done <- result{files, err}
	}()
	timer := time.NewTimer(RenderTimeout)
	defer timer.Stop()
	poll := time.NewTicker(renderPoll)
	defer poll.Stop()
	name := "the chart"
	if chrt.Metadata != nil {
		name = "chart " + chrt.Metadata.Name + " " + chrt.Metadata.Version
	}
	for {
		select {
		case r := <-done:
			return r.files, r.err
		case <-poll.C:
			if h := heapBytes(); h > RenderHeapBytes {
				return nil, fmt.Errorf("%w: %s built %d MiB while rendering, over the %d MiB a render may take, where a pool renders in a few: one of its templates loops or builds far more than a pool's objects (Helm's engine has no bound of its own); it is not a chart to install", ErrTooSlow, name, h>>20, RenderHeapBytes>>20)
			}
		case <-timer.C:
			return nil, fmt.Errorf("%w: %s was still rendering after %s, where a pool renders in seconds: one of its templates loops or builds far more than a pool's objects (Helm's engine has no time bound of its own); it is not a chart to install", ErrTooSlow, name, RenderTimeout)
		}
	}
}

// ErrLookupNotAllowed: a chart looked up a kind it may not read.
var ErrLookupNotAllowed = errors.New("lookup not allowed")

// lookupPattern is a lookup whose apiVersion and kind are written out, as
// every lookup of the pool chart is.
var lookupPattern = regexp.MustCompile(`lookup\s+"([^"]+)"\s+"([^"]+)"`)

// LookupKinds are the "apiVersion Kind" pairs the chart's templates (and
// its dependencies') look up, sorted.
func LookupKinds(chrt *chart.Chart) []string {
	set := map[string]bool{}
	var walk func(c *chart.Chart)
	walk = func(c *chart.Chart) {
		for _, f := range c.Templates {
			for _, m := range lookupPattern.FindAllSubmatch(f.Data, -1) {
				set[string(m[1])+" "+string(m[2])] = true
			}
		}
		for _, d := range c.Dependencies() {
			walk(d)
		}
	}
	walk(chrt)
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// OnlyKinds is p reaching only the kinds allowed ("apiVersion Kind", as
// LookupKinds lists them): a lookup of any other kind is refused
// (ErrLookupNotAllowed), naming it and never asking the cluster. A Secret
// read through it carries no data, whatever allowed says: a render can quote
// what it looked up in a refusal, and a refusal is printed.
func OnlyKinds(p engine.ClientProvider, allowed []string) engine.ClientProvider {
	set := map[string]bool{}
	for _, k := range allowed {
		set[k] = true
	}
	return onlyKinds{inner: p, allowed: set, list: strings.Join(allowed, ", ")}
}

type onlyKinds struct {
	inner   engine.ClientProvider
	allowed map[string]bool
	list    string
}

func (o onlyKinds) GetClientFor(apiVersion, kind string) (dynamic.NamespaceableResourceInterface, bool, error) {
	if !o.allowed[apiVersion+" "+kind] {
		return nil, false, fmt.Errorf("%w: the chart looks up %s %s, a kind the pool chart built into this binary never reads, so it is not asked of the cluster (a chart named on the command line reads only what the pool chart reads: %s)", ErrLookupNotAllowed, apiVersion, kind, o.list)
	}
	c, namespaced, err := o.inner.GetClientFor(apiVersion, kind)
	if err != nil || apiVersion != "v1" || kind != "Secret" {
		return c, namespaced, err
	}
	return redacting{c}, namespaced, nil
}

// redacting hands out Secrets without their data.
type redacting struct {
	dynamic.NamespaceableResourceInterface
}

func (r redacting) Namespace(ns string) dynamic.ResourceInterface {
	return redactingNamespaced{r.NamespaceableResourceInterface.Namespace(ns)}
}

func (r redacting) Get(ctx context.Context, name string, opts metav1.GetOptions, sub ...string) (*unstructured.Unstructured, error) {
	return redact(r.NamespaceableResourceInterface.Get(ctx, name, opts, sub...))
}

func (r redacting) List(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	return redactList(r.NamespaceableResourceInterface.List(ctx, opts))
}

type redactingNamespaced struct {
	dynamic.ResourceInterface
}

func (r redactingNamespaced) Get(ctx context.Context, name string, opts metav1.GetOptions, sub ...string) (*unstructured.Unstructured, error) {
	return redact(r.ResourceInterface.Get(ctx, name, opts, sub...))
}

func (r redactingNamespaced) List(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	return redactList(r.ResourceInterface.List(ctx, opts))
}

func redact(u *unstructured.Unstructured, err error) (*unstructured.Unstructured, error) {
	if u != nil {
		delete(u.Object, "data")
		delete(u.Object, "stringData")
		unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
		if a := u.GetAnnotations(); a != nil {
			delete(a, "kubectl.kubernetes.io/last-applied-configuration")
			u.SetAnnotations(a)
		}
	}
	return u, err
}

func redactList(l *unstructured.UnstructuredList, err error) (*unstructured.UnstructuredList, error) {
	if l != nil {
		for i := range l.Items {
			redact(&l.Items[i], nil)
		}
	}
	return l, err
}
