package render

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// retiringGolden is the default golden as the catalog renders it once its entry
// sets retire: true (keep gone, retiring annotation on).
func retiringGolden(t testing.TB) string {
	t.Helper()
	g := golden{class: "replicated", size: "6Gi", phase: "Succeeded"}.yaml()
	const keep = "annotations: {helm.sh/resource-policy: keep}"
	require.Contains(t, g, keep)
	return strings.Replace(g, keep, `annotations: {kubernetes-worker-image.cozystack.io/retiring: "true"}`, 1)
}

func TestPoolRefusesToStartCloningARetiringGolden(t *testing.T) {
	fixtures := []string{"cluster/instancetypes.yaml", "cluster/storageclasses.yaml"}
	_, err := renderPool(t, vals(t, builtinPool), clusterFromYAML(t, retiringGolden(t), fixtures...))
	requireRefusal(t, err, "pool kubernetes-acme-workers: golden "+defaultGolden+" in cozy-public is retiring",
		"catalog entry {schematicID: "+defaultSchematic+", version: v1.13.6} sets retire: true",
		"version v1.13.6 (from talos.version unset: the chart's default for a new pool)", "A pool cannot start cloning it",
		"Point osImage.builtin at another flavor", "or remove osImage.builtin to import over HTTP")

	// Neighbours: the golden not retiring, or retiring: "false".
	healthy := golden{class: "replicated", size: "6Gi", phase: "Succeeded"}.yaml()
	_, err = renderPool(t, vals(t, builtinPool), clusterFromYAML(t, healthy, fixtures...))
	require.NoError(t, err)
	_, err = renderPool(t, vals(t, builtinPool), clusterFromYAML(t, strings.Replace(retiringGolden(t), `"true"}`, `"false"}`, 1), fixtures...))
	require.NoError(t, err)
	// The HTTP path never reads the golden.
	_, err = renderPool(t, vals(t, "cluster: acme"), clusterFromYAML(t, retiringGolden(t), fixtures...))
	require.NoError(t, err)
}

func TestPoolRunningFromARetiringGoldenIsExempt(t *testing.T) {
	fixtures := []string{"cluster/instancetypes.yaml", "cluster/storageclasses.yaml"}
	running := runningPool(testPoolName, testPoolName+"-abc123", defaultGolden, "replicated", 2)
	healthy := golden{class: "replicated", size: "6Gi", phase: "Succeeded"}.yaml()
	m, err := renderPool(t, vals(t, builtinPool), clusterFromYAML(t, running+retiringGolden(t), fixtures...))
	require.NoError(t, err, "a pool with ready workers from this golden keeps rendering")
	// The same bytes as against the golden before it retired.
	assert.Equal(t, mustRenderPool(t, vals(t, builtinPool), clusterFromYAML(t, running+healthy, fixtures...)).Text(), m.Text())

	for name, cluster := range map[string]string{
		"a pool at zero workers":       runningPool(testPoolName, testPoolName+"-abc123", defaultGolden, "replicated", 0),
		"another pool's objects":       runningPool("kubernetes-acme-other", "kubernetes-acme-other-abc123", defaultGolden, "replicated", 3),
		"a template of another golden": runningPool(testPoolName, testPoolName+"-abc123", "talos-worker-other-v1.13.6", "replicated", 3),
	} {
		t.Run(name+" is not exempt", func(t *testing.T) {
			// The pool names its flavor: one naming none keeps the golden its template clones.
			_, err := renderPool(t, vals(t, "{cluster: acme, talos: {schematicID: "+defaultSchematic+"}, osImage: {builtin: {}}}"), clusterFromYAML(t, cluster+retiringGolden(t), fixtures...))
			requireRefusal(t, err, "is retiring")
		})
	}
}
