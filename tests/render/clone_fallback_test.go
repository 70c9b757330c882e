package render

import (
	"errors"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/render/helmv4"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chart"
)

// Refusals 7 to 9 (docs/design.md "Every host-assisted fallback that can be known
// at render time is refused"). The pool is on "replicated", whose provisioner
// in testdata/cluster/storageclasses.yaml is linstor.csi.linbit.com.

const snapshotAPI = "snapshot.storage.k8s.io/v1"

// The CDI objects' fixture builders are shared with the CLI's tests.
var (
	cdiResource    = support.CDIResource
	storageProfile = support.StorageProfile
	snapshotClass  = support.SnapshotClass
)

// goldenIn is the default golden, imported on "replicated", as a volume of mode.
func goldenIn(mode string) golden {
	return golden{class: "replicated", size: "6Gi", phase: "Succeeded", mode: mode}
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
		// mode is the golden PVC's volume mode (Filesystem when "").
		mode string
	}
	served := []string{snapshotAPI}
	fs := storageProfile("replicated", "", "Filesystem")
	named := func(vsc string) string {
		return support.Profile{Class: "replicated", CloneStrategy: "snapshot", VolumeMode: "Filesystem", SnapshotClass: vsc}.YAML()
	}
	for _, tc := range []struct {
		name      string
		refused   state
		refusal   []string
		neighbour state
	}{
		{
			name:      "7: the CDI resource overrides the strategy to copy",
			refused:   state{cdiResource("cdi", "copy") + fs + linstorSnapshots, served, ""},
			refusal:   []string{"pool kubernetes-acme-workers: CDI would clone golden " + defaultGolden + ` onto StorageClass "replicated" with the strategy "copy" (spec.cloneStrategyOverride of the CDI resource cdi)`, "host-assisted copy", "remove spec.cloneStrategyOverride from the CDI resource cdi"},
			neighbour: state{cdiResource("cdi", "csi-clone") + fs, nil, ""},
		},
		{
			name:      "7: the class's StorageProfile states copy",
			refused:   state{cdiResource("cdi", "") + storageProfile("replicated", "copy", "Filesystem"), served, ""},
			refusal:   []string{`the strategy "copy" (status.cloneStrategy of the StorageProfile replicated)`, "set spec.cloneStrategy of the StorageProfile replicated to csi-clone"},
			neighbour: state{cdiResource("cdi", "") + storageProfile("replicated", "csi-clone", "Filesystem"), nil, ""},
		},
		{
			name:      "7: of two CDI resources, the one not in phase Error is read",
			refused:   state{support.CDIResourceIn("cdi", "copy", "Deployed") + support.CDIResourceIn("aaa", "csi-clone", "Error") + fs, served, ""},
			refusal:   []string{"(spec.cloneStrategyOverride of the CDI resource cdi)"},
			neighbour: state{support.CDIResourceIn("cdi", "csi-clone", "Deployed") + support.CDIResourceIn("aaa", "copy", "Error") + fs, nil, ""},
		},
		{
			name:      "8: snapshot by default, no VolumeSnapshotClass for the provisioner",
			refused:   state{cdiResource("cdi", "") + fs + snapshotClass("ceph", "rbd.csi.ceph.com"), served, ""},
			refusal:   []string{`the strategy "snapshot" (CDI's default: the CDI resource cdi sets no spec.cloneStrategyOverride and the StorageProfile replicated states no status.cloneStrategy)`, "no VolumeSnapshotClass has driver linstor.csi.linbit.com", `the provisioner of StorageClass "replicated" is linstor.csi.linbit.com`, "Create a VolumeSnapshotClass with driver: linstor.csi.linbit.com"},
			neighbour: state{cdiResource("cdi", "") + fs + snapshotClass("ceph", "rbd.csi.ceph.com") + linstorSnapshots, served, ""},
		},
		{
			name:      "8: the snapshot API is not served",
			refused:   state{cdiResource("cdi", "") + storageProfile("replicated", "snapshot", "Filesystem"), nil, ""},
			refusal:   []string{`(status.cloneStrategy of the StorageProfile replicated)`, "the cluster does not serve snapshot.storage.k8s.io/v1", "Create a VolumeSnapshotClass with driver: linstor.csi.linbit.com"},
			neighbour: state{cdiResource("cdi", "") + storageProfile("replicated", "snapshot", "Filesystem") + linstorSnapshots, served, ""},
		},
		{
			name:      "8: the override wins over the StorageProfile",
			refused:   state{cdiResource("cdi", "snapshot") + storageProfile("replicated", "csi-clone", "Filesystem"), served, ""},
			refusal:   []string{`the strategy "snapshot" (spec.cloneStrategyOverride of the CDI resource cdi)`, "no VolumeSnapshotClass has driver linstor.csi.linbit.com"},
			neighbour: state{cdiResource("cdi", "") + storageProfile("replicated", "csi-clone", "Filesystem"), nil, ""},
		},
		{
			name:      "8: the StorageProfile names a VolumeSnapshotClass that does not exist",
			refused:   state{cdiResource("cdi", "") + named("gone") + linstorSnapshots, served, ""},
			refusal:   []string{"the StorageProfile replicated names VolumeSnapshotClass gone in status.snapshotClass, which does not exist (CDI then fails the clone)", "and name it in spec.snapshotClass of the StorageProfile replicated"},
			neighbour: state{cdiResource("cdi", "") + named("linstor") + linstorSnapshots, served, ""},
		},
		{
			name:      "8: the StorageProfile names a VolumeSnapshotClass of another driver",
			refused:   state{cdiResource("cdi", "") + named("ceph") + snapshotClass("ceph", "rbd.csi.ceph.com") + linstorSnapshots, served, ""},
			refusal:   []string{"the StorageProfile replicated names VolumeSnapshotClass ceph in status.snapshotClass, whose driver is rbd.csi.ceph.com"},
			neighbour: state{cdiResource("cdi", "") + named("linstor") + snapshotClass("ceph", "rbd.csi.ceph.com") + linstorSnapshots, served, ""},
		},
		{
			name:      "9: the golden's volume mode differs from the class's",
			refused:   state{storageProfile("replicated", "csi-clone", "Block"), nil, "Filesystem"},
			refusal:   []string{"golden " + defaultGolden + " is a Filesystem volume (spec.volumeMode of its PersistentVolumeClaim cozy-public/" + defaultGolden + `, unset meaning Filesystem) but a worker disk on StorageClass "replicated" gets Block (status.claimPropertySets[0] of the StorageProfile replicated, unset meaning Filesystem)`, "cannot CSI-clone between volume modes", "Set the StorageProfile replicated's spec.claimPropertySets to volumeMode Filesystem"},
			neighbour: state{storageProfile("replicated", "csi-clone", "Block"), nil, "Block"},
		},
		{
			name:      "9: a claim property set without a volume mode means Filesystem",
			refused:   state{storageProfile("replicated", "csi-clone", "unset"), nil, "Block"},
			refusal:   []string{"golden " + defaultGolden + " is a Block volume", `a worker disk on StorageClass "replicated" gets Filesystem`},
			neighbour: state{storageProfile("replicated", "csi-clone", "unset"), nil, "Filesystem"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := renderPoolServing(t, builtinPool, healthyClusterWith(t, goldenIn(tc.refused.mode), tc.refused.objs), tc.refused.apis...)
			requireRefusal(t, err, tc.refusal...)
			_, err = renderPoolServing(t, builtinPool, healthyClusterWith(t, goldenIn(tc.neighbour.mode), tc.neighbour.objs), tc.neighbour.apis...)
			require.NoError(t, err)
		})
	}
}

