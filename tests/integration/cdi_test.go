//go:build integration

package integration

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
)

const (
	cdiTenant  = "tenant-cdi"
	cdiCatalog = "kubernetes-worker-image"
	// cdiNamespace is where CDI's controller elects its leader: the namespace
	// of its service account, and without one (as here) `cdi`.
	cdiNamespace = "cdi"
	// What CDI's clone populator writes on the worker disk's PVC.
	annCloneType  = "cdi.kubevirt.io/cloneType"
	annClonePhase = "cdi.kubevirt.io/clonePhase"
	annCloneToken = "cdi.kubevirt.io/storage.clone.token"
	// CDI adopts a PVC so annotated as its DataVolume's, already populated.
	annPopulatedFor = "cdi.kubevirt.io/storage.populatedFor"
	// The golden's size as the catalog requests it.
	goldenSize = "6Gi"
)

// cdiController is CDI's controller running against the tier, and the signer
// of the clone tokens cdi-apiserver's webhook would add.
type cdiController struct {
	tokenBin, key string
}

// TestCDIClone runs CDI's own controller (v1.64.0, `make cdi`) against its own
// API server, with CDI's resource as Cozystack's kubevirt-cdi chart writes it
// and the CDIConfig and StorageProfiles CDI computes itself. The stand-ins
// are only what a CSI driver, its external-provisioner and
// kube-controller-manager's PV controller do (cdiStorage), and cdi-apiserver's
// clone-token webhook (the token signed with CDI's own pkg/token). A worker
// disk, created as KubeVirt creates it from the pool's rendered template, is
// cloned by CDI's own decision as a CSI clone of the golden; then the chart's
// refusals that exist because CDI would not CSI-clone are each shown against
// the controller; last, a pool goes from its HelmRelease to booted workers
// with Cluster API, its KubeVirt and Talos providers and helm-controller
// beside CDI (BootPath, when `make integration` gives their managers). Its
// own API server: CDI reconciles every DataVolume and
// StorageClass in a cluster, and the other tiers hand-write what CDI would
// (golden phases, StorageProfile statuses), which CDI would overwrite.
func TestCDIClone(t *testing.T) {
	bin := os.Getenv("CDI_CONTROLLER")
	if bin == "" {
		t.Skip("CDI_CONTROLLER is not set: `make cdi` builds CDI's controller, `make integration` runs it")
	}
	tokenBin := filepath.Join(filepath.Dir(bin), "cdi-clone-token")
	for _, b := range []string{bin, tokenBin} {
		if _, err := os.Stat(b); err != nil {
			t.Fatalf("%v; run `make cdi`", err)
		}
	}
	start := time.Now()
	e := startEnv(t)
	e.installCRDs(t)
	for _, f := range cdiControllerCRDFiles {
		e.installCRDFile(t, f)
	}
	e.createClusterFixtures(t)
	// ceph-rbd beside LINSTOR's classes: a Cozystack cluster may have both.
	e.createYAML(t, "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: "+rbdClass+"}\nprovisioner: "+rbdDriver+"\nallowVolumeExpansion: true\n"+support.CSIDriver(rbdDriver))
	for _, ns := range []string{cdiNamespace, catalogNamespace, cdiTenant} {
		e.createNamespace(t, ns)
	}
	// Cozystack's packages/system/kubevirt-cdi CDI resource: the clone
	// strategy is set here, for every class, and StorageProfiles are left to CDI.
	e.createYAML(t, `apiVersion: cdi.kubevirt.io/v1beta1
kind: CDI
metadata: {name: cdi}
spec:
  cloneStrategyOverride: csi-clone
  config:
    featureGates: [HonorWaitForFirstConsumer, ExpandDisks]
  imagePullPolicy: IfNotPresent
`)
	storage := e.startCDIStorage(t)
	cdi := e.startCDI(t, bin, tokenBin)
	t.Logf("kube-apiserver and CDI's controller ready in %s", time.Since(start).Round(time.Second))

	t.Run("StorageProfiles", func(t *testing.T) { testCDIStorageProfiles(t, e) })
	golden := e.cdiGolden(t, storage)
	t.Run("WorkerDiskCSIClone", func(t *testing.T) { testCDIWorkerDiskCSIClone(t, e, cdi, storage, golden) })
	t.Run("Refusals", func(t *testing.T) { testCDIRefusals(t, e, cdi, storage, golden) })
	// A pool from its HelmRelease to booted workers on these clones, with
	// Cluster API, its KubeVirt and Talos providers and helm-controller.
	t.Run("BootPath", func(t *testing.T) { testCDIBootPath(t, e, cdi, storage, golden) })
}

