package fleet_test

import (
	"context"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ReadGoldens reads a golden from its DataVolume, or from its PVC when the
// DataVolume is gone, and each worker disk with what CDI recorded on its PVC;
// other DataVolumes in cozy-public are not goldens.
func TestReadGoldens(t *testing.T) {
	s := state(t, `apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata:
  name: talos-worker-abc-v1.13.6
  namespace: cozy-public
  annotations: {kubernetes-worker-image.cozystack.io/retiring: "true"}
spec:
  source: {http: {url: "https://factory.example/image/abc/v1.13.6/openstack-amd64.raw.xz", certConfigMap: kubernetes-worker-image-ca, checksum: "sha256:00"}}
  storage: {storageClassName: replicated, resources: {requests: {storage: 6Gi}}}
status: {phase: Succeeded}`, `apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata: {name: ubuntu-24.04, namespace: cozy-public}
spec: {source: {http: {url: "https://cloud-images.example/u.img"}}}`, `apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: talos-worker-abc-v1.13.5
  namespace: cozy-public
  annotations: {cdi.kubevirt.io/storage.import.endpoint: "https://factory.example/image/abc/v1.13.5/openstack-amd64.raw.xz"}
spec: {storageClassName: fast, resources: {requests: {storage: 21474836480}}}`, `apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata:
  name: disk-1
  namespace: tenant-acme
  annotations: {kubernetes-worker-image.cozystack.io/golden: talos-worker-abc-v1.13.6, kubernetes-worker-image.cozystack.io/pool: kubernetes-acme-workers}
status: {claimName: disk-1-pvc}`, `apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: disk-1-pvc
  namespace: tenant-acme
  annotations: {cdi.kubevirt.io/cloneType: copy, cdi.kubevirt.io/cloneFallbackReason: "different storage class"}`)
	g, err := fleet.ReadGoldens(context.Background(), s)
	require.NoError(t, err)
	assert.Equal(t, map[string]fleet.Golden{
		"talos-worker-abc-v1.13.6": {FoundAs: "DataVolume", Phase: "Succeeded", Retiring: true, URL: "https://factory.example/image/abc/v1.13.6/openstack-amd64.raw.xz", Storage: "6Gi", Class: "replicated", CertConfigMap: "kubernetes-worker-image-ca", Checksum: "sha256:00"},
		"talos-worker-abc-v1.13.5": {FoundAs: "PersistentVolumeClaim", URL: "https://factory.example/image/abc/v1.13.5/openstack-amd64.raw.xz", Storage: "21474836480", Class: "fast"},
	}, g.Stored)
	assert.Equal(t, []fleet.Disk{{Namespace: "tenant-acme", Name: "disk-1", Kind: "DataVolume", Golden: "talos-worker-abc-v1.13.6", Pool: "kubernetes-acme-workers", PVC: "disk-1-pvc", CloneType: "copy", FallbackReason: "different storage class"}}, g.Disks)
	assert.Empty(t, g.MachineDeployments, "a cluster that serves no MachineDeployment has none")

	catalog, err := fleet.CatalogGoldens(context.Background(), s)
	require.NoError(t, err)
	assert.Equal(t, g.Stored, catalog, "the catalog's goldens, read from cozy-public alone, are the same")

	url, ca, sum, err := fleet.GoldenSource(context.Background(), s, "talos-worker-abc-v1.13.5")
	require.NoError(t, err)
	assert.Equal(t, []string{"https://factory.example/image/abc/v1.13.5/openstack-amd64.raw.xz", "", ""}, []string{url, ca, sum}, "a golden left as its PVC: CDI's import annotations")
}

// Int64 reads a count as the API writes it (int64) and as a state file's
// JSON reads it back (a whole float64); a field that is absent or null is
// not set, and one holding anything else is set at 0.
func TestInt64(t *testing.T) {
	obj := map[string]any{"status": map[string]any{
		"api": int64(3), "file": float64(4), "half": 2.5, "negative": float64(-1), "text": "5", "null": nil,
	}}
	for field, want := range map[string]struct {
		n   int64
		set bool
	}{
		"api": {3, true}, "file": {4, true}, "half": {0, true}, "negative": {0, true}, "text": {0, true}, "null": {0, false}, "absent": {0, false},
	} {
		n, set := fleet.Int64(obj, "status", field)
		assert.Equal(t, want.n, n, field)
		assert.Equal(t, want.set, set, field)
	}
	_, set := fleet.Int64(obj, "status", "api", "deeper")
	assert.False(t, set, "a path through a number reaches nothing")
}