// What the cluster does not state is not guessed.
func TestHostAssistedFallbackChecksSkipWhatIsUnknown(t *testing.T) {
	for _, tc := range []struct {
		name, objs string
		golden     golden
	}{
		{"no CDI resource: no strategy, 7 and 8 skipped", storageProfile("replicated", "copy", "Filesystem"), goldenIn("")},
		{"no CDI resource and no snapshot API", storageProfile("replicated", "snapshot", "Filesystem"), goldenIn("")},
		{"no StorageProfile and no CDI resource: the class's volume mode is unknown", "", goldenIn("Block")},
		{"the golden's volume mode is unknown: its PVC is not there yet", storageProfile("replicated", "", "Block"), golden{class: "replicated", size: "6Gi", phase: "ImportScheduled", dvOnly: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := renderPoolServing(t, builtinPool, healthyClusterWith(t, tc.golden, tc.objs))
			require.NoError(t, err)
		})
	}
	// No cluster: a preview runs none of the guards.
	_, err := renderPoolServing(t, builtinPool, nil)
	require.NoError(t, err)
}

// The per-class golden is the one checked: its PVC's volume mode, on the pool's class.
func TestHostAssistedFallbackChecksThePerClassGolden(t *testing.T) {
	filesystemOnLocal := golden{name: perClassLocal, class: "local", size: "6Gi", phase: "Succeeded", mode: "Filesystem"}.yaml()
	_, err := renderPoolServing(t, localPool, perClassCluster(t, plainOnReplicated, filesystemOnLocal, storageProfile("local", "csi-clone", "Block")))
	requireRefusal(t, err, "golden "+perClassLocal+" is a Filesystem volume", `worker disk on StorageClass "local" gets Block (status.claimPropertySets[0] of the StorageProfile local`)
	_, err = renderPoolServing(t, localPool, perClassCluster(t, plainOnReplicated, filesystemOnLocal, storageProfile("local", "csi-clone", "Filesystem")))
	require.NoError(t, err)
}