// startCDI starts CDI's controller. It reads its token key pair from the
// fixed /var/run/cdi/token/keys: it runs in its own user and mount namespace
// (unshare) with the tier's folder bound over /run there, so nothing outside
// the test sees the keys. It waits until the controller has written CDIConfig
// "config" and a StorageProfile for every StorageClass.
func (e *env) startCDI(t *testing.T, bin, tokenBin string) *cdiController {
	t.Helper()
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Fatalf("CDI's controller reads its keys from a fixed path, which the tier binds in a private mount namespace: %v", err)
	}
	run := filepath.Join(e.dir, "cdi-run")
	keys := filepath.Join(run, "cdi", "token", "keys")
	if err := os.MkdirAll(keys, 0o700); err != nil {
		t.Fatal(err)
	}
	writeRSAKeyPair(t, filepath.Join(keys, "id_rsa"), filepath.Join(keys, "id_rsa.pub"))
	e.cdiUploadSigners(t, run)
	// Image names it requires; no pod it names runs here.
	environ := []string{"IMPORTER_IMAGE=tier.invalid/importer", "CLONER_IMAGE=tier.invalid/cloner",
		"UPLOADSERVER_IMAGE=tier.invalid/uploadserver", "OVIRT_POPULATOR_IMAGE=tier.invalid/ovirt-populator",
		"UPLOADPROXY_SERVICE=cdi-uploadproxy"}
	e.startWith(t, "cdi-controller", environ, unshare, "--user", "--map-root-user", "--mount", "--",
		"sh", "-c", `mount --bind "$0" /run && exec "$@"`, run, bin, "-kubeconfig", e.kubeconfig, "-v", "3")

	classes, err := e.client(t, "storage.k8s.io/v1", "StorageClass", "").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		missing := []string{}
		if _, ok := e.get(t, dataVolumeVersion, "CDIConfig", "", "config"); !ok {
			missing = append(missing, "CDIConfig config")
		}
		for _, sc := range classes.Items {
			if p, ok := e.get(t, dataVolumeVersion, "StorageProfile", "", sc.GetName()); !ok || render.Get(p.Object, "status.provisioner") == nil {
				missing = append(missing, "StorageProfile "+sc.GetName())
			}
		}
		if len(missing) == 0 {
			break
		}
		if p := e.process("cdi-controller"); p != nil {
			select {
			case <-p.done:
				t.Fatalf("CDI's controller exited: %v (its log: %s)", p.err, p.log)
			default:
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("CDI's controller has not written %s after 2m", strings.Join(missing, ", "))
		}
		time.Sleep(200 * time.Millisecond)
	}
	return &cdiController{tokenBin: tokenBin, key: filepath.Join(keys, "id_rsa")}
}

// cdiUploadSigners writes what cdi-operator gives CDI's controller for a
// host-assisted clone's upload server and clone source pods: the two signer
// key pairs, mounted at /var/run/certs (under the folder bound over /run),
// and their CA bundles, ConfigMaps in CDI's namespace. Without them the
// controller decides a host-assisted copy but creates none of its pods.
func (e *env) cdiUploadSigners(t *testing.T, run string) {
	t.Helper()
	for _, signer := range []string{"cdi-uploadserver-signer", "cdi-uploadserver-client-signer"} {
		key, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		template := &x509.Certificate{
			SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: signer},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
			IsCA: true, BasicConstraintsValid: true,
			KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		}
		der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
		if err != nil {
			t.Fatal(err)
		}
		certPEM := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
		dir := filepath.Join(run, "certs", signer)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, "tls.crt"), certPEM)
		writeFile(t, filepath.Join(dir, "tls.key"), string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})))
		cm := &unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]interface{}{"name": signer + "-bundle", "namespace": cdiNamespace},
			"data":     map[string]interface{}{"ca-bundle.crt": certPEM},
		}}
		e.create(t, cm)
	}
}

