package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const trustedChecksum = "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

// trustedState is testdata/pins/per-class.yaml once the catalog holds a CA
// (its ConfigMap in cozy-public), an entry of its own CA for v1.13.5, and a
// golden of a new flavor imported with the CA and a checksum.
func trustedState(t *testing.T) string {
	return pinsWith(t, "per-class", `
---
apiVersion: v1
kind: ConfigMap
metadata: {name: kubernetes-worker-image-ca, namespace: cozy-public}
data: {ca.pem: "-----BEGIN CERTIFICATE-----"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: kubernetes-worker-image-ca-`+defaultSchematic+`-v1.13.5, namespace: cozy-public}
data: {ca.pem: "-----BEGIN CERTIFICATE-----"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: some-other-config, namespace: cozy-public}
---
apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata: {name: talos-worker-`+defaultSchematic+`-v1.13.7, namespace: cozy-public}
spec:
  source: {http: {url: "https://factory.mirror.internal/image/`+defaultSchematic+`/v1.13.7/openstack-amd64.raw.xz", certConfigMap: kubernetes-worker-image-ca, checksum: "`+trustedChecksum+`"}}
  storage: {resources: {requests: {storage: 6Gi}}, storageClassName: replicated}
status: {phase: Succeeded}
`)
}

func TestPinsMarksGoldensImportedWithoutTheCAOrAChecksum(t *testing.T) {
	r, text := pinsOfFile(t, trustedState(t))
	fresh := goldenIn(t, r, goldenName("v1.13.7"))
	assert.Equal(t, "kubernetes-worker-image-ca", fresh.CertConfigMap)
	assert.Equal(t, trustedChecksum, fresh.Checksum)
	assert.Empty(t, fresh.ImportedWithout, "imported with both")
	for _, name := range []string{goldenName("v1.13.6"), perClassOf("v1.13.6", "fast"), goldenName("v1.13.5"), perClassOf("v1.13.5", "fast")} {
		g := goldenIn(t, r, name)
		assert.Equal(t, []string{"CA", "checksum"}, g.ImportedWithout, name)
		assert.Empty(t, g.CertConfigMap, name)
	}
	assert.Contains(t, text, "\n"+goldenName("v1.13.6")+"  (DataVolume, phase Succeeded, imported without the CA the catalog now holds, imported without a checksum)  in use: 3 pools, 0 disks\n")
	assert.Contains(t, text, "\n"+goldenName("v1.13.7")+"  (DataVolume, phase Succeeded)  safe to delete")
}

// A golden marked only for what the cluster shows: a CA ConfigMap that serves
// its flavor, a checksum on another golden.
func TestPinsMarksNothingWithoutTrustedImports(t *testing.T) {
	r := pinsOf(t, "per-class")
	for _, g := range r.Goldens {
		assert.Empty(t, g.ImportedWithout, g.Name)
	}
	only := pinsWith(t, "per-class", `
---
apiVersion: v1
kind: ConfigMap
metadata: {name: kubernetes-worker-image-ca-`+defaultSchematic+`-v1.13.5, namespace: cozy-public}
`)
	r, _ = pinsOfFile(t, only)
	for _, g := range r.Goldens {
		want := []string(nil)
		if strings.Contains(g.Name, "-v1.13.5") {
			want = []string{"CA"}
		}
		require.Equal(t, want, g.ImportedWithout, "an entry's own CA serves its flavor only: %s", g.Name)
	}
}
