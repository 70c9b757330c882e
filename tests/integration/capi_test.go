//go:build integration

package integration

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/rollout"
	"github.com/cozystack/golden-worker-images/tests/support"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// capiModulePath is Cluster API's module: tools/cluster-api pins the version
// the tier's manager is built from, and the tier installs that version's CRDs
// and webhook registrations.
const capiModulePath = "sigs.k8s.io/cluster-api"

// capiModule is the Cluster API version and module hash tools/cluster-api's
// go.sum pins, so the CRDs the tier installs are the manager's own.
func capiModule(t testing.TB) (version, sum string) {
	t.Helper()
	return toolModule(t, "cluster-api", capiModulePath)
}

// toolModule is the version and module hash of modulePath that
// tools/<tool>'s go.sum pins: the release the tier's binary of that tool is
// built from, whose manifests the tier reads from the module cache.
func toolModule(t testing.TB, tool, modulePath string) (version, sum string) {
	t.Helper()
	path := filepath.Join(support.RepoRoot(), "tools", tool, "go.sum")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 3 && fields[0] == modulePath && !strings.HasSuffix(fields[1], "/go.mod") {
			return fields[1], fields[2]
		}
	}
	t.Fatalf("%s names no %s module hash: run `go mod tidy` in tools/%s", path, modulePath, tool)
	return "", ""
}

// capiContract are the API-version labels each provider's release YAML puts on
// its CRDs (their kustomize commonLabels; the module's config/crd/bases, which
// the tier installs, lacks them): Cluster API resolves a template or object
// reference through them ("cannot find any versions matching contract").
var capiContract = map[string]string{
	"kubevirtmachines.infrastructure.cluster.x-k8s.io":         "v1alpha1",
	"kubevirtmachinetemplates.infrastructure.cluster.x-k8s.io": "v1alpha1",
	"kubevirtclusters.infrastructure.cluster.x-k8s.io":         "v1alpha1",
	"kubevirtclustertemplates.infrastructure.cluster.x-k8s.io": "v1alpha1",
	"talosconfigs.bootstrap.cluster.x-k8s.io":                  "v1alpha3",
	"talosconfigtemplates.bootstrap.cluster.x-k8s.io":          "v1alpha3",
	"kamajicontrolplanes.controlplane.cluster.x-k8s.io":        "v1alpha1",
}

// clusterAPI is the Cluster API core manager running against the tier.
type clusterAPI struct {
	webhookPort, healthPort int
}

// startClusterAPI labels the providers' CRDs with their contract, writes a
// self-signed serving certificate, starts the manager built by `make
// cluster-api` against the tier's API server (no leader election, its
// endpoints on free loopback ports), registers its admission webhooks as its
// release does (the module's config/webhook/manifests.yaml, the Service
// replaced by the loopback URL) and waits until it is ready.
func (e *env) startClusterAPI(t testing.TB, bin string) *clusterAPI {
	t.Helper()
	ctx := context.Background()
	for name, version := range capiContract {
		body, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{"cluster.x-k8s.io/v1beta1": version}}})
		if _, err := e.dynamic.Resource(crdGVR).Patch(ctx, name, types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
			t.Fatalf("label CRD %s with its Cluster API contract: %v", name, err)
		}
	}

	certDir := filepath.Join(e.dir, "capi-certs")
	caPEM := writeServingCert(t, certDir)
	c := &clusterAPI{webhookPort: freePort(t), healthPort: freePort(t)}
	e.start(t, "cluster-api", bin,
		"--kubeconfig="+e.kubeconfig,
		"--leader-elect=false",
		fmt.Sprintf("--webhook-port=%d", c.webhookPort),
		"--webhook-cert-dir="+certDir,
		fmt.Sprintf("--health-addr=127.0.0.1:%d", c.healthPort),
		fmt.Sprintf("--diagnostics-address=127.0.0.1:%d", freePort(t)),
		"--insecure-diagnostics",
		// No --feature-gates: the release's defaults (MachineSetPreflightChecks,
		// ClusterResourceSet and MachinePool on, ClusterTopology off).
		"--v=2",
	)

	version, sum := capiModule(t)
	e.registerWebhooks(t, "capi-", filepath.Join(moduleDir(t, e.dir, capiModulePath, version, sum), "config", "webhook", "manifests.yaml"), c.webhookPort, caPEM)
	// Ready: its readyz includes the webhook server's started check.
	e.waitReadyz(t, "cluster-api", c.healthPort)
	return c
}

