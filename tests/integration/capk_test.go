//go:build integration

package integration

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cozystack/golden-worker-images/internal/render"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	cdiv1beta1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"
)

// capkModulePath is Cluster API's KubeVirt provider: tools/cluster-api-provider-kubevirt
// builds its manager at the version crdModules installs the CRDs of.
const capkModulePath = "sigs.k8s.io/cluster-api-provider-kubevirt"

// capkEnv names the manager `make cluster-api-provider-kubevirt` built.
const capkEnv = "CLUSTER_API_PROVIDER_KUBEVIRT"

var (
	dataVolumeGVR             = schema.GroupVersionResource{Group: "cdi.kubevirt.io", Version: "v1beta1", Resource: "datavolumes"}
	virtualMachineGVR         = schema.GroupVersionResource{Group: "kubevirt.io", Version: "v1", Resource: "virtualmachines"}
	virtualMachineInstanceGVR = schema.GroupVersionResource{Group: "kubevirt.io", Version: "v1", Resource: "virtualmachineinstances"}
)

// startCAPK starts the KubeVirt provider's manager built by `make
// cluster-api-provider-kubevirt` against the tier's API server (no leader
// election, its endpoints on free loopback ports, its webhook server on a
// self-signed certificate), registers its validating webhook for
// KubevirtMachineTemplates as its release does, and waits until it is ready
// and its webhook server answers TLS with that certificate.
func (e *env) startCAPK(t testing.TB, bin string) {
	t.Helper()
	certDir := filepath.Join(e.dir, "capk-certs")
	caPEM := writeServingCert(t, certDir)
	webhookPort, healthPort := freePort(t), freePort(t)
	const name = "cluster-api-provider-kubevirt"
	e.start(t, name, bin,
		"--kubeconfig="+e.kubeconfig,
		"--leader-elect=false",
		fmt.Sprintf("--webhook-port=%d", webhookPort),
		"--webhook-cert-dir="+certDir,
		fmt.Sprintf("--health-addr=127.0.0.1:%d", healthPort),
		fmt.Sprintf("--metrics-bind-addr=127.0.0.1:%d", freePort(t)),
		"--v=2",
	)
	e.registerWebhooks(t, "capk-", filepath.Join(capkModuleDir(t, e), "config", "webhook", "manifests.yaml"), webhookPort, caPEM)
	e.waitReadyz(t, name, healthPort)
	// Its readyz is a ping only: the webhook server may start later.
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	e.waitServing(t, name, func() error {
		conn, err := tls.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", webhookPort), &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
		if err == nil {
			conn.Close()
		}
		return err
	})
}

// capkModuleDir is the provider's module, at the version and hash crdModules pins.
func capkModuleDir(t testing.TB, e *env) string {
	t.Helper()
	for _, m := range crdModules {
		if m.path == capkModulePath {
			return moduleDir(t, e.dir, m.path, m.version, m.sum)
		}
	}
	t.Fatalf("crdModules pins no %s", capkModulePath)
	return ""
}

