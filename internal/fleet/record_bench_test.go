package fleet

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// BenchmarkDecodeRecord: a record is decoded within its bounds whatever it
// holds: a pool record of ordinary size, a gzip bomb of the pool chart,
// another chart's record with its config first, another chart's record of
// ordinary order.
func BenchmarkDecodeRecord(b *testing.B) {
	lists := "[" + strings.TrimSuffix(strings.Repeat("[],", (32<<20)/3), ",") + "]"
	for _, c := range []struct{ name, body string }{
		{"pool record", `{"name":"p","info":{"status":"deployed"},"chart":{"metadata":{"name":"kubernetes-nodes"},"templates":[{"name":"t","data":"` + strings.Repeat("QUFB", 20000) + `"}]},"config":{"cluster":"a"},"manifest":"` + strings.Repeat("x", 20000) + `","version":1,"namespace":"ns"}`},
		{"gzip bomb", `{"name":"p","info":{"status":"deployed"},"chart":{"metadata":{"name":"kubernetes-nodes"}},"config":{"x":` + lists + `}}`},
		{"other chart, config first", `{"config":{"x":` + lists + `},"name":"p","chart":{"metadata":{"name":"postgres"}}}`},
		{"other chart", `{"name":"p","info":{"status":"deployed"},"chart":{"metadata":{"name":"postgres"}},"config":{"x":` + lists + `}}`},
	} {
		obj, err := EncodeRecordBody("p", "ns", 1, "deployed", []byte(c.body))
		if err != nil {
			b.Fatal(err)
		}
		s := &unstructured.Unstructured{Object: obj}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				_, _ = decodeRecord(s, "kubernetes-nodes")
			}
		})
	}
}
