package render

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/stretchr/testify/require"
)

// A port is 1 to 65535 wherever a chart takes one (worker-image-lib's
// portPattern, in the imageFactoryURL pattern and the registry host[:port]
// one): port 0, 0000, 65536 and 99999 (and a sixth digit, which no release
// took) are refused by the templates with the schema off (and by the schemas,
// tests/schema), each with the chart's message; ports 1, 8080 and 65535
// render, and so do ports written with leading zeros (0443, 05000, 00001),
// which the release before bounds rendered, read as their number.
func TestURLPortsAreOneTo65535(t *testing.T) {
	refused := []string{"0", "0000", "65536", "99999", "000443"}
	accepted := []string{"1", "8080", "65535", "0443", "05000", "00001"}
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
		{"pool talos.installerRepository", "{cluster: acme, talos: {installerRepository: 'm.internal:%s/siderolabs/installer'}}", func(v map[string]interface{}) error {
			_, err := renderPoolAs(t, schemaOff, v, nil)
			return err
		}, `talos.installerRepository "m.internal:`},
		{"pool registry mirror host", "{cluster: acme, talos: {registryMirrors: {'m.internal:%s': {endpoints: ['https://m.internal/v2']}}}}", func(v map[string]interface{}) error {
			_, err := renderPoolAs(t, schemaOff, v, nil)
			return err
		}, `talos.registryMirrors has the key "m.internal:`},
		{"_cluster registry config host", "{cluster: acme, _cluster: {talos: {registryConfig: {'m.internal:%s': {tls: {insecureSkipVerify: true}}}}}}", func(v map[string]interface{}) error {
			_, err := renderPoolAs(t, schemaOff, v, nil)
			return err
		}, `_cluster.talos.registryConfig has the key "m.internal:`},
		{"platform registries.config host", "{registries: {config: {'m.internal:%s': {tls: {insecureSkipVerify: true}}}}}", func(v map[string]interface{}) error {
			_, err := renderChartAs(t, platformChart(t), platformOff, v, nil)
			return err
		}, `registries.config has the key "m.internal:`},
		{"platform tenantWorkers.talos.installerRepository", "{tenantWorkers: {talos: {installerRepository: 'm.internal:%s/installer'}}}", func(v map[string]interface{}) error {
			_, err := renderChartAs(t, platformChart(t), platformOff, v, nil)
			return err
		}, `tenantWorkers.talos.installerRepository "m.internal:`},
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

// Ports written with leading zeros rendered in the release before ports were
// bounded, and Go's HTTP client and Talos read them as their number: a pool
// written so renders again (its schema on), every value as written, not
// rewritten to the number (a changed byte would roll its workers).
func TestLeadingZeroPortsRenderAsWritten(t *testing.T) {
	m, err := renderPool(t, vals(t, `
cluster: acme
osImage: {factory: {imageFactoryURL: 'https://factory.talos.dev:0443'}}
talos:
  installerRepository: 'm.internal:05000/siderolabs/installer'
  registryMirrors: {docker.io: {endpoints: ['https://m.internal:05000/v2/docker.io']}}
_cluster: {talos: {registryConfig: {'m.internal:05000': {tls: {insecureSkipVerify: true}}}}}
`), nil)
	require.NoError(t, err)
	config := workerConfig(t, m)
	require.True(t, strings.HasPrefix(render.Get(config, "machine.install.image").(string), "m.internal:05000/siderolabs/installer/"), render.Get(config, "machine.install.image"))
	require.Equal(t, []interface{}{"https://m.internal:05000/v2/docker.io"}, render.Get(config, "machine.registries.mirrors[docker.io].endpoints"))
	registryConfig, _ := render.Get(config, "machine.registries.config").(map[string]interface{})
	require.Contains(t, registryConfig, "m.internal:05000")
	require.Contains(t, m.Text(), "https://factory.talos.dev:0443/image/", "the disk imports from the factory URL as written")
}
