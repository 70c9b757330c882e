//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"helm.sh/helm/v3/pkg/release"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
)

const (
	perClassTenant  = "tenant-perclass"
	perClassCatalog = "kubernetes-worker-image-perclass"
	// A flavor no other subtest uses: its goldens and their PVCs, left behind
	// like every golden of the tier, tell the other subtests nothing.
	perClassVersion = "v1.13.4"
	rbdClass        = "ceph-rbd"
	rbdDriver       = "rbd.csi.ceph.com"
	snapshotGV      = "snapshot.storage.k8s.io/v1"
	snapshotCRDFile = "snapshot.storage.k8s.io_volumesnapshotclasses.yaml"
	snapshotCRD     = "volumesnapshotclasses.snapshot.storage.k8s.io"
)

// perClassCluster is a second class beside the fixtures' replicated
// (linstor.csi.linbit.com), and replicated's StorageProfile. No CDI controller
// runs here, so the tier writes the StorageProfile status CDI would.
const perClassCluster = `
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: ceph-rbd}
provisioner: rbd.csi.ceph.com
allowVolumeExpansion: true
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: rbd.csi.ceph.com}
spec: {attachRequired: true}
---
apiVersion: cdi.kubevirt.io/v1beta1
kind: StorageProfile
metadata: {name: replicated}
spec: {}
status: {storageClass: replicated, provisioner: linstor.csi.linbit.com, claimPropertySets: [{accessModes: [ReadWriteMany], volumeMode: Block}]}
`

// rbdSnapshotClass lets CDI snapshot-clone on ceph-rbd.
var rbdSnapshotClass = support.SnapshotClass(rbdClass, rbdDriver)

// cdiState is the CDI resource (spec.cloneStrategyOverride when override is
// set) and ceph-rbd's StorageProfile with the status CDI writes: its
// cloneStrategy when strategy is set, and the volume mode a disk gets there.
func cdiState(override, strategy, volumeMode string) string {
	// imagePullPolicy keeps spec non-empty: server-side apply prunes a map it
	// emptied to null, which the CRD refuses for the required spec.
	cdiSpec, profileStrategy := "imagePullPolicy: IfNotPresent", ""
	if override != "" {
		cdiSpec += ", cloneStrategyOverride: " + override
	}
	if strategy != "" {
		profileStrategy = ", cloneStrategy: " + strategy
	}
	return fmt.Sprintf(`
---
apiVersion: cdi.kubevirt.io/v1beta1
kind: CDI
metadata: {name: cdi}
spec: {%[1]s}
---
apiVersion: cdi.kubevirt.io/v1beta1
kind: StorageProfile
metadata: {name: %[3]s}
spec: {}
status: {storageClass: %[3]s, provisioner: %[4]s, claimPropertySets: [{accessModes: [ReadWriteMany], volumeMode: %[5]s}]%[2]s}
`, cdiSpec, profileStrategy, rbdClass, rbdDriver, volumeMode)
}