// A cluster that states a snapshot clone with its VolumeSnapshotClass: one
// list of each small cluster-scoped kind, one StorageClass GET shared with
// refusal 6, and the golden's PVC only for a known class volume mode.
func TestHostAssistedFallbackRequests(t *testing.T) {
	cluster := healthyCluster(t, cdiResource("cdi", ""), support.CDIConfig("0.06"), storageProfile("replicated", "", "Filesystem"), linstorSnapshots)
	_, err := renderPoolServing(t, builtinPool, cluster, snapshotAPI)
	require.NoError(t, err)
	assert.Equal(t, map[string]int{
		"list virtualmachineclusterinstancetypes": 1,
		"get machinedeployments":                  1,
		"get datavolumes":                         1,
		"get storageclasses":                      1,
		"list cdis":                               1,
		"get storageprofiles":                     1,
		"list volumesnapshotclasses":              1,
		"get persistentvolumeclaims":              1,
		"get cdiconfigs":                          1,
		"get csidrivers":                          1,
		"get persistentvolumes":                   1,
		"get configmaps":                          1,
	}, cluster.CallsByVerb())

	// The HTTP path reads none of it, and renders the same bytes.
	for _, values := range []string{"cluster: acme", "{cluster: acme, osImage: {factory: {}}}"} {
		rich := healthyCluster(t, cdiResource("cdi", "copy"), support.CDIConfig("0.06"), storageProfile("replicated", "copy", "Block"))
		m, err := renderPoolServing(t, values, rich)
		require.NoError(t, err)
		assert.Equal(t, map[string]int{
			"list virtualmachineclusterinstancetypes": 1,
			"get machinedeployments":                  1,
			"get configmaps":                          1,
		}, rich.CallsByVerb(), values)
		assert.Equal(t, mustRenderPool(t, vals(t, values), loadCluster(t, "cluster/instancetypes.yaml")).Text(), m.Text(), values)
	}
}

func TestHostAssistedFallbackLookupErrorsFailTheRender(t *testing.T) {
	for _, kind := range []string{"CDI", "StorageProfile", "VolumeSnapshotClass", "CDIConfig", "CSIDriver", "PersistentVolume", "PersistentVolumeClaim"} {
		t.Run(kind, func(t *testing.T) {
			cluster := healthyCluster(t, cdiResource("cdi", ""), storageProfile("replicated", "", "Filesystem"), linstorSnapshots)
			cluster.FailWith = map[string]error{kind: errors.New("RBAC says no")}
			_, err := renderPoolServing(t, builtinPool, cluster, snapshotAPI)
			requireRefusal(t, err, "RBAC says no")
		})
	}
}