// virtualMachines plays KubeVirt for the VirtualMachines the provider
// creates, as virt-controller and virt-handler report a VM that runs (with
// playDataVolumes, only once its DataVolumes are ready): its
// VirtualMachineInstance (named after it, owned by it) Running and Ready,
// live-migratable, with the pod network's address on its first interface.
// The worker's kubelet registers a Node named after the VM (Talos takes the
// hostname KubeVirt gives the VMI) and posts Ready; its providerID is the
// provider's to set. A VM the provider deletes takes its VMI with it. The
// VMs of a MachineDeployment told never to boot get no VMI.
func (s *capiStandIns) virtualMachines(ctx context.Context) {
	vms, err := s.e.dynamic.Resource(virtualMachineGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		if ctx.Err() == nil {
			s.problem("list VirtualMachines: %v", err)
		}
		return
	}
	vmis, err := s.e.dynamic.Resource(virtualMachineInstanceGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		if ctx.Err() == nil {
			s.problem("list VirtualMachineInstances: %v", err)
		}
		return
	}
	running := map[string]bool{}
	for _, vm := range vms.Items {
		if vm.GetDeletionTimestamp() == nil {
			running[vm.GetNamespace()+"/"+vm.GetName()] = true
		}
	}
	booted := map[string]bool{}
	for _, vmi := range vmis.Items {
		key := vmi.GetNamespace() + "/" + vmi.GetName()
		booted[key] = true
		if !running[key] && vmi.GetDeletionTimestamp() == nil {
			err := s.e.dynamic.Resource(virtualMachineInstanceGVR).Namespace(vmi.GetNamespace()).Delete(ctx, vmi.GetName(), metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) && ctx.Err() == nil {
				s.problem("delete VirtualMachineInstance %s: %v", key, err)
			}
		}
	}
	machines, err := s.e.dynamic.Resource(kubevirtMachineGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		if ctx.Err() == nil {
			s.problem("list KubevirtMachines: %v", err)
		}
		return
	}
	deployment := map[string]string{}
	for _, km := range machines.Items {
		deployment[km.GetNamespace()+"/"+km.GetName()] = km.GetLabels()["cluster.x-k8s.io/deployment-name"]
	}
	s.mu.Lock()
	disks := s.disks
	s.mu.Unlock()
	if disks != nil {
		s.collectDataVolumes(ctx, vms.Items)
	}
	for _, vm := range vms.Items {
		ns, name := vm.GetNamespace(), vm.GetName()
		key := ns + "/" + name
		if !running[key] || booted[key] {
			continue
		}
		s.mu.Lock()
		never := s.neverBoots[ns+"/"+deployment[key]]
		s.mu.Unlock()
		if never {
			continue
		}
		if disks != nil && !s.dataVolumesReady(ctx, &vm) {
			continue
		}
		s.addresses++
		address := fmt.Sprintf("10.244.%d.%d", s.addresses/250, s.addresses%250+2)
		now := time.Now().UTC().Format(time.RFC3339)
		labels := map[string]any{}
		for k, v := range vm.GetLabels() {
			labels[k] = v
		}
		vmi := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
			"metadata": map[string]any{
				"name": name, "namespace": ns,
				"labels":          labels,
				"ownerReferences": []any{map[string]any{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "name": name, "uid": string(vm.GetUID()), "controller": true, "blockOwnerDeletion": true}},
			},
			"spec": map[string]any{"domain": map[string]any{"devices": map[string]any{}}, "evictionStrategy": "External"},
			"status": map[string]any{
				"phase":    "Running",
				"nodeName": "infra-node",
				"conditions": []any{
					map[string]any{"type": "Ready", "status": "True", "lastTransitionTime": now},
					map[string]any{"type": "LiveMigratable", "status": "True", "lastTransitionTime": now},
				},
				"interfaces": []any{map[string]any{"name": "default", "ipAddress": address, "ipAddresses": []any{address}}},
			},
		}}
		if _, err := s.e.dynamic.Resource(virtualMachineInstanceGVR).Namespace(ns).Create(ctx, vmi, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			if ctx.Err() == nil {
				s.problem("VirtualMachineInstance %s: %v", key, err)
			}
			continue
		}
		node := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Node",
			"metadata": map[string]any{"name": name},
		}}
		if _, err := s.e.dynamic.Resource(nodeGVR).Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			if ctx.Err() == nil {
				s.problem("Node %s: %v", name, err)
			}
			continue
		}
		s.nodeReady(ctx, name)
	}
}

// nodeReady: the kubelet posts Ready.
func (s *capiStandIns) nodeReady(ctx context.Context, name string) {
	now := time.Now().UTC().Format(time.RFC3339)
	body, _ := json.Marshal(map[string]any{"status": map[string]any{"conditions": []any{map[string]any{
		"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready status",
		"lastHeartbeatTime": now, "lastTransitionTime": now,
	}}}})
	if _, err := s.e.dynamic.Resource(nodeGVR).Patch(ctx, name, types.StrategicMergePatchType, body, metav1.PatchOptions{}, "status"); err != nil && ctx.Err() == nil {
		s.problem("Node %s Ready: %v", name, err)
	}
}

