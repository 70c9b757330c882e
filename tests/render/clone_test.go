package render

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

const builtinPool = "{cluster: acme, osImage: {builtin: {}}}"

// healthyCluster holds the instancetypes, the usual classes and the default golden, imported.
func healthyCluster(t testing.TB, extra ...string) *support.Cluster {
	return healthyClusterWith(t, golden{class: "replicated", size: "6Gi", phase: "Succeeded"}, extra...)
}

// healthyClusterWith is healthyCluster with the golden g instead.
func healthyClusterWith(t testing.TB, g golden, extra ...string) *support.Cluster {
	objs := g.yaml()
	for _, e := range extra {
		objs += e
	}
	return clusterFromYAML(t, objs, "cluster/instancetypes.yaml", "cluster/storageclasses.yaml")
}

func TestBuiltinPoolClonesTheGolden(t *testing.T) {
	m := mustRenderPool(t, vals(t, builtinPool), healthyCluster(t))
	disk := diskOf(m)
	assert.Equal(t, map[string]interface{}{"namespace": "cozy-public", "name": defaultGolden}, render.Get(disk, "spec.source.pvc"))
	assert.Nil(t, render.Get(disk, "spec.source.http"))
	assert.Equal(t, map[string]interface{}{
		"kubernetes-worker-image.cozystack.io/golden": defaultGolden,
		"kubernetes-worker-image.cozystack.io/pool":   testPoolName,
	}, render.Get(disk, "metadata.annotations"), "no usePopulator annotation on a clone")
	assert.Equal(t, "replicated", render.Get(disk, "spec.storage.storageClassName"))
	assert.Equal(t, "20Gi", render.Get(disk, "spec.storage.resources.requests.storage"))
	assert.Equal(t, "factory.talos.dev/installer/"+defaultSchematic+":"+defaultTalos, render.Get(workerConfig(t, m), "machine.install.image"))
}

func TestBuiltinOverridesFeedDiskInstallerAndTalosVersion(t *testing.T) {
	const schematic = "376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba"
	goldenName := "talos-worker-" + schematic + "-v1.12.2"
	cluster := healthyCluster(t, golden{name: goldenName, class: "replicated", size: "6Gi", phase: "Succeeded"}.yaml())
	values := vals(t, fmt.Sprintf("{cluster: acme, osImage: {builtin: {schematicID: %s, version: v1.12.2}}}", schematic))
	m := mustRenderPool(t, values, cluster)
	assert.Equal(t, goldenName, render.Get(diskOf(m), "spec.source.pvc.name"))
	assert.Equal(t, "factory.talos.dev/installer/"+schematic+":v1.12.2", render.Get(workerConfig(t, m), "machine.install.image"))
	assert.Equal(t, "v1.12.2", render.Get(talosConfigTemplate(t, m), "spec.template.spec.talosVersion"))

	// The resolved version goes through the support matrix too.
	values["version"] = "v1.36"
	_, err := renderPool(t, values, cluster)
	requireRefusal(t, err, "Talos v1.12.2 (osImage.builtin.version) does not support Kubernetes v1.36")
}

func TestFactoryOverridesFeedTheHTTPImport(t *testing.T) {
	m := mustRenderPool(t, vals(t, "{cluster: acme, osImage: {factory: {version: v1.13.5, imageFactoryURL: 'http://factory.internal:8080/'}}}"), nil)
	disk := diskOf(m)
	assert.Equal(t, "http://factory.internal:8080/image/"+defaultSchematic+"/v1.13.5/openstack-amd64.raw.xz", render.Get(disk, "spec.source.http.url"))
	assert.Equal(t, "false", render.Get(disk, "metadata.annotations[cdi.kubevirt.io/storage.usePopulator]"))
	assert.Equal(t, "factory.talos.dev/installer/"+defaultSchematic+":v1.13.5", render.Get(workerConfig(t, m), "machine.install.image"))
}

