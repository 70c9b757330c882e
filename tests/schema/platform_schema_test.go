package schema

import (
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/stretchr/testify/require"
)

const platformChart = render.PlatformChart

func TestPlatformSchema(t *testing.T) {
	s := compile(t, platformChart)
	checkCases(t, s, []string{
		"{}",
		"{bundles: {enabledPackages: [cozystack.kubernetes-worker-image], disabledPackages: [cozystack.kubernetes-worker-image]}}",
		"{kubernetesWorkerImage: {}}",
		"{kubernetesWorkerImage: {imageFactoryURL: 'https://factory.mirror.internal/', storageClass: '', storage: 8Gi, images: []}}",
		"{kubernetesWorkerImage: {images: [{schematicID: abc, version: v1.13.6, imageFactoryURL: 'http://f.internal:8080', storage: 7Gi, storageClass: local}]}}",
		"{kubernetesWorkerImage: {images: [{schematicID: abc, version: v1.13.6, retire: true}]}}",
	}, []string{
		"{unknown: 1}",
		"{bundles: {enabledPackages: cozystack.kubernetes-worker-image}}",
		"{bundles: {enabledPackages: [a, a]}}",
		"{bundles: {disabledPackages: ['']}}",
		"{bundles: {other: []}}",
		"{kubernetesWorkerImage: {cloneSubjects: []}}",
		"{kubernetesWorkerImage: {imageFactoryURL: factory.talos.dev}}",
		"{kubernetesWorkerImage: {storage: 8}}",
		"{kubernetesWorkerImage: {storage: null}}",
		"{kubernetesWorkerImage: {storageClass: 1}}",
		"{kubernetesWorkerImage: {images: [{schematicID: abc}]}}",
		"{kubernetesWorkerImage: {images: [{schematicID: ABC, version: v1.13.6}]}}",
		"{kubernetesWorkerImage: {images: [{schematicID: abc, version: v1.13}]}}",
		"{kubernetesWorkerImage: {images: [{schematicID: abc, version: v1.13.6, extra: x}]}}",
		"{kubernetesWorkerImage: {images: [{schematicID: abc, version: v1.13.6, retire: 1}]}}",
	})
}

// The platform checks the catalog settings with the catalog's own rules, so an
// operator learns of a bad entry when the platform renders, not later when the
// catalog does.
func TestPlatformSchemaForTheCatalogIsTheCatalogs(t *testing.T) {
	platform := document(t, chartFile(t, platformChart+"/values.schema.json"))
	catalog := document(t, chartFile(t, catalogChart+"/values.schema.json"))
	for _, key := range []string{"imageFactoryURL", "storageClass", "storage", "images"} {
		require.Equal(t, jsonAt(t, catalog, "properties", key), jsonAt(t, platform, "properties", "kubernetesWorkerImage", "properties", key), key)
	}
	for _, def := range []string{"quantity", "factoryURL"} {
		require.Equal(t, jsonAt(t, catalog, "definitions", def), jsonAt(t, platform, "definitions", def), def)
	}
}