// cloneToken is the token cdi-apiserver's webhook adds to a DataVolume that
// clones a PVC of another namespace, for a user allowed to.
func (c *cdiController) cloneToken(t *testing.T, sourceNamespace, sourceName, targetNamespace, targetName string) string {
	t.Helper()
	token, err := c.sign(sourceNamespace, sourceName, targetNamespace, targetName)
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// sign is cloneToken for a caller that cannot stop the test (a stand-in's goroutine).
func (c *cdiController) sign(sourceNamespace, sourceName, targetNamespace, targetName string) (string, error) {
	out, err := exec.Command(c.tokenBin, "-key", c.key, "-source-namespace", sourceNamespace, "-source-name", sourceName,
		"-target-namespace", targetNamespace, "-target-name", targetName).Output()
	if err != nil {
		return "", fmt.Errorf("cdi-clone-token: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// testCDIStorageProfiles: the StorageProfiles CDI computed from the
// StorageClasses and CSIDrivers. What the chart reads from them: LINSTOR's
// first claim property set is ReadWriteMany Block (CDI's capabilities table),
// so a worker disk and a golden on it are Block volumes. The computed clone
// strategies are logged: Cozystack's CDI resource overrides them all.
func testCDIStorageProfiles(t *testing.T, e *env) {
	for _, class := range []string{"replicated", "local", rbdClass, "fixed"} {
		p, ok := e.get(t, dataVolumeVersion, "StorageProfile", "", class)
		if !ok {
			t.Fatalf("CDI wrote no StorageProfile %s", class)
		}
		t.Logf("StorageProfile %s: provisioner %v, cloneStrategy %v, claimPropertySets %v", class,
			render.Get(p.Object, "status.provisioner"), render.Get(p.Object, "status.cloneStrategy"), render.Get(p.Object, "status.claimPropertySets"))
	}
	p, _ := e.get(t, dataVolumeVersion, "StorageProfile", "", "replicated")
	if got := fmt.Sprint(render.Get(p.Object, "status.claimPropertySets.0.accessModes.0"), "/", render.Get(p.Object, "status.claimPropertySets.0.volumeMode")); got != "ReadWriteMany/Block" {
		t.Errorf("StorageProfile replicated (linstor.csi.linbit.com): first claim property set %s, want ReadWriteMany/Block", got)
	}
}

// cdiGolden creates the golden as the catalog installs it, already imported:
// its PVC (bound by the storage stand-in, populated, marked for its
// DataVolume, which CDI then adopts instead of importing over HTTP through an
// importer pod) and the catalog's release. It waits for CDI to mark the
// golden's DataVolume Succeeded.
func (e *env) cdiGolden(t *testing.T, storage *cdiStorage) string {
	t.Helper()
	schematicID, version := poolDefaults(t)
	golden := support.GoldenName(schematicID, version)
	e.createYAML(t, fmt.Sprintf(`apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: %s
  namespace: %s
  annotations: {%s: %s}
spec: {storageClassName: replicated, volumeMode: Block, accessModes: [ReadWriteMany], resources: {requests: {storage: %s}}}
`, golden, catalogNamespace, annPopulatedFor, golden, goldenSize))
	storage.waitBound(t, catalogNamespace, golden)
	e.helm(t, catalogNamespace).mustInstall(cdiCatalog, render.CatalogChart, map[string]interface{}{
		"images": []interface{}{map[string]interface{}{"schematicID": schematicID, "version": version}}})
	e.waitDataVolume(t, catalogNamespace, golden, "Succeeded")
	return golden
}

// waitDataVolume polls until a DataVolume is in phase, and fails if it is in Failed.
func (e *env) waitDataVolume(t *testing.T, namespace, name, phase string) *unstructured.Unstructured {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		dv, ok := e.get(t, dataVolumeVersion, "DataVolume", namespace, name)
		got := ""
		if ok {
			got, _, _ = unstructured.NestedString(dv.Object, "status", "phase")
		}
		if got == phase {
			return dv
		}
		if time.Now().After(deadline) || (got == "Failed" && phase != "Failed") {
			t.Fatalf("DataVolume %s/%s: phase %q, want %q (status %v)", namespace, name, got, phase, render.Get(dv.Object, "status"))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// workerDisk creates the DataVolume KubeVirt creates for a VM of the pool:
// the rendered template's dataVolumeTemplates entry, its name prefixed with
// the machine's as Cluster API's KubeVirt provider renames it, in the pool's
// namespace, with the clone token cdi-apiserver's webhook would add. edits
// change the entry's fields first (what other values would have rendered).
func (e *env) workerDisk(t *testing.T, cdi *cdiController, m *render.Manifest, machine string, edits ...func(spec map[string]interface{})) *unstructured.Unstructured {
	t.Helper()
	kmt, err := m.One(kmtKind)
	if err != nil {
		t.Fatal(err)
	}
	entry, ok := render.Get(kmt.Object, "spec.template.spec.virtualMachineTemplate.spec.dataVolumeTemplates.0").(map[string]interface{})
	if !ok {
		t.Fatalf("%s %s renders no dataVolumeTemplates entry", kmtKind, kmt.Name())
	}
	dv := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": dataVolumeVersion, "kind": "DataVolume",
		"metadata": entry["metadata"], "spec": entry["spec"],
	}}
	dv = dv.DeepCopy()
	for _, edit := range edits {
		edit(dv.Object["spec"].(map[string]interface{}))
	}
	dv.SetName(machine + "-" + dv.GetName())
	dv.SetNamespace(cdiTenant)
	annotations := dv.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	source, _ := render.Get(dv.Object, "spec.source.pvc").(map[string]interface{})
	annotations[annCloneToken] = cdi.cloneToken(t, fmt.Sprint(source["namespace"]), fmt.Sprint(source["name"]), cdiTenant, dv.GetName())
	dv.SetAnnotations(annotations)
	e.create(t, dv)
	return dv
}

// pool renders a pool on the cluster as Helm installs it (lookups against
// the tier, nothing created); err is the chart's refusal.
func (e *env) cdiPool(t *testing.T, release string, kv ...interface{}) (*render.Manifest, error) {
	t.Helper()
	_, version := poolDefaults(t)
	vals := withValues(map[string]interface{}{"cluster": poolCluster, "storageClass": "replicated",
		"osImage": map[string]interface{}{"builtin": map[string]interface{}{"version": version}}}, kv...)
	rel, err := e.helm(t, cdiTenant).dryRunInstall(release, render.PoolChart, vals)
	if err != nil {
		return nil, err
	}
	return manifestOf(t, rel), nil
}

func testCDIWorkerDiskCSIClone(t *testing.T, e *env, cdi *cdiController, storage *cdiStorage, golden string) {
	// A disk of the golden's size: the clone alone. A larger one (the
	// chart's default 20Gi): the clone, then grown on its class.
	for _, c := range []struct {
		name, diskSize string
		pods           []string // CDI components of the pods it may create
	}{
		{"GoldenSize", goldenSize, nil},
		{"Larger", "", []string{prepComponent}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var kv []interface{}
			if c.diskSize != "" {
				kv = append(kv, "diskSize", c.diskSize)
			}
			m, err := e.cdiPool(t, "kubernetes-nodes-acme-cdi", kv...)
			if err != nil {
				t.Fatalf("the pool is refused on the cluster CDI configured: %v", err)
			}
			storage.forgetPods(t)
			e.expectCSIClone(t, storage, e.workerDisk(t, cdi, m, "kubernetes-acme-cdi-"+strings.ToLower(c.name)), golden, c.pods...)
		})
	}
}

// expectCSIClone waits for CDI to finish a worker disk and requires what a
// CSI clone of the golden (a PVC of cozy-public) is: the claim's clone type
// csi-clone, its volume the CSI driver's clone of the golden's, and no pod
// or upload Service since forgetPods but of the CDI components allowed.
func (e *env) expectCSIClone(t *testing.T, storage *cdiStorage, dv *unstructured.Unstructured, golden string, allowed ...string) {
	t.Helper()
	ns := dv.GetNamespace()
	done := e.waitDataVolume(t, ns, dv.GetName(), "Succeeded")
	// CDI says Succeeded once it has rebound the cloned volume to the
	// disk's claim; the PV controller binds the claim after.
	storage.waitBound(t, ns, dv.GetName())
	pvc, err := storage.client.CoreV1().PersistentVolumeClaims(ns).Get(context.Background(), dv.GetName(), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the worker disk's PVC: %v", err)
	}
	request, capacity := pvc.Spec.Resources.Requests[corev1.ResourceStorage], pvc.Status.Capacity[corev1.ResourceStorage]
	t.Logf("worker disk %s/%s (class %s, %s): DataVolume %v, progress %v; PVC %s=%s, %s=%s, request %s, capacity %s; pods CDI created: %v",
		ns, dv.GetName(), ptrString(pvc.Spec.StorageClassName), ptrString((*string)(pvc.Spec.VolumeMode)),
		render.Get(done.Object, "status.phase"), render.Get(done.Object, "status.progress"),
		annCloneType, pvc.Annotations[annCloneType], annClonePhase, pvc.Annotations[annClonePhase], request.String(), capacity.String(), storage.podsSeen(t))
	if got := pvc.Annotations[annCloneType]; got != "csi-clone" {
		t.Errorf("CDI chose clone type %q for the worker disk, want csi-clone", got)
	}
	// The volume it got is the CSI driver's clone of the golden's.
	if got, want := storage.clonedFrom(pvc.Spec.VolumeName), catalogNamespace+"/"+golden; got != want {
		t.Errorf("the worker disk's volume %s was provisioned from %q, want a CSI clone of %s", pvc.Spec.VolumeName, got, want)
	}
	for _, p := range storage.podsSeen(t) {
		ok := false
		for _, component := range allowed {
			ok = ok || strings.HasSuffix(p, "("+component+")")
		}
		if !ok {
			t.Errorf("CDI created %s for the worker disk: no pod or upload Service but %v may exist for a CSI clone", p, allowed)
		}
	}
}

// cdiStorage plays what a CSI driver with its external-provisioner and
// external-resizer, and kube-controller-manager's PV controller, do for PVCs (no real one can run
// without nodes and disks): it provisions a PersistentVolume for a pending
// PVC of a class whose provisioner has a CSIDriver (a clone of the PVC its
// dataSourceRef names, refused as the external-provisioner refuses one of
// another namespace, CSI driver, volume mode or a smaller size; a populator's
// dataSourceRef is left to the populator), and binds a PVC to the volume
// whose claimRef names it (CDI rebinds a cloned volume to the worker disk).
type cdiStorage struct {
	client kubernetes.Interface
	mu     sync.Mutex
	clones map[string]string // PV name -> namespace/name of the PVC it was cloned from
	refuse map[string]string // namespace/name of a PVC -> why it is not provisioned
	pods   map[string]string // namespace/name of every pod seen -> its cdi.kubevirt.io label (CDI's component)
	old    map[string]bool   // pods and Services (as podsSeen names them) that existed at forgetPods
	paused bool              // no volume is provisioned (a driver slow to clone)
}

// prepComponent is the component label of CDI's prep pod: a container that
// only echoes, mounting a claim so a kubelet binds or grows it.
const prepComponent = "cdi-populator-prep"

// The component labels of a host-assisted clone's pods: the upload server
// that receives the golden's bytes, and the clone source pod that mounts the
// golden and sends them over the pod network.
const (
	uploadServerComponent = "cdi-upload-server"
	cloneSourceComponent  = "cdi-clone-source"
)

func (e *env) startCDIStorage(t *testing.T) *cdiStorage {
	t.Helper()
	client, err := kubernetes.NewForConfig(e.config)
	if err != nil {
		t.Fatal(err)
	}
	s := &cdiStorage{client: client, clones: map[string]string{}, refuse: map[string]string{}, pods: map[string]string{}, old: map[string]bool{}}
	// Registered first, so it runs after the goroutine stops: what a failure saw.
	t.Cleanup(func() {
		if t.Failed() {
			s.describe(t)
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			s.reconcile(ctx)
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() { cancel(); wg.Wait() })
	return s
}

func (s *cdiStorage) reconcile(ctx context.Context) {
	s.kubelet(ctx)
	pvcs, err := s.client.CoreV1().PersistentVolumeClaims("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	pvs, err := s.client.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	for i := range pvcs.Items {
		pvc := &pvcs.Items[i]
		if pvc.DeletionTimestamp != nil {
			continue
		}
		if pvc.Status.Phase == corev1.ClaimBound {
			s.expand(ctx, pvc)
			continue
		}
		if pv := claimedBy(pvs.Items, pvc); pv != nil {
			s.bind(ctx, pvc, pv)
			continue
		}
		if pvc.Spec.VolumeName != "" {
			continue
		}
		s.provision(ctx, pvc)
	}
}

// kubelet records every pod, and runs CDI's prep pod to completion as a
// kubelet would (it mounts the claim, which finishes its expansion, and
// echoes). A host-assisted clone's upload server is reported running and
// ready (nothing serves), so CDI goes on to create the clone source pod that
// would send the golden to it; that one, and any other (an importer), stays
// Pending. A CSI clone fails on any pod but the prep pod.
func (s *cdiStorage) kubelet(ctx context.Context) {
	pods, err := s.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	for i := range pods.Items {
		pod := &pods.Items[i]
		component := pod.Labels["cdi.kubevirt.io"]
		s.mu.Lock()
		s.pods[pod.Namespace+"/"+pod.Name] = component
		s.mu.Unlock()
		if pod.Status.Phase != corev1.PodPending {
			continue
		}
		switch component {
		case prepComponent:
			pod.Status.Phase = corev1.PodSucceeded
		case uploadServerComponent:
			pod.Status.Phase = corev1.PodRunning
			pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
			for _, c := range pod.Spec.Containers {
				pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
					Name: c.Name, Image: c.Image, Ready: true,
					State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}},
				})
			}
		default:
			continue
		}
		_, _ = s.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	}
}

// claimedBy is the volume whose claimRef names the PVC (and its uid, when set).
func claimedBy(pvs []corev1.PersistentVolume, pvc *corev1.PersistentVolumeClaim) *corev1.PersistentVolume {
	for i := range pvs {
		ref := pvs[i].Spec.ClaimRef
		if ref != nil && ref.Namespace == pvc.Namespace && ref.Name == pvc.Name && (ref.UID == "" || ref.UID == pvc.UID) {
			return &pvs[i]
		}
	}
	return nil
}

// bind is the PV controller's binding: the claim's volumeName, both statuses.
func (s *cdiStorage) bind(ctx context.Context, pvc *corev1.PersistentVolumeClaim, pv *corev1.PersistentVolume) {
	if pv.Spec.ClaimRef.UID == "" {
		pv.Spec.ClaimRef.UID = pvc.UID
		if _, err := s.client.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{}); err != nil {
			return
		}
	}
	if pvc.Spec.VolumeName == "" {
		pvc.Spec.VolumeName = pv.Name
		updated, err := s.client.CoreV1().PersistentVolumeClaims(pvc.Namespace).Update(ctx, pvc, metav1.UpdateOptions{})
		if err != nil {
			return
		}
		pvc = updated
	}
	pv, err := s.client.CoreV1().PersistentVolumes().Get(ctx, pv.Name, metav1.GetOptions{})
	if err != nil {
		return
	}
	pv.Status.Phase = corev1.VolumeBound
	if _, err := s.client.CoreV1().PersistentVolumes().UpdateStatus(ctx, pv, metav1.UpdateOptions{}); err != nil {
		return
	}
	pvc.Status.Phase = corev1.ClaimBound
	pvc.Status.AccessModes = pv.Spec.AccessModes
	pvc.Status.Capacity = pv.Spec.Capacity
	_, _ = s.client.CoreV1().PersistentVolumeClaims(pvc.Namespace).UpdateStatus(ctx, pvc, metav1.UpdateOptions{})
}

