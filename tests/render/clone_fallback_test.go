package render

import (
	"errors"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/render/helmv4"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chart"
)

// Refusals 7 to 9 (DESIGN.md "Every host-assisted fallback that can be known
// at render time is refused"). The pool is on "replicated", whose provisioner
// in testdata/cluster/storageclasses.yaml is linstor.csi.linbit.com.

const snapshotAPI = "snapshot.storage.k8s.io/v1"

// The CDI objects' fixture builders are shared with the CLI's tests.
var (
	cdiResource    = support.CDIResource
	storageProfile = support.StorageProfile
	snapshotClass  = support.SnapshotClass
)

// goldenPVC is the default golden's PVC with a volume mode.
func goldenPVC(mode string) string {
	return pvc("cozy-public", defaultGolden, "replicated", "6Gi") + "  volumeMode: " + mode + "\n"
}

const linstorSnapshots = "---\napiVersion: snapshot.storage.k8s.io/v1\nkind: VolumeSnapshotClass\nmetadata: {name: linstor}\ndriver: linstor.csi.linbit.com\ndeletionPolicy: Delete\n"

// renderPoolServing renders the pool on a cluster that serves apiVersions on top of Helm's defaults.
func renderPoolServing(t testing.TB, values string, cluster *support.Cluster, apiVersions ...string) (*render.Manifest, error) {
	t.Helper()
	return render.Render(poolChart(t), render.Options{Release: render.Release{Name: testRelease, Namespace: testNamespace}, Values: vals(t, values), Cluster: cluster, APIVersions: apiVersions})
}

func TestHostAssistedFallbackRefusals(t *testing.T) {
	type state struct {
		objs string
		apis []string
	}
	served := []string{snapshotAPI}
	for _, tc := range []struct {
		name      string
		refused   state
		refusal   []string
		neighbour state
	}{
		{
			name:      "7: the CDI resource overrides the strategy to copy",
			refused:   state{cdiResource("cdi", "copy") + linstorSnapshots, served},
			refusal:   []string{"pool kubernetes-acme-workers: CDI would clone golden " + defaultGolden + ` onto StorageClass "replicated" with the strategy "copy" (spec.cloneStrategyOverride of the CDI resource cdi)`, "host-assisted copy", "remove spec.cloneStrategyOverride from the CDI resource cdi"},
			neighbour: state{cdiResource("cdi", "csi-clone"), nil},
		},
		{
			name:      "7: the class's StorageProfile states copy",
			refused:   state{cdiResource("cdi", "") + storageProfile("replicated", "copy", ""), served},
			refusal:   []string{`the strategy "copy" (status.cloneStrategy of the StorageProfile replicated)`, "set spec.cloneStrategy of the StorageProfile replicated to csi-clone"},
			neighbour: state{cdiResource("cdi", "") + storageProfile("replicated", "csi-clone", ""), nil},
		},
		{
			name:      "7: the CDI resource named cdi is the one read",
			refused:   state{cdiResource("cdi", "copy") + cdiResource("aaa", "csi-clone"), served},
			refusal:   []string{"(spec.cloneStrategyOverride of the CDI resource cdi)"},
			neighbour: state{cdiResource("cdi", "csi-clone") + cdiResource("aaa", "copy"), nil},
		},
		{
			name:      "8: snapshot by default, no VolumeSnapshotClass for the provisioner",
			refused:   state{cdiResource("cdi", "") + snapshotClass("ceph", "rbd.csi.ceph.com"), served},
			refusal:   []string{`the strategy "snapshot" (CDI's default: the CDI resource cdi sets no spec.cloneStrategyOverride and the StorageProfile replicated states no status.cloneStrategy)`, "no VolumeSnapshotClass has driver linstor.csi.linbit.com", `the provisioner of StorageClass "replicated" is linstor.csi.linbit.com`, "Create a VolumeSnapshotClass with driver: linstor.csi.linbit.com"},
			neighbour: state{cdiResource("cdi", "") + snapshotClass("ceph", "rbd.csi.ceph.com") + linstorSnapshots, served},
		},
		{
			name:      "8: the snapshot API is not served",
			refused:   state{cdiResource("cdi", "") + storageProfile("replicated", "snapshot", ""), nil},
			refusal:   []string{`(status.cloneStrategy of the StorageProfile replicated)`, "the cluster does not serve snapshot.storage.k8s.io/v1", "Create a VolumeSnapshotClass with driver: linstor.csi.linbit.com"},
			neighbour: state{cdiResource("cdi", "") + storageProfile("replicated", "snapshot", "") + linstorSnapshots, served},
		},
		{
			name:      "8: the override wins over the StorageProfile",
			refused:   state{cdiResource("cdi", "snapshot") + storageProfile("replicated", "csi-clone", ""), served},
			refusal:   []string{`the strategy "snapshot" (spec.cloneStrategyOverride of the CDI resource cdi)`, "no VolumeSnapshotClass has driver linstor.csi.linbit.com"},
			neighbour: state{cdiResource("cdi", "") + storageProfile("replicated", "csi-clone", ""), nil},
		},
		{
			name:      "9: the golden's volume mode differs from the class's",
			refused:   state{storageProfile("replicated", "csi-clone", "Block") + goldenPVC("Filesystem"), nil},
			refusal:   []string{"golden " + defaultGolden + " is a Filesystem volume (spec.volumeMode of its PersistentVolumeClaim cozy-public/" + defaultGolden + `) but a worker disk on StorageClass "replicated" gets Block (status.claimPropertySets[0].volumeMode of the StorageProfile replicated)`, "cannot CSI-clone between volume modes", "Set the StorageProfile replicated's spec.claimPropertySets to volumeMode Filesystem"},
			neighbour: state{storageProfile("replicated", "csi-clone", "Block") + goldenPVC("Block"), nil},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := renderPoolServing(t, builtinPool, healthyCluster(t, tc.refused.objs), tc.refused.apis...)
			requireRefusal(t, err, tc.refusal...)
			_, err = renderPoolServing(t, builtinPool, healthyCluster(t, tc.neighbour.objs), tc.neighbour.apis...)
			require.NoError(t, err)
		})
	}
}