// checkVirtualMachines: every worker of the pool runs a VirtualMachine the
// provider made from the pool's rendered KubevirtMachineTemplate. Its
// dataVolumeTemplates are the rendered disks, byte for byte (as JSON), but
// for what the provider does: each renamed <KubevirtMachine>-<name> (and the
// VM's volume that names it renamed with it), and a creationTimestamp: null
// in its metadata, from Go's encoding. The provider set the worker's
// providerID on its Node.
func checkVirtualMachines(t *testing.T, e *env, m *render.Manifest, namespace, machineDeployment string) {
	t.Helper()
	ctx := t.Context()
	kmt, err := m.One(kmtKind)
	if err != nil {
		t.Fatal(err)
	}
	rendered, _, _ := unstructured.NestedSlice(kmt.Object, "spec", "template", "spec", "virtualMachineTemplate", "spec", "dataVolumeTemplates")
	if len(rendered) == 0 {
		t.Fatalf("%s renders no dataVolumeTemplates", kmt.Name())
	}
	machines, err := e.client(t, capiAPIVersion, "Machine", namespace).List(ctx, metav1.ListOptions{LabelSelector: "cluster.x-k8s.io/deployment-name=" + machineDeployment})
	if err != nil {
		t.Fatal(err)
	}
	if len(machines.Items) == 0 {
		t.Fatalf("no Machine of %s/%s", namespace, machineDeployment)
	}
	for _, mc := range machines.Items {
		infra, _, _ := unstructured.NestedString(mc.Object, "spec", "infrastructureRef", "name")
		vm, err := e.dynamic.Resource(virtualMachineGVR).Namespace(namespace).Get(ctx, infra, metav1.GetOptions{})
		if err != nil {
			t.Errorf("Machine %s: the provider made no VirtualMachine %s: %v", mc.GetName(), infra, err)
			continue
		}
		got, _, _ := unstructured.NestedSlice(vm.Object, "spec", "dataVolumeTemplates")
		want := make([]any, len(rendered))
		renamed := map[string]string{}
		for i, d := range rendered {
			dv := runtime.DeepCopyJSONValue(d).(map[string]any)
			name, _, _ := unstructured.NestedString(dv, "metadata", "name")
			renamed[name] = infra + "-" + name
			if err := unstructured.SetNestedField(dv, renamed[name], "metadata", "name"); err != nil {
				t.Fatal(err)
			}
			// The provider builds the VM as Go types: ObjectMeta encodes its
			// zero creationTimestamp as null, which the template's metadata
			// keeps (it preserves unknown fields, as KubeVirt's schema does).
			if err := unstructured.SetNestedField(dv, nil, "metadata", "creationTimestamp"); err != nil {
				t.Fatal(err)
			}
			want[i] = dv
		}
		gotJSON, _ := json.Marshal(got)
		wantJSON, _ := json.Marshal(want)
		if !bytes.Equal(gotJSON, wantJSON) {
			t.Errorf("VirtualMachine %s/%s dataVolumeTemplates differ from the rendered disks renamed <machine>-<name>:\n got: %s\nwant: %s", namespace, infra, gotJSON, wantJSON)
		}
		volumes, _, _ := unstructured.NestedSlice(vm.Object, "spec", "template", "spec", "volumes")
		for old, name := range renamed {
			var refs []string
			for _, v := range volumes {
				if dv, _, _ := unstructured.NestedString(v.(map[string]any), "dataVolume", "name"); dv != "" {
					refs = append(refs, dv)
				}
			}
			if !strings.Contains(" "+strings.Join(refs, " ")+" ", " "+name+" ") {
				t.Errorf("VirtualMachine %s/%s: no volume names DataVolume %s (renamed from %s); its dataVolume volumes: %v", namespace, infra, name, old, refs)
			}
		}
		km, _ := e.get(t, kmtAPIVersion, "KubevirtMachine", namespace, infra)
		providerID, _, _ := unstructured.NestedString(km.Object, "spec", "providerID")
		if providerID != "kubevirt://"+infra {
			t.Errorf("KubevirtMachine %s/%s providerID %q, want kubevirt://%s", namespace, infra, providerID, infra)
		}
		node, ok := e.get(t, "v1", "Node", "", infra)
		if !ok {
			t.Errorf("no Node %s", infra)
			continue
		}
		if got, _, _ := unstructured.NestedString(node.Object, "spec", "providerID"); got != providerID {
			t.Errorf("Node %s providerID %q, want %q set by the provider", infra, got, providerID)
		}
	}
	t.Logf("%d VirtualMachines of %s/%s carry the rendered disks, renamed <machine>-<name>", len(machines.Items), namespace, machineDeployment)
}

