package report

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chart"
)

// The pool chart built in defines every template its facts reach.
func TestPoolChartDefinesEveryFactsHelper(t *testing.T) {
	c, err := LoadPoolChart("")
	require.NoError(t, err)
	assert.Empty(t, missingFactsHelpers(c, "kubernetes-nodes.diskSource"))
	assert.Empty(t, missingFactsHelpers(c, "kubernetes-nodes.osImage"))
	assert.NoError(t, CheckFactsHelpers(c, "the head chart ."))
}

// A helper reached only through another (here behindFacts includes
// kubernetes-nodes.gone, in a dependency) is named as missing as well as one
// the facts template includes itself; a chart without behindFacts (upstream's)
// gets no facts, so nothing is asked of it.
func TestMissingFactsHelpersFollowsIncludes(t *testing.T) {
	lib := &chart.Chart{Metadata: &chart.Metadata{Name: "lib"}, Templates: []*chart.File{{Name: "templates/_h.tpl", Data: []byte(`
{{- define "kubernetes-nodes.poolName" -}}p{{- end -}}
{{- define "kubernetes-nodes.diskSource" -}}{{ if .x }}{{ template "kubernetes-nodes.creationDefaults" . }}{{ end }}{{- end -}}
{{- define "kubernetes-nodes.creationDefaults" -}}{}{{- end -}}
{{- define "kubernetes-nodes.behindFacts" -}}{{ range .y }}{{ include "kubernetes-nodes.gone" (dict "a" (include "kubernetes-nodes.poolName" $)) | nindent 2 }}{{ end }}{{- end -}}
`)}}}
	c := &chart.Chart{Metadata: &chart.Metadata{Name: "kubernetes-nodes"}, Templates: []*chart.File{{Name: "templates/a.yaml", Data: []byte(`{{ include "kubernetes-nodes.poolName" . }}`)}}}
	c.AddDependency(lib)
	assert.Equal(t, []string{"kubernetes-nodes.gone", "kubernetes-nodes.machineConfigFacts"}, missingFactsHelpers(c, "kubernetes-nodes.diskSource"))
	err := CheckFactsHelpers(c, "the base chart ./old")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `the base chart ./old cannot be read: it defines kubernetes-nodes.behindFacts but not "kubernetes-nodes.gone", "kubernetes-nodes.machineConfigFacts", which`)

	upstream := &chart.Chart{Metadata: &chart.Metadata{Name: "kubernetes-nodes"}, Templates: []*chart.File{{Name: "templates/a.yaml", Data: []byte(`{{ include "kubernetes-nodes.nothing" . }}`)}}}
	assert.NoError(t, CheckFactsHelpers(upstream, "the head chart up"))
}