// Helm v4 sees the same served API versions: the snapshot refusal and its
// neighbour come out the same under both engines.
func TestSnapshotAPICapabilityUnderBothEngines(t *testing.T) {
	objs := cdiResource("cdi", "") + storageProfile("replicated", "", "Filesystem") + linstorSnapshots
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

// Refusal 6 follows CDI's own size rule: a Filesystem disk's request is
// diskSize aligned up to 1 MiB and grown by the filesystem overhead, at least
// the StorageProfile's minimumSupportedPvcSize, and CDI compares it with the
// golden PVC's status.capacity. On "fixed" (no allowVolumeExpansion) a request
// above the capacity is refused; at or below it renders, whatever the golden's
// request says.
func TestCloneSizeFollowsCDIsRequest(t *testing.T) {
	fixed := func(disk string) string {
		return "{cluster: acme, storageClass: fixed, diskSize: '" + disk + "', osImage: {builtin: {}}}"
	}
	onFixed := func(capacity, mode string) golden {
		return golden{class: "fixed", size: "6Gi", capacity: capacity, phase: "Succeeded", mode: mode}
	}
	profile := func(mode, minimum string) string {
		return support.Profile{Class: "fixed", CloneStrategy: "csi-clone", VolumeMode: mode, MinimumSize: minimum}.YAML()
	}
	cdi := cdiResource("cdi", "")
	for _, tc := range []struct {
		name            string
		values          string
		golden          golden
		objs            string
		refusal         []string
		neighbourValues string
		neighbourGolden golden
		neighbourObjs   string
	}{
		{
			name:    "a Filesystem disk the golden's size grows by CDI's default 6% overhead",
			values:  fixed("6Gi"),
			golden:  onFixed("6Gi", "Filesystem"),
			objs:    cdi + support.CDIConfig("0.06") + profile("Filesystem", ""),
			refusal: []string{"CDI would request 6828998001 bytes (diskSize 6Gi aligned up to 1 MiB and grown by the filesystem overhead 0.06 of the CDIConfig config, as CDI does for a Filesystem disk) for each worker disk, more than the capacity 6Gi of golden " + defaultGolden, `StorageClass "fixed" (storageClass) does not set allowVolumeExpansion: true`},
			// The same disk as a Block volume is not grown.
			neighbourValues: fixed("6Gi"),
			neighbourGolden: onFixed("6Gi", "Block"),
			neighbourObjs:   cdi + support.CDIConfig("0.06") + profile("Block", ""),
		},
		{
			name:    "a golden whose capacity was rounded up serves a disk above its request",
			values:  fixed("6.7Gi"),
			golden:  onFixed("7Gi", "Filesystem"),
			objs:    cdi + support.CDIConfig("0.06") + profile("Filesystem", ""),
			refusal: []string{"more than the capacity 7Gi of golden " + defaultGolden},
			// 6.5Gi grown by 6% is 7398081168 bytes, below 7Gi (7516192768); 6.7Gi aligned up to 1 MiB and grown is 7625936733.
			neighbourValues: fixed("6.5Gi"),
			neighbourGolden: onFixed("7Gi", "Filesystem"),
			neighbourObjs:   cdi + support.CDIConfig("0.06") + profile("Filesystem", ""),
		},
		{
			name:            "the class's own overhead wins over the global one",
			values:          fixed("6.5Gi"),
			golden:          onFixed("7Gi", "Filesystem"),
			objs:            cdi + support.CDIConfig("0.06", "fixed=0.1") + profile("Filesystem", ""),
			refusal:         []string{"grown by the filesystem overhead 0.1 of the CDIConfig config"},
			neighbourValues: fixed("6.5Gi"),
			neighbourGolden: onFixed("7Gi", "Filesystem"),
			neighbourObjs:   cdi + support.CDIConfig("0.1", "fixed=0.06") + profile("Filesystem", ""),
		},
		{
			name:            "the StorageProfile's minimumSupportedPvcSize raises the request",
			values:          fixed("6Gi"),
			golden:          onFixed("6Gi", "Block"),
			objs:            cdi + profile("Block", "10Gi"),
			refusal:         []string{"CDI would request 10737418240 bytes (diskSize 6Gi as a Block disk, at least the StorageProfile fixed's minimumSupportedPvcSize 10Gi)"},
			neighbourValues: fixed("6Gi"),
			neighbourGolden: onFixed("10Gi", "Block"),
			neighbourObjs:   cdi + profile("Block", "10Gi"),
		},
		{
			name:    "with the volume mode unknown, a disk larger than the capacity is refused either way",
			values:  fixed("20Gi"),
			golden:  onFixed("6Gi", ""),
			refusal: []string{"CDI would request at least 21474836480 bytes (diskSize 20Gi; the volume mode is not known, and either mode needs the same)"},
			// With the mode unknown and only a Filesystem request above the capacity, the check is skipped.
			neighbourValues: fixed("6Gi"),
			neighbourGolden: onFixed("6Gi", ""),
			neighbourObjs:   support.CDIConfig("0.06"),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := renderPoolServing(t, tc.values, healthyClusterWith(t, tc.golden, tc.objs))
			requireRefusal(t, err, tc.refusal...)
			_, err = renderPoolServing(t, tc.neighbourValues, healthyClusterWith(t, tc.neighbourGolden, tc.neighbourObjs))
			require.NoError(t, err)
		})
	}
}