// virtDataVolumes is virt-controller's part for a VM's disks where CDI's
// controller runs: each VM's dataVolumeTemplates become DataVolumes it owns,
// created once the VM's service account may clone their source (CDI's own
// check, as real SubjectAccessReviews) and carrying the clone token
// cdi-apiserver's webhook adds for virt-controller; the VMI waits for them.
type virtDataVolumes struct {
	sign    func(sourceNamespace, sourceName, targetNamespace, targetName string) (string, error)
	client  kubernetes.Interface
	refused map[string]bool // DataVolumes not made: the VM may not clone their source
}

// virtVMDataVolumeAnnotations are what virt-controller adds to every
// DataVolume it makes from a template (pkg/storage/types GenerateDataVolumeFromTemplate):
// CDI may adopt a claim of that name that exists already.
var virtVMDataVolumeAnnotations = map[string]string{"cdi.kubevirt.io/allowClaimAdoption": "true"}

// virtCreatedByLabel names the VM (its UID) a DataVolume was made for.
const virtCreatedByLabel = "kubevirt.io/created-by"

// playDataVolumes turns the DataVolume part on; sign makes the clone token.
func (s *capiStandIns) playDataVolumes(sign func(sourceNamespace, sourceName, targetNamespace, targetName string) (string, error)) {
	client, err := kubernetes.NewForConfig(s.e.config)
	if err != nil {
		s.t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.disks = &virtDataVolumes{sign: sign, client: client, refused: map[string]bool{}}
}

// dataVolumesReady makes the VM's missing DataVolumes and says whether all
// are ready for its VMI: Succeeded, or waiting for a consumer or a populator
// (virt-controller's rule, which starts the VMI to be that consumer).
func (s *capiStandIns) dataVolumesReady(ctx context.Context, vm *unstructured.Unstructured) bool {
	templates, _, _ := unstructured.NestedSlice(vm.Object, "spec", "dataVolumeTemplates")
	ready := true
	for _, tpl := range templates {
		entry, _ := tpl.(map[string]any)
		name, _, _ := unstructured.NestedString(entry, "metadata", "name")
		dv, err := s.e.dynamic.Resource(dataVolumeGVR).Namespace(vm.GetNamespace()).Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			s.createDataVolume(ctx, vm, entry)
			ready = false
		case err != nil:
			if ctx.Err() == nil {
				s.problem("DataVolume %s/%s: %v", vm.GetNamespace(), name, err)
			}
			ready = false
		default:
			phase, _, _ := unstructured.NestedString(dv.Object, "status", "phase")
			ready = ready && (phase == "Succeeded" || phase == "WaitForFirstConsumer" || phase == "PendingPopulation")
		}
	}
	return ready
}

