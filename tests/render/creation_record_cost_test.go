package render

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/render/helmv4"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/require"
)

// A creation record is read from the pool's namespace, which the tenant can
// write: the MachineDeployment's annotation, or an earlier version's
// ConfigMap. The chart refuses one before parsing it when it is larger than
// 8 KiB or nested deeper than the chart writes it (record, osImage, builtin or
// factory: three levels as JSON; the ConfigMap's osImage text, two), so
// reading one costs a render no more than the same bytes of values.

const maxRecordBytes = 8 << 10

// jsonNested is {"osImage":{"builtin":{"x":{"x":...}}}} with depth objects in all.
func jsonNested(depth int) string {
	inner := `""`
	for i := 0; i < depth-2; i++ {
		inner = `{"x":` + inner + `}`
	}
	return `{"osImage":{"builtin":` + inner + `}}`
}

// yamlNested is the ConfigMap's osImage text as a flow map depth levels deep.
func yamlNested(depth int) string {
	return strings.Repeat("{x: ", depth-1) + "{}" + strings.Repeat("}", depth-1)
}

// padJSON pads a JSON object with spaces before its closing brace to n bytes.
func padJSON(obj string, n int) string {
	return obj[:len(obj)-1] + strings.Repeat(" ", n-len(obj)) + "}"
}

func legacyOSImage(osImage string) string {
	return legacyRecord(fmt.Sprintf(`{origin: platform, imageFactoryURL: "", osImage: %q}`, osImage))
}

type recordCase struct {
	name    string
	objects string
	values  string
	// refusal is "" when the pool renders.
	refusal []string
}

const (
	annotationName = "annotation kubernetes-worker-image.cozystack.io/created-with of MachineDeployment tenant-acme/kubernetes-acme-workers"
	legacyName     = "ConfigMap tenant-acme/kubernetes-acme-workers-created-with"
)

func recordCases() []recordCase {
	plainURL := `{"imageFactoryURL":"https://factory.mirror.internal"}`
	deepAnnotation := jsonNested(10000)
	deepLegacy := yamlNested(10000)
	return []recordCase{
		// At the bounds: they render.
		{"annotation of 8 KiB", createdWith(padJSON(plainURL, maxRecordBytes)), "cluster: acme", nil},
		{"annotation nested as the chart writes it", createdWith(`{"imageFactoryURL":"https://factory.mirror.internal","osImage":{"factory":{"version":"v1.13.5"}}}`), "cluster: acme", nil},
		{"legacy record of 8 KiB", legacyOSImage("factory: {}" + strings.Repeat(" ", maxRecordBytes-len("factory: {}")-len("platform"))), "cluster: acme", nil},
		{"legacy osImage nested as the chart writes it (flow)", legacyOSImage("{factory: {version: v1.13.5}}"), "cluster: acme", nil},
		{"legacy osImage nested as the chart writes it (block)", legacyOSImage("factory:\n  version: v1.13.5\n"), "cluster: acme", nil},
		// Past them: refused before parsing, naming the object and the fix.
		{"annotation one byte past 8 KiB", createdWith(padJSON(plainURL, maxRecordBytes+1)), "cluster: acme",
			[]string{"8193 bytes in the " + annotationName + ", more than the 8192 this chart writes", "delete the annotation"}},
		{"annotation nested one level deeper", createdWith(jsonNested(4)), "cluster: acme",
			[]string{annotationName + " nests deeper than the 3 levels this chart writes", "delete the annotation"}},
		{"annotation nested 10,000 deep", createdWith(deepAnnotation), "cluster: acme",
			[]string{fmt.Sprint(len(deepAnnotation)) + " bytes in the " + annotationName}},
		{"annotation of 8 KiB nested 1,000 deep", createdWith(jsonNested(1000)), "cluster: acme",
			[]string{annotationName + " nests deeper than the 3 levels"}},
		{"annotation nested 10,000 deep, pool with its own osImage", createdWith(deepAnnotation), "{cluster: acme, osImage: {}}",
			[]string{fmt.Sprint(len(deepAnnotation)) + " bytes in the " + annotationName}},
		{"legacy record one byte past 8 KiB", legacyOSImage("factory: {}" + strings.Repeat(" ", maxRecordBytes-len("factory: {}")-len("platform")+1)), "cluster: acme",
			[]string{"8193 bytes in the " + legacyName + ", the record of an earlier chart version, more than the 8192 this chart writes", "delete that ConfigMap"}},
		{"legacy osImage nested one level deeper", legacyOSImage(yamlNested(3)), "cluster: acme",
			[]string{"the osImage recorded in " + legacyName + " nests deeper than the 2 levels this chart writes", "delete that ConfigMap"}},
		{"legacy osImage indented one level deeper", legacyOSImage("factory:\n  version:\n    x: v1.13.5\n"), "cluster: acme",
			[]string{"the osImage recorded in " + legacyName + " nests deeper than the 2 levels this chart writes"}},
		{"legacy osImage of nested block sequences", legacyOSImage("- - - - - x"), "cluster: acme",
			[]string{"the osImage recorded in " + legacyName + " nests deeper than the 2 levels this chart writes"}},
		{"legacy osImage nested 10,000 deep", legacyOSImage(deepLegacy), "cluster: acme",
			[]string{fmt.Sprint(len(deepLegacy)+len("platform")) + " bytes in the " + legacyName}},
		{"legacy osImage of 8 KiB nested 1,000 deep", legacyOSImage(yamlNested(1000)), "cluster: acme",
			[]string{"the osImage recorded in " + legacyName + " nests deeper than the 2 levels"}},
		// A pool with its own osImage drops a broken recorded one, as before, unparsed.
		{"legacy osImage of 8 KiB nested 1,000 deep, pool with its own osImage", legacyOSImage(yamlNested(1000)), "{cluster: acme, osImage: {}}", nil},
		{"legacy osImage nested 10,000 deep, pool with its own osImage", legacyOSImage(deepLegacy), "{cluster: acme, osImage: {}}",
			[]string{fmt.Sprint(len(deepLegacy)+len("platform")) + " bytes in the " + legacyName}},
	}
}

