//go:build integration

package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/rollout"
	"github.com/cozystack/golden-worker-images/tests/support"
	"helm.sh/helm/v3/pkg/action"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
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

// testCDIBootPath runs pools from the HelmRelease cozystack-api writes to
// workers on the platform's own controllers, in CDI's cluster: Flux's
// helm-controller installs the pool chart; Cluster API rolls its
// MachineDeployment; the Talos bootstrap provider generates each worker's
// machine config; Cluster API's KubeVirt provider builds each VirtualMachine
// from the rendered KubevirtMachineTemplate; CDI clones each worker's disk
// from the golden. Stand-ins play virt-controller's DataVolume step and
// virt-handler's VMI (the VMI only once the disks are ready, as KubeVirt
// starts it), the kubelet's Node and the CSI driver. ClonePool follows one
// clone pool to booted workers; ExamplePools releases every example pool as
// written. Run last in TestCDIClone: it leaves its objects.
func testCDIBootPath(t *testing.T, e *env, cdi *cdiController, storage *cdiStorage, golden string) {
	bins := bootControllerBinaries(t)
	start := time.Now()
	generated := e.startBootControllers(t, bins)
	e.capi = e.startCAPIStandIns(t)
	e.capi.playDataVolumes(cdi.sign)
	e.startHelmController(t)
	t.Logf("Cluster API, its KubeVirt provider, the Talos bootstrap provider and helm-controller ready beside CDI in %s", time.Since(start).Round(100*time.Millisecond))
	t.Run("ClonePool", func(t *testing.T) { testBootPathClonePool(t, e, storage, golden, generated) })
	t.Run("ExamplePools", func(t *testing.T) { testBootPathExamplePools(t, e, generated) })
}

