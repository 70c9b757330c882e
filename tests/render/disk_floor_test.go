package render

import (
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A worker disk imported over HTTP holds the Talos image CDI writes into it
// (openstack-amd64.raw: 4453302272 bytes, 4247Mi): a smaller diskSize is
// refused on every form of the HTTP path, with the schema on and off, naming
// the size seen, the image's and the fix; at the image's size and above it
// renders, as the default 20Gi does.
func TestHTTPDiskHoldsTheTalosImage(t *testing.T) {
	const floor = 4453302272
	require.Equal(t, 4247*1024*1024, floor, "4247Mi")
	for _, path := range []string{"", ", osImage: {}", ", osImage: {factory: {}}", ", osImage: {factory: {version: v1.12.4}}"} {
		for _, disk := range []string{"1Mi", "20M", "0", "4Gi", "4246Mi", "'4453302271'", "4453302271", "4.14Gi"} {
			values := "{cluster: acme, diskSize: " + disk + path + "}"
			for _, rel := range []render.Release{schemaOff, {Name: testRelease, Namespace: testNamespace}} {
				_, err := renderPoolAs(t, rel, vals(t, values), nil)
				requireRefusal(t, err, "pool kubernetes-acme-workers: diskSize \"", "is smaller than the Talos disk image the pool imports over HTTP (4247Mi, 4453302272 bytes", "set diskSize to 4247Mi or more")
			}
		}
		for _, disk := range []string{"4247Mi", "'4453302272'", "4453302272", "4.15Gi", "20Gi", "1Ti"} {
			values := "{cluster: acme, diskSize: " + disk + path + "}"
			m, err := renderPoolAs(t, schemaOff, vals(t, values), nil)
			require.NoError(t, err, values)
			assert.NotNil(t, render.Get(diskOf(m), "spec.source.http.url"), "%s imports over HTTP", values)
		}
	}
	_, err := renderPool(t, vals(t, "{cluster: acme, diskSize: 20M}"), nil)
	requireRefusal(t, err, `diskSize "20M" (20000000 bytes) is smaller than the Talos disk image`)
}

// The clone path keeps its own floor, the golden's size (refusal 5): the
// image's floor does not speak for it.
func TestCloneDiskFloorIsTheGoldens(t *testing.T) {
	_, err := renderPool(t, vals(t, "{cluster: acme, diskSize: 4Gi, osImage: {builtin: {}}}"), healthyCluster(t))
	requireRefusal(t, err, "diskSize 4Gi is smaller than golden "+defaultGolden+" (6Gi)")
	assert.NotContains(t, err.Error(), "Talos disk image")
}