// TestCreationRecordCostIsBounded renders each record at its bound (renders)
// and past it (refused with the chart's message), under Helm v3 and v4, each
// within the values' own cost bound (allocations asserted, time logged).
func TestCreationRecordCostIsBounded(t *testing.T) {
	for _, rc := range recordCases() {
		cluster := clusterFromYAML(t, rc.objects, "cluster/instancetypes.yaml")
		values := vals(t, rc.values)
		c := poolChart(t)
		for _, engine := range []string{"v3", "v4"} {
			what := fmt.Sprintf("%s (Helm %s)", rc.name, engine)
			var err error
			opts := render.Options{Release: render.Release{Name: testRelease, Namespace: testNamespace, Upgrade: true}, Values: support.CopyValues(values), Cluster: cluster}
			allocated, took := allocatedBy(func() {
				if engine == "v3" {
					if err = render.CheckValues(opts.Values); err == nil {
						_, err = support.HelmRenderOwned(c, opts.Release, opts.Values, opts.Provider(), opts.APIVersions)
					}
				} else {
					_, err = helmv4.RenderFiles(c, opts)
				}
			})
			t.Logf("%-75s %5d MB %8.1f ms %s", what, allocated>>20, float64(took.Microseconds())/1000, refusalSummary(err))
			require.LessOrEqual(t, allocated, uint64(costBoundBytes), "%s: allocated %d MB", what, allocated>>20)
			if rc.refusal == nil {
				require.NoError(t, err, what)
				continue
			}
			requireOwnRefusal(t, err, what)
			requireRefusal(t, err, rc.refusal...)
		}
	}
}

// BenchmarkCreationRecord reports each record case's time and allocations.
func BenchmarkCreationRecord(b *testing.B) {
	for _, rc := range recordCases() {
		cluster := clusterFromYAML(b, rc.objects, "cluster/instancetypes.yaml")
		values := vals(b, rc.values)
		c := poolChart(b)
		b.Run(rc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				_, _ = render.Render(c, render.Options{Release: render.Release{Name: testRelease, Namespace: testNamespace, Upgrade: true}, Values: values, Cluster: cluster})
			}
		})
	}
}
