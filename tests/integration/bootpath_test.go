//go:build integration

package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/report"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The pool the boot path releases, in its own tenant and workload cluster.
const (
	bootTenant    = "tenant-boot"
	bootCluster   = "boot"
	bootApp       = "boot-workers"
	bootWorkers   = 2
	bootInstaller = "registry.boot.internal/siderolabs/installer"
	bootMirror    = "https://mirror.boot.internal/v2/docker.io"
)

// testCDIBootPath runs one clone pool from the HelmRelease cozystack-api
// writes to booted workers on the platform's own controllers, in CDI's
// cluster: Flux's helm-controller installs the pool chart; Cluster API rolls
// its MachineDeployment; the Talos bootstrap provider generates each
// worker's machine config; Cluster API's KubeVirt provider builds each
// VirtualMachine from the rendered KubevirtMachineTemplate; CDI clones each
// worker's disk from the golden. Stand-ins play virt-controller's DataVolume
// step and virt-handler's VMI (the VMI only once the disks are ready, as
// KubeVirt starts it), the kubelet's Node and the CSI driver. The driver is
// held while the VMs wait, so the provider's report of a disk still cloning
// is read too. Run last in TestCDIClone: it leaves its objects.
func testCDIBootPath(t *testing.T, e *env, cdi *cdiController, storage *cdiStorage, golden string) {
	bins := bootControllerBinaries(t)
	ctx := t.Context()
	release := "kubernetes-nodes-" + bootApp
	md := poolName(release)
	schematicID, version := poolDefaults(t)

	start := time.Now()
	generated := e.startBootControllers(t, bins)
	e.createWorkloadCluster(t, bootTenant, bootCluster)
	e.capi = e.startCAPIStandIns(t)
	e.capi.playDataVolumes(cdi.sign)
	t.Logf("Cluster API, its KubeVirt provider and the Talos bootstrap provider ready beside CDI in %s", time.Since(start).Round(100*time.Millisecond))

	// What virt-controller asks before it makes a worker's disk: may the
	// VM's service account clone the golden? The tier's RBAC answers, from
	// the catalog's clone Role, which names its goldens only (the control).
	if ok, reason, err := e.capi.disks.mayClone(ctx, catalogNamespace, golden, bootTenant, "default"); err != nil || !ok {
		t.Fatalf("ServiceAccount %s/default may not clone %s/%s: %s %v", bootTenant, catalogNamespace, golden, reason, err)
	}
	if ok, _, err := e.capi.disks.mayClone(ctx, catalogNamespace, "not-a-golden", bootTenant, "default"); err != nil || ok {
		t.Fatalf("ServiceAccount %s/default may clone %s/not-a-golden (err %v): the clone check cannot fail", bootTenant, catalogNamespace, err)
	}

	storage.forgetPods(t)
	releaseDriver := storage.hold()
	defer releaseDriver()
	e.startHelmController(t)
	e.createYAML(t, cozystackValues(bootTenant, `_namespace: {host: `+bootTenant+`.example.org}`))
	released := time.Now()
	e.createYAML(t, cozystackHelmRelease(bootTenant, bootApp, fmt.Sprintf(
		"{cluster: %s, minReplicas: %d, osImage: {builtin: {}}, talos: {installerRepository: %s, registryMirrors: {docker.io: {endpoints: [%s]}}}}",
		bootCluster, bootWorkers, bootInstaller, bootMirror)))

	// 1. Released: Ready at generation 1; the MachineDeployment runs the
	// released template, at the workers Cluster API's webhook defaulted.
	waitFor(t, 2*time.Minute, "helm-controller released "+bootTenant+"/"+release, func() string {
		obj, _ := e.get(t, fleet.HelmReleaseAPI, "HelmRelease", bootTenant, release)
		ready, failed, says := report.HelmReleaseStatus(obj.Object, 1)
		if failed != "" {
			t.Fatalf("%s/%s: %s", bootTenant, release, failed)
		}
		if !ready {
			return says
		}
		return ""
	})
	m := releasedManifest(t, e, bootTenant, release)
	template := machineTemplateOf(t, m)
	deployment, ok := e.get(t, capiAPIVersion, "MachineDeployment", bootTenant, md)
	if !ok {
		t.Fatalf("the release made no MachineDeployment %s", md)
	}
	if got := report.RunningTemplate(deployment.Object); got != template {
		t.Fatalf("MachineDeployment %s/%s runs %q, want the released %s", bootTenant, md, got, template)
	}
	if n, _, _ := unstructured.NestedInt64(deployment.Object, "spec", "replicas"); n != bootWorkers {
		t.Fatalf("MachineDeployment %s/%s spec.replicas %d, want %d", bootTenant, md, n, bootWorkers)
	}
	t.Logf("released %s in %s", template, time.Since(released).Round(100*time.Millisecond))

	// 2. Held: the provider made a VM per worker, virt-controller's stand-in
	// each VM's disk; no VMI starts while CDI clones, and the provider
	// reports the disk on its KubevirtMachine as CDI reports it.
	var disks []*unstructured.Unstructured
	var held []string
	waitFor(t, 90*time.Second, "the KubeVirt provider reports each worker's disk cloning", func() string {
		disks, held = nil, nil
		kms, err := e.client(t, kmtAPIVersion, "KubevirtMachine", bootTenant).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(kms.Items) != bootWorkers {
			return fmt.Sprintf("%d KubevirtMachines", len(kms.Items))
		}
		for _, km := range kms.Items {
			name := km.GetName() + "-disk-system"
			dv, ok := e.get(t, dataVolumeVersion, "DataVolume", bootTenant, name)
			if !ok {
				return "no DataVolume " + name
			}
			phase, _, _ := unstructured.NestedString(dv.Object, "status", "phase")
			if phase == "Succeeded" {
				t.Fatalf("DataVolume %s/%s Succeeded while the CSI driver provisions nothing", bootTenant, name)
			}
			reason, message := conditionReason(&km, "VMProvisioned"), conditionField(&km, "VMProvisioned", "message")
			if (reason != "DVNotReady" && reason != "DVPending") || !strings.Contains(message, "DataVolume "+name+" ") {
				return fmt.Sprintf("KubevirtMachine %s VMProvisioned %s: %s (DataVolume %s)", km.GetName(), reason, message, phase)
			}
			disks = append(disks, dv)
			held = append(held, fmt.Sprintf("%s: %s: %s", km.GetName(), reason, message))
		}
		return ""
	})
	if vmis, err := e.dynamic.Resource(virtualMachineInstanceGVR).Namespace(bootTenant).List(ctx, metav1.ListOptions{}); err != nil || len(vmis.Items) != 0 {
		t.Fatalf("%d VMIs while their disks clone (err %v), want none", len(vmis.Items), err)
	}
	sort.Strings(held)
	t.Logf("while CDI clones, the KubeVirt provider reports:\n  %s", strings.Join(held, "\n  "))

	// 3. Cloned: each disk a CSI clone of the golden, by CDI's own
	// decision, with no pod but the prep pod that grows it to the pool's
	// 20Gi from the golden's 6Gi; no fallback recorded on the claim.
	releaseDriver()
	for _, dv := range disks {
		checkVirtControllerDataVolume(t, e, dv)
		e.expectCSIClone(t, storage, dv, golden, prepComponent)
		pvc, err := storage.client.CoreV1().PersistentVolumeClaims(bootTenant).Get(ctx, dv.GetName(), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if why, phase := pvc.Annotations[annCloneFallbackReason], pvc.Annotations[annClonePhase]; why != "" || phase == "HostClone" {
			t.Errorf("worker disk %s/%s: clone phase %q, fallback reason %q, want a CSI clone with no fallback", bootTenant, dv.GetName(), phase, why)
		}
	}

	// 4. Booted: the VMIs started after their disks were ready; every
	// Machine runs with its Node, the provider's providerID on it; the
	// MachineDeployment reads rolled out as rollout reads it.
	waitRolledOut(ctx, t, e, bootTenant, md, template, bootWorkers, nil)
	checkVirtualMachines(t, e, m, bootTenant, md)
	checkBooted(t, e, md)
	t.Logf("%d workers booted on CSI clones of %s, %s after the HelmRelease", bootWorkers, golden, time.Since(released).Round(100*time.Millisecond))

	// 5. Bootstrapped: the provider generated one machine config per worker,
	// which Talos accepts, installing the pool's installer at the golden's
	// schematic and version (the disk and the installer are one flavor),
	// with the pool's registry mirror.
	seen, problems := generated.all()
	for _, p := range problems {
		t.Error(p)
	}
	var pool []bootstrapData
	for _, d := range seen {
		if d.namespace == bootTenant {
			pool = append(pool, d)
		}
	}
	if len(pool) != bootWorkers {
		t.Fatalf("%d machine configs generated in %s, want one per worker (%d)", len(pool), bootTenant, bootWorkers)
	}
	wantInstaller := bootInstaller + "/" + schematicID + ":" + version
	wantMirrors := map[string][]string{"docker.io": {bootMirror}}
	for i, read := range checkBootstrapData(t, e, pool) {
		if read.InstallImage != wantInstaller {
			t.Errorf("machine config %s installs %q, want %s", pool[i].secret, read.InstallImage, wantInstaller)
		}
		if !reflect.DeepEqual(read.Mirrors, wantMirrors) {
			t.Errorf("machine config %s: Talos reads the mirrors %v, want the pool's %v", pool[i].secret, read.Mirrors, wantMirrors)
		}
	}
	t.Logf("%d machine configs generated by the bootstrap provider, accepted by Talos: installer %s, mirrors %v", len(pool), wantInstaller, wantMirrors)
}

// checkVirtControllerDataVolume: a worker's disk is what virt-controller
// makes from its VM's template: the template's spec, byte for byte as JSON,
// the VM its one (controller) owner, created-by its UID, and CDI allowed to
// adopt a claim of its name.
func checkVirtControllerDataVolume(t *testing.T, e *env, dv *unstructured.Unstructured) {
	t.Helper()
	owner := metav1.GetControllerOf(dv)
	if owner == nil || owner.Kind != "VirtualMachine" || len(dv.GetOwnerReferences()) != 1 {
		t.Fatalf("DataVolume %s/%s owners %v, want its VirtualMachine alone", dv.GetNamespace(), dv.GetName(), dv.GetOwnerReferences())
	}
	vm, err := e.dynamic.Resource(virtualMachineGVR).Namespace(dv.GetNamespace()).Get(t.Context(), owner.Name, metav1.GetOptions{})
	if err != nil || vm.GetUID() != owner.UID {
		t.Fatalf("DataVolume %s/%s: owner VirtualMachine %s (uid %s): %v", dv.GetNamespace(), dv.GetName(), owner.Name, owner.UID, err)
	}
	if got := dv.GetLabels()[virtCreatedByLabel]; got != string(vm.GetUID()) {
		t.Errorf("DataVolume %s/%s label %s=%q, want the VM's UID %s", dv.GetNamespace(), dv.GetName(), virtCreatedByLabel, got, vm.GetUID())
	}
	for k, v := range virtVMDataVolumeAnnotations {
		if got := dv.GetAnnotations()[k]; got != v {
			t.Errorf("DataVolume %s/%s annotation %s=%q, want %q", dv.GetNamespace(), dv.GetName(), k, got, v)
		}
	}
	templates, _, _ := unstructured.NestedSlice(vm.Object, "spec", "dataVolumeTemplates")
	for _, tpl := range templates {
		if name, _, _ := unstructured.NestedString(tpl.(map[string]any), "metadata", "name"); name == dv.GetName() {
			want, _ := json.Marshal(tpl.(map[string]any)["spec"])
			got, _ := json.Marshal(dv.Object["spec"])
			if !bytes.Equal(got, want) {
				t.Errorf("DataVolume %s/%s spec differs from its VM's template:\n got: %s\nwant: %s", dv.GetNamespace(), dv.GetName(), got, want)
			}
			return
		}
	}
	t.Errorf("VirtualMachine %s has no dataVolumeTemplates entry %s", vm.GetName(), dv.GetName())
}

// checkBooted: each Machine of the pool is Running with its Node, which is
// Ready; each VMI was created no earlier than its disk became ready.
func checkBooted(t *testing.T, e *env, md string) {
	t.Helper()
	machines, err := e.client(t, capiAPIVersion, "Machine", bootTenant).List(t.Context(), metav1.ListOptions{LabelSelector: "cluster.x-k8s.io/deployment-name=" + md})
	if err != nil {
		t.Fatal(err)
	}
	if len(machines.Items) != bootWorkers {
		t.Fatalf("%d Machines of %s, want %d", len(machines.Items), md, bootWorkers)
	}
	for _, mc := range machines.Items {
		phase, _, _ := unstructured.NestedString(mc.Object, "status", "phase")
		node, _, _ := unstructured.NestedString(mc.Object, "status", "nodeRef", "name")
		infra, _, _ := unstructured.NestedString(mc.Object, "spec", "infrastructureRef", "name")
		if phase != "Running" || node != infra {
			t.Errorf("Machine %s: phase %q, Node %q, want Running on Node %s", mc.GetName(), phase, node, infra)
		}
		if n, ok := e.get(t, "v1", "Node", "", node); !ok || condition(n, "Ready") != string(corev1.ConditionTrue) {
			t.Errorf("Node %s of Machine %s is not Ready", node, mc.GetName())
		}
		vmi, err := e.dynamic.Resource(virtualMachineInstanceGVR).Namespace(bootTenant).Get(t.Context(), infra, metav1.GetOptions{})
		if err != nil {
			t.Errorf("Machine %s: no VMI %s: %v", mc.GetName(), infra, err)
			continue
		}
		dv, _ := e.get(t, dataVolumeVersion, "DataVolume", bootTenant, infra+"-disk-system")
		readyAt := time.Time{}
		if conditionStatus(dv, "Ready") == "True" {
			readyAt, _ = time.Parse(time.RFC3339, conditionField(dv, "Ready", "lastTransitionTime"))
		}
		if created := vmi.GetCreationTimestamp().Time; readyAt.IsZero() || created.Before(readyAt) {
			t.Errorf("VMI %s created at %s, its disk %s ready at %s: want the VMI after the disk", infra, created.Format(time.RFC3339), dv.GetName(), readyAt.Format(time.RFC3339))
		}
	}
}

// releasedManifest is the manifest of the newest Helm release record of a
// release: what helm-controller applied.
func releasedManifest(t *testing.T, e *env, namespace, release string) *render.Manifest {
	t.Helper()
	var newest struct {
		Version  int    `json:"version"`
		Manifest string `json:"manifest"`
	}
	for _, text := range releaseRecords(t, e, namespace, release) {
		var r struct {
			Version  int    `json:"version"`
			Manifest string `json:"manifest"`
		}
		if err := json.Unmarshal([]byte(text), &r); err != nil {
			t.Fatalf("release record of %s/%s: %v", namespace, release, err)
		}
		if r.Version > newest.Version {
			newest = r
		}
	}
	return manifestOfText(t, newest.Manifest)
}
