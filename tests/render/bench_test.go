package render

import (
	"fmt"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// tenantDisks makes n finished worker disks of another pool in the tenant
// namespace: what a busy namespace holds that a render may have to list.
func tenantDisks(n int) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, &unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": "cdi.kubevirt.io/v1beta1",
			"kind":       "DataVolume",
			"metadata": map[string]interface{}{
				"name":              fmt.Sprintf("kubernetes-acme-other-%05d-disk-system", i),
				"namespace":         testNamespace,
				"creationTimestamp": "2026-03-01T10:00:00Z",
				"annotations": map[string]interface{}{
					"kubernetes-worker-image.cozystack.io/golden": defaultGolden,
					"kubernetes-worker-image.cozystack.io/pool":   "kubernetes-acme-other",
				},
			},
			"spec":   map[string]interface{}{"source": map[string]interface{}{"pvc": map[string]interface{}{"namespace": "cozy-public", "name": defaultGolden}}},
			"status": map[string]interface{}{"phase": "Succeeded"},
		}})
	}
	return out
}

// BenchmarkRenderPaths renders one pool on the HTTP path and on the clone path
// with 10, 1,000 and 10,000 DataVolumes in its namespace, with a declared class
// (the namespace is never listed) and with storageClass "" (it is listed once,
// to find the pool's own cloned disk). calls/op counts API requests.
func BenchmarkRenderPaths(b *testing.B) {
	base, err := render.ParseObjects([]byte(golden{class: "replicated", size: "6Gi", phase: "Succeeded"}.yaml()))
	if err != nil {
		b.Fatal(err)
	}
	fixtures, err := render.LoadObjects(support.Fixture("cluster/instancetypes.yaml"), support.Fixture("cluster/storageclasses.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	base = append(base, fixtures...)
	c := poolChart(b)
	run := func(b *testing.B, cluster *support.Cluster, values map[string]interface{}) {
		b.ReportAllocs()
		cluster.ResetCalls()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := render.Render(c, render.Options{Release: render.Release{Name: testRelease, Namespace: testNamespace}, Values: values, Cluster: cluster}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(cluster.Calls())/float64(b.N), "calls/op")
	}
	b.Run("http", func(b *testing.B) {
		run(b, support.NewCluster(append(base, tenantDisks(10)...)...), vals(b, "cluster: acme"))
	})
	for _, n := range []int{10, 1000, 10000} {
		cluster := support.NewCluster(append(base, tenantDisks(n)...)...)
		b.Run(fmt.Sprintf("clone/declared-class/dvs=%d", n), func(b *testing.B) {
			run(b, cluster, vals(b, builtinPool))
		})
		b.Run(fmt.Sprintf("clone/default-class/dvs=%d", n), func(b *testing.B) {
			run(b, cluster, vals(b, "{cluster: acme, storageClass: '', osImage: {builtin: {}}}"))
		})
	}
}