// testBootPathClonePool: one clone pool at two workers, from its HelmRelease
// to booted workers. The CSI driver is held while the VMs wait, so the
// KubeVirt provider's report of a disk still cloning is read too.
func testBootPathClonePool(t *testing.T, e *env, storage *cdiStorage, golden string, generated *bootstrapDataLog) {
	ctx := t.Context()
	release := "kubernetes-nodes-" + bootApp
	md := poolName(release)
	schematicID, version := poolDefaults(t)
	e.createWorkloadCluster(t, bootTenant, bootCluster)

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
	e.createYAML(t, cozystackValues(bootTenant, `_namespace: {host: `+bootTenant+`.example.org}`))
	released := time.Now()
	e.createYAML(t, cozystackHelmRelease(bootTenant, bootApp, fmt.Sprintf(
		"{cluster: %s, minReplicas: %d, osImage: {builtin: {}}, talos: {installerRepository: %s, registryMirrors: {docker.io: {endpoints: [%s]}}}}",
		bootCluster, bootWorkers, bootInstaller, bootMirror)))

	// 1. Released: Ready at generation 1; the MachineDeployment runs the
	// released template, at the workers Cluster API's webhook defaulted.
	waitFor(t, 2*time.Minute, "helm-controller released "+bootTenant+"/"+release, func() string {
		obj, _ := e.get(t, fleet.HelmReleaseAPI, "HelmRelease", bootTenant, release)
		ready, failed, says := rollout.HelmReleaseStatus(obj.Object, 1)
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
	if got := rollout.RunningTemplate(deployment.Object); got != template {
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

// releasedManifest is what the last release of a release applied, read by
// Helm's own storage from the Secrets helm-controller wrote.
func releasedManifest(t *testing.T, e *env, namespace, release string) *render.Manifest {
	t.Helper()
	rel, err := action.NewGet(e.helm(t, namespace).cfg).Run(release)
	if err != nil {
		t.Fatalf("release %s/%s: %v", namespace, release, err)
	}
	return manifestOf(t, rel)
}

// The example pools' tenant and workload cluster, as the examples name them.
const (
	exampleTenant  = "tenant-acme"
	exampleCluster = "acme"
)

// examplePlan is what this test reads of `workerimage plan -o json`.
type examplePlan struct {
	Pool       string `json:"pool"`
	Result     string `json:"result"`
	Refusal    string `json:"refusal"`
	DiskSource struct {
		Path   string `json:"path"`
		URL    string `json:"url"`
		Golden string `json:"golden"`
	} `json:"diskSource"`
	MachineConfig struct {
		Installer struct {
			Image string `json:"image"`
		} `json:"installer"`
		RegistryMirrors []struct {
			Host      string   `json:"host"`
			Endpoints []string `json:"endpoints"`
		} `json:"registryMirrors"`
	} `json:"machineConfig"`
}

// testBootPathExamplePools releases every pool of examples/pools as written,
// each as a KubernetesNodes application of tenant-acme (one worker where the
// file sets no minReplicas: a pool at zero has no machine config), after
// `workerimage plan` of the same values against this cluster. A pool plan
// says renders is released, and the bootstrap provider generates one machine
// config per worker, which Talos accepts, installing the installer and
// pulling through the mirrors plan named; its VMs' disks come from where plan
// said (the golden, or the factory over HTTP). A pool plan says is refused
// fails its release with plan's message.
func testBootPathExamplePools(t *testing.T, e *env, generated *bootstrapDataLog) {
	files, err := filepath.Glob(filepath.Join(support.RepoRoot(), "examples", "pools", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no example pools: %v", err)
	}
	e.createWorkloadCluster(t, exampleTenant, exampleCluster)
	e.createYAML(t, cozystackValues(exampleTenant, `_namespace: {host: `+exampleTenant+`.example.org}`))

	type example struct {
		file, app, release string
		workers            int64
		plan               examplePlan
	}
	var examples []example
	dir := t.TempDir()
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var values map[string]any
		if err := yaml.Unmarshal(raw, &values); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if _, set := values["minReplicas"]; !set {
			values["minReplicas"] = 1
		}
		workers, _ := strconv.ParseInt(fmt.Sprint(values["minReplicas"]), 10, 64)
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		x := example{file: filepath.Base(file), app: exampleCluster + "-" + name, workers: workers}
		x.release = "kubernetes-nodes-" + x.app
		body, err := json.Marshal(values)
		if err != nil {
			t.Fatal(err)
		}
		valuesFile := filepath.Join(dir, filepath.Base(file))
		writeFile(t, valuesFile, string(body))
		out, _, code := e.workerimage(t, "plan", "-f", valuesFile, "--release", x.release, "-n", exampleTenant, "--kubeconfig", e.kubeconfig, "-o", "json")
		if err := json.Unmarshal([]byte(out), &x.plan); err != nil || (code != 0 && x.plan.Result != "refused") {
			t.Fatalf("workerimage plan of %s exited %d: %v\n%s", x.file, code, err, out)
		}
		e.createYAML(t, cozystackHelmRelease(exampleTenant, x.app, string(body)))
		examples = append(examples, x)
	}

	var rendered int
	for _, x := range examples {
		waitFor(t, 2*time.Minute, "helm-controller's verdict on "+x.file, func() string {
			obj, _ := e.get(t, fleet.HelmReleaseAPI, "HelmRelease", exampleTenant, x.release)
			ready, failed, says := rollout.HelmReleaseStatus(obj.Object, 1)
			switch {
			case x.plan.Result == "refused" && failed != "":
				if !strings.Contains(failed, x.plan.Refusal) {
					t.Errorf("%s: helm-controller failed it with %q, want plan's refusal %q", x.file, failed, x.plan.Refusal)
				}
				return ""
			case x.plan.Result == "refused" && ready:
				t.Fatalf("%s: released, but plan said it is refused: %s", x.file, x.plan.Refusal)
			case failed != "":
				t.Fatalf("%s: helm-controller failed it, but plan said it renders: %s", x.file, failed)
			case ready:
				return ""
			}
			return says
		})
		if x.plan.Result != "refused" {
			rendered++
		}
	}
	if rendered == 0 || rendered == len(examples) {
		t.Errorf("%d of %d example pools render: want both verdicts among them (the examples show refusals too)", rendered, len(examples))
	}

	// One machine config per worker of each pool that released.
	var configs []bootstrapData
	waitFor(t, 2*time.Minute, "the bootstrap provider's machine config for every example worker", func() string {
		seen, problems := generated.all()
		for _, p := range problems {
			t.Fatal(p)
		}
		configs = nil
		count := map[string]int64{}
		for _, d := range seen {
			if d.namespace == exampleTenant {
				configs = append(configs, d)
				count[d.pool]++
			}
		}
		for _, x := range examples {
			if x.plan.Result != "refused" && count[x.plan.Pool] != x.workers {
				return fmt.Sprintf("%d machine configs of %s, want %d", count[x.plan.Pool], x.plan.Pool, x.workers)
			}
		}
		return ""
	})
	reads := checkBootstrapData(t, e, configs)
	var table []string
	for _, x := range examples {
		if x.plan.Result == "refused" {
			table = append(table, fmt.Sprintf("%s: refused, as plan said: %s", x.file, x.plan.Refusal))
			continue
		}
		wantMirrors := map[string][]string{}
		for _, m := range x.plan.MachineConfig.RegistryMirrors {
			wantMirrors[m.Host] = m.Endpoints
		}
		for i, d := range configs {
			if d.pool != x.plan.Pool {
				continue
			}
			if got := reads[i].InstallImage; got != x.plan.MachineConfig.Installer.Image {
				t.Errorf("%s: machine config %s installs %q, plan said %q", x.file, d.secret, got, x.plan.MachineConfig.Installer.Image)
			}
			if got := reads[i].Mirrors; !reflect.DeepEqual(got, wantMirrors) && (len(got) > 0 || len(wantMirrors) > 0) {
				t.Errorf("%s: machine config %s: Talos reads the mirrors %v, plan said %v", x.file, d.secret, got, wantMirrors)
			}
		}
		source := checkExampleDisks(t, e, x.file, x.plan)
		table = append(table, fmt.Sprintf("%s: a machine config for each of %d workers, installer %s, mirrors %v; disks %s",
			x.file, x.workers, x.plan.MachineConfig.Installer.Image, wantMirrors, source))
	}
	t.Logf("every example pool through helm-controller, Cluster API, CABPT and CAPK:\n  %s", strings.Join(table, "\n  "))
}

// checkExampleDisks: each VM of the pool asks for the disk plan named, a
// clone of its golden or an HTTP import from its factory URL.
func checkExampleDisks(t *testing.T, e *env, file string, plan examplePlan) string {
	t.Helper()
	want := map[string]string{"clone": "clone of " + catalogNamespace + "/" + plan.DiskSource.Golden, "http": "HTTP import from " + plan.DiskSource.URL}[plan.DiskSource.Path]
	var got string
	waitFor(t, time.Minute, "the VirtualMachines of "+plan.Pool, func() string {
		machines, err := e.client(t, capiAPIVersion, "Machine", exampleTenant).List(t.Context(), metav1.ListOptions{LabelSelector: "cluster.x-k8s.io/deployment-name=" + plan.Pool})
		if err != nil {
			t.Fatal(err)
		}
		if len(machines.Items) == 0 {
			return "no Machine"
		}
		for _, mc := range machines.Items {
			infra, _, _ := unstructured.NestedString(mc.Object, "spec", "infrastructureRef", "name")
			vm, err := e.dynamic.Resource(virtualMachineGVR).Namespace(exampleTenant).Get(t.Context(), infra, metav1.GetOptions{})
			if err != nil {
				return fmt.Sprintf("VirtualMachine %s: %v", infra, err)
			}
			templates, _, _ := unstructured.NestedSlice(vm.Object, "spec", "dataVolumeTemplates")
			if len(templates) == 0 {
				t.Fatalf("%s: VirtualMachine %s has no dataVolumeTemplates", file, infra)
			}
			entry := templates[0].(map[string]any)
			got = ""
			if url, _, _ := unstructured.NestedString(entry, "spec", "source", "http", "url"); url != "" {
				got = "HTTP import from " + url
			}
			if name, _, _ := unstructured.NestedString(entry, "spec", "source", "pvc", "name"); name != "" {
				ns, _, _ := unstructured.NestedString(entry, "spec", "source", "pvc", "namespace")
				got = "clone of " + ns + "/" + name
			}
			if got != want {
				t.Errorf("%s: VirtualMachine %s's disk is a %s, plan said %s", file, infra, got, want)
			}
		}
		return ""
	})
	return got
}
