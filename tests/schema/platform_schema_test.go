package schema

import (
	"github.com/cozystack/golden-worker-images/tests/support"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/stretchr/testify/require"
)

const platformChart = render.PlatformChart

func TestPlatformSchema(t *testing.T) {
	s := compile(t, platformChart)
	checkCases(t, s, support.PlatformSchemaCases.Accepted, support.PlatformSchemaCases.Refused)
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
