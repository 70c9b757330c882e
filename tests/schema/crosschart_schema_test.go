package schema

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The pool and the catalog guard the image fields with the same patterns (one
// named template per chart), and the platform's schema checks its defaults for
// new pools with them too, so a value one side accepts is never refused by another.
func TestImagePatternsAgreeAcrossCharts(t *testing.T) {
	lib := libraryPatterns(t)
	for _, field := range []string{"schematicID", "version", "imageFactoryURL", "quantity", "storageClass"} {
		require.NotEmpty(t, lib[field], field)
	}
	// The charts' templates hold no copy of their own: they include the library's.
	for _, file := range []string{"packages/library/kubernetes-nodes-lib/templates/_osimage.tpl", "packages/library/kubernetes-nodes-lib/templates/_validate.tpl", catalogChart + "/templates/_helpers.tpl"} {
		raw := chartFile(t, file)
		require.NotContains(t, raw, lib["version"], "%s copies the version pattern instead of including worker-image-lib.patterns", file)
		require.NotContains(t, raw, lib["schematicID"], "%s copies the schematicID pattern", file)
	}
	platform := document(t, chartFile(t, "packages/core/platform/values.schema.json"))
	require.Equal(t, lib["schematicID"], jsonAt(t, platform, "definitions", "schematicID", "pattern"))
	require.Equal(t, lib["version"], jsonAt(t, platform, "definitions", "talosVersion", "pattern"))
	require.Equal(t, lib["imageFactoryURL"], jsonAt(t, platform, "definitions", "factoryURL", "pattern"))
	// The tenants' default may be empty (no default): one pattern, so the
	// schema's message quotes it rather than "'anyOf' failed".
	require.Equal(t, "^$|"+lib["imageFactoryURL"], jsonAt(t, platform, "properties", "tenantWorkers", "properties", "talos", "properties", "imageFactoryURL", "pattern"))
}

// The catalog takes the platform chart's tenantWorkers and registries.mirrors
// for a platform without _cluster keys for them: one shape, so values moved
// from one chart to the other mean the same.
func TestCatalogTenantDefaultsSchemaIsThePlatforms(t *testing.T) {
	platform := document(t, chartFile(t, platformChart+"/values.schema.json"))
	catalog := document(t, chartFile(t, catalogChart+"/values.schema.json"))
	require.Equal(t, jsonAt(t, platform, "properties", "tenantWorkers", "properties"), jsonAt(t, catalog, "properties", "tenantWorkers", "properties"))
	require.Equal(t, jsonAt(t, platform, "properties", "registries", "properties", "mirrors"), jsonAt(t, catalog, "properties", "registries", "properties", "mirrors"))
	for _, def := range []string{"schematicID", "talosVersion", "factoryURL", "imageFactoryCA"} {
		require.Equal(t, jsonAt(t, platform, "definitions", def), jsonAt(t, catalog, "definitions", def), def)
	}
	s := compile(t, catalogChart)
	checkCases(t, s,
		[]string{"tenantWorkers: {talos: {imageFactoryURL: 'https://factory.mirror.internal'}, osImage: {builtin: {}}}", "registries: {mirrors: {docker.io: {endpoints: ['https://m.internal/v2']}}, config: {}}"},
		[]string{"tenantWorkers: {talos: {imageFactoryURL: 'ftp://x'}}", "tenantWorkers: {osimage: {}}", "registries: {mirrors: {docker.io: {endpoints: []}}}", "registries: {mirror: {}}"})
}