// expand is the external-resizer's: a bound claim whose request grew past
// its capacity, on a class that allows expansion, gets a volume of the
// request. The volume is a block device or one a kubelet would grow its
// filesystem on; the capacity is written as the controller's side finishes.
func (s *cdiStorage) expand(ctx context.Context, pvc *corev1.PersistentVolumeClaim) {
	request, capacity := pvc.Spec.Resources.Requests[corev1.ResourceStorage], pvc.Status.Capacity[corev1.ResourceStorage]
	if request.Cmp(capacity) <= 0 || pvc.Spec.StorageClassName == nil {
		return
	}
	sc, err := s.client.StorageV1().StorageClasses().Get(ctx, *pvc.Spec.StorageClassName, metav1.GetOptions{})
	if err != nil || sc.AllowVolumeExpansion == nil || !*sc.AllowVolumeExpansion {
		return
	}
	pv, err := s.client.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		return
	}
	pv.Spec.Capacity = corev1.ResourceList{corev1.ResourceStorage: request}
	if _, err := s.client.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{}); err != nil {
		return
	}
	pvc.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: request}
	_, _ = s.client.CoreV1().PersistentVolumeClaims(pvc.Namespace).UpdateStatus(ctx, pvc, metav1.UpdateOptions{})
}

// provision creates the volume a CSI driver would, pre-bound to the claim.
func (s *cdiStorage) provision(ctx context.Context, pvc *corev1.PersistentVolumeClaim) {
	s.mu.Lock()
	paused := s.paused
	s.mu.Unlock()
	if paused {
		return
	}
	key := pvc.Namespace + "/" + pvc.Name
	if pvc.Spec.StorageClassName == nil {
		return
	}
	sc, err := s.client.StorageV1().StorageClasses().Get(ctx, *pvc.Spec.StorageClassName, metav1.GetOptions{})
	if err != nil {
		return
	}
	if _, err := s.client.StorageV1().CSIDrivers().Get(ctx, sc.Provisioner, metav1.GetOptions{}); err != nil {
		return
	}
	from := ""
	if ref := pvc.Spec.DataSourceRef; ref != nil {
		if ref.Kind != "PersistentVolumeClaim" || (ref.APIGroup != nil && *ref.APIGroup != "") {
			return // a populator's (CDI's VolumeCloneSource, VolumeImportSource)
		}
		if why := s.cloneRefused(ctx, pvc, sc, ref); why != "" {
			s.mu.Lock()
			s.refuse[key] = why
			s.mu.Unlock()
			return
		}
		from = pvc.Namespace + "/" + ref.Name
	}
	mode := corev1.PersistentVolumeFilesystem
	if pvc.Spec.VolumeMode != nil {
		mode = *pvc.Spec.VolumeMode
	}
	name := "pvc-" + string(pvc.UID)
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{"pv.kubernetes.io/provisioned-by": sc.Provisioner}},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: pvc.Spec.Resources.Requests[corev1.ResourceStorage]},
			AccessModes:                   pvc.Spec.AccessModes,
			VolumeMode:                    &mode,
			StorageClassName:              sc.Name,
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
			ClaimRef:                      &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: pvc.Namespace, Name: pvc.Name, UID: pvc.UID},
			PersistentVolumeSource:        corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: sc.Provisioner, VolumeHandle: name}},
		},
	}
	if _, err := s.client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return
	}
	if from != "" {
		s.mu.Lock()
		s.clones[name] = from
		s.mu.Unlock()
	}
}

