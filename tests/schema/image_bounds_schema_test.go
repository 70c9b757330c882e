package schema

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// libraryMaxLengths are the longest each image field may be, from the library.
func libraryMaxLengths(t *testing.T) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for field, n := range definedPatterns(t, "packages/library/worker-image-lib/templates/_patterns.tpl", "worker-image-lib.maxLengths") {
		v, err := strconv.Atoi(n)
		require.NoError(t, err, field)
		out[field] = float64(v)
	}
	return out
}

// The catalog and the platform bound the image fields they publish for new
// pools (and the catalog's entries) as a pool bounds its own: the library's
// patterns and longest lengths, so the schemas refuse first what a pool would.
func TestCatalogAndPlatformSchemasBoundImageFieldsAsAPool(t *testing.T) {
	patterns, max := libraryPatterns(t), libraryMaxLengths(t)
	for _, chart := range []string{catalogChart, platformChart} {
		schema := document(t, chartFile(t, chart+"/values.schema.json"))
		for def, field := range map[string]string{"schematicID": "schematicID", "talosVersion": "version", "factoryURL": "imageFactoryURL"} {
			require.Equal(t, patterns[field], jsonAt(t, schema, "definitions", def, "pattern"), "%s %s", chart, def)
			require.Equal(t, max[field], jsonAt(t, schema, "definitions", def, "maxLength"), "%s %s", chart, def)
		}
		require.Equal(t, max["imageFactoryURL"], jsonAt(t, schema, "properties", "tenantWorkers", "properties", "talos", "properties", "imageFactoryURL", "maxLength"), chart)
	}
	catalog := document(t, chartFile(t, catalogChart+"/values.schema.json"))
	for _, field := range []string{"schematicID", "version"} {
		require.Equal(t, max[field], jsonAt(t, catalog, "properties", "images", "then", "items", "properties", field, "maxLength"), field)
	}
}