func TestMachineTemplateNameOnlyMovesForBuiltin(t *testing.T) {
	cluster := func() *support.Cluster { return healthyCluster(t) }
	absent := machineTemplateName(t, mustRenderPool(t, vals(t, "cluster: acme"), cluster()))
	for _, same := range []string{
		"{cluster: acme, osImage: {}}",
		"{cluster: acme, osImage: {factory: {}}}",
		"{cluster: acme, osImage: {factory: {schematicID: " + defaultSchematic + ", version: v1.13.6, imageFactoryURL: 'https://factory.talos.dev'}}}",
	} {
		m := mustRenderPool(t, vals(t, same), cluster())
		assert.Equal(t, absent, machineTemplateName(t, m), same)
		assert.Equal(t, baselineText(t, mustRenderPool(t, vals(t, "cluster: acme"), cluster())), baselineText(t, m), "%s renders the baseline bytes", same)
	}
	builtin := machineTemplateName(t, mustRenderPool(t, vals(t, builtinPool), cluster()))
	assert.NotEqual(t, absent, builtin, "osImage.builtin re-images the pool")
}

// On the HTTP path the render reads no golden, StorageClass or PVC: a cluster
// full of them renders the same bytes as one with only the instancetypes, and a
// preview with no cluster the same machine template.
func TestHTTPPathReadsNoGoldenClassOrPVC(t *testing.T) {
	rich := healthyCluster(t,
		golden{name: "talos-worker-other-v1.13.6", class: "local", size: "6Gi", phase: "Failed"}.yaml(),
		storageClass("virt", "2026-05-01T00:00:00Z", false, virtDefault),
		runningPool("kubernetes-acme-other", "kubernetes-acme-other-abc123", defaultGolden, "local", 2),
	)
	for _, values := range []string{"cluster: acme", "{cluster: acme, storageClass: ''}", "{cluster: acme, osImage: {factory: {}}}", "{cluster: acme, diskSize: 5Gi, storageClass: fixed}"} {
		rich.ResetCalls()
		withRich := mustRenderPool(t, vals(t, values), rich).Text()
		assert.Equal(t, map[string]int{
			"list virtualmachineclusterinstancetypes": 1,
			"get machinedeployments":                  1,
			"get configmaps":                          1,
		}, rich.CallsByVerb(), "%s: the HTTP path asks only for instancetypes, its own MachineDeployment (which holds its record) and the catalog's published defaults", values)
		assert.Equal(t, withRich, mustRenderPool(t, vals(t, values), loadCluster(t, "cluster/instancetypes.yaml")).Text(), values)
		assert.Equal(t, doc(t, mustRenderPool(t, vals(t, values), loadCluster(t, "cluster/instancetypes.yaml")), "KubevirtMachineTemplate").Text, doc(t, mustRenderPool(t, vals(t, values), nil), "KubevirtMachineTemplate").Text, "%s: a preview (no cluster) names the same template", values)
	}
}

