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

// The floor follows the image of the pool's Talos release: before v1.10 the
// Image Factory builds a 1246 MiB image (1306525696 bytes), and pools on
// v1.8 and v1.9 with 2Gi disks rendered in the release before the floor, so
// they render again; below 1246Mi they are refused naming that floor and
// their release. v1.10 on keeps 4247Mi (a v1.13 pool under it is refused).
func TestHTTPDiskFloorFollowsTheTalosRelease(t *testing.T) {
	require.Equal(t, 1246*1024*1024, 1306525696, "1246Mi")
	for _, version := range []string{"v1.8.4", "v1.9.5", "v1.7.7", "v0.14.1"} {
		for _, path := range []string{"talos: {version: " + version + "}", "osImage: {factory: {version: " + version + "}}"} {
			for _, disk := range []string{"2Gi", "1246Mi", "'1306525696'"} {
				values := "{cluster: acme, diskSize: " + disk + ", " + path + "}"
				_, err := renderPool(t, vals(t, values), nil)
				require.NoError(t, err, "%s with the schema on", values)
				m, err := renderPoolAs(t, schemaOff, vals(t, values), nil)
				require.NoError(t, err, values)
				assert.Contains(t, render.Get(diskOf(m), "spec.source.http.url"), "/"+version+"/", values)
			}
			for _, disk := range []string{"1245Mi", "'1306525695'", "1Gi"} {
				values := "{cluster: acme, diskSize: " + disk + ", " + path + "}"
				_, err := renderPoolAs(t, schemaOff, vals(t, values), nil)
				requireRefusal(t, err, "is smaller than the Talos disk image the pool imports over HTTP (1246Mi, 1306525696 bytes: openstack-amd64.raw as the Image Factory builds it for Talos "+version+")", "set diskSize to 1246Mi or more")
			}
		}
	}
	for _, version := range []string{"v1.10.0", "v1.13.6", "v2.0.0", "v1.100.0"} {
		for _, disk := range []string{"2Gi", "4246Mi"} {
			values := "{cluster: acme, diskSize: " + disk + ", osImage: {factory: {version: " + version + "}}}"
			_, err := renderPoolAs(t, schemaOff, vals(t, values), nil)
			requireRefusal(t, err, "(4247Mi, 4453302272 bytes: openstack-amd64.raw as the Image Factory builds it for Talos "+version+")", "set diskSize to 4247Mi or more")
		}
		_, err := renderPoolAs(t, schemaOff, vals(t, "{cluster: acme, diskSize: 4247Mi, osImage: {factory: {version: "+version+"}}}"), nil)
		require.NoError(t, err, version)
	}
}