// registerWebhooks registers a manager's admission webhooks as its release
// does (the module's config/webhook/manifests.yaml), each Service replaced by
// the manager's loopback webhook port and the CA that signed its serving
// certificate, each configuration's name prefixed with prefix.
func (e *env) registerWebhooks(t testing.TB, prefix, manifests string, port int, caPEM []byte) {
	t.Helper()
	raw, err := os.ReadFile(manifests)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := render.ParseObjects(raw)
	if err != nil {
		t.Fatalf("%s: %v", manifests, err)
	}
	for _, obj := range objs {
		hooks, _, _ := unstructured.NestedSlice(obj.Object, "webhooks")
		for i, h := range hooks {
			hook := h.(map[string]any)
			path, _, _ := unstructured.NestedString(hook, "clientConfig", "service", "path")
			if path == "" {
				t.Fatalf("%s webhook %v names no service path", obj.GetKind(), hook["name"])
			}
			hook["clientConfig"] = map[string]any{
				"url":      fmt.Sprintf("https://127.0.0.1:%d%s", port, path),
				"caBundle": base64.StdEncoding.EncodeToString(caPEM),
			}
			hooks[i] = hook
		}
		if err := unstructured.SetNestedSlice(obj.Object, hooks, "webhooks"); err != nil {
			t.Fatal(err)
		}
		obj.SetName(prefix + obj.GetName())
		e.create(t, obj)
	}
}

// waitReadyz waits until the started process name answers 200 on its
// health port's /readyz, failing with its log if it exits first.
func (e *env) waitReadyz(t testing.TB, name string, healthPort int) {
	t.Helper()
	url := fmt.Sprintf("http://127.0.0.1:%d/readyz", healthPort)
	e.waitServing(t, name, func() error {
		resp, err := http.Get(url)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %s", url, resp.Status)
		}
		return nil
	})
}

// waitServing waits until check passes, failing with the process's log if
// it exits first, or after 2 minutes.
func (e *env) waitServing(t testing.TB, name string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		err := check()
		if err == nil {
			return
		}
		if p := e.process(name); p != nil {
			select {
			case <-p.done:
				t.Fatalf("%s exited: %v (its log: %s)", name, p.err, p.log)
			default:
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready after 2m: %v", name, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// process is the started process of that name.
func (e *env) process(name string) *process {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, p := range e.procs {
		if p.name == name {
			return p
		}
	}
	return nil
}

// writeServingCert writes a self-signed certificate for 127.0.0.1 (tls.crt,
// tls.key, where the manager's webhook server reads them) and returns it as
// the PEM the API server trusts (the webhooks' caBundle).
func writeServingCert(t testing.TB, dir string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "cluster-api-webhook"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return writeKeyPair(t, dir, der, key)
}

// writeKeyPair writes a serving certificate (DER) and its key as tls.crt and
// tls.key in dir, and returns the certificate's PEM.
func writeKeyPair(t testing.TB, dir string, der []byte, key *ecdsa.PrivateKey) []byte {
	t.Helper()
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	writeFile(t, filepath.Join(dir, "tls.crt"), string(certPEM))
	writeFile(t, filepath.Join(dir, "tls.key"), string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})))
	return certPEM
}

// writeCASignedServingCert writes a serving certificate for 127.0.0.1
// (tls.crt, tls.key) signed by a CA of its own, as an organisation's CA
// signs its internal servers' certificates, and returns that CA's PEM: what a
// client must be given to trust the server.
func writeCASignedServingCert(t testing.TB, dir, caName string) []byte {
	t.Helper()
	ca, caKey, caDER, err := newCA(caName)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:     []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	writeKeyPair(t, dir, der, key)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
}

// newCA is a CA of its own (a P-256 key, a day's validity), as an
// organisation's CA that signs its internal servers' certificates: the CA,
// its key, and its DER.
func newCA(name string) (*x509.Certificate, *ecdsa.PrivateKey, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, nil, err
	}
	ca, err := x509.ParseCertificate(der)
	return ca, key, der, err
}