func TestCloneRefusals(t *testing.T) {
	fixed := "{cluster: acme, storageClass: fixed, osImage: {builtin: {}}}"
	// An expandable class of Ceph RBD beside LINSTOR's.
	fastClass := "---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: fast}\nprovisioner: rbd.csi.ceph.com\nallowVolumeExpansion: true\n" + support.CSIDriver("rbd.csi.ceph.com")
	for _, tc := range []struct {
		name               string
		values, cluster    string
		refusal            []string
		neighbourValues    string
		neighbourCluster   string
		neighbourNeedsFlag bool
	}{
		{
			name:             "golden absent",
			values:           builtinPool,
			refusal:          []string{"pool kubernetes-acme-workers: golden " + defaultGolden + " is absent from cozy-public", "version v1.13.6 (from talos.version unset: the chart's default for a new pool)", "Add the entry {schematicID: " + defaultSchematic + ", version: v1.13.6}", "remove osImage.builtin"},
			neighbourCluster: golden{class: "replicated", size: "6Gi", phase: "ImportScheduled"}.yaml(),
		},
		{
			name:             "golden failed",
			values:           builtinPool,
			cluster:          golden{class: "replicated", size: "6Gi", phase: "Failed"}.yaml(),
			refusal:          []string{"golden " + defaultGolden + " in cozy-public failed to import (status.phase Failed)", "kubectl -n cozy-public describe datavolume " + defaultGolden},
			neighbourCluster: golden{class: "replicated", size: "6Gi", phase: "ImportInProgress"}.yaml(),
		},
		{
			name:             "declared class differs from the golden's",
			values:           "{cluster: acme, storageClass: local, osImage: {builtin: {}}}",
			cluster:          golden{class: "replicated", size: "6Gi", phase: "Succeeded"}.yaml(),
			refusal:          []string{`its disks would be on StorageClass "local" (storageClass) but golden ` + defaultGolden + ` is on "replicated" (spec.storage.storageClassName of DataVolume cozy-public/` + defaultGolden + `)`, "Both classes are of the CSI driver linstor.csi.linbit.com, so CDI would not fall back but ask that driver for a CSI clone across the classes, which only the driver decides", `Set storageClass to "replicated", or add "local" to the additionalStorageClasses of the kubernetes-worker-image catalog entry {schematicID: ` + defaultSchematic + `, version: v1.13.6} (it then imports golden ` + defaultGolden + `--local on that class)`},
			neighbourValues:  "{cluster: acme, storageClass: replicated, osImage: {builtin: {}}}",
			neighbourCluster: golden{class: "replicated", size: "6Gi", phase: "Succeeded"}.yaml(),
		},
		{
			name:             "declared class of another CSI driver than the golden's volume",
			values:           "{cluster: acme, storageClass: fast, osImage: {builtin: {}}}",
			cluster:          golden{class: "replicated", size: "6Gi", phase: "Succeeded"}.yaml() + fastClass,
			refusal:          []string{`its disks would be on StorageClass "fast" (storageClass) but golden ` + defaultGolden + ` is on "replicated"`, `The golden's volume is of the CSI driver linstor.csi.linbit.com and StorageClass "fast" provisions with rbd.csi.ceph.com, so CDI would fall back to a host-assisted copy over the pod network ("Provisioners are incompatible")`},
			neighbourValues:  "{cluster: acme, storageClass: fast, osImage: {builtin: {}}}",
			neighbourCluster: golden{class: "fast", size: "6Gi", phase: "Succeeded"}.yaml() + fastClass,
		},
		{
			name:             "declared class differs from a golden with no volume yet",
			values:           "{cluster: acme, storageClass: local, osImage: {builtin: {}}}",
			cluster:          golden{class: "replicated", size: "6Gi", phase: "Pending"}.yaml(),
			refusal:          []string{`its disks would be on StorageClass "local" (storageClass) but golden ` + defaultGolden + ` is on "replicated"`, "Across CSI drivers CDI would fall back to a host-assisted copy over the pod network; on one driver it would ask that driver for a CSI clone across the classes"},
			neighbourValues:  "{cluster: acme, storageClass: replicated, osImage: {builtin: {}}}",
			neighbourCluster: golden{class: "replicated", size: "6Gi", phase: "Pending"}.yaml(),
		},
		{
			name:             "pool class from the cluster default differs",
			values:           "{cluster: acme, storageClass: '', osImage: {builtin: {}}}",
			cluster:          golden{class: "local", size: "6Gi", phase: "Succeeded"}.yaml(),
			refusal:          []string{`StorageClass "replicated" (storageClass "", resolved from the cluster default class "replicated")`, `is on "local"`},
			neighbourCluster: golden{class: "replicated", size: "6Gi", phase: "Succeeded"}.yaml(),
		},
		{
			name:             "golden class from the cluster default differs",
			values:           "{cluster: acme, storageClass: local, osImage: {builtin: {}}}",
			cluster:          golden{size: "6Gi", phase: "Succeeded"}.yaml(),
			refusal:          []string{`is on "replicated" (no class on the golden, resolved from the cluster default class "replicated")`},
			neighbourValues:  "{cluster: acme, storageClass: replicated, osImage: {builtin: {}}}",
			neighbourCluster: golden{size: "6Gi", phase: "Succeeded"}.yaml(),
		},
		{
			name:             "disk smaller than the golden",
			values:           "{cluster: acme, diskSize: 5Gi, osImage: {builtin: {}}}",
			cluster:          golden{class: "replicated", size: "6Gi", phase: "Succeeded"}.yaml(),
			refusal:          []string{"diskSize 5Gi is smaller than golden " + defaultGolden + " (6Gi)", "Set diskSize to 6Gi or more"},
			neighbourValues:  "{cluster: acme, diskSize: 6144Mi, osImage: {builtin: {}}}",
			neighbourCluster: golden{class: "replicated", size: "6Gi", phase: "Succeeded"}.yaml(),
		},
		{
			name:             "disk larger than the golden on a class that cannot expand",
			values:           fixed,
			cluster:          golden{class: "fixed", size: "6Gi", phase: "Succeeded"}.yaml(),
			refusal:          []string{`CDI would request at least 21474836480 bytes (diskSize 20Gi; the volume mode is not known, and either mode needs the same) for each worker disk, more than the capacity 6Gi of golden ` + defaultGolden + ` (status.capacity of its PersistentVolumeClaim cozy-public/` + defaultGolden + `), and StorageClass "fixed" (storageClass) does not set allowVolumeExpansion: true`, "Use a class with allowVolumeExpansion: true, or a diskSize whose request fits the golden's capacity"},
			neighbourValues:  "{cluster: acme, storageClass: fixed, diskSize: 6Gi, osImage: {builtin: {}}}",
			neighbourCluster: golden{class: "fixed", size: "6Gi", phase: "Succeeded"}.yaml(),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := renderPool(t, vals(t, tc.values), clusterFromYAML(t, tc.cluster, "cluster/instancetypes.yaml", "cluster/storageclasses.yaml"))
			requireRefusal(t, err, tc.refusal...)
			neighbour := tc.neighbourValues
			if neighbour == "" {
				neighbour = tc.values
			}
			_, err = renderPool(t, vals(t, neighbour), clusterFromYAML(t, tc.neighbourCluster, "cluster/instancetypes.yaml", "cluster/storageclasses.yaml"))
			require.NoError(t, err, "valid neighbour %s", neighbour)
		})
	}
}