// testPerClassAndFallbacks runs docs/design.md "One flavor on several StorageClasses:
// per-class goldens" and "Every host-assisted fallback that can be known at
// render time is refused" against the real API server and the controller-gen
// CDI, StorageProfile and VolumeSnapshotClass CRDs: every object the chart
// judges is read by Helm's lookup through a real client. It changes
// cluster-wide state other pools' renders read (the CDI resource, the
// StorageProfiles, the VolumeSnapshotClasses, the snapshot API itself) and
// puts all of it back when it ends, so it may run in any order.
func testPerClassAndFallbacks(t *testing.T, e *env) {
	schematicID, _ := poolDefaults(t)
	plain := support.GoldenName(schematicID, perClassVersion)
	perClass := plain + "--" + rbdClass // docs/design.md: <golden>--<class>
	const plainRelease, rbdRelease, fallbackRelease = "kubernetes-nodes-acme-plain", "kubernetes-nodes-acme-rbd", "kubernetes-nodes-acme-fallback"
	e.createNamespace(t, catalogNamespace)
	e.createNamespace(t, perClassTenant)

	state := e.applyYAML(t, perClassCluster+support.SnapshotClass("linstor", "linstor.csi.linbit.com")+rbdSnapshotClass+cdiState("", "", "Block"))
	t.Cleanup(func() { e.remove(t, state...) })

	pool := func(class string) map[string]interface{} {
		return map[string]interface{}{"cluster": poolCluster, "storageClass": class,
			"osImage": map[string]interface{}{"builtin": map[string]interface{}{"version": perClassVersion}}}
	}
	entry := map[string]interface{}{"schematicID": schematicID, "version": perClassVersion}
	catalog := func(kv ...interface{}) map[string]interface{} {
		return map[string]interface{}{"images": []interface{}{withValues(entry, kv...)}}
	}
	valid := func(t *testing.T, what string, m *render.Manifest, namespace string) {
		t.Helper()
		_, problems := e.dryRunApply(t, m, namespace)
		for _, p := range problems {
			t.Errorf("%s: %s", what, p)
		}
	}
	// dryRunRBD is `helm install --dry-run=server` of a new pool on ceph-rbd
	// with the given values, with a new Helm configuration, so .Capabilities is
	// discovery's of now. A pool that renders must also pass strict server-side
	// dry-run apply; a refused one must say every want.
	dryRunRBD := func(t *testing.T, values map[string]interface{}, what string, wants ...string) *release.Release {
		t.Helper()
		rel, err := e.helm(t, perClassTenant).dryRunInstall(fallbackRelease, render.PoolChart, values)
		switch {
		case len(wants) == 0 && err != nil:
			t.Errorf("%s: the pool is refused, want it to render: %v", what, err)
		case len(wants) == 0:
			valid(t, what, manifestOf(t, rel), perClassTenant)
		case err == nil:
			t.Errorf("%s: the pool renders, want it refused saying %q", what, wants)
		case containsAll(err.Error(), wants):
			t.Logf("%s: refused as it should be: %v", what, err)
		default:
			t.Errorf("%s: the refusal does not say all of %q:\n%v", what, wants, err)
		}
		return rel
	}
	renderRBD := func(t *testing.T, what string, wants ...string) *release.Release {
		t.Helper()
		return dryRunRBD(t, pool(rbdClass), what, wants...)
	}

	if !t.Run("PerClassGolden", func(t *testing.T) {
		cat := e.helm(t, catalogNamespace)
		cat.mustInstall(perClassCatalog, render.CatalogChart, catalog())
		t.Cleanup(func() {
			// The clone Role's name is fixed: the next catalog release needs it gone.
			e.uninstallCatalog(t, cat, perClassCatalog)
			e.waitGone(t, []objectRef{{"rbac.authorization.k8s.io/v1", "Role", catalogNamespace, "kubernetes-worker-image-clone"}})
		})
		e.setPhase(t, catalogNamespace, plain, "Succeeded")

		pools := e.helm(t, perClassTenant)
		before := pools.mustInstall(plainRelease, render.PoolChart, pool("replicated"))
		t.Cleanup(func() { pools.mustUninstall(plainRelease) })
		valid(t, "pool on replicated", manifestOf(t, before), perClassTenant)

		// Before the per-class golden exists, the class mismatch names the fix.
		renderRBD(t, "ceph-rbd pool, no per-class golden yet",
			`its disks would be on StorageClass "ceph-rbd"`, fmt.Sprintf(`but golden %s is on "replicated"`, plain),
			fmt.Sprintf(`add "ceph-rbd" to the additionalStorageClasses of the kubernetes-worker-image catalog entry {schematicID: %s, version: %s} (it then imports golden %s on that class)`, schematicID, perClassVersion, perClass))

		plainDV, _ := e.get(t, dataVolumeVersion, "DataVolume", catalogNamespace, plain)
		cm := manifestOf(t, cat.mustUpgrade(perClassCatalog, render.CatalogChart, catalog("additionalStorageClasses", []interface{}{rbdClass})))
		valid(t, "catalog with additionalStorageClasses", cm, catalogNamespace)
		dv, ok := e.get(t, dataVolumeVersion, "DataVolume", catalogNamespace, perClass)
		if !ok {
			t.Fatalf("the per-class golden %s/%s was not created", catalogNamespace, perClass)
		}
		if got := fmt.Sprint(render.Get(dv.Object, "spec.storage.storageClassName")); got != rbdClass {
			t.Errorf("per-class golden %s is on class %q, want %q", perClass, got, rbdClass)
		}
		for _, path := range []string{"spec.source", "spec.storage.resources", "metadata.annotations"} {
			if got, want := render.Get(dv.Object, path), render.Get(plainDV.Object, path); !equality.Semantic.DeepEqual(got, want) {
				t.Errorf("per-class golden %s: %s is %v, the plain golden's is %v", perClass, path, got, want)
			}
		}
		if after, _ := e.get(t, dataVolumeVersion, "DataVolume", catalogNamespace, plain); after.GetUID() != plainDV.GetUID() || after.GetResourceVersion() != plainDV.GetResourceVersion() {
			t.Errorf("adding a per-class golden changed the plain golden %s (resourceVersion %s -> %s)", plain, plainDV.GetResourceVersion(), after.GetResourceVersion())
		}
		role, _ := e.get(t, "rbac.authorization.k8s.io/v1", "Role", catalogNamespace, "kubernetes-worker-image-clone")
		if names, _ := render.Get(role.Object, "rules.0.resourceNames").([]interface{}); !slices.Contains(names, interface{}(plain)) || !slices.Contains(names, interface{}(perClass)) {
			t.Errorf("the clone Role's resourceNames %v do not name both goldens %s and %s", names, plain, perClass)
		}
		e.setPhase(t, catalogNamespace, perClass, "Succeeded")
		// CDI has imported both: their PVCs, block volumes as the StorageProfiles
		// say, bound with the capacity the PV controller writes.
		for name, class := range map[string]string{plain: "replicated", perClass: rbdClass} {
			e.applyYAML(t, fmt.Sprintf(`
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: %s, namespace: %s}
spec: {storageClassName: %s, volumeMode: Block, accessModes: [ReadWriteMany], resources: {requests: {storage: 6Gi}}}
`, name, catalogNamespace, class))
			e.bindClaim(t, catalogNamespace, name, "6Gi")
		}

		// The replicated pool keeps the plain golden, byte for byte.
		after := pools.mustUpgrade(plainRelease, render.PoolChart, pool("replicated"))
		if after.Manifest != before.Manifest {
			t.Errorf("adding a per-class golden changed the replicated pool's manifest:\nbefore:\n%s\nafter:\n%s", before.Manifest, after.Manifest)
		}
		checkDisk(t, e, perClassTenant, manifestOf(t, after), plain, "replicated")

		rbd := manifestOf(t, pools.mustInstall(rbdRelease, render.PoolChart, pool(rbdClass)))
		t.Cleanup(func() { pools.mustUninstall(rbdRelease) })
		valid(t, "pool on ceph-rbd", rbd, perClassTenant)
		checkDisk(t, e, perClassTenant, rbd, perClass, rbdClass)
	}) {
		return
	}

	// Each fallback refusal, then the same cluster with the object fixed. A
	// refusal also says which pool, which golden and that CDI would copy over
	// the pod network.
	rbdSnapshots := objectRef{snapshotGV, "VolumeSnapshotClass", "", rbdClass}
	for _, c := range []struct {
		name    string
		refused string      // applied, then
		remove  []objectRef // deleted
		says    []string
		fixed   string // applied after the refusal
	}{
		{"Refusal7CloneStrategyOverride", cdiState("copy", "", "Block"), nil,
			[]string{`with the strategy "copy" (spec.cloneStrategyOverride of the CDI resource cdi)`, "remove spec.cloneStrategyOverride from the CDI resource cdi"},
			cdiState("csi-clone", "", "Block")},
		{"Refusal7StorageProfileStrategy", cdiState("", "copy", "Block"), nil,
			[]string{`with the strategy "copy" (status.cloneStrategy of the StorageProfile ceph-rbd)`, "set spec.cloneStrategy of the StorageProfile ceph-rbd to csi-clone"},
			cdiState("", "csi-clone", "Block")},
		// replicated's VolumeSnapshotClass stays: another driver's does not count.
		{"Refusal8NoSnapshotClassForDriver", cdiState("", "snapshot", "Block"), []objectRef{rbdSnapshots},
			[]string{`with the strategy "snapshot" (status.cloneStrategy of the StorageProfile ceph-rbd)`, "no VolumeSnapshotClass has driver rbd.csi.ceph.com", "Create a VolumeSnapshotClass with driver: rbd.csi.ceph.com"},
			rbdSnapshotClass},
		{"Refusal8DefaultStrategyNoSnapshotClass", cdiState("", "", "Block"), []objectRef{rbdSnapshots},
			[]string{`with the strategy "snapshot" (CDI's default: the CDI resource cdi sets no spec.cloneStrategyOverride and the StorageProfile ceph-rbd states no status.cloneStrategy)`, "no VolumeSnapshotClass has driver rbd.csi.ceph.com"},
			rbdSnapshotClass},
		{"Refusal9VolumeMode", cdiState("", "", "Filesystem"), nil,
			[]string{fmt.Sprintf(`golden %[1]s is a Block volume (spec.volumeMode of its PersistentVolumeClaim cozy-public/%[1]s, unset meaning Filesystem) but a worker disk on StorageClass "ceph-rbd" gets Filesystem (status.claimPropertySets[0] of the StorageProfile ceph-rbd, unset meaning Filesystem)`, perClass), "Set the StorageProfile ceph-rbd's spec.claimPropertySets to volumeMode Block"},
			cdiState("", "", "Block")},
	} {
		t.Run(c.name, func(t *testing.T) {
			e.applyYAML(t, c.refused)
			e.remove(t, c.remove...)
			renderRBD(t, "refused", append([]string{"pool " + poolName(fallbackRelease) + ": ", perClass, "host-assisted copy"}, c.says...)...)
			e.applyYAML(t, c.fixed)
			renderRBD(t, "fixed")
		})
	}

	t.Run("NoSnapshotAPI", func(t *testing.T) { testNoSnapshotAPI(t, e, renderRBD, fallbackRelease, pool(rbdClass)) })

	// What CDI's DataVolume controller does before it plans a clone, on the
	// real CDIConfig and StorageProfile CRDs: a 6Gi disk on a class that cannot
	// expand clones the 6Gi golden as a Block disk, but as a Filesystem disk
	// CDI grows its request by the CDIConfig's overhead past the golden's
	// capacity (refusal 6); a StorageProfile that gives no access modes fails
	// every disk (refusal 10).
	t.Run("CDIRequestAndAccessModes", func(t *testing.T) {
		sixGi := withValues(pool(rbdClass), "diskSize", "6Gi")
		dryRun := func(t *testing.T, what string, wants ...string) {
			t.Helper()
			dryRunRBD(t, sixGi, what, wants...)
		}
		expandable := func(allow bool) {
			patch := []byte(fmt.Sprintf(`{"allowVolumeExpansion":%v}`, allow))
			if _, err := e.client(t, "storage.k8s.io/v1", "StorageClass", "").Patch(context.Background(), rbdClass, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				t.Fatalf("patch StorageClass %s: %v", rbdClass, err)
			}
		}
		expandable(false)
		config := e.applyYAML(t, support.CDIConfig("0.06"))
		t.Cleanup(func() {
			expandable(true)
			e.remove(t, config...)
			e.applyYAML(t, cdiState("", "", "Block"))
		})

		e.applyYAML(t, cdiState("", "csi-clone", "Filesystem"))
		dryRun(t, "a Filesystem disk grown by the overhead",
			"CDI would request 6828998001 bytes (diskSize 6Gi aligned up to 1 MiB and grown by the filesystem overhead 0.06 of the CDIConfig config, as CDI does for a Filesystem disk) for each worker disk, more than the capacity 6Gi of golden "+perClass,
			`StorageClass "ceph-rbd" (storageClass) does not set allowVolumeExpansion: true`)
		e.applyYAML(t, cdiState("", "csi-clone", "Block"))
		dryRun(t, "a Block disk of the golden's capacity")

		e.applyYAML(t, fmt.Sprintf("apiVersion: cdi.kubevirt.io/v1beta1\nkind: StorageProfile\nmetadata: {name: %s}\nspec: {}\nstatus: {storageClass: %s, provisioner: example.com/unknown, cloneStrategy: csi-clone, claimPropertySets: []}\n", rbdClass, rbdClass))
		dryRun(t, "a StorageProfile that gives no access modes",
			"the StorageProfile ceph-rbd states no status.claimPropertySets[0].accessModes, and a worker disk states none, so CDI fails each worker disk", "Set spec.claimPropertySets of the StorageProfile ceph-rbd")
		e.applyYAML(t, cdiState("", "csi-clone", "Block"))
		dryRun(t, "its claim property sets restored")
	})
}