// createDataVolume makes one template's DataVolume as virt-controller does:
// the template's metadata and spec, its annotations plus virt-controller's,
// its labels plus the VM's UID, the VM its controller owner; a clone of
// another namespace only when CDI's CanServiceAccountClonePVC allows the
// VM's service account (default: no VM here names one), with the token.
func (s *capiStandIns) createDataVolume(ctx context.Context, vm *unstructured.Unstructured, entry map[string]any) {
	dv := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": dataVolumeVersion, "kind": "DataVolume",
		"metadata": runtime.DeepCopyJSONValue(entry["metadata"]),
		"spec":     runtime.DeepCopyJSONValue(entry["spec"]),
	}}
	ns := vm.GetNamespace()
	key := ns + "/" + dv.GetName()
	dv.SetNamespace(ns)
	unstructured.RemoveNestedField(dv.Object, "metadata", "creationTimestamp")
	labels := dv.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[virtCreatedByLabel] = string(vm.GetUID())
	dv.SetLabels(labels)
	annotations := dv.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	for k, v := range virtVMDataVolumeAnnotations {
		annotations[k] = v
	}
	yes := true
	dv.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "kubevirt.io/v1", Kind: "VirtualMachine", Name: vm.GetName(), UID: vm.GetUID(), Controller: &yes, BlockOwnerDeletion: &yes}})
	sourceNamespace, _, _ := unstructured.NestedString(dv.Object, "spec", "source", "pvc", "namespace")
	sourceName, _, _ := unstructured.NestedString(dv.Object, "spec", "source", "pvc", "name")
	if sourceName != "" && sourceNamespace != "" && sourceNamespace != ns {
		allowed, reason, err := s.disks.mayClone(ctx, sourceNamespace, sourceName, ns, "default")
		if err != nil || !allowed {
			s.mu.Lock()
			first := !s.disks.refused[key]
			s.disks.refused[key] = true
			s.mu.Unlock()
			if first && ctx.Err() == nil {
				// KubeVirt records UnauthorizedDataVolumeCreate and retries.
				s.problem("VirtualMachine %s/%s may not clone %s/%s for DataVolume %s: %s %v", ns, vm.GetName(), sourceNamespace, sourceName, dv.GetName(), reason, err)
			}
			return
		}
		token, err := s.disks.sign(sourceNamespace, sourceName, ns, dv.GetName())
		if err != nil {
			s.problem("DataVolume %s: %v", key, err)
			return
		}
		annotations[annCloneToken] = token
	}
	dv.SetAnnotations(annotations)
	if _, err := s.e.dynamic.Resource(dataVolumeGVR).Namespace(ns).Create(ctx, dv, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) && ctx.Err() == nil {
		s.problem("create DataVolume %s: %v", key, err)
	}
}

// mayClone is CDI's CanServiceAccountClonePVC, its SubjectAccessReviews
// answered by the tier's RBAC.
func (d *virtDataVolumes) mayClone(ctx context.Context, sourceNamespace, sourceName, namespace, serviceAccount string) (bool, string, error) {
	return cdiv1beta1.CanServiceAccountClonePVC(func(sar *authorizationv1.SubjectAccessReview) (*authorizationv1.SubjectAccessReview, error) {
		return d.client.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
	}, sourceNamespace, sourceName, namespace, serviceAccount)
}

// collectDataVolumes is kube-controller-manager's garbage collector for the
// DataVolumes the stand-in made: one whose VM is gone goes too.
func (s *capiStandIns) collectDataVolumes(ctx context.Context, vms []unstructured.Unstructured) {
	live := map[types.UID]bool{}
	for _, vm := range vms {
		live[vm.GetUID()] = true
	}
	dvs, err := s.e.dynamic.Resource(dataVolumeGVR).List(ctx, metav1.ListOptions{LabelSelector: virtCreatedByLabel})
	if err != nil {
		if ctx.Err() == nil {
			s.problem("list DataVolumes: %v", err)
		}
		return
	}
	for _, dv := range dvs.Items {
		owner := metav1.GetControllerOf(&dv)
		if owner == nil || owner.Kind != "VirtualMachine" || live[owner.UID] || dv.GetDeletionTimestamp() != nil {
			continue
		}
		err := s.e.dynamic.Resource(dataVolumeGVR).Namespace(dv.GetNamespace()).Delete(ctx, dv.GetName(), metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) && ctx.Err() == nil {
			s.problem("delete DataVolume %s/%s of a gone VirtualMachine: %v", dv.GetNamespace(), dv.GetName(), err)
		}
	}
}