// replicated is expandable: a larger disk grows its clone. A class the
// cluster does not have is refused (refusal 11): CDI fails a disk of it.
func TestExpandableClassAllowsALargerDisk(t *testing.T) {
	_, err := renderPool(t, vals(t, builtinPool), healthyCluster(t))
	require.NoError(t, err)
	cluster := clusterFromYAML(t, golden{class: "unlisted", size: "6Gi", phase: "Succeeded"}.yaml(), "cluster/instancetypes.yaml", "cluster/storageclasses.yaml")
	_, err = renderPool(t, vals(t, "{cluster: acme, storageClass: unlisted, osImage: {builtin: {}}}"), cluster)
	requireRefusal(t, err, `StorageClass "unlisted" (storageClass) does not exist in the cluster`)
}

func TestBothBuiltinAndFactoryAreRefused(t *testing.T) {
	values := vals(t, "{cluster: acme, osImage: {builtin: {}, factory: {}}}")
	_, err := renderPool(t, values, healthyCluster(t))
	require.Error(t, err, "the schema refuses both")
	_, err = renderPoolAs(t, render.Release{Name: testRelease, Namespace: testNamespace, SkipSchemaValidation: true}, values, healthyCluster(t))
	requireRefusal(t, err, "pool kubernetes-acme-workers: osImage sets both builtin and factory", "not both")
	_, err = renderPoolAs(t, render.Release{Name: testRelease, Namespace: testNamespace, SkipSchemaValidation: true}, vals(t, builtinPool), healthyCluster(t))
	require.NoError(t, err)
}

func TestMalformedQuantityIsRefused(t *testing.T) {
	values := vals(t, "{cluster: acme, diskSize: 'twenty', osImage: {builtin: {}}}")
	_, err := renderPoolAs(t, render.Release{Name: testRelease, Namespace: testNamespace, SkipSchemaValidation: true}, values, healthyCluster(t))
	// The same refusal, naming the pool, as on the HTTP path: one validating template runs first.
	requireRefusal(t, err, `pool kubernetes-acme-workers: diskSize "twenty" is not a plain value`, "a quantity such as 20Gi")
}

