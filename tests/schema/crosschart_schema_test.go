package schema

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The pool and the catalog guard the image fields with the same patterns (one
// named template per chart), and the platform's schema checks its defaults for
// new pools with them too, so a value one side accepts is never refused by another.
func TestImagePatternsAgreeAcrossCharts(t *testing.T) {
	pool := definedPatterns(t, poolChart+"/templates/_osimage.tpl", "kubernetes-nodes.imagePatterns")
	catalog := definedPatterns(t, catalogChart+"/templates/_helpers.tpl", "kubernetes-worker-image.imagePatterns")
	for _, field := range []string{"schematicID", "version", "imageFactoryURL"} {
		require.NotEmpty(t, pool[field], field)
		require.Equal(t, catalog[field], pool[field], "%s: packages/apps/kubernetes-nodes/templates/_osimage.tpl and packages/system/kubernetes-worker-image/templates/_helpers.tpl disagree", field)
	}
	platform := document(t, chartFile(t, "packages/core/platform/values.schema.json"))
	require.Equal(t, pool["schematicID"], jsonAt(t, platform, "definitions", "schematicID", "pattern"))
	require.Equal(t, pool["version"], jsonAt(t, platform, "definitions", "talosVersion", "pattern"))
	require.Equal(t, pool["imageFactoryURL"], jsonAt(t, platform, "definitions", "factoryURL", "pattern"))
}