// testNoSnapshotAPI: a cluster that does not serve snapshot.storage.k8s.io.
// The tier shares one API server, so the VolumeSnapshotClass CRD is deleted
// (discovery drops the group once it is gone) and installed again when the
// test ends, before anything else runs. Helm's own install (.Capabilities from
// discovery) and the CLI's live render (render.Live.APIVersions) both get
// refusal 8's words, not a lookup error; with csi-clone both render.
func testNoSnapshotAPI(t *testing.T, e *env, renderRBD func(*testing.T, string, ...string) *release.Release, releaseName string, values map[string]interface{}) {
	e.applyYAML(t, cdiState("", "snapshot", "Block"))
	if err := e.dynamic.Resource(crdGVR).Delete(context.Background(), snapshotCRD, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete CRD %s: %v", snapshotCRD, err)
	}
	t.Cleanup(func() {
		e.waitCRDGone(t, snapshotCRD)
		e.installCRDFile(t, snapshotCRDFile)
		e.waitServed(t, snapshotGV, true)
	})
	e.waitServed(t, snapshotGV, false)

	raw, err := json.Marshal(values)
	if err != nil {
		t.Fatal(err)
	}
	valuesFile := filepath.Join(t.TempDir(), "pool.yaml")
	writeFile(t, valuesFile, string(raw)) // JSON is YAML
	// plan is `workerimage plan -kubeconfig`: exit 0 when the pool renders, 1 when refused.
	plan := func() (refusal, machineTemplate string) {
		t.Helper()
		out, _, code := e.workerimage(t, "plan", "-values", valuesFile, "-kubeconfig", e.kubeconfig, "-release", releaseName, "-namespace", perClassTenant, "-o", "json")
		var r struct{ Result, Refusal, MachineTemplate string }
		err := json.Unmarshal([]byte(out), &r)
		if renders := r.Result == "renders"; err != nil || (renders && code != 0) || (!renders && code != 1) {
			t.Fatalf("workerimage plan -kubeconfig: exit %d, %v:\n%s", code, err, out)
		}
		return r.Refusal, r.MachineTemplate
	}

	says := []string{
		`with the strategy "snapshot" (status.cloneStrategy of the StorageProfile ceph-rbd), but the cluster does not serve snapshot.storage.k8s.io/v1, so there is no VolumeSnapshotClass at all`,
		"Create a VolumeSnapshotClass with driver: rbd.csi.ceph.com (installing the snapshot CRDs and controller if the cluster lacks them)",
	}
	renderRBD(t, "helm, no snapshot API", says...)
	if refusal, _ := plan(); !containsAll(refusal, says) {
		t.Errorf("workerimage plan -kubeconfig on a cluster without the snapshot API: refusal %q, want refusal 8 saying %q", refusal, says)
	}

	e.applyYAML(t, cdiState("", "csi-clone", "Block"))
	rel := renderRBD(t, "helm, no snapshot API, csi-clone")
	if refusal, kmt := plan(); refusal != "" {
		t.Errorf("workerimage plan -kubeconfig with csi-clone and no snapshot API: refused (%s), want it to render", refusal)
	} else if rel != nil && kmt != machineTemplateOf(t, manifestOf(t, rel)) {
		t.Errorf("workerimage plan names the template %s, Helm's render %s", kmt, machineTemplateOf(t, manifestOf(t, rel)))
	}
}