func TestAlreadyClonedPoolIsPastNeedingTheSource(t *testing.T) {
	running := runningPool(testPoolName, testPoolName+"-abc123", defaultGolden, "replicated", 2)
	failed := golden{class: "replicated", size: "6Gi", phase: "Failed"}.yaml()
	// A pool moving to another flavor names it in its own values; one that
	// names none keeps the flavor its running template clones.
	moving := "{cluster: acme, talos: {schematicID: " + defaultSchematic + "}, osImage: {builtin: {}}}"
	for _, tc := range []struct {
		name, cluster string
		refusal       string
		values        string
	}{
		{"golden deleted after the pool cloned", running, "", ""},
		{"golden failed after the pool cloned", running + failed, "", ""},
		{"a pool at zero workers is not exempt", runningPool(testPoolName, testPoolName+"-abc123", defaultGolden, "replicated", 0), "is absent from cozy-public", ""},
		{"a pool whose workers never became ready is not exempt", runningPool(testPoolName, testPoolName+"-abc123", defaultGolden, "replicated", 0) + failed, "failed to import", ""},
		{"another pool's objects do not count", runningPool("kubernetes-acme-other", "kubernetes-acme-other-abc123", defaultGolden, "replicated", 3), "is absent from cozy-public", ""},
		{"a template of another golden does not count (the pool is moving)", runningPool(testPoolName, testPoolName+"-abc123", "talos-worker-other-v1.13.6", "replicated", 3), "is absent from cozy-public", moving},
		{"a pool naming no flavor keeps the golden it clones", runningPool(testPoolName, testPoolName+"-abc123", "talos-worker-other-v1.13.6", "replicated", 3), "", ""},
		{"the MachineDeployment without its template does not count", strings.SplitAfterN(running, "readyReplicas: 2}\n", 2)[0], "is absent from cozy-public", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			values := builtinPool
			if tc.values != "" {
				values = tc.values
			}
			m, err := renderPool(t, vals(t, values), clusterFromYAML(t, tc.cluster, "cluster/instancetypes.yaml", "cluster/storageclasses.yaml"))
			if tc.refusal == "" {
				require.NoError(t, err)
				clones := defaultGolden
				if strings.Contains(tc.cluster, "talos-worker-other-") {
					clones = "talos-worker-other-v1.13.6"
				}
				assert.Equal(t, clones, render.Get(diskOf(m), "spec.source.pvc.name"), "it keeps cloning what it clones")
				return
			}
			requireRefusal(t, err, tc.refusal)
		})
	}
}

func TestGoldenFoundOnlyAsItsPVC(t *testing.T) {
	// CDI garbage-collected the DataVolume and kept the PVC: present and populated.
	m := mustRenderPool(t, vals(t, builtinPool), healthyClusterWithoutGolden(t, goldenClaim{name: defaultGolden, class: "replicated", size: "6Gi", bound: true}.yaml()))
	assert.Equal(t, defaultGolden, render.Get(diskOf(m), "spec.source.pvc.name"))

	_, err := renderPool(t, vals(t, "{cluster: acme, storageClass: local, osImage: {builtin: {}}}"), healthyClusterWithoutGolden(t, goldenClaim{name: defaultGolden, class: "replicated", size: "6Gi", bound: true}.yaml()))
	requireRefusal(t, err, `is on "replicated" (the golden's PersistentVolumeClaim cozy-public/`+defaultGolden+`)`)

	_, err = renderPool(t, vals(t, "{cluster: acme, diskSize: 4Gi, osImage: {builtin: {}}}"), healthyClusterWithoutGolden(t, goldenClaim{name: defaultGolden, class: "replicated", size: "6Gi", bound: true}.yaml()))
	requireRefusal(t, err, "diskSize 4Gi is smaller than golden "+defaultGolden+" (6Gi)")
}

func TestGoldenClassAndSizeFallBackToItsPVC(t *testing.T) {
	// A golden whose spec names no class and no size: its bound PVC answers (status.claimName).
	claim := "prime-claim"
	cluster := healthyClusterWithoutGolden(t, golden{phase: "Succeeded", claimName: claim, claimClass: "local", capacity: "8Gi"}.yaml())
	_, err := renderPool(t, vals(t, "{cluster: acme, storageClass: local, diskSize: 7Gi, osImage: {builtin: {}}}"), cluster)
	requireRefusal(t, err, `diskSize 7Gi is smaller than golden `+defaultGolden+` (8Gi)`)
	_, err = renderPool(t, vals(t, "{cluster: acme, osImage: {builtin: {}}}"), cluster)
	requireRefusal(t, err, `is on "local" (the golden's PersistentVolumeClaim cozy-public/prime-claim)`)
	_, err = renderPool(t, vals(t, "{cluster: acme, storageClass: local, diskSize: 8Gi, osImage: {builtin: {}}}"), cluster)
	require.NoError(t, err)
}