// What the cluster does not state is not guessed.
func TestHostAssistedFallbackChecksSkipWhatIsUnknown(t *testing.T) {
	for _, tc := range []struct{ name, objs string }{
		{"no CDI resource: no strategy, 7 and 8 skipped", storageProfile("replicated", "copy", "")},
		{"no CDI resource and no snapshot API", storageProfile("replicated", "snapshot", "")},
		{"the class's volume mode is unknown", storageProfile("replicated", "", "") + goldenPVC("Filesystem")},
		{"the golden's volume mode is unknown", storageProfile("replicated", "", "Block") + pvc("cozy-public", defaultGolden, "replicated", "6Gi")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := renderPoolServing(t, builtinPool, healthyCluster(t, tc.objs))
			require.NoError(t, err)
		})
	}
	// A class the cluster does not list has no known provisioner: 8 cannot judge it.
	cluster := clusterFromYAML(t, golden{class: "unlisted", size: "6Gi", phase: "Succeeded"}.yaml()+cdiResource("cdi", ""), "cluster/instancetypes.yaml", "cluster/storageclasses.yaml")
	_, err := renderPoolServing(t, "{cluster: acme, storageClass: unlisted, osImage: {builtin: {}}}", cluster)
	require.NoError(t, err)
	// No cluster: a preview runs none of the guards.
	_, err = renderPoolServing(t, builtinPool, nil)
	require.NoError(t, err)
}