// capiStandIns play what needs a kubelet or a VM, in every namespace, each
// as its component writes it: the kubelet running a pool's talos-config Job
// (its step run for real, by sh and kubectl, against the API server: see
// runJobStep), KubeVirt (each VirtualMachine the KubeVirt provider creates
// gets a running, ready VMI with an address: see virtualMachines) and the
// kubelet of each worker (a Ready Node named after its VM, in the workload
// cluster, which is the tier's own API server). Nothing else: Cluster API,
// its KubeVirt provider, the Talos bootstrap provider and helm-controller run
// for real.
type capiStandIns struct {
	e    *env
	t    testing.TB
	mu   sync.Mutex
	errs []string
	// jobs: the talos-config Jobs started, by namespace/name; each runs once.
	jobs map[string]bool
	// neverBoots: MachineDeployments (namespace/name) whose new VMs never
	// boot: their VirtualMachines get no VMI, as a VM stuck starting.
	neverBoots map[string]bool
	// addresses: the VMIs given an address so far (each gets its own).
	addresses int
	// disks, when set (playDataVolumes), plays virt-controller's part for
	// each VM's dataVolumeTemplates: where CDI runs, a VM boots on its disks.
	disks *virtDataVolumes
}

var (
	talosConfigGVR     = schema.GroupVersionResource{Group: "bootstrap.cluster.x-k8s.io", Version: "v1alpha3", Resource: "talosconfigs"}
	kubevirtMachineGVR = schema.GroupVersionResource{Group: "infrastructure.cluster.x-k8s.io", Version: "v1alpha1", Resource: "kubevirtmachines"}
	nodeGVR            = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
	secretGVR          = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	jobGVR             = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
)

// startCAPIStandIns runs the stand-ins until the test ends, then reports
// what they could not do.
func (e *env) startCAPIStandIns(t *testing.T) *capiStandIns {
	s := &capiStandIns{e: e, t: t, jobs: map[string]bool{}, neverBoots: map[string]bool{}}
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); s.run(ctx, &wg) }()
	t.Cleanup(func() {
		stop()
		wg.Wait()
		for _, p := range s.errs {
			t.Errorf("stand-in: %s", p)
		}
	})
	return s
}

func (s *capiStandIns) problem(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errs = append(s.errs, fmt.Sprintf(format, args...))
}

// neverBoot makes the new VMs of a MachineDeployment stay unbooted (or boot
// again, with false).
func (s *capiStandIns) neverBoot(namespace, machineDeployment string, never bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.neverBoots[namespace+"/"+machineDeployment] = never
}

