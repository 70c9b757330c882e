package schema

import (
	"fmt"
	"testing"
)

// Every schema that takes a port (a URL, a registry host[:port], an
// installer repository) takes one from 1 to 65535 in at most 5 digits,
// leading zeros allowed, as the templates do (the library's portPattern,
// tests/render).
func TestSchemaURLPortsAreOneTo65535(t *testing.T) {
	for _, tc := range []struct{ chart, values string }{
		{catalogChart, "{imageFactoryURL: 'https://f.internal:%s'}"},
		{catalogChart, "{images: [{schematicID: abc, version: v1.13.6, imageFactoryURL: 'https://f.internal:%s/'}]}"},
		{catalogChart, "{tenantWorkers: {talos: {imageFactoryURL: 'https://f.internal:%s'}}}"},
		{catalogChart, "{monitoring: {runbookURL: 'https://docs.internal:%s/runbooks.md'}}"},
		{platformChart, "{kubernetesWorkerImage: {imageFactoryURL: 'https://f.internal:%s'}}"},
		{platformChart, "{kubernetesWorkerImage: {images: [{schematicID: abc, version: v1.13.6, imageFactoryURL: 'https://f.internal:%s'}]}}"},
		{platformChart, "{tenantWorkers: {talos: {imageFactoryURL: 'https://f.internal:%s'}}}"},
		{platformChart, "{kubernetesWorkerImage: {monitoring: {runbookURL: 'https://docs.internal:%s/runbooks.md'}}}"},
		{poolChart, "{cluster: acme, talos: {registryMirrors: {docker.io: {endpoints: ['https://m.internal:%s/v2']}}}}"},
		{poolChart, "{cluster: acme, talos: {imageFactoryURL: 'https://f.internal:%s'}}"},
		{poolChart, "{cluster: acme, osImage: {factory: {imageFactoryURL: 'http://10.0.0.5:%s/talos'}}}"},
		{poolChart, "{cluster: acme, talos: {installerRepository: 'm.internal:%s/siderolabs/installer'}}"},
		{poolChart, "{cluster: acme, talos: {registryMirrors: {'m.internal:%s': {endpoints: ['https://m.internal/v2']}}}}"},
	} {
		var accepted, refused []string
		for _, port := range []string{"1", "8080", "65535", "0443", "05000", "00001"} {
			accepted = append(accepted, fmt.Sprintf(tc.values, port))
		}
		for _, port := range []string{"0", "0000", "65536", "99999", "000443"} {
			refused = append(refused, fmt.Sprintf(tc.values, port))
		}
		checkCases(t, compile(t, tc.chart), accepted, refused)
	}
}
