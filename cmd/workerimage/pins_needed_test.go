package main

import (
	"testing"

	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What new pools need is never "safe to delete" (issue 59, item 2): in the
// pins fixture, the v1.13.5 golden is one nothing uses, the pools run v1.13.6
// (and one v1.13.4), so it is listed unused; each case below makes it needed
// in one way, and pins says which, never "safe to delete".

// catalogPackage is the catalog's Package with these component values.
func catalogPackage(values string) string {
	return `---
apiVersion: cozystack.io/v1alpha1
kind: Package
metadata:
  name: cozystack.kubernetes-worker-image
spec:
  variant: default
  components:
    kubernetes-worker-image:
      values: ` + values + `
`
}

// rolloutRecord is a rollout's record in cozy-system, named for target (the
// JSON rollout --apply writes under the key target).
func rolloutRecord(name, target string) string {
	return recordHolding(name, target, "tenant-acme", "kubernetes-nodes-acme-workers")
}

// recordHolding is a record holding one write, of the HelmRelease
// namespace/release, still on its way to the target.
func recordHolding(name, target, namespace, release string) string {
	return finishedRolloutRecord(name, target) + "  " + report.PoolKey(namespace, release) + `: '{"wave":"20261207T101010Z.wave-1","namespace":"` + namespace + `","name":"` + release + `","uid":"u-1","generation":2}'
`
}

// finishedRolloutRecord is a record whose every pool reached the target
// and left it: the target alone.
func finishedRolloutRecord(name, target string) string {
	return `---
apiVersion: v1
kind: ConfigMap
metadata:
  name: ` + name + `
  namespace: cozy-system
data:
  target: '` + target + `'
`
}

// storedGolden is a Succeeded golden DataVolume of the default schematic.
func storedGolden(version string) string {
	return `---
apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata:
  name: ` + goldenName(version) + `
  namespace: cozy-public
  labels: {app.kubernetes.io/part-of: kubernetes-worker-image}
  annotations: {helm.sh/resource-policy: keep}
spec:
  source: {http: {url: "https://factory.talos.dev/image/` + defaultSchematic + `/` + version + `/openstack-amd64.raw.xz"}}
  storage: {storageClassName: replicated, resources: {requests: {storage: 6Gi}}}
status:
  phase: Succeeded
`
}

func TestPinsNeverCallsTheNewPoolsDefaultUnused(t *testing.T) {
	g5 := goldenName("v1.13.5")
	before := pinsOf(t, "cluster")
	require.Contains(t, before.Unused, g5, "the neighbour: nothing published, v1.13.5 is unused")

	// The catalog publishes v1.13.5 for new pools: the chart counts it in use.
	r, text := pinsOfFile(t, pinsWith(t, "cluster", catalogPackage("{tenantWorkers: {talos: {version: v1.13.5}}, images: [{schematicID: "+defaultSchematic+", version: v1.13.5}]}")))
	got := goldenIn(t, r, g5)
	assert.False(t, got.SafeToDelete)
	assert.Empty(t, got.DeleteSteps)
	assert.NotContains(t, r.Unused, g5)
	const from = "schematicID from the pool chart's built-in default (tenantWorkers.talos.schematicID is not set), version from tenantWorkers.talos.version"
	assert.Equal(t, from, got.NewPoolsDefault)
	assert.Contains(t, text, g5+"  (DataVolume, phase Succeeded)  in use: new pools' default ("+from+")\n")
	assert.NotContains(t, text, "to delete: 1. set retire: true on the catalog entry {schematicID: "+defaultSchematic+", version: v1.13.5}")

	// Published for the clone path only through osImage.builtin's own version: the same.
	r, _ = pinsOfFile(t, pinsWith(t, "cluster", catalogPackage("{tenantWorkers: {osImage: {builtin: {version: v1.13.5}}}, images: [{schematicID: "+defaultSchematic+", version: v1.13.5}]}")))
	assert.Equal(t, "schematicID from the pool chart's built-in default (tenantWorkers.talos.schematicID is not set), version from tenantWorkers.osImage.builtin.version", goldenIn(t, r, g5).NewPoolsDefault)
	assert.NotContains(t, r.Unused, g5)
}

// The chart's own default, where nothing is published, is in use too: a
// cluster where no pool uses the v1.13.6 golden.
func TestPinsNeverCallsTheChartsDefaultUnused(t *testing.T) {
	r, text := pinsOfFile(t, pinsWith(t, "empty", storedGolden("v1.13.6"), storedGolden("v1.13.3")))
	got := goldenIn(t, r, goldenName("v1.13.6"))
	assert.False(t, got.SafeToDelete)
	assert.Equal(t, "schematicID from the pool chart's built-in default (tenantWorkers.talos.schematicID is not set), version from the pool chart's built-in default (tenantWorkers.talos.version is not set)", got.NewPoolsDefault)
	assert.Contains(t, text, goldenName("v1.13.6")+"  (DataVolume, phase Succeeded)  in use: new pools' default (")
	assert.Equal(t, []string{goldenName("v1.13.3")}, r.Unused, "the neighbour: another flavor nothing uses or needs")
}

func TestPinsNeverCallsARolloutsTargetUnused(t *testing.T) {
	g5 := goldenName("v1.13.5")
	r, text := pinsOfFile(t, pinsWith(t, "cluster",
		rolloutRecord("workerimage-rollout-0123456789", `{"talosVersion":"v1.13.5"}`),
		rolloutRecord("workerimage-rollout-abcdefabcd", `{"talosVersion":"v1.13.5","schematicID":"`+defaultSchematic+`"}`),
	))
	got := goldenIn(t, r, g5)
	assert.False(t, got.SafeToDelete)
	assert.Equal(t, []string{"cozy-system/workerimage-rollout-0123456789", "cozy-system/workerimage-rollout-abcdefabcd"}, got.RolloutTargets)
	assert.NotContains(t, r.Unused, g5)
	assert.Contains(t, text, g5+"  (DataVolume, phase Succeeded)  in use: a rollout's target (ConfigMap cozy-system/workerimage-rollout-0123456789); a rollout's target (ConfigMap cozy-system/workerimage-rollout-abcdefabcd)\n")

	// Neighbours: a record to another version or schematic, a ConfigMap that
	// is no record, a finished rollout's record (its pools all left it).
	r, _ = pinsOfFile(t, pinsWith(t, "cluster",
		rolloutRecord("workerimage-rollout-0123456789", `{"talosVersion":"v1.13.9"}`),
		rolloutRecord("workerimage-rollout-abcdefabcd", `{"talosVersion":"v1.13.5","schematicID":"another"}`),
		rolloutRecord("not-a-rollout", `{"talosVersion":"v1.13.5"}`),
		finishedRolloutRecord("workerimage-rollout-5555555555", `{"talosVersion":"v1.13.5"}`),
		recordHolding("workerimage-rollout-6666666666", `{"talosVersion":"v1.13.5"}`, "tenant-gone", "kubernetes-nodes-gone-workers"),
	))
	assert.Contains(t, r.Unused, g5)
	assert.Empty(t, goldenIn(t, r, g5).RolloutTargets)
}

func TestPinsNeverCallsAGoldenNewerThanEveryPoolUnused(t *testing.T) {
	g7 := goldenName("v1.13.7")
	r, text := pinsOfFile(t, pinsWith(t, "cluster", storedGolden("v1.13.7")))
	got := goldenIn(t, r, g7)
	assert.True(t, got.NewerThanEveryPool)
	assert.False(t, got.SafeToDelete)
	assert.NotContains(t, r.Unused, g7)
	assert.Contains(t, text, g7+"  (DataVolume, phase Succeeded)  in use: newer than every pool on its schematic and minor (a rollout's next target)\n")
	// Neighbour: v1.13.5 is older than the pools on v1.13.6, so it stays unused.
	assert.Contains(t, r.Unused, goldenName("v1.13.5"))
	assert.False(t, goldenIn(t, r, goldenName("v1.13.5")).NewerThanEveryPool)
}

// "Behind" is measured against the flavor a new pool gets now: the catalog's
// published talos.version, named as its channel; with none published, the
// chart's, in the words pins always used.
func TestPinsMeasuresBehindAgainstThePublishedTalosRelease(t *testing.T) {
	published := `---
apiVersion: v1
kind: ConfigMap
metadata: {name: kubernetes-worker-image-tenant-defaults, namespace: cozy-public}
data: {values.json: '{"talos":{"version":"v1.13.7"}}'}
`
	r, text := pinsOfFile(t, pinsWith(t, "cluster", published))
	detail := "the Talos release for new pools, the default talos.version of the catalog's published defaults (ConfigMap cozy-public/kubernetes-worker-image-tenant-defaults) (schematic " + defaultSchematic + ")"
	found := false
	for _, p := range r.PoolsBehind {
		for _, b := range p.Behind {
			if b.Kind == "chart-default" {
				assert.Equal(t, "v1.13.7", b.To, p.HelmRelease)
				assert.Equal(t, detail, b.Detail, p.HelmRelease)
				found = true
			}
		}
	}
	require.True(t, found, "the pools on v1.13.6 are behind the published v1.13.7")
	assert.Contains(t, text, "Talos v1.13.6 -> v1.13.7: "+detail)

	// The neighbour: nothing published, the chart's v1.13.6, in its words.
	for _, p := range pinsOf(t, "cluster").PoolsBehind {
		for _, b := range p.Behind {
			if b.Kind == "chart-default" {
				assert.Equal(t, "v1.13.6", b.To, p.HelmRelease)
				assert.Equal(t, "the chart's Talos release for new pools (schematic "+defaultSchematic+")", b.Detail, p.HelmRelease)
			}
		}
	}
}
