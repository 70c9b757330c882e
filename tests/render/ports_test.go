package render

import (
	"fmt"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/stretchr/testify/require"
)

// A URL's port is 1 to 65535 wherever a chart takes a URL (worker-image-lib's
// imageFactoryURL pattern): port 0, 65536 and 99999 are refused by the
// templates with the schema off (and by the schemas, tests/schema), each with
// the chart's message; ports 1, 8080 and 65535 render.
func TestURLPortsAreOneTo65535(t *testing.T) {
	refused := []string{"0", "65536", "99999", "00080"}
	accepted := []string{"1", "8080", "65535"}
	catalogOff := render.Release{Name: catalogRelease, Namespace: catalogNamespace, SkipSchemaValidation: true}
	platformOff := render.Release{Name: "cozystack-platform", Namespace: "cozy-system", SkipSchemaValidation: true}
	for _, tc := range []struct {
		name, values string
		render       func(values map[string]interface{}) error
		refusal      string
	}{
		{"pool talos.imageFactoryURL", "{cluster: acme, talos: {imageFactoryURL: 'https://f.internal:%s/talos'}}", func(v map[string]interface{}) error {
			_, err := renderPoolAs(t, schemaOff, v, nil)
			return err
		}, `(from talos.imageFactoryURL) is malformed: it must match`},
		{"pool osImage.factory.imageFactoryURL", "{cluster: acme, osImage: {factory: {imageFactoryURL: 'http://10.0.0.5:%s'}}}", func(v map[string]interface{}) error {
			_, err := renderPoolAs(t, schemaOff, v, nil)
			return err
		}, `(from osImage.factory.imageFactoryURL) is malformed: it must match`},
		{"pool registry mirror endpoint", "{cluster: acme, talos: {registryMirrors: {docker.io: {endpoints: ['https://m.internal:%s/v2']}}}}", func(v map[string]interface{}) error {
			_, err := renderPoolAs(t, schemaOff, v, nil)
			return err
		}, `talos.registryMirrors[docker.io].endpoints[0] "https://m.internal:`},
		{"catalog imageFactoryURL", "{imageFactoryURL: 'https://f.internal:%s'}", func(v map[string]interface{}) error {
			_, err := renderCatalogAs(t, catalogOff, v, nil)
			return err
		}, "is not a plain http(s) URL"},
		{"catalog entry imageFactoryURL", "{images: [{schematicID: abc, version: v1.13.6, imageFactoryURL: 'https://f.internal:%s/'}]}", func(v map[string]interface{}) error {
			_, err := renderCatalogAs(t, catalogOff, v, nil)
			return err
		}, `(from images[0].imageFactoryURL) is not a plain http(s) URL`},
		{"catalog published imageFactoryURL", "{tenantWorkers: {talos: {imageFactoryURL: 'https://f.internal:%s'}}}", func(v map[string]interface{}) error {
			_, err := renderCatalogAs(t, catalogOff, v, nil)
			return err
		}, `tenantWorkers.talos.imageFactoryURL "https://f.internal:`},
		{"catalog runbookURL", "{monitoring: {enabled: true, runbookURL: 'https://docs.internal:%s/runbooks.md'}}", func(v map[string]interface{}) error {
			_, err := renderCatalogAs(t, catalogOff, v, nil)
			return err
		}, "monitoring.runbookURL is"},
		{"platform tenantWorkers.talos.imageFactoryURL", "{tenantWorkers: {talos: {imageFactoryURL: 'https://f.internal:%s'}}}", func(v map[string]interface{}) error {
			_, err := renderChartAs(t, platformChart(t), platformOff, v, nil)
			return err
		}, `tenantWorkers.talos.imageFactoryURL "https://f.internal:`},
		{"a new pool reading the published imageFactoryURL", "%s", func(v map[string]interface{}) error {
			port := v["port"].(string)
			_, err := renderPool(t, vals(t, "cluster: acme"), stock(t, publishedJSON(`{"talos":{"imageFactoryURL":"https://f.internal:`+port+`"}}`)))
			return err
		}, "is malformed for a pool: it must match"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			values := func(port string) map[string]interface{} {
				if tc.values == "%s" {
					return map[string]interface{}{"port": port}
				}
				return vals(t, fmt.Sprintf(tc.values, port))
			}
			for _, port := range refused {
				requireRefusal(t, tc.render(values(port)), tc.refusal)
			}
			for _, port := range accepted {
				require.NoError(t, tc.render(values(port)), "port %s renders", port)
			}
		})
	}
}