// The per-class golden is the one checked: its PVC's volume mode, on the pool's class.
func TestHostAssistedFallbackChecksThePerClassGolden(t *testing.T) {
	pcPVC := pvc("cozy-public", perClassLocal, "local", "6Gi") + "  volumeMode: Filesystem\n"
	_, err := renderPoolServing(t, localPool, perClassCluster(t, plainOnReplicated, perClassOnLocal, pcPVC, storageProfile("local", "csi-clone", "Block")))
	requireRefusal(t, err, "golden "+perClassLocal+" is a Filesystem volume", `worker disk on StorageClass "local" gets Block (status.claimPropertySets[0].volumeMode of the StorageProfile local)`)
	_, err = renderPoolServing(t, localPool, perClassCluster(t, plainOnReplicated, perClassOnLocal, pcPVC, storageProfile("local", "csi-clone", "Filesystem")))
	require.NoError(t, err)
}

// A cluster that states a snapshot clone with its VolumeSnapshotClass: one
// list of each small cluster-scoped kind, one StorageClass GET shared with
// refusal 6, and the golden's PVC only for a known class volume mode.
func TestHostAssistedFallbackRequests(t *testing.T) {
	cluster := healthyCluster(t, cdiResource("cdi", ""), storageProfile("replicated", "", "Filesystem"), goldenPVC("Filesystem"), linstorSnapshots)
	_, err := renderPoolServing(t, builtinPool, cluster, snapshotAPI)
	require.NoError(t, err)
	assert.Equal(t, map[string]int{
		"list virtualmachineclusterinstancetypes": 1,
		"get configmaps":             1,
		"get machinedeployments":     1,
		"get datavolumes":            1,
		"get storageclasses":         1,
		"list cdis":                  1,
		"get storageprofiles":        1,
		"list volumesnapshotclasses": 1,
		"get persistentvolumeclaims": 1,
	}, cluster.CallsByVerb())

	// The HTTP path reads none of it, and renders the same bytes.
	for _, values := range []string{"cluster: acme", "{cluster: acme, osImage: {factory: {}}}"} {
		rich := healthyCluster(t, cdiResource("cdi", "copy"), storageProfile("replicated", "copy", "Block"), goldenPVC("Filesystem"))
		m, err := renderPoolServing(t, values, rich)
		require.NoError(t, err)
		assert.Equal(t, map[string]int{
			"list virtualmachineclusterinstancetypes": 1,
			"get configmaps":         1,
			"get machinedeployments": 1,
		}, rich.CallsByVerb(), values)
		assert.Equal(t, mustRenderPool(t, vals(t, values), nil).Text(), m.Text(), values)
	}
}

func TestHostAssistedFallbackLookupErrorsFailTheRender(t *testing.T) {
	for _, kind := range []string{"CDI", "StorageProfile", "VolumeSnapshotClass"} {
		t.Run(kind, func(t *testing.T) {
			cluster := healthyCluster(t, cdiResource("cdi", ""), linstorSnapshots)
			cluster.FailWith = map[string]error{kind: errors.New("RBAC says no")}
			_, err := renderPoolServing(t, builtinPool, cluster, snapshotAPI)
			requireRefusal(t, err, "RBAC says no")
		})
	}
}

// Helm v4 sees the same served API versions: the snapshot refusal and its
// neighbour come out the same under both engines.
func TestSnapshotAPICapabilityUnderBothEngines(t *testing.T) {
	objs := cdiResource("cdi", "") + linstorSnapshots
	for name, engine := range map[string]func(*chart.Chart, render.Options) (*render.Manifest, error){"v3": render.Render, "v4": helmv4.Render} {
		opts := render.Options{Release: render.Release{Name: testRelease, Namespace: testNamespace}, Values: vals(t, builtinPool), Cluster: healthyCluster(t, objs)}
		_, err := engine(poolChart(t), opts)
		requireRefusal(t, err, "the cluster does not serve snapshot.storage.k8s.io/v1")
		opts.Cluster = healthyCluster(t, objs)
		opts.APIVersions = []string{snapshotAPI}
		_, err = engine(poolChart(t), opts)
		require.NoError(t, err, name)
	}
}