func (s *capiStandIns) run(ctx context.Context, wg *sync.WaitGroup) {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		s.talosConfigJobs(ctx, wg)
		s.virtualMachines(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// talosConfigJobs: the kubelet runs each pool's talos-config Job once, on
// its own goroutine (its step waits for the parent cluster's objects), and
// the Job's step applies the pool's TalosConfigTemplate. The Job's status is
// not written: no Job controller runs, and nothing the tests read waits on it.
func (s *capiStandIns) talosConfigJobs(ctx context.Context, wg *sync.WaitGroup) {
	list, err := s.e.dynamic.Resource(jobGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		if ctx.Err() == nil {
			s.problem("list Jobs: %v", err)
		}
		return
	}
	for _, job := range list.Items {
		labels, _, _ := unstructured.NestedStringMap(job.Object, "spec", "template", "metadata", "labels")
		key := job.GetNamespace() + "/" + job.GetName()
		if labels["kubernetes-worker-image.cozystack.io/talos-config"] == "" {
			continue
		}
		s.mu.Lock()
		started := s.jobs[key]
		s.jobs[key] = true
		s.mu.Unlock()
		if started {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			stepCtx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			if out, err := runJobStep(stepCtx, s.t, s.e, &job); err != nil && ctx.Err() == nil {
				s.problem("Job %s: %v\n%s", key, err, out)
			}
		}()
	}
}

// The workload cluster the MachineDeploymentRollout and ZeroWorkers pools
// join, in its own tenant.
const (
	capiTenant  = "tenant-capi"
	capiCluster = "capi"
)

// TestPlatformControllers runs the platform's own controllers against their
// own API server: Cluster API's core manager, its KubeVirt provider, the
// Talos bootstrap provider's manager, and Flux's helm-controller for the
// rollout and fleet subtests (each starts it, on the tenants shard).
// Stand-ins play only what needs a kubelet or a VM (capiStandIns). First one
// pool's MachineDeployment, as the pool chart renders it, is rolled onto a
// new KubevirtMachineTemplate and read at every step as `rollout` reads it;
// then every `rollout --apply` subtest runs over pools helm-controller
// releases and Cluster API rolls; last, every machine config the bootstrap
// provider generated on the way goes through Talos's validator. It runs when
// CLUSTER_API names the manager `make cluster-api` built,
// CLUSTER_API_PROVIDER_KUBEVIRT the one `make cluster-api-provider-kubevirt`
// built (and CABPT, `make cluster-api-bootstrap-provider-talos`;
// HELM_CONTROLLER, `make helm-controller`).
func TestPlatformControllers(t *testing.T) {
	bins := bootControllerBinaries(t)
	start := time.Now()
	e := startEnv(t)
	e.installCRDs(t)
	e.createClusterFixtures(t)
	bootstrapData := e.startBootControllers(t, bins)
	t.Logf("kube-apiserver, cluster-api, its KubeVirt provider and the Talos bootstrap provider ready in %s", time.Since(start).Round(time.Second))
	e.createWorkloadCluster(t, capiTenant, capiCluster)
	e.capi = e.startCAPIStandIns(t)

	t.Run("MachineDeploymentRollout", func(t *testing.T) { testCAPIRollout(t, e) })
	t.Run("ZeroWorkers", func(t *testing.T) { testCAPIZeroWorkers(t, e) })
	// Flux's own helm-controller, on a pool as Cozystack writes it.
	t.Run("HelmControllerPool", func(t *testing.T) { testHelmControllerPool(t, e) })
	t.Run("Rollout", func(t *testing.T) { testRollout(t, e) })
	t.Run("RolloutRecreatedHelmRelease", func(t *testing.T) { testRolloutRecreatedHelmRelease(t, e) })
	t.Run("RolloutNotReadyBystander", func(t *testing.T) { testRolloutNotReadyBystander(t, e) })
	t.Run("RolloutTenantEdit", func(t *testing.T) { testRolloutTenantEdit(t, e) })
	t.Run("RolloutRetryOnFailure", func(t *testing.T) { testRolloutRetryOnFailure(t, e) })
	t.Run("RolloutStallTimesOut", func(t *testing.T) { testRolloutStallTimesOut(t, e) })
	t.Run("RolloutForgedFieldManager", func(t *testing.T) { testRolloutForgedFieldManager(t, e) })
	t.Run("FleetTools", func(t *testing.T) { testFleetToolsOnRealControllers(t, e) })
	// The closed-network page's steps that need helm-controller.
	t.Run("PublishedMirrorsNow", func(t *testing.T) { testPublishedMirrorsNow(t, e) })
	t.Run("ClosedNetworkPage", func(t *testing.T) { testClosedNetworkPage(t, e) })
	// Every machine config the bootstrap provider generated for the pools above.
	t.Run("BootstrapData", func(t *testing.T) { testBootstrapData(t, e, bootstrapData) })
}

// bootControllers are the managers that turn a pool's MachineDeployment
// into workers, as built by make.
type bootControllers struct{ clusterAPI, capk, cabpt string }

// bootControllerBinaries reads them from CLUSTER_API,
// CLUSTER_API_PROVIDER_KUBEVIRT and CABPT (`make integration` sets all
// three). The test skips without the first two and fails without CABPT: no
// stand-in writes bootstrap data any more.
func bootControllerBinaries(t *testing.T) bootControllers {
	t.Helper()
	bin := os.Getenv("CLUSTER_API")
	if bin == "" {
		t.Skip("CLUSTER_API is not set: `make cluster-api` builds the Cluster API manager, `make integration` runs it")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("CLUSTER_API=%s: %v; run `make cluster-api`", bin, err)
	}
	capk := os.Getenv(capkEnv)
	if capk == "" {
		t.Skip(capkEnv + " is not set: `make cluster-api-provider-kubevirt` builds the KubeVirt provider's manager, `make integration` runs it")
	}
	if _, err := os.Stat(capk); err != nil {
		t.Fatalf("%s=%s: %v; run `make cluster-api-provider-kubevirt`", capkEnv, capk, err)
	}
	cabpt := os.Getenv("CABPT")
	if cabpt == "" {
		t.Fatal("CABPT is not set: `make cluster-api-bootstrap-provider-talos` builds the Talos bootstrap provider's manager, `make integration` runs it")
	}
	if _, err := os.Stat(cabpt); err != nil {
		t.Fatalf("CABPT=%s: %v; run `make cluster-api-bootstrap-provider-talos`", cabpt, err)
	}
	return bootControllers{clusterAPI: bin, capk: capk, cabpt: cabpt}
}

// startBootControllers starts Cluster API's core manager, its KubeVirt
// provider and the Talos bootstrap provider, after a watch that records every
// bootstrap data Secret.
func (e *env) startBootControllers(t *testing.T, bins bootControllers) *bootstrapDataLog {
	t.Helper()
	bootstrapData := e.watchBootstrapData(t)
	e.startClusterAPI(t, bins.clusterAPI)
	e.startCAPK(t, bins.capk)
	e.startCABPT(t, bins.cabpt)
	return bootstrapData
}

// createWorkloadCluster creates a workload cluster as Cluster API sees it: the
// parent cluster's objects a control plane has (createParentCluster: the
// KamajiControlPlane, its Service and CAs, the Talos secrets), a Cluster
// whose control plane (Kamaji, as Cozystack's) reports itself initialized at
// the pools' Kubernetes version, its KubevirtCluster as Cozystack's
// kubernetes chart writes it (managed by Kamaji, which marks it ready), and a
// kubeconfig Secret pointing at this same API server.
func (e *env) createWorkloadCluster(t testing.TB, tenant, cluster string) {
	t.Helper()
	e.createNamespace(t, tenant)
	clusterName := "kubernetes-" + cluster
	e.createParentCluster(t, tenant, clusterName)
	caData, err := os.ReadFile(e.config.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: %[1]s
  cluster: {server: %[2]s, certificate-authority-data: %[3]s}
users:
- name: admin
  user: {token: %[4]s}
contexts:
- name: %[1]s
  context: {cluster: %[1]s, user: admin}
current-context: %[1]s
`, clusterName, e.config.Host, base64.StdEncoding.EncodeToString(caData), e.config.BearerToken)
	host, port, _ := net.SplitHostPort(strings.TrimPrefix(e.config.Host, "https://"))
	e.createYAML(t, fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata:
  name: %[1]s-kubeconfig
  namespace: %[2]s
  labels: {cluster.x-k8s.io/cluster-name: %[1]s}
type: cluster.x-k8s.io/secret
data:
  value: %[3]s
---
apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata:
  name: %[1]s
  namespace: %[2]s
spec:
  controlPlaneEndpoint: {host: %[4]s, port: %[5]s}
  controlPlaneRef:
    apiVersion: controlplane.cluster.x-k8s.io/v1alpha1
    kind: KamajiControlPlane
    name: %[1]s
    namespace: %[2]s
  infrastructureRef:
    apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1
    kind: KubevirtCluster
    name: %[1]s
    namespace: %[2]s
---
apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1
kind: KubevirtCluster
metadata:
  name: %[1]s
  namespace: %[2]s
  annotations: {cluster.x-k8s.io/managed-by: kamaji}
`, clusterName, tenant, base64.StdEncoding.EncodeToString([]byte(kubeconfig)), host, port))
	// Kamaji's control-plane provider, not the KubeVirt provider, manages
	// the KubevirtCluster of Cozystack's clusters (managed-by: kamaji): it
	// writes the control plane's endpoint there and marks it ready.
	kvc := e.client(t, "infrastructure.cluster.x-k8s.io/v1alpha1", "KubevirtCluster", tenant)
	portNumber, _ := strconv.Atoi(port)
	body, _ := json.Marshal(map[string]any{"spec": map[string]any{"controlPlaneEndpoint": map[string]any{"host": host, "port": portNumber}}})
	if _, err := kvc.Patch(context.Background(), clusterName, types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
		t.Fatalf("endpoint of KubevirtCluster %s: %v", clusterName, err)
	}
	body, _ = json.Marshal(map[string]any{"status": map[string]any{"ready": true}})
	if _, err := kvc.Patch(context.Background(), clusterName, types.MergePatchType, body, metav1.PatchOptions{}, "status"); err != nil {
		t.Fatalf("status of KubevirtCluster %s: %v", clusterName, err)
	}
	kcp := e.client(t, "controlplane.cluster.x-k8s.io/v1alpha1", "KamajiControlPlane", tenant)
	// Kamaji reports its control plane externally managed: it runs no
	// control-plane Machines, and without it Cluster API keeps every deleted
	// worker's Node (it deletes one only while control-plane Nodes remain).
	body, _ = json.Marshal(map[string]any{"status": map[string]any{"ready": true, "initialized": true, "externalManagedControlPlane": true, "version": "v1.35.6", "replicas": 2, "readyReplicas": 2, "updatedReplicas": 2}})
	if _, err := kcp.Patch(context.Background(), clusterName, types.MergePatchType, body, metav1.PatchOptions{}, "status"); err != nil {
		t.Fatalf("status of KamajiControlPlane %s: %v", clusterName, err)
	}
}

// createCAPIPool creates a pool as its chart renders it (its
// KubevirtMachineTemplate, its MachineDeployment without spec.replicas, its
// MachineHealthCheck, and its talos-config ConfigMap and Job, whose step the
// stand-in kubelet runs: it applies the pool's TalosConfigTemplate) and
// returns the render.
func (e *env) createCAPIPool(t *testing.T, release string, vals map[string]any) *render.Manifest {
	t.Helper()
	m := renderPool(t, release, capiTenant, vals)
	for _, kind := range []string{kmtKind, "MachineDeployment", "MachineHealthCheck", "ConfigMap", "Job"} {
		d, err := m.One(kind)
		if err != nil {
			t.Fatal(err)
		}
		e.create(t, &unstructured.Unstructured{Object: d.Object})
	}
	job, _ := m.One("Job")
	jobName, _, _ := unstructured.NestedString(job.Object, "metadata", "name")
	// Gone when the subtest ends, as an uninstall leaves it: the fleet
	// subtests after it read a cluster whose every pool has its release.
	t.Cleanup(func() {
		for _, kind := range []string{"MachineHealthCheck", "MachineDeployment"} {
			e.remove(t, objectRef{capiAPIVersion, kind, capiTenant, poolName(release)})
		}
		e.remove(t, objectRef{"batch/v1", "Job", capiTenant, jobName})
		e.remove(t, objectRef{"v1", "ConfigMap", capiTenant, poolName(release) + "-talos-config"})
		e.remove(t, objectRef{"bootstrap.cluster.x-k8s.io/v1alpha3", "TalosConfigTemplate", capiTenant, poolName(release)})
		// Every template the subtest made the pool's (MachineDeploymentRollout moves it to a second).
		kmts, err := e.client(t, kmtAPIVersion, kmtKind, capiTenant).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, kmt := range kmts.Items {
			if strings.HasPrefix(kmt.GetName(), poolName(release)+"-") {
				e.remove(t, objectRef{kmtAPIVersion, kmtKind, capiTenant, kmt.GetName()})
			}
		}
	})
	return m
}

func testCAPIRollout(t *testing.T, e *env) {
	const (
		tenant  = capiTenant
		release = "kubernetes-nodes-capi-workers"
		workers = 2
	)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	mdName := poolName(release)
	vals := map[string]any{"cluster": capiCluster, "minReplicas": workers, "osImage": map[string]any{"builtin": map[string]any{}}}
	m := e.createCAPIPool(t, release, vals)
	oldTemplate := machineTemplateOf(t, m)

	// Cluster API's defaulting webhook seeds spec.replicas from the
	// autoscaler's min-size annotation.
	md, _ := e.get(t, capiAPIVersion, "MachineDeployment", tenant, mdName)
	if n, found, _ := unstructured.NestedInt64(md.Object, "spec", "replicas"); !found || n != workers {
		t.Fatalf("MachineDeployment %s/%s spec.replicas is %d (set: %v), want %d defaulted from its min-size annotation by Cluster API's webhook", tenant, mdName, n, found, workers)
	}

	first := time.Now()
	waitRolledOut(ctx, t, e, tenant, mdName, oldTemplate, workers, nil)
	t.Logf("%d workers ready on %s in %s", workers, oldTemplate, time.Since(first).Round(100*time.Millisecond))
	checkVirtualMachines(t, e, m, tenant, mdName)

	// A new template (another instancetype): the pool's upgrade creates it
	// and moves the MachineDeployment's infrastructureRef, as Helm's patch does.
	m2 := renderPool(t, release, tenant, withValues(vals, "instanceType", "u1.large"))
	newTemplate := machineTemplateOf(t, m2)
	if newTemplate == oldTemplate {
		t.Fatalf("instanceType u1.large renders the same template %s", oldTemplate)
	}
	kmt, err := m2.One(kmtKind)
	if err != nil {
		t.Fatal(err)
	}
	e.create(t, &unstructured.Unstructured{Object: kmt.Object})
	md2, err := m2.One("MachineDeployment")
	if err != nil {
		t.Fatal(err)
	}
	tpl, _, _ := unstructured.NestedMap(md2.Object, "spec", "template")
	body, _ := json.Marshal(map[string]any{"spec": map[string]any{"template": tpl}})
	second := time.Now()
	if _, err := e.client(t, capiAPIVersion, "MachineDeployment", tenant).Patch(ctx, mdName, types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
		t.Fatalf("move MachineDeployment %s/%s onto %s: %v", tenant, mdName, newTemplate, err)
	}
	var seen []string
	waitRolledOut(ctx, t, e, tenant, mdName, newTemplate, workers, &seen)
	t.Logf("rolled onto %s in %s; what rollout read on the way:\n  %s", newTemplate, time.Since(second).Round(100*time.Millisecond), strings.Join(seen, "\n  "))

	// When rollout reads it rolled out, every Machine runs the new template
	// and none of the old ones is left.
	machines, err := e.client(t, capiAPIVersion, "Machine", tenant).List(ctx, metav1.ListOptions{LabelSelector: "cluster.x-k8s.io/deployment-name=" + mdName})
	if err != nil {
		t.Fatal(err)
	}
	var onNew int
	for _, mc := range machines.Items {
		if mc.GetDeletionTimestamp() != nil {
			t.Errorf("Machine %s still being deleted when the MachineDeployment reads rolled out", mc.GetName())
			continue
		}
		infra, _, _ := unstructured.NestedString(mc.Object, "spec", "infrastructureRef", "name")
		km, ok := e.get(t, kmtAPIVersion, "KubevirtMachine", tenant, infra)
		if !ok {
			t.Errorf("Machine %s names KubevirtMachine %q, which does not exist", mc.GetName(), infra)
			continue
		}
		if from := km.GetAnnotations()["cluster.x-k8s.io/cloned-from-name"]; from == newTemplate {
			onNew++
		} else {
			t.Errorf("Machine %s runs KubevirtMachine %s cloned from %q, want %s", mc.GetName(), infra, from, newTemplate)
		}
	}
	if onNew != workers {
		t.Errorf("%d Machines on %s when the MachineDeployment reads rolled out, want %d", onNew, newTemplate, workers)
	}
	checkVirtualMachines(t, e, m2, tenant, mdName)

	// Cluster API deleted the old workers' Nodes itself (the stand-in
	// registers one Node per VirtualMachine, named after it, and deletes none).
	nodes, err := e.dynamic.Resource(nodeGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, n := range nodes.Items {
		if strings.HasPrefix(n.GetName(), mdName+"-") {
			left = append(left, n.GetName())
		}
	}
	if len(left) != workers {
		t.Fatalf("Nodes of the pool after the rollout: %v, want the %d new workers' only", left, workers)
	}

	// The pool's MachineHealthCheck, as the chart renders it, watches the
	// new workers through their Nodes and finds them healthy.
	for {
		mhc, _ := e.get(t, capiAPIVersion, "MachineHealthCheck", tenant, mdName)
		expected, _, _ := unstructured.NestedInt64(mhc.Object, "status", "expectedMachines")
		healthy, _, _ := unstructured.NestedInt64(mhc.Object, "status", "currentHealthy")
		if expected == workers && healthy == workers {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("MachineHealthCheck %s/%s: %d of %d expected Machines healthy, want %d of %d", tenant, mdName, healthy, expected, workers, workers)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// A worker whose Node goes NotReady (its kubelet stops posting): Cluster
	// API counts it out of readyReplicas, and rollout no longer reads the
	// pool as rolled out, as the tier's stand-in writes it for a NotReady
	// bystander (readyReplicas 1 of 2).
	now := time.Now().UTC().Format(time.RFC3339)
	body, _ = json.Marshal(map[string]any{"status": map[string]any{"conditions": []any{map[string]any{
		"type": "Ready", "status": "False", "reason": "KubeletNotReady", "message": "the stand-in's kubelet stopped",
		"lastHeartbeatTime": now, "lastTransitionTime": now,
	}}}})
	if _, err := e.dynamic.Resource(nodeGVR).Patch(ctx, left[0], types.StrategicMergePatchType, body, metav1.PatchOptions{}, "status"); err != nil {
		t.Fatalf("Node %s NotReady: %v", left[0], err)
	}
	for {
		md, _ := e.get(t, capiAPIVersion, "MachineDeployment", tenant, mdName)
		st := rollout.MachineDeploymentRolledOut(md.Object, newTemplate, workers)
		if st.ReadyReplicas == workers-1 {
			if st.RolledOut || st.UpdatedReplicas != workers || st.Replicas != workers {
				t.Errorf("with Node %s NotReady rollout reads %+v, want not rolled out with %d updated, %d ready, %d in all", left[0], st, workers, workers-1, workers)
			}
			t.Logf("Node %s NotReady: %s", left[0], st.Says)
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("with Node %s NotReady the MachineDeployment still reads %s", left[0], st.Says)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// testCAPIZeroWorkers: a pool at the chart's default minReplicas 0 gets
// spec.replicas 0 from Cluster API's webhook, no Machine, and reads as
// rolled out at zero workers.
func testCAPIZeroWorkers(t *testing.T, e *env) {
	const release = "kubernetes-nodes-capi-batch"
	m := e.createCAPIPool(t, release, map[string]any{"cluster": capiCluster, "osImage": map[string]any{"builtin": map[string]any{}}})
	mdName := poolName(release)
	md, _ := e.get(t, capiAPIVersion, "MachineDeployment", capiTenant, mdName)
	if n, found, _ := unstructured.NestedInt64(md.Object, "spec", "replicas"); !found || n != 0 {
		t.Fatalf("MachineDeployment %s/%s spec.replicas is %d (set: %v), want 0 from its min-size annotation %q", capiTenant, mdName, n, found, md.GetAnnotations()["cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"])
	}
	tpl := machineTemplateOf(t, m)
	// 2 workers expected by a reader that does not find spec.replicas: the
	// real one is there, so the verdict is Cluster API's.
	if st := rollout.MachineDeploymentRolledOut(md.Object, tpl, 2); !st.RolledOut {
		t.Errorf("MachineDeployment %s/%s at zero workers reads %s", capiTenant, mdName, st.Says)
	}
	// Cluster API has reconciled it (a MachineSet at zero) and created no Machine.
	deadline := time.Now().Add(time.Minute)
	for {
		sets, err := e.client(t, capiAPIVersion, "MachineSet", capiTenant).List(context.Background(), metav1.ListOptions{LabelSelector: "cluster.x-k8s.io/deployment-name=" + mdName})
		if err != nil {
			t.Fatal(err)
		}
		if len(sets.Items) == 1 {
			if n, _, _ := unstructured.NestedInt64(sets.Items[0].Object, "spec", "replicas"); n != 0 {
				t.Errorf("MachineSet %s wants %d replicas, want 0", sets.Items[0].GetName(), n)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d MachineSets of %s after a minute, want 1", len(sets.Items), mdName)
		}
		time.Sleep(100 * time.Millisecond)
	}
	machines, err := e.client(t, capiAPIVersion, "Machine", capiTenant).List(context.Background(), metav1.ListOptions{LabelSelector: "cluster.x-k8s.io/deployment-name=" + mdName})
	if err != nil {
		t.Fatal(err)
	}
	if len(machines.Items) != 0 {
		t.Errorf("%d Machines of the zero-worker pool %s, want none", len(machines.Items), mdName)
	}
}

// waitRolledOut waits until `rollout`'s reading of the MachineDeployment says
// it runs template with every worker updated and ready; seen, when given,
// collects each distinct reading on the way.
func waitRolledOut(ctx context.Context, t *testing.T, e *env, namespace, name, template string, workers int64, seen *[]string) {
	t.Helper()
	var last string
	for {
		md, err := e.client(t, capiAPIVersion, "MachineDeployment", namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get MachineDeployment %s/%s: %v", namespace, name, err)
		}
		st := rollout.MachineDeploymentRolledOut(md.Object, template, workers)
		if st.Says != last {
			last = st.Says
			if seen != nil {
				*seen = append(*seen, fmt.Sprintf("generation %d: %s", md.GetGeneration(), st.Says))
			}
		}
		if st.RolledOut {
			return
		}
		select {
		case <-ctx.Done():
			raw, _ := json.MarshalIndent(md.Object["status"], "", "  ")
			t.Fatalf("MachineDeployment %s/%s not rolled out onto %s: %s\nstatus: %s", namespace, name, template, st.Says, raw)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