func healthyClusterWithoutGolden(t testing.TB, objs string) *support.Cluster {
	return clusterFromYAML(t, objs, "cluster/instancetypes.yaml", "cluster/storageclasses.yaml")
}

// The cluster default is resolved the way CDI does for a VM disk, whatever the list order.
func TestDefaultClassResolution(t *testing.T) {
	older, newer := "2026-01-01T00:00:00Z", "2026-06-01T00:00:00Z"
	for _, tc := range []struct {
		name    string
		classes []string
		want    string
	}{
		{"two GA defaults: the newest wins", []string{storageClass("alpha", older, true, gaDefault), storageClass("beta", newer, true, gaDefault)}, "beta"},
		{"two GA defaults created together: the name that sorts first", []string{storageClass("zulu", newer, true, gaDefault), storageClass("alpha", newer, true, gaDefault)}, "alpha"},
		{"beta annotation only", []string{storageClass("legacy", older, true, betaDefault), storageClass("plain", newer, true)}, "legacy"},
		{"GA beats beta", []string{storageClass("legacy", newer, true, betaDefault), storageClass("ga", older, true, gaDefault)}, "ga"},
		{"virt default beats GA default", []string{storageClass("ga", newer, true, gaDefault), storageClass("virt", older, true, virtDefault)}, "virt"},
		{"two virt defaults: the newest wins", []string{storageClass("virt-a", newer, true, virtDefault), storageClass("virt-b", older, true, virtDefault), storageClass("ga", newer, true, gaDefault)}, "virt-a"},
		{"an annotation that is not \"true\" does not count", []string{storageClass("ga", older, true, gaDefault), storageClass("virt", newer, true, "storageclass.kubevirt.io/is-default-virt-class=True"), storageClass("other", newer, true, "storageclass.kubernetes.io/is-default-class=yes")}, "ga"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, order := range [][]string{tc.classes, reversed(tc.classes)} {
				objs := golden{class: tc.want, size: "6Gi", phase: "Succeeded"}.yaml()
				for _, c := range order {
					objs += c
				}
				m := mustRenderPool(t, vals(t, "{cluster: acme, storageClass: '', osImage: {builtin: {}}}"), clusterFromYAML(t, objs, "cluster/instancetypes.yaml"))
				assert.Equal(t, tc.want, render.Get(diskOf(m), "spec.storage.storageClassName"), "the resolved class is written onto the disk")
			}
		})
	}
}

func reversed(in []string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[len(in)-1-i] = s
	}
	return out
}

// With no class declared and no default class anywhere, the disk would have
// no class, and CDI fails a clone with none: refused (refusal 11), not guessed.
// Its neighbour, the same cluster with a default class, clones onto it.
func TestNoClassAnywhereIsRefused(t *testing.T) {
	values := vals(t, "{cluster: acme, storageClass: '', osImage: {builtin: {}}}")
	_, err := renderPool(t, values, clusterFromYAML(t, golden{class: "local", size: "6Gi", phase: "Succeeded"}.yaml()+storageClass("local", "2026-01-01T00:00:00Z", true)+support.CSIDriver("linstor.csi.linbit.com"), "cluster/instancetypes.yaml"))
	requireRefusal(t, err, `pool kubernetes-acme-workers: its worker disks would have no StorageClass: storageClass is "" and the cluster has no default class`, "Set storageClass to the class golden "+defaultGolden+" is on")
	m := mustRenderPool(t, values, clusterFromYAML(t, golden{class: "local", size: "6Gi", phase: "Succeeded"}.yaml()+storageClass("local", "2026-01-01T00:00:00Z", true, gaDefault)+support.CSIDriver("linstor.csi.linbit.com"), "cluster/instancetypes.yaml"))
	assert.Equal(t, "local", render.Get(diskOf(m), "spec.storage.storageClassName"))
}