// checkDisk: the pool's KubevirtMachineTemplate on the server clones golden
// onto class, and its worker disk names that golden in its annotation. It
// returns the template.
func checkDisk(t *testing.T, e *env, namespace string, m *render.Manifest, golden, class string) *unstructured.Unstructured {
	t.Helper()
	name := machineTemplateOf(t, m)
	kmt, ok := e.get(t, kmtAPIVersion, kmtKind, namespace, name)
	if !ok {
		t.Fatalf("%s %s/%s was not created", kmtKind, namespace, name)
	}
	disk := "spec.template.spec.virtualMachineTemplate.spec.dataVolumeTemplates.0."
	annotations, _ := render.Get(kmt.Object, disk+"metadata.annotations").(map[string]interface{})
	for _, c := range []struct {
		what      string
		got, want interface{}
	}{
		{"source.pvc.namespace", render.Get(kmt.Object, disk+"spec.source.pvc.namespace"), catalogNamespace},
		{"source.pvc.name", render.Get(kmt.Object, disk+"spec.source.pvc.name"), golden},
		{"storage.storageClassName", render.Get(kmt.Object, disk+"spec.storage.storageClassName"), class},
		{"golden annotation", annotations["kubernetes-worker-image.cozystack.io/golden"], golden},
	} {
		if c.got != c.want {
			t.Errorf("%s %s/%s on the server: the worker disk's %s is %v, want %v", kmtKind, namespace, name, c.what, c.got, c.want)
		}
	}
	return kmt
}

