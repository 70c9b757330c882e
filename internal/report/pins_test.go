package report

import (
	"testing"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Pins decides from what the cluster holds, without rendering: a golden a
// pool resolves to is in use, one a disk or template uses is not safe to
// delete even with no pool, a golden named only by a pool is listed absent
// and never unused, and a golden without the CA the catalog now holds or
// without the checksum others carry says so.
func TestPinsVerdictsFromFacts(t *testing.T) {
	const (
		used     = "talos-worker-abc-v1.13.6"
		perClass = "talos-worker-abc-v1.13.6--fast"
		byDisk   = "talos-worker-abc-v1.13.5"
		byTempl  = "talos-worker-abc-v1.13.4"
		unused   = "talos-worker-abc-v1.13.3"
		absent   = "talos-worker-abc-v1.13.7"
	)
	f := &PinsFacts{
		Stored: map[string]fleet.Golden{
			used:     {FoundAs: "DataVolume", Phase: "Succeeded", Checksum: "sha256:00", CertConfigMap: "kubernetes-worker-image-ca"},
			perClass: {FoundAs: "DataVolume", Phase: "Succeeded", Checksum: "sha256:01"},
			byDisk:   {FoundAs: "PersistentVolumeClaim", Checksum: "sha256:02", CertConfigMap: "kubernetes-worker-image-ca"},
			byTempl:  {FoundAs: "DataVolume", Phase: "Succeeded", Retiring: true, CertConfigMap: "kubernetes-worker-image-ca"},
			unused:   {FoundAs: "DataVolume", Phase: "Succeeded", Checksum: "sha256:03", CertConfigMap: "kubernetes-worker-image-ca"},
		},
		disks: []DiskPin{
			{Namespace: "tenant-acme", Name: "d1", Golden: used, Pool: "kubernetes-acme-workers"},
			{Namespace: "tenant-evil", Name: "d2", Golden: byDisk, Pool: "kubernetes-acme-workers", NoPool: true},
		},
		Pools: []ResolvedPool{
			{Pin: PoolPin{HelmRelease: "tenant-acme/kubernetes-nodes-acme-workers", Namespace: "tenant-acme", Pool: "kubernetes-acme-workers", Golden: used, Class: "replicated", GoldenChoice: "plain"}, clone: true},
			{Pin: PoolPin{HelmRelease: "tenant-acme/kubernetes-nodes-acme-slow", Namespace: "tenant-acme", Pool: "kubernetes-acme-slow", Golden: absent, Class: "slow", GoldenChoice: "none", perClassGolden: absent + "--slow"}, clone: true},
			{Pin: PoolPin{HelmRelease: "tenant-acme/kubernetes-nodes-acme-http", Pool: "kubernetes-acme-http"}},
			{Pin: PoolPin{HelmRelease: "tenant-acme/kubernetes-nodes-acme-bad", Refusal: "pool bad: refused"}},
		},
		users: &fleet.Users{
			Users:  map[string][]string{used: {"tenant-acme/DataVolume/d1"}, byDisk: {"tenant-evil/DataVolume/d2"}, byTempl: {"tenant-acme/KubevirtMachineTemplate/t1"}},
			NoPool: map[string][]string{byDisk: {"tenant-evil/DataVolume/d2"}},
		},
		caConfigMaps: map[string]string{"kubernetes-worker-image-ca": ""},
	}
	r := Pins(f, "state file x", "kubernetes-nodes")
	byName := map[string]GoldenPins{}
	for _, g := range r.Goldens {
		byName[g.Name] = g
	}
	require.Len(t, byName, 6)

	assert.False(t, byName[used].SafeToDelete)
	require.Len(t, byName[used].Pools, 1)
	assert.Equal(t, 1, byName[used].Pools[0].Disks, "the pool's own disk counts")
	assert.False(t, byName[byDisk].SafeToDelete, "a disk of no pool still keeps its golden")
	assert.Len(t, byName[byDisk].NoPoolDisks, 1)
	assert.False(t, byName[byTempl].SafeToDelete, "a template cloning it keeps it")
	assert.Equal(t, []string{"tenant-acme/KubevirtMachineTemplate/t1"}, byName[byTempl].Templates)
	assert.Equal(t, []string{"tenant-acme/KubevirtMachineTemplate/t1"}, byName[byTempl].Blockers, "a retiring golden lists what blocks it")
	assert.Equal(t, "absent", byName[absent].FoundAs)
	assert.Equal(t, []string{unused, perClass}, r.Unused, "only the goldens cozy-public holds and nothing uses (no pool is on class fast)")

	assert.Equal(t, used, byName[perClass].Flavor)
	assert.Equal(t, "fast", byName[perClass].Class)
	assert.Equal(t, []string{"CA"}, byName[perClass].ImportedWithout, "the catalog holds a CA it was imported without")
	assert.Equal(t, []string{"checksum"}, byName[byTempl].ImportedWithout, "others carry a checksum, it does not")
	assert.Empty(t, byName[used].ImportedWithout)

	require.Len(t, r.HTTPPools, 1)
	assert.Equal(t, "tenant-acme/kubernetes-nodes-acme-http", r.HTTPPools[0].HelmRelease)
	require.Len(t, r.Unresolved, 1)
	assert.Equal(t, "pool bad: refused", r.Unresolved[0].Refusal)
	assert.Equal(t, 4, r.PoolsRead)

	var gaps []ClassGap
	for _, fl := range r.Flavors {
		gaps = append(gaps, fl.ClassesWithoutGolden...)
	}
	assert.Equal(t, []ClassGap{{Class: "slow", Golden: absent + "--slow", Pools: []string{"tenant-acme/kubernetes-nodes-acme-slow"}}}, gaps, "a pool whose class has no golden of its flavor is a gap")
}