// cloneRefused is why the external-provisioner would not clone the source:
// it must be a bound PVC of the same namespace and volume mode, on a volume
// of the class's CSI driver, no larger than the request. Another class of
// that driver is the driver's to refuse: the external-provisioner stopped
// refusing it in v3.1.
func (s *cdiStorage) cloneRefused(ctx context.Context, pvc *corev1.PersistentVolumeClaim, sc *storagev1.StorageClass, ref *corev1.TypedObjectReference) string {
	if ref.Namespace != nil && *ref.Namespace != pvc.Namespace {
		return "source in another namespace"
	}
	src, err := s.client.CoreV1().PersistentVolumeClaims(pvc.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		return "source: " + err.Error()
	}
	if src.Status.Phase != corev1.ClaimBound {
		return "source not bound"
	}
	if pv, err := s.client.CoreV1().PersistentVolumes().Get(ctx, src.Spec.VolumeName, metav1.GetOptions{}); err != nil || pv.Spec.CSI == nil || pv.Spec.CSI.Driver != sc.Provisioner {
		return "source volume not of the class's CSI driver " + sc.Provisioner
	}
	if (src.Spec.VolumeMode == nil) != (pvc.Spec.VolumeMode == nil) || (src.Spec.VolumeMode != nil && *src.Spec.VolumeMode != *pvc.Spec.VolumeMode) {
		return "source of another volume mode"
	}
	capacity, request := src.Status.Capacity[corev1.ResourceStorage], pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	if request.Cmp(capacity) < 0 {
		return fmt.Sprintf("request %s below the source's capacity %s", request.String(), capacity.String())
	}
	return ""
}