// A cluster with a CDI resource and no CDIConfig "config" is one whose CDI has
// not reconciled yet: its config controller writes the global overhead 0.06
// (DefaultGlobalOverhead in CDI's pkg/common) before any worker disk exists, so
// refusal 6 inflates a Filesystem disk by it and says the figure is CDI's
// default. With no CDI resource at all nothing is inflated, as before.
func TestCDIWithoutCDIConfigGrowsByItsDefaultOverhead(t *testing.T) {
	values := "{cluster: acme, storageClass: fixed, diskSize: '6Gi', osImage: {builtin: {}}}"
	onFixed := func(mode string) golden {
		return golden{class: "fixed", size: "6Gi", capacity: "6Gi", phase: "Succeeded", mode: mode}
	}
	profile := func(mode string) string {
		return support.Profile{Class: "fixed", CloneStrategy: "csi-clone", VolumeMode: mode}.YAML()
	}
	cdi := cdiResource("cdi", "")

	t.Run("a CDI resource and no CDIConfig: a Filesystem disk grows by 0.06 and is refused", func(t *testing.T) {
		_, err := renderPoolServing(t, values, healthyClusterWith(t, onFixed("Filesystem"), cdi+profile("Filesystem")))
		requireRefusal(t, err,
			"CDI would request 6828998001 bytes (diskSize 6Gi aligned up to 1 MiB and grown by CDI's default filesystem overhead 0.06 (not read: the cluster has a CDI resource but no CDIConfig config yet",
			"more than the capacity 6Gi of golden "+defaultGolden,
			`StorageClass "fixed" (storageClass) does not set allowVolumeExpansion: true`)
	})
	t.Run("the same disk as a Block volume is not grown and renders", func(t *testing.T) {
		_, err := renderPoolServing(t, values, healthyClusterWith(t, onFixed("Block"), cdi+profile("Block")))
		require.NoError(t, err)
	})
	t.Run("a CDIConfig that states 0 overhead is read, not defaulted", func(t *testing.T) {
		_, err := renderPoolServing(t, values, healthyClusterWith(t, onFixed("Filesystem"), cdi+support.CDIConfig("0")+profile("Filesystem")))
		require.NoError(t, err)
	})
	t.Run("no CDI resource and no CDIConfig: nothing to inflate by, renders as before", func(t *testing.T) {
		_, err := renderPoolServing(t, values, healthyClusterWith(t, onFixed("Filesystem"), profile("Filesystem")))
		require.NoError(t, err)
	})
}