// An admin moving the default after a pool cloned must not break or roll it.
func TestDefaultMovedAfterThePoolClonedChangesNothing(t *testing.T) {
	values := vals(t, "{cluster: acme, storageClass: '', osImage: {builtin: {}}}")
	goldenOnDefault := golden{size: "6Gi", phase: "Succeeded", claimClass: "replicated"}.yaml()
	linstor := support.CSIDriver("linstor.csi.linbit.com")
	defaultReplicated := storageClass("replicated", "2026-01-01T00:00:00Z", true, gaDefault) + storageClass("local", "2026-01-01T00:00:00Z", true) + linstor
	defaultLocal := storageClass("replicated", "2026-01-01T00:00:00Z", true) + storageClass("local", "2026-07-01T00:00:00Z", true, gaDefault) + linstor
	fresh := mustRenderPool(t, values, clusterFromYAML(t, goldenOnDefault+defaultReplicated, "cluster/instancetypes.yaml"))
	template := machineTemplateName(t, fresh)
	for _, ready := range []int{2, 0} {
		state := runningPool(testPoolName, template, defaultGolden, "replicated", ready)
		before := clusterFromYAML(t, goldenOnDefault+state+defaultReplicated, "cluster/instancetypes.yaml")
		after := clusterFromYAML(t, goldenOnDefault+state+defaultLocal, "cluster/instancetypes.yaml")
		mBefore := mustRenderPool(t, values, before)
		mAfter := mustRenderPool(t, values, after)
		assert.Equal(t, "replicated", render.Get(diskOf(mAfter), "spec.storage.storageClassName"), "%d ready: the pool side is frozen on its current template's class", ready)
		assert.Equal(t, mBefore.Text(), mAfter.Text(), "%d ready: same bytes, same template name: nothing rolls", ready)
		assert.Equal(t, template, machineTemplateName(t, mAfter))
	}

	// A pool whose template clones another golden (it is moving: its own values name the flavor) follows today's default.
	moving := clusterFromYAML(t, goldenOnDefault+runningPool(testPoolName, template, "talos-worker-other-v1.13.6", "replicated", 2)+defaultLocal, "cluster/instancetypes.yaml")
	_, err := renderPool(t, vals(t, "{cluster: acme, storageClass: '', talos: {schematicID: "+defaultSchematic+"}, osImage: {builtin: {}}}"), moving)
	requireRefusal(t, err, `its disks would be on StorageClass "local" (storageClass "", resolved from the cluster default class "local")`)

	// A pool that has not cloned yet follows today's default, on both sides.
	notYet := clusterFromYAML(t, golden{size: "6Gi", phase: "Succeeded"}.yaml()+defaultLocal, "cluster/instancetypes.yaml")
	assert.Equal(t, "local", render.Get(diskOf(mustRenderPool(t, values, notYet)), "spec.storage.storageClassName"))

	// A declared class against a golden whose class came from a since-moved default: its PVC holds it.
	_, err = renderPool(t, vals(t, "{cluster: acme, storageClass: replicated, osImage: {builtin: {}}}"), clusterFromYAML(t, goldenOnDefault+defaultLocal, "cluster/instancetypes.yaml"))
	require.NoError(t, err, "the golden side is frozen on its PVC")
}

// A cluster that fails to answer fails the render: never an HTTP import, never another class.
func TestLookupErrorsFailTheRender(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "cdi.kubevirt.io", Resource: "datavolumes"}, "", errors.New("RBAC says no"))
	for _, tc := range []struct {
		kind, values string
	}{
		{"DataVolume", builtinPool},
		{"PersistentVolumeClaim", "{cluster: acme, storageClass: '', osImage: {builtin: {}}}"},
		{"StorageClass", "{cluster: acme, storageClass: '', osImage: {builtin: {}}}"},
		{"StorageClass", builtinPool},
		{"VirtualMachineClusterInstancetype", "cluster: acme"},
		{"MachineDeployment", "{cluster: acme, storageClass: '', osImage: {builtin: {}}}"},
		{"KubevirtMachineTemplate", "{cluster: acme, storageClass: '', osImage: {builtin: {}}}"},
	} {
		t.Run(tc.kind+" "+tc.values, func(t *testing.T) {
			// The pool runs from a template, so the clone path reads it.
			cluster := healthyCluster(t, golden{name: "unrelated", phase: "Succeeded"}.yaml(), runningPool(testPoolName, testPoolName+"-abc123", defaultGolden, "replicated", 1))
			if tc.kind == "PersistentVolumeClaim" {
				// A golden without class makes the render read its PVC.
				cluster = clusterFromYAML(t, golden{size: "6Gi", phase: "Succeeded"}.yaml(), "cluster/instancetypes.yaml", "cluster/storageclasses.yaml")
			}
			cluster.FailWith = map[string]error{tc.kind: forbidden}
			m, err := renderPool(t, vals(t, tc.values), cluster)
			require.Error(t, err, "no render may come out of a failed lookup")
			assert.Nil(t, m)
			assert.Contains(t, err.Error(), "RBAC says no")
		})
	}
	cluster := healthyCluster(t)
	cluster.FailWith = map[string]error{"*": apierrors.NewServiceUnavailable("apiserver restarting")}
	_, err := renderPool(t, vals(t, builtinPool), cluster)
	requireRefusal(t, err, "apiserver restarting")
}