// applyYAML applies every object of a multi-document YAML for real (server-side
// apply as the tier's field manager, so applying it again without a field
// removes the field) and returns what it applied.
func (e *env) applyYAML(t *testing.T, text string) []objectRef {
	t.Helper()
	objs, err := render.ParseObjects([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	var refs []objectRef
	for _, obj := range objs {
		if err := e.serverSideApply(t, obj, obj.GetNamespace(), false); err != nil {
			t.Fatalf("apply %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
		// CDI v1.65.0 serves a StorageProfile's status as a subresource (its
		// controller writes it there): the main resource drops it.
		if _, hasStatus := obj.Object["status"]; hasStatus && obj.GetKind() == "StorageProfile" {
			if err := e.applyStatus(t, obj); err != nil {
				t.Fatalf("apply the status of %s %s: %v", obj.GetKind(), obj.GetName(), err)
			}
		}
		refs = append(refs, objectRef{obj.GetAPIVersion(), obj.GetKind(), obj.GetNamespace(), obj.GetName()})
	}
	return refs
}

// remove deletes objects; one already gone is fine.
func (e *env) remove(t *testing.T, refs ...objectRef) {
	t.Helper()
	for _, r := range refs {
		err := e.client(t, r.apiVersion, r.kind, r.namespace).Delete(context.Background(), r.name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete %s: %v", r, err)
		}
	}
}

// waitServed polls discovery until a group version is served, or is not: both
// the group list Helm builds .Capabilities from and the group version's own
// resource list the CLI and lookup ask.
func (e *env) waitServed(t *testing.T, groupVersion string, served bool) {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(e.config)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		groups, gerr := dc.ServerGroups()
		_, rerr := dc.ServerResourcesForGroupVersion(groupVersion)
		if gerr != nil || (rerr != nil && !apierrors.IsNotFound(rerr)) {
			t.Fatalf("discovery: %v %v", gerr, rerr)
		}
		listed := false
		for _, g := range groups.Groups {
			for _, v := range g.Versions {
				listed = listed || v.GroupVersion == groupVersion
			}
		}
		if listed == served && (rerr == nil) == served {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("discovery still says %s served=%v (group list %v, resources %v)", groupVersion, !served, listed, rerr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitCRDGone polls until a deleted CRD (and with it every object of its kind) is gone.
func (e *env) waitCRDGone(t *testing.T, name string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := e.dynamic.Resource(crdGVR).Get(context.Background(), name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("CRD %s still there: %v", name, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
