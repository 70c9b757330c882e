package rollout_test

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/cozystack/golden-worker-images/internal/rollout"
	"github.com/cozystack/golden-worker-images/tests/support"
	"helm.sh/helm/v3/pkg/engine"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// counting is a cluster that counts the requests made of it (each get or
// list, as an API server would see them).
type counting struct {
	engine.ClientProvider
	requests atomic.Int64
}

func (c *counting) GetClientFor(apiVersion, kind string) (dynamic.NamespaceableResourceInterface, bool, error) {
	r, namespaced, err := c.ClientProvider.GetClientFor(apiVersion, kind)
	if err != nil {
		return nil, namespaced, err
	}
	return &countedResource{NamespaceableResourceInterface: r, c: c}, namespaced, nil
}

type countedResource struct {
	dynamic.NamespaceableResourceInterface
	c *counting
}

func (r *countedResource) Namespace(ns string) dynamic.ResourceInterface {
	return &countedNamespace{ResourceInterface: r.NamespaceableResourceInterface.Namespace(ns), c: r.c}
}

func (r *countedResource) Get(ctx context.Context, name string, o metav1.GetOptions, sub ...string) (*unstructured.Unstructured, error) {
	r.c.requests.Add(1)
	return r.NamespaceableResourceInterface.Get(ctx, name, o, sub...)
}

func (r *countedResource) List(ctx context.Context, o metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	r.c.requests.Add(1)
	return r.NamespaceableResourceInterface.List(ctx, o)
}

type countedNamespace struct {
	dynamic.ResourceInterface
	c *counting
}

func (r *countedNamespace) Get(ctx context.Context, name string, o metav1.GetOptions, sub ...string) (*unstructured.Unstructured, error) {
	r.c.requests.Add(1)
	return r.ResourceInterface.Get(ctx, name, o, sub...)
}

func (r *countedNamespace) List(ctx context.Context, o metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	r.c.requests.Add(1)
	return r.ResourceInterface.List(ctx, o)
}

// benchFleet is the settled example fleet with its tenants' objects copied
// copies more times (copiedFleet: 7 pools a copy, as the example holds them:
// HelmReleases with a chartRef and valuesFrom cozystack-values, one of
// spec.chart, MachineDeployments, KubevirtMachineTemplates, worker disks)
// and the v1.13.7 golden imported; beside each copy's pools, objects that
// are not pools: a HelmRelease of another chart, a tenant's own chartRef
// whose name ends in kubernetes-nodes, Helm records of other charts, a
// Secret and a ConfigMap.
func benchFleet(b *testing.B, copies int) (*render.State, int) {
	b.Helper()
	objs := copiedFleet(b, copies)
	pools := 0
	namespaces := map[string]bool{}
	for _, o := range objs {
		switch ns := o.GetNamespace(); {
		case strings.HasPrefix(ns, "tenant-"):
			namespaces[ns] = true
			if o.GetKind() == "HelmRelease" {
				pools++
			}
		case ns == "cozy-public" && strings.HasSuffix(o.GetName(), "-v1.13.6"):
			next := o.DeepCopy()
			next.SetName(strings.TrimSuffix(o.GetName(), "v1.13.6") + "v1.13.7")
			objs = append(objs, next)
		}
	}
	for ns := range namespaces {
		lookAlikes, err := render.ParseObjects([]byte(fmt.Sprintf(`apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: postgres-db, namespace: %[1]s}
spec:
  chartRef: {kind: ExternalArtifact, name: cozystack-postgres-application-default-postgres, namespace: cozy-system}
  valuesFrom: [{kind: Secret, name: cozystack-values}]
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: kubernetes-nodes-own-copy, namespace: %[1]s}
spec:
  chartRef: {kind: OCIRepository, name: my-kubernetes-nodes}
  values: {cluster: own}
---
apiVersion: v1
kind: Secret
metadata: {name: app-credentials, namespace: %[1]s}
stringData: {password: not-a-pool}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: app-settings, namespace: %[1]s}
data: {values.yaml: "cluster: not-a-pool"}
`, ns)))
		if err != nil {
			b.Fatal(err)
		}
		objs = append(objs, lookAlikes...)
		for _, rec := range []struct{ name, chart string }{{"postgres-db", "postgres"}, {"redis", "redis"}} {
			o, err := fleet.EncodeRecord(rec.name, ns, rec.chart, 3, "deployed", map[string]any{"size": "10Gi"})
			if err != nil {
				b.Fatal(err)
			}
			objs = append(objs, &unstructured.Unstructured{Object: o})
		}
	}
	return render.NewState(objs...), pools
}

// BenchmarkRolloutPlan plans a rollout as `workerimage rollout` does (the
// fleet read with ReadPins, then Rollout) over the example fleet copied
// copied 14, 142 and 714 times more (105, 1,001 and 5,005 pools: a
// provider's fleet):
// every pool of the example's default flavor to v1.13.7. It reports the
// requests made of the cluster, its pools, the live heap's peak and the CPU
// time the process spent (on a machine shared with other work, wall time
// says how busy the machine was as much as what the plan cost).
func BenchmarkRolloutPlan(b *testing.B) {
	chrt, err := report.LoadPoolChart("")
	if err != nil {
		b.Fatal(err)
	}
	for _, copies := range []int{14, 142, 714} {
		// The example holds 7 pools; the fleet is built only when its run is asked for.
		b.Run(fmt.Sprintf("pools=%d", 7*(copies+1)), func(b *testing.B) {
			st, pools := benchFleet(b, copies)
			state := liveHeapMB()
			b.ResetTimer()
			b.ReportAllocs()
			var requests int64
			peak := heapPeak()
			defer peak.stop(b)
			cpu := support.CPUTime()
			defer func() { b.ReportMetric((support.CPUTime()-cpu).Seconds()/float64(b.N), "cpu-s/op") }()
			for i := 0; i < b.N; i++ {
				c := &counting{ClientProvider: st}
				plan := planFleet(b, chrt, st, c)
				if plan.Selected < pools/2 {
					b.Fatalf("%d pools selected of %d", plan.Selected, pools)
				}
				for _, list := range [][]rollout.RolloutPool{plan.Pools(), plan.OnTarget, plan.Blocked, plan.CannotMove, plan.Unknown} {
					for _, p := range list {
						if strings.HasSuffix(p.HelmRelease, "/postgres-db") || strings.HasSuffix(p.HelmRelease, "/kubernetes-nodes-own-copy") {
							b.Fatalf("a look-alike is planned as a pool: %s (%s)", p.HelmRelease, p.State)
						}
					}
				}
				requests += c.requests.Load()
			}
			b.ReportMetric(float64(requests)/float64(b.N), "requests/op")
			b.ReportMetric(float64(pools), "pools")
			b.ReportMetric(state, "state-heap-MB")
		})
	}
}

// liveHeapMB is the live heap once collected: here, what the generated
// cluster itself holds, which the peak includes.
func liveHeapMB() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc) / (1 << 20)
}

// peakHeap samples the live heap while a benchmark runs: B/op counts every
// byte allocated, the peak is what the machine must hold at once.
type peakHeap struct {
	done chan struct{}
	max  atomic.Uint64
}

func heapPeak() *peakHeap {
	runtime.GC()
	p := &peakHeap{done: make(chan struct{})}
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	go func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > p.max.Load() {
				p.max.Store(v)
			}
			select {
			case <-p.done:
				return
			case <-tick.C:
			}
		}
	}()
	return p
}

func (p *peakHeap) stop(b *testing.B) {
	close(p.done)
	b.ReportMetric(float64(p.max.Load())/(1<<20), "peak-heap-MB")
}
