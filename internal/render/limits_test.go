package render_test

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	charts "github.com/cozystack/golden-worker-images"
	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chart"
)

// oneTemplate is a chart of one template.
func oneTemplate(body string) *chart.Chart {
	return &chart.Chart{
		Metadata:  &chart.Metadata{APIVersion: "v2", Name: "head", Version: "0.1.0"},
		Templates: []*chart.File{{Name: "templates/t.yaml", Data: []byte(body)}},
	}
}

// A render that does not finish in time is abandoned and said to be too
// slow (Helm's engine has no bound of its own); the same template with a
// short loop renders.
func TestRenderIsTimeBounded(t *testing.T) {
	saved := render.RenderTimeout
	render.RenderTimeout = 200 * time.Millisecond
	t.Cleanup(func() { render.RenderTimeout = saved })

	start := time.Now()
	_, err := render.Render(oneTemplate(`{{ range until 5000 }}{{ range until 5000 }}{{ end }}{{ end }}`), render.Options{Release: render.Release{Name: "r", Namespace: "n"}})
	require.Error(t, err)
	assert.True(t, errors.Is(err, render.ErrTooSlow), "%v", err)
	assert.Contains(t, err.Error(), "the render was stopped: chart head 0.1.0 was still rendering after 200ms")
	assert.Less(t, time.Since(start), 2*time.Second)

	m, err := render.Render(oneTemplate("kind: ConfigMap\napiVersion: v1\nmetadata: {name: x}\ndata: {n: \"{{ len (until 10) }}\"}\n"), render.Options{Release: render.Release{Name: "r", Namespace: "n"}})
	require.NoError(t, err)
	require.Len(t, m.Docs, 1)
}

// A render that builds far more than a pool (a list of 30 million, an
// output that grows without end) is stopped once the heap passes its bound,
// long before the machine runs out.
func TestRenderIsMemoryBounded(t *testing.T) {
	saved := render.RenderHeapBytes
	render.RenderHeapBytes = 64 << 20
	t.Cleanup(func() { render.RenderHeapBytes = saved })
	runtime.GC()
	_, err := render.Render(oneTemplate(`{{ range until 30000000 }}{{ end }}`), render.Options{Release: render.Release{Name: "r", Namespace: "n"}})
	require.Error(t, err)
	assert.True(t, errors.Is(err, render.ErrTooSlow), "%v", err)
	assert.Contains(t, err.Error(), "over the 64 MiB a render may take")
}

const secretAndConfigMap = `apiVersion: v1
kind: Secret
metadata: {name: creds, namespace: tenant-a}
stringData: {password: s3cr3t-value}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: tenant-a}
data: {mode: fast}`

// Through OnlyKinds a chart reaches only the kinds allowed: a lookup of
// another (every Secret of the cluster) is refused without asking the
// cluster and carries no data; an allowed kind reads as before; a Secret,
// even allowed, comes without its data.
func TestOnlyKindsRefusesOtherKindsAndRedactsSecrets(t *testing.T) {
	objs, err := render.ParseObjects([]byte(secretAndConfigMap))
	require.NoError(t, err)
	state := render.NewState(objs...)
	opts := func(allowed ...string) render.Options {
		return render.Options{Release: render.Release{Name: "r", Namespace: "tenant-a"}, Cluster: render.OnlyKinds(state, allowed)}
	}
	leak := oneTemplate(`{{ fail (toJson (lookup "v1" "Secret" "" "")) }}`)
	_, err = render.Render(leak, opts("v1 ConfigMap"))
	require.Error(t, err)
	assert.True(t, errors.Is(err, render.ErrLookupNotAllowed), "%v", err)
	assert.Contains(t, err.Error(), "the chart looks up v1 Secret, a kind the pool chart built into this binary never reads")
	assert.NotContains(t, err.Error(), "s3cr3t")
	assert.NotContains(t, err.Error(), "czNjcjN0", "nor its base64")

	_, err = render.Render(leak, opts("v1 ConfigMap", "v1 Secret"))
	require.Error(t, err, "the chart's own fail")
	assert.Contains(t, err.Error(), "creds")
	assert.NotContains(t, err.Error(), "czNjcjN0", "an allowed Secret comes without its data")

	m, err := render.Render(oneTemplate(`{"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "x"}, "data": {"mode": {{ (lookup "v1" "ConfigMap" "tenant-a" "settings").data.mode | quote }}}}`), opts("v1 ConfigMap"))
	require.NoError(t, err)
	assert.Contains(t, m.Docs[0].Text, `"fast"`)
}

// The kinds the pool chart reads are what its templates look up, its
// libraries' included; no Secret is among them.
func TestPoolChartLookupKinds(t *testing.T) {
	c, err := render.LoadChartFS(charts.FS, render.PoolChart)
	require.NoError(t, err)
	kinds := render.LookupKinds(c)
	for _, want := range []string{"v1 ConfigMap", "v1 PersistentVolumeClaim", "cdi.kubevirt.io/v1beta1 DataVolume", "storage.k8s.io/v1 StorageClass", "cluster.x-k8s.io/v1beta1 MachineDeployment", "instancetype.kubevirt.io/v1beta1 VirtualMachineClusterInstancetype"} {
		assert.Contains(t, kinds, want)
	}
	assert.NotContains(t, strings.Join(kinds, ","), "Secret")
}