// A golden's size or capacity the chart cannot compare (an operator's edit:
// the catalog writes plain sizes, the API server plain capacities) is refused
// naming the golden and the field, beside the same golden with a plain size.
func TestGoldenSizesTheChartCannotCompareAreRefused(t *testing.T) {
	values := "{cluster: acme, storageClass: fixed, diskSize: '6Gi', osImage: {builtin: {}}}"
	onFixed := func(size, capacity string) golden {
		return golden{class: "fixed", size: size, capacity: capacity, phase: "Succeeded", mode: "Block"}
	}
	objs := cdiResource("cdi", "") + support.Profile{Class: "fixed", CloneStrategy: "csi-clone", VolumeMode: "Block"}.YAML()
	for _, tc := range []struct {
		name             string
		broken, neighbor golden
		refusal          []string
	}{
		{
			name:     "the golden DataVolume's storage request",
			broken:   onFixed("6e999", "6Gi"),
			neighbor: onFixed("6e9", "6Gi"),
			refusal:  []string{"pool kubernetes-acme-workers: golden " + defaultGolden + "'s size, the storage request of DataVolume cozy-public/" + defaultGolden + `, "6e999" is not a Kubernetes quantity the chart can compare (it is written with an exponent of more than 2 digits (e999))`, "set that golden's storage request"},
		},
		{
			name:     "the golden PVC's capacity",
			broken:   onFixed("6Gi", "8Ei"),
			neighbor: onFixed("6Gi", "7Ei"),
			refusal:  []string{"pool kubernetes-acme-workers: golden " + defaultGolden + "'s capacity, status.capacity.storage of PersistentVolumeClaim cozy-public/" + defaultGolden + `, "8Ei" is not a Kubernetes quantity the chart can compare (it is 2^63 (8Ei) or more`, "check that driver"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := renderPoolServing(t, values, healthyClusterWith(t, tc.broken, objs))
			requireRefusal(t, err, tc.refusal...)
			_, err = renderPoolServing(t, values, healthyClusterWith(t, tc.neighbor, objs))
			require.NoError(t, err)
		})
	}
}

