package fleet_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/render"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A fleet of n tenants, each with a cozystack-values Secret, a Cozystack
// pool, an application of another chart with its Helm record, and a plain
// helm install of another chart: what pins reads before rendering.
func benchFleet(b *testing.B, n int) *render.State {
	b.Helper()
	var objs []*unstructured.Unstructured
	add := func(text string) {
		o, err := render.ParseObjects([]byte(text))
		if err != nil {
			b.Fatal(err)
		}
		objs = append(objs, o...)
	}
	for i := 0; i < n; i++ {
		ns := fmt.Sprintf("tenant-%04d", i)
		add(fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata: {name: cozystack-values, namespace: %[1]s}
stringData:
  values.yaml: |
    _cluster: {osImage: {builtin: {}}, talos: {imageFactoryURL: https://mirror.example}}
    _namespace: {host: %[1]s.example}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: kubernetes-nodes-c-w, namespace: %[1]s}
spec:
  chartRef: {kind: ExternalArtifact, name: cozystack-kubernetes-nodes-application-kubevirt-kubernetes-nodes, namespace: cozy-system}
  valuesFrom: [{kind: Secret, name: cozystack-values}]
  values: {cluster: c, minReplicas: 1}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: postgres-db, namespace: %[1]s}
spec:
  chartRef: {kind: ExternalArtifact, name: cozystack-postgres-application-default-postgres, namespace: cozy-system}
  valuesFrom: [{kind: Secret, name: cozystack-values}]
`, ns))
		for _, rec := range []struct{ name, chart string }{{"postgres-db", "postgres"}, {"redis", "redis"}} {
			o, err := fleet.EncodeRecord(rec.name, ns, rec.chart, 3, "deployed", map[string]interface{}{"size": "10Gi"})
			if err != nil {
				b.Fatal(err)
			}
			objs = append(objs, &unstructured.Unstructured{Object: o})
		}
	}
	return render.NewState(objs...)
}

func BenchmarkRead(b *testing.B) {
	for _, n := range []int{10, 1000} {
		st := benchFleet(b, n)
		b.Run(fmt.Sprintf("tenants=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				f, err := fleet.Read(context.Background(), st, opts)
				if err != nil || len(f.Pools) != n {
					b.Fatalf("%v, %d pools", err, len(f.Pools))
				}
			}
		})
	}
}