// hold stops provisioning volumes, as a driver still cloning, until the
// returned function is called.
func (s *cdiStorage) hold() (release func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.paused = true
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.paused = false
	}
}

// waitBound polls until the PVC is bound.
func (s *cdiStorage) waitBound(t *testing.T, namespace, name string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		pvc, err := s.client.CoreV1().PersistentVolumeClaims(namespace).Get(context.Background(), name, metav1.GetOptions{})
		if err == nil && pvc.Status.Phase == corev1.ClaimBound {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("PVC %s/%s not bound after 1m: %v", namespace, name, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// clonedFrom is the PVC a volume was cloned from, "" if none.
func (s *cdiStorage) clonedFrom(pv string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clones[pv]
}

// podsSeen lists every pod seen since forgetPods, with its CDI component,
// and the upload Services (a host-assisted clone's target side) created since.
func (s *cdiStorage) podsSeen(t *testing.T) []string {
	t.Helper()
	seen := s.podsAndServices(t)
	s.mu.Lock()
	defer s.mu.Unlock()
	var fresh []string
	for _, p := range seen {
		if !s.old[p] {
			fresh = append(fresh, p)
		}
	}
	return fresh
}

// podsAndServices is every pod recorded, with its CDI component, and every
// upload Service, sorted.
func (s *cdiStorage) podsAndServices(t *testing.T) []string {
	t.Helper()
	s.kubelet(context.Background())
	s.mu.Lock()
	var seen []string
	for name, component := range s.pods {
		seen = append(seen, fmt.Sprintf("%s (%s)", name, component))
	}
	s.mu.Unlock()
	svcs, err := s.client.CoreV1().Services("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, svc := range svcs.Items {
		if strings.HasPrefix(svc.Name, "cdi-upload") {
			seen = append(seen, "Service "+svc.Namespace+"/"+svc.Name)
		}
	}
	sort.Strings(seen)
	return seen
}

// forgetPods starts podsSeen afresh: what exists now (a host-assisted clone
// an earlier case left waiting for a kubelet) is not listed again.
func (s *cdiStorage) forgetPods(t *testing.T) {
	t.Helper()
	seen := s.podsAndServices(t)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range seen {
		s.old[p] = true
	}
}

// describe logs every PVC, PV and pod: what a failed clone left.
func (s *cdiStorage) describe(t *testing.T) {
	ctx := context.Background()
	if pvcs, err := s.client.CoreV1().PersistentVolumeClaims("").List(ctx, metav1.ListOptions{}); err == nil {
		for _, p := range pvcs.Items {
			request, capacity := p.Spec.Resources.Requests[corev1.ResourceStorage], p.Status.Capacity[corev1.ResourceStorage]
			t.Logf("PVC %s/%s: %s, class %v, mode %v, request %s, capacity %s, volume %q, dataSourceRef %v, annotations %v",
				p.Namespace, p.Name, p.Status.Phase, ptrString(p.Spec.StorageClassName), ptrString((*string)(p.Spec.VolumeMode)),
				request.String(), capacity.String(), p.Spec.VolumeName, p.Spec.DataSourceRef, p.Annotations)
		}
	}
	if pvs, err := s.client.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{}); err == nil {
		for _, p := range pvs.Items {
			t.Logf("PV %s: %s, capacity %v, claimRef %v", p.Name, p.Status.Phase, p.Spec.Capacity, p.Spec.ClaimRef)
		}
	}
	if pods, err := s.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{}); err == nil {
		for _, p := range pods.Items {
			t.Logf("Pod %s/%s: %s", p.Namespace, p.Name, p.Status.Phase)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t.Logf("clones provisioned %v; clones refused %v", s.clones, s.refuse)
}

func ptrString(p *string) string {
	if p == nil {
		return "<unset>"
	}
	return *p
}
