package render

import (
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// probe reads a chart helper through an added template.
const probe = "kind: Probe\npool: {{ include \"kubernetes-nodes.poolName\" . }}\n"

func TestWithTemplateAddsADocumentAndLeavesTheChartAlone(t *testing.T) {
	c := poolChart(t)
	before := len(c.Templates)
	m, err := render.Render(render.WithTemplate(c, "templates/0-probe.yaml", []byte(probe)), render.Options{Release: render.Release{Name: testRelease, Namespace: testNamespace}, Values: vals(t, "cluster: acme")})
	require.NoError(t, err)
	d, err := m.One("Probe")
	require.NoError(t, err)
	assert.Equal(t, testPoolName, render.Get(d.Object, "pool"), "the added template reads the chart's helpers")
	assert.Len(t, m.OfKind("KubevirtMachineTemplate"), 1, "the chart's own objects still render")

	assert.Len(t, c.Templates, before, "the original chart is not modified")
	plain := mustRenderPool(t, vals(t, "cluster: acme"), nil)
	assert.Empty(t, plain.OfKind("Probe"))
}

func TestHelpersOnlyRendersNothingButTheAddedTemplate(t *testing.T) {
	c := poolChart(t)
	before := len(c.Templates)
	// instanceType "" with no resources is refused by the machine template; with
	// only the helpers that guard never runs.
	values := vals(t, "{cluster: acme, instanceType: ''}")
	m, err := render.Render(render.WithTemplate(render.HelpersOnly(c), "templates/0-probe.yaml", []byte(probe)), render.Options{Release: render.Release{Name: testRelease, Namespace: testNamespace}, Values: values})
	require.NoError(t, err)
	require.Len(t, m.Docs, 1)
	assert.Equal(t, "Probe", m.Docs[0].Kind())
	assert.Len(t, c.Templates, before, "the original chart is not modified")
	_, err = render.Render(c, render.Options{Release: render.Release{Name: testRelease, Namespace: testNamespace}, Values: values})
	require.Error(t, err, "the full chart still refuses the same values")
}