// helm template has no cluster: a builtin pool previews with its declared class
// and no guard; a live render always runs them.
func TestBuiltinPreviewWithoutACluster(t *testing.T) {
	m := mustRenderPool(t, vals(t, builtinPool), nil)
	disk := diskOf(m)
	assert.Equal(t, defaultGolden, render.Get(disk, "spec.source.pvc.name"))
	assert.Equal(t, "replicated", render.Get(disk, "spec.storage.storageClassName"))
	_, err := renderPool(t, vals(t, builtinPool), clusterFromYAML(t, "", "cluster/instancetypes.yaml"))
	requireRefusal(t, err, "is absent from cozy-public")
}

// Only what an answer depends on is asked: a declared class and a healthy
// golden never list the tenant namespace.
func TestClonePathAPICalls(t *testing.T) {
	cluster := healthyCluster(t)
	mustRenderPool(t, vals(t, builtinPool), cluster)
	assert.Equal(t, map[string]int{
		"list virtualmachineclusterinstancetypes": 1,
		"get machinedeployments":                  1,
		"get datavolumes":                         1,
		"get storageclasses":                      1,
		"list cdis":                               1,
		"get storageprofiles":                     1,
		"get cdiconfigs":                          1,
		"get csidrivers":                          1,
		"get persistentvolumeclaims":              1,
		"get persistentvolumes":                   1,
		"get configmaps":                          1,
	}, cluster.CallsByVerb(), "the catalog's published defaults, one GET; refusals 6 to 15 add the CDI list, the class's StorageProfile and CSIDriver, the CDIConfig, the golden's PVC and PV; with no CDI resource no VolumeSnapshotClass is listed")

	cluster = healthyCluster(t)
	mustRenderPool(t, vals(t, "{cluster: acme, storageClass: '', osImage: {builtin: {}}}"), cluster)
	assert.Equal(t, map[string]int{
		"list virtualmachineclusterinstancetypes": 1,
		"get machinedeployments":                  1,
		"get datavolumes":                         1,
		"list storageclasses":                     1,
		"get storageclasses":                      1,
		"list cdis":                               1,
		"get storageprofiles":                     1,
		"get cdiconfigs":                          1,
		"get csidrivers":                          1,
		"get persistentvolumeclaims":              1,
		"get persistentvolumes":                   1,
		"get configmaps":                          1,
	}, cluster.CallsByVerb(), "no list of the pool's namespace: a new pool has no MachineDeployment, so no template is read")

	cluster = healthyCluster(t, runningPool(testPoolName, testPoolName+"-abc123", defaultGolden, "replicated", 1))
	mustRenderPool(t, vals(t, "{cluster: acme, storageClass: '', osImage: {builtin: {}}}"), cluster)
	assert.Equal(t, map[string]int{
		"list virtualmachineclusterinstancetypes": 1,
		"get configmaps":               2,
		"get machinedeployments":       1,
		"get kubevirtmachinetemplates": 1,
		"get datavolumes":              1,
		"get storageclasses":           1,
		"list cdis":                    1,
		"get storageprofiles":          1,
		"get cdiconfigs":               1,
		"get csidrivers":               1,
		"get persistentvolumeclaims":   1,
		"get persistentvolumes":        1,
	}, cluster.CallsByVerb(), "a running pool: its MachineDeployment once (record and clone path share it), its template, the earlier chart's record and the catalog's published defaults, fixed GETs")
}
