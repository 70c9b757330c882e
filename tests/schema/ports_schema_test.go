package schema

import (
	"fmt"
	"testing"
)

// Every schema that takes a URL takes a port from 1 to 65535, as the
// templates do (the library's imageFactoryURL pattern, tests/render).
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
	} {
		var accepted, refused []string
		for _, port := range []string{"1", "8080", "65535"} {
			accepted = append(accepted, fmt.Sprintf(tc.values, port))
		}
		for _, port := range []string{"0", "65536", "99999", "00080"} {
			refused = append(refused, fmt.Sprintf(tc.values, port))
		}
		checkCases(t, compile(t, tc.chart), accepted, refused)
	}
}
