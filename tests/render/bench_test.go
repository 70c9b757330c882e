package render

import (
	"errors"
	"fmt"
	"testing"
	"text/template"
	"time"

	"github.com/Masterminds/sprig/v3"
	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"helm.sh/helm/v3/pkg/chart"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// preFeatureChart loads the pre-feature chart, Cozystack's own kubernetes-nodes
// chart (support.CozystackChart, from $COZYSTACK_CHART), or skips without it.
func preFeatureChart(b *testing.B) *chart.Chart {
	b.Helper()
	dir, err := support.CozystackChart()
	if errors.Is(err, support.ErrNoPreFeatureChart) {
		b.Skipf("nothing to compare with: %v", err)
	}
	if err != nil {
		b.Fatal(err)
	}
	c, err := render.LoadChart(dir)
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// tenantDisks makes n finished worker disks of another pool in the tenant
// namespace: what a busy namespace holds, which a render must never read.
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

// benchCluster holds the golden, the instancetypes and classes, the pool's own
// running state (MachineDeployment, its template, its record) and n DataVolumes
// of another pool in the pool's namespace.
func benchCluster(b *testing.B, n int) *support.Cluster {
	b.Helper()
	objs, err := render.ParseObjects([]byte(golden{class: "replicated", size: "6Gi", phase: "Succeeded"}.yaml() +
		runningPool(testPoolName, testPoolName+"-abc123", defaultGolden, "replicated", 2)))
	if err != nil {
		b.Fatal(err)
	}
	fixtures, err := render.LoadObjects(support.Fixture("cluster/instancetypes.yaml"), support.Fixture("cluster/storageclasses.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	return support.NewCluster(append(append(objs, fixtures...), tenantDisks(n)...)...)
}

// renderLoop renders b.N times and reports API requests and objects read per render.
func renderLoop(b *testing.B, c *chart.Chart, cluster *support.Cluster, values map[string]interface{}) {
	b.Helper()
	b.ReportAllocs()
	cluster.ResetCalls()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := render.Render(c, render.Options{Release: render.Release{Name: testRelease, Namespace: testNamespace}, Values: values, Cluster: cluster}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(cluster.Calls())/float64(b.N), "requests/op")
	b.ReportMetric(float64(cluster.ObjectsRead())/float64(b.N), "objects/op")
}

// ratio renders base and head alternately, b.N times each, timing each side
// on its own, and reports both ns/op and head's over base's: measured side by
// side in one run, under the same load.
func ratio(b *testing.B, unit string, base, head func() error) {
	b.Helper()
	var baseTime, headTime time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if err := base(); err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		if err := head(); err != nil {
			b.Fatal(err)
		}
		headTime += time.Since(mid)
		baseTime += mid.Sub(start)
	}
	b.ReportMetric(float64(baseTime.Nanoseconds())/float64(b.N), "base-ns/op")
	b.ReportMetric(float64(headTime.Nanoseconds())/float64(b.N), "head-ns/op")
	b.ReportMetric(float64(headTime)/float64(baseTime), unit)
}

// renderOnce is one render of c, for ratio.
func renderOnce(c *chart.Chart, cluster *support.Cluster, values map[string]interface{}) func() error {
	return func() error {
		_, err := render.Render(c, render.Options{Release: render.Release{Name: testRelease, Namespace: testNamespace}, Values: values, Cluster: cluster})
		return err
	}
}

// BenchmarkHTTPPoolAgainstPreFeatureChart: a pool without osImage, Cozystack's
// chart and today's, same values (with the _cluster Cozystack's chart needs),
// same cluster. The render alone is reported, not bounded (docs/design.md).
func BenchmarkHTTPPoolAgainstPreFeatureChart(b *testing.B) {
	pre := preFeatureChart(b)
	now := poolChart(b)
	cluster := benchCluster(b, 10)
	values := vals(b, "{cluster: acme, _cluster: {cluster-domain: cozy.local}}")
	b.Run("pre-feature", func(b *testing.B) { renderLoop(b, pre, cluster, values) })
	b.Run("now", func(b *testing.B) { renderLoop(b, now, cluster, values) })
	b.Run("ratio", func(b *testing.B) {
		ratio(b, "x-pre-feature", renderOnce(pre, cluster, values), renderOnce(now, cluster, values))
	})
}

// BenchmarkRenderPaths: an HTTP pool and a builtin pool (declared class, and
// storageClass "") in a namespace of 10, 1,000 and 10,000 DataVolumes. Goals:
// the clone path at 10,000 within 1.5x of the HTTP pool there, and the same
// requests and objects read per render at every size.
func BenchmarkRenderPaths(b *testing.B) {
	c := poolChart(b)
	for _, n := range []int{10, 1000, 10000} {
		cluster := benchCluster(b, n)
		http := vals(b, "cluster: acme")
		declared := vals(b, builtinPool)
		defaultClass := vals(b, "{cluster: acme, storageClass: '', osImage: {builtin: {}}}")
		b.Run(fmt.Sprintf("dvs=%d/http", n), func(b *testing.B) { renderLoop(b, c, cluster, http) })
		b.Run(fmt.Sprintf("dvs=%d/clone-declared-class", n), func(b *testing.B) { renderLoop(b, c, cluster, declared) })
		b.Run(fmt.Sprintf("dvs=%d/clone-default-class", n), func(b *testing.B) { renderLoop(b, c, cluster, defaultClass) })
		b.Run(fmt.Sprintf("dvs=%d/ratio-clone-default-class", n), func(b *testing.B) {
			ratio(b, "x-http", renderOnce(c, cluster, http), renderOnce(c, cluster, defaultClass))
		})
	}
}

// BenchmarkPerClassAgainstPlainGolden: a pool on "local" whose plain golden is
// on "replicated" clones the per-class golden (one more DataVolume GET and its
// class and size read), against a pool on "replicated" cloning the plain golden
// in the same cluster.
func BenchmarkPerClassAgainstPlainGolden(b *testing.B) {
	c := poolChart(b)
	cluster := perClassCluster(b, plainOnReplicated, perClassOnLocal)
	plain := vals(b, builtinPool)
	perClass := vals(b, localPool)
	b.Run("plain", func(b *testing.B) { renderLoop(b, c, cluster, plain) })
	b.Run("per-class", func(b *testing.B) { renderLoop(b, c, cluster, perClass) })
	b.Run("ratio", func(b *testing.B) {
		ratio(b, "x-plain", renderOnce(c, cluster, plain), renderOnce(c, cluster, perClass))
	})
}

// chartTemplateText is every template file Helm parses for a render of c: the
// chart's and its dependencies'.
func chartTemplateText(c *chart.Chart) (files []string, size int) {
	for _, f := range c.Templates {
		files = append(files, string(f.Data))
		size += len(f.Data)
	}
	for _, dep := range c.Dependencies() {
		more, n := chartTemplateText(dep)
		files = append(files, more...)
		size += n
	}
	return files, size
}

// parseAll parses the files with text/template as Helm does (its functions
// are stood in by sprig's plus no-op stubs of Helm's own, which parsing only
// needs by name).
func parseAll(b *testing.B, files []string) {
	funcs := sprig.TxtFuncMap()
	for _, name := range []string{"include", "tpl", "required", "lookup", "toYaml", "fromYaml", "fromYamlArray", "toJson", "fromJson", "fromJsonArray", "toToml", "fromToml", "mustToYaml", "mustToJson"} {
		funcs[name] = func(...interface{}) string { return "" }
	}
	t := template.New("chart").Funcs(funcs)
	for i, text := range files {
		if _, err := t.New(fmt.Sprintf("f%d", i)).Parse(text); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTemplateParse: parsing the chart's template text alone, which Helm
// does on every render, pre-feature and now. The rest of a render's time is
// executing the templates.
func BenchmarkTemplateParse(b *testing.B) {
	for _, side := range []struct {
		name  string
		chart func(*testing.B) *chart.Chart
	}{{"pre-feature", preFeatureChart}, {"now", func(b *testing.B) *chart.Chart { return poolChart(b) }}} {
		c := side.chart(b)
		files, size := chartTemplateText(c)
		b.Run(side.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				parseAll(b, files)
			}
			b.ReportMetric(float64(size)/1024, "KB")
		})
	}
}