// Refusals 10 to 15: what CDI needs before any clone strategy runs, each from
// the cluster-scoped objects CDI reads, each beside the neighbour that renders.
func TestCDIRefusesWhatItCannotClone(t *testing.T) {
	fs := storageProfile("replicated", "csi-clone", "Filesystem")
	cdi := cdiResource("cdi", "")
	bound := goldenIn("")
	for _, tc := range []struct {
		name            string
		values          string
		golden          golden
		objs            string
		refusal         []string
		neighbourGolden golden
		neighbourObjs   string
	}{
		{
			name:            "10: a StorageProfile without claim property sets (a provisioner CDI does not know)",
			golden:          bound,
			objs:            cdi + storageProfile("replicated", "csi-clone", ""),
			refusal:         []string{"pool kubernetes-acme-workers: the StorageProfile replicated states no status.claimPropertySets[0].accessModes, and a worker disk states none, so CDI fails each worker disk (\"no accessMode specified in StorageProfile replicated\"", "Set spec.claimPropertySets of the StorageProfile replicated"},
			neighbourGolden: bound,
			neighbourObjs:   cdi + fs,
		},
		{
			name:            "10: a CDI cluster with no StorageProfile for the class",
			golden:          bound,
			objs:            cdiResource("cdi", "csi-clone"),
			refusal:         []string{"the cluster has no StorageProfile replicated, from which CDI takes a worker disk's access modes", "kubectl get storageprofile replicated"},
			neighbourGolden: bound,
			neighbourObjs:   cdi + fs,
		},
		{
			name:            "12: a provisioner with no CSIDriver object",
			values:          "{cluster: acme, storageClass: intree, osImage: {builtin: {}}}",
			golden:          golden{class: "intree", size: "6Gi", phase: "Succeeded"},
			objs:            "---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: intree}\nprovisioner: kubernetes.io/no-provisioner\nallowVolumeExpansion: true\n",
			refusal:         []string{`StorageClass "intree"'s provisioner kubernetes.io/no-provisioner has no CSIDriver object (storage.k8s.io/v1 CSIDriver kubernetes.io/no-provisioner)`, "In tree storage class does not support snapshot/clone", "Install the CSI driver kubernetes.io/no-provisioner (its CSIDriver object), or use a class of a CSI driver"},
			neighbourGolden: golden{class: "intree", size: "6Gi", phase: "Succeeded"},
			neighbourObjs:   "---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: intree}\nprovisioner: kubernetes.io/no-provisioner\nallowVolumeExpansion: true\n" + support.CSIDriver("kubernetes.io/no-provisioner"),
		},
		{
			name:            "13: the golden's PersistentVolume is of another CSI driver",
			golden:          golden{class: "replicated", size: "6Gi", phase: "Succeeded", driver: "rbd.csi.ceph.com"},
			refusal:         []string{"golden " + defaultGolden + " is on a PersistentVolume of the CSI driver rbd.csi.ceph.com (spec.csi.driver of PersistentVolume pv-" + defaultGolden + `) but StorageClass "replicated" provisions with linstor.csi.linbit.com`, "Provisioners are incompatible"},
			neighbourGolden: bound,
		},
		{
			name:            "14: two active CDI resources",
			golden:          bound,
			objs:            cdiResource("cdi", "") + cdiResource("cdi-2", "") + fs,
			refusal:         []string{"the cluster has 2 CDI resources and 2 of them not in phase Error (cdi, cdi-2), and CDI fails every clone unless exactly one is (\"invalid number of active CDI resources\")", "Delete the CDI resources that are not in use"},
			neighbourGolden: bound,
			neighbourObjs:   cdiResource("cdi", "") + support.CDIResourceIn("cdi-2", "", "Error") + fs,
		},
		{
			name:            "15: a golden PVC of archive content",
			golden:          bound,
			objs:            "",
			refusal:         []string{"holds archive content (annotation cdi.kubevirt.io/storage.contentType: archive)"},
			neighbourGolden: bound,
		},
		{
			name:            "15: a populated golden whose PVC states no capacity",
			golden:          golden{class: "replicated", size: "6Gi", phase: "Succeeded", dvOnly: true},
			objs:            "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: " + defaultGolden + ", namespace: cozy-public}\nspec: {accessModes: [ReadWriteMany], storageClassName: replicated, volumeMode: Filesystem, resources: {requests: {storage: 6Gi}}}\nstatus: {phase: Bound}\n",
			refusal:         []string{"golden " + defaultGolden + " has populated, but its PersistentVolumeClaim cozy-public/" + defaultGolden + " states no status.capacity", "source/target size info missing"},
			neighbourGolden: golden{class: "replicated", size: "6Gi", phase: "ImportInProgress", dvOnly: true},
			neighbourObjs:   "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: " + defaultGolden + ", namespace: cozy-public}\nspec: {accessModes: [ReadWriteMany], storageClassName: replicated, volumeMode: Filesystem, resources: {requests: {storage: 6Gi}}}\nstatus: {phase: Pending}\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			values := tc.values
			if values == "" {
				values = builtinPool
			}
			objs := tc.golden.yaml() + tc.objs
			if strings.HasPrefix(tc.name, "15: a golden PVC of archive") {
				objs = strings.Replace(objs, "cdi.kubevirt.io/storage.contentType: kubevirt", "cdi.kubevirt.io/storage.contentType: archive", 1)
			}
			_, err := renderPoolServing(t, values, healthyClusterWithoutGolden(t, objs))
			requireRefusal(t, err, tc.refusal...)
			_, err = renderPoolServing(t, values, healthyClusterWithoutGolden(t, tc.neighbourGolden.yaml()+tc.neighbourObjs))
			require.NoError(t, err)
		})
	}
	// 13: a PersistentVolume claimed by another PVC than the golden's.
	claimedElsewhere := strings.Replace(golden{class: "replicated", size: "6Gi", phase: "Succeeded"}.yaml(), "claimRef: {namespace: cozy-public, name: "+defaultGolden+"}", "claimRef: {namespace: tenant-evil, name: stolen}", 1)
	_, err := renderPoolServing(t, builtinPool, healthyClusterWithoutGolden(t, claimedElsewhere))
	requireRefusal(t, err, "is claimed by tenant-evil/stolen (spec.claimRef)", "pvc does not match volume claim ref")
}
