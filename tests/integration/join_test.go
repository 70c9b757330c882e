//go:build integration

package integration

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// kubectlPath is the kubectl the reconcile step runs: $KUBECTL, else the
// repository's bin/kubectl (`make kubectl` builds it from the Kubernetes
// module tools/apiserver builds kube-apiserver from).
func kubectlPath(t testing.TB) string {
	t.Helper()
	path := os.Getenv("KUBECTL")
	if path == "" {
		path = support.Path("bin", "kubectl")
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("kubectl is not at %s (%v): run `make kubectl`, or point KUBECTL at one", path, err)
	}
	return path
}

// runJobStep runs a Job's container as a kubelet would, on this machine
// against the tier's API server, and returns its output: the command and the
// env values as the Job states them, each ConfigMap volume written to a
// folder that stands in for its mountPath (in the command, the arguments and
// the env values that name it), kubectl on the PATH and the tier's kubeconfig
// in place of the pod's service account. The tier has no kubelet; this is the
// step itself, against the real API server.
func runJobStep(ctx context.Context, t testing.TB, e *env, job *unstructured.Unstructured) (string, error) {
	t.Helper()
	pod, _, _ := unstructured.NestedMap(job.Object, "spec", "template", "spec")
	containers, _ := pod["containers"].([]interface{})
	if len(containers) != 1 {
		return "", fmt.Errorf("job %s has %d containers, want 1", job.GetName(), len(containers))
	}
	container := containers[0].(map[string]interface{})
	volumes := map[string]string{} // volume name -> ConfigMap
	vols, _ := pod["volumes"].([]interface{})
	for _, v := range vols {
		vol := v.(map[string]interface{})
		cm, ok, _ := unstructured.NestedString(vol, "configMap", "name")
		if !ok {
			return "", fmt.Errorf("volume %v is not a ConfigMap", vol["name"])
		}
		volumes[vol["name"].(string)] = cm
	}
	mounts := map[string]string{} // mountPath -> local folder
	ms, _ := container["volumeMounts"].([]interface{})
	for _, m := range ms {
		mount := m.(map[string]interface{})
		cmName := volumes[mount["name"].(string)]
		cm, ok := e.get(t, "v1", "ConfigMap", job.GetNamespace(), cmName)
		if !ok {
			return "", fmt.Errorf("ConfigMap %s of the job is missing", cmName)
		}
		dir := t.TempDir()
		data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
		for k, v := range data {
			if err := os.WriteFile(filepath.Join(dir, k), []byte(v), 0o644); err != nil {
				return "", err
			}
		}
		mounts[mount["mountPath"].(string)] = dir
	}
	local := func(s string) string {
		for path, dir := range mounts {
			if s == path || strings.HasPrefix(s, path+"/") {
				return dir + strings.TrimPrefix(s, path)
			}
		}
		return s
	}
	var argv []string
	for _, key := range []string{"command", "args"} {
		list, _ := container[key].([]interface{})
		for _, a := range list {
			argv = append(argv, local(a.(string)))
		}
	}
	env := []string{
		"PATH=" + filepath.Dir(kubectlPath(t)) + ":/usr/local/bin:/usr/bin:/bin",
		"KUBECONFIG=" + e.kubeconfig,
		"HOME=" + t.TempDir(),
	}
	envs, _ := container["env"].([]interface{})
	for _, v := range envs {
		ev := v.(map[string]interface{})
		value, ok := ev["value"].(string)
		if !ok {
			return "", fmt.Errorf("env %v takes its value from elsewhere; the step reads every value itself", ev["name"])
		}
		env = append(env, fmt.Sprintf("%s=%s", ev["name"], local(value)))
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// testWorkersJoin: a pool installed before its parent cluster's control plane
// exists gets its TalosConfigTemplate once the parent's objects appear, as
// Kamaji, cert-manager and the parent chart create them: the reconcile step
// waits for them, applies a TalosConfigTemplate the real CRD accepts, owned by
// the KamajiControlPlane, carrying the live Service address and CAs, and names
// that address in the control plane's certificate; run again it changes
// nothing; no Helm release record of the pool holds a secret.
func testWorkersJoin(t *testing.T, e *env) {
	const namespace, cluster, release = "tenant-join", "join", "kubernetes-nodes-join-workers"
	parent, pool := "kubernetes-"+cluster, "kubernetes-"+cluster+"-workers"
	e.createNamespace(t, namespace)
	h := e.helm(t, namespace)
	values := map[string]interface{}{"cluster": cluster, "talos": map[string]interface{}{
		"registryMirrors": map[string]interface{}{"docker.io": map[string]interface{}{"endpoints": []interface{}{"https://mirror.internal/v2/docker.io"}}},
	}}
	h.mustInstall(release, render.PoolChart, values)
	if _, ok := e.get(t, "bootstrap.cluster.x-k8s.io/v1alpha3", "TalosConfigTemplate", namespace, pool); ok {
		t.Fatal("the release itself holds no TalosConfigTemplate: the step writes it")
	}
	job := onlyJob(t, e, namespace)

	// The step starts first and waits.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	type result struct {
		out string
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := runJobStep(ctx, t, e, job)
		done <- result{out, err}
	}()
	time.Sleep(2 * time.Second)

	secrets := e.createParentCluster(t, namespace, parent)
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		t.Fatal("the reconcile step did not finish once the parent's objects existed")
	}
	if r.err != nil {
		t.Fatalf("the reconcile step failed: %v\n%s", r.err, r.out)
	}
	if !strings.Contains(r.out, "waiting for the parent cluster's objects:") || !strings.Contains(r.out, "TalosConfigTemplate "+pool+" written") {
		t.Errorf("the step should have waited, then written the template:\n%s", r.out)
	}

	tct, ok := e.get(t, "bootstrap.cluster.x-k8s.io/v1alpha3", "TalosConfigTemplate", namespace, pool)
	if !ok {
		t.Fatalf("no TalosConfigTemplate %s/%s after the step:\n%s", namespace, pool, r.out)
	}
	kcp, _ := e.get(t, "controlplane.cluster.x-k8s.io/v1alpha1", "KamajiControlPlane", namespace, parent)
	svc, _ := e.get(t, "v1", "Service", namespace, parent)
	ip, _, _ := unstructured.NestedString(svc.Object, "spec", "clusterIP")
	owners := tct.GetOwnerReferences()
	if len(owners) != 1 || owners[0].UID != kcp.GetUID() || owners[0].Kind != "KamajiControlPlane" {
		t.Errorf("owner references %v: want the KamajiControlPlane %s (uid %s)", owners, parent, kcp.GetUID())
	}
	if tct.GetAnnotations()["helm.sh/resource-policy"] != "keep" {
		t.Error("the template carries helm.sh/resource-policy: keep, so an upgrade from a chart that rendered it never deletes it")
	}
	generate, _, _ := unstructured.NestedString(tct.Object, "spec", "template", "spec", "generateType")
	data, _, _ := unstructured.NestedString(tct.Object, "spec", "template", "spec", "data")
	if generate != "none" {
		t.Errorf("generateType %q, want none: CABPT uses the data as it is", generate)
	}
	var machineConfig struct {
		Machine struct {
			Token string `json:"token"`
			CA    struct {
				Crt string `json:"crt"`
			} `json:"ca"`
			Network struct {
				Nameservers      []string `json:"nameservers"`
				ExtraHostEntries []struct {
					IP string `json:"ip"`
				} `json:"extraHostEntries"`
			} `json:"network"`
			Registries struct {
				Mirrors map[string]interface{} `json:"mirrors"`
			} `json:"registries"`
		} `json:"machine"`
		Cluster struct {
			ID           string `json:"id"`
			Secret       string `json:"secret"`
			Token        string `json:"token"`
			ControlPlane struct {
				Endpoint string `json:"endpoint"`
			} `json:"controlPlane"`
			CA struct {
				Crt string `json:"crt"`
			} `json:"ca"`
		} `json:"cluster"`
	}
	// Only the fields the parent's objects fill are read here; Talos reads the rest (tests/talos).
	if err := yaml.Unmarshal([]byte(data), &machineConfig); err != nil {
		t.Fatalf("the template's data is not YAML: %v", err)
	}
	dns, _ := e.get(t, "v1", "Service", "kube-system", "kube-dns")
	dnsIP, _, _ := unstructured.NestedString(dns.Object, "spec", "clusterIP")
	for what, got := range map[string][2]string{
		"machine.token":                       {machineConfig.Machine.Token, secrets["token"]},
		"machine.ca.crt":                      {machineConfig.Machine.CA.Crt, secrets["talosCA"]},
		"cluster.id":                          {machineConfig.Cluster.ID, secrets["clusterId"]},
		"cluster.secret":                      {machineConfig.Cluster.Secret, secrets["clusterSecret"]},
		"cluster.token":                       {machineConfig.Cluster.Token, secrets["bootstrapToken"]},
		"cluster.ca.crt":                      {machineConfig.Cluster.CA.Crt, secrets["kubernetesCA"]},
		"cluster.controlPlane.endpoint":       {machineConfig.Cluster.ControlPlane.Endpoint, "https://" + parent + "." + namespace + ".svc:6443"},
		"machine.network.nameservers[0]":      {first(machineConfig.Machine.Network.Nameservers), dnsIP},
		"machine.network.extraHostEntries.ip": {firstIP(machineConfig.Machine.Network.ExtraHostEntries), ip},
	} {
		if got[0] != got[1] {
			t.Errorf("%s is %q, want %q (from the parent's live objects)", what, got[0], got[1])
		}
	}
	if _, ok := machineConfig.Machine.Registries.Mirrors["docker.io"]; !ok {
		t.Error("the pool's registry mirror is in the worker config")
	}
	sans, _, _ := unstructured.NestedStringSlice(kcp.Object, "spec", "network", "certSANs")
	if !contains(sans, ip) || !contains(sans, parent+"."+namespace+".svc") {
		t.Errorf("KamajiControlPlane certSANs %v: want the Service address %s and name", sans, ip)
	}

	// Run again: nothing changes.
	version := tct.GetResourceVersion()
	if out, err := runJobStep(context.Background(), t, e, job); err != nil {
		t.Fatalf("second run: %v\n%s", err, out)
	}
	again, _ := e.get(t, "bootstrap.cluster.x-k8s.io/v1alpha3", "TalosConfigTemplate", namespace, pool)
	if again.GetResourceVersion() != version {
		t.Error("a second run of the step rewrote an unchanged TalosConfigTemplate")
	}

	// An upgrade with the parent in place renders no secret either, and leaves the template alone.
	h.mustUpgrade(release, render.PoolChart, values)
	for _, rec := range releaseRecords(t, e, namespace, release) {
		for name, secret := range secrets {
			if strings.Contains(rec, secret) {
				t.Errorf("a Helm release record of %s holds the parent's %s", release, name)
			}
		}
	}
	if _, ok := e.get(t, "bootstrap.cluster.x-k8s.io/v1alpha3", "TalosConfigTemplate", namespace, pool); !ok {
		t.Error("the upgrade removed the TalosConfigTemplate")
	}
	t.Logf("the step waited for the parent's objects, then wrote TalosConfigTemplate %s/%s (control plane %s); a second run changed nothing", namespace, pool, ip)
}

func first(list []string) string {
	if len(list) == 0 {
		return ""
	}
	return list[0]
}

func firstIP(list []struct {
	IP string `json:"ip"`
}) string {
	if len(list) == 0 {
		return ""
	}
	return list[0].IP
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// onlyJob is the one Job of the namespace (the pool's reconcile Job).
func onlyJob(t testing.TB, e *env, namespace string) *unstructured.Unstructured {
	t.Helper()
	list, err := e.client(t, "batch/v1", "Job", namespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 {
		t.Fatalf("%d Jobs in %s, want the pool's one", len(list.Items), namespace)
	}
	return &list.Items[0]
}

// releaseRecords decodes every Helm release record (storage Secret) of a release.
func releaseRecords(t testing.TB, e *env, namespace, release string) []string {
	t.Helper()
	list, err := e.client(t, "v1", "Secret", namespace).List(context.Background(), metav1.ListOptions{LabelSelector: "owner=helm,name=" + release})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) == 0 {
		t.Fatalf("no release record of %s", release)
	}
	var out []string
	for _, s := range list.Items {
		raw, _, _ := unstructured.NestedString(s.Object, "data", "release")
		text, err := decodeRelease(raw)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, text)
	}
	return out
}

// createParentCluster creates what the parent cluster's release and its
// controllers hold once its control plane runs: the KamajiControlPlane (the
// parent chart), its Service (Kamaji, the address allocated by the API server)
// and Kubernetes CA Secret (Kamaji: ca.crt, ca.key), the Talos CA Secret
// (cert-manager: a kubernetes.io/tls Secret of a self-signed Ed25519 CA), the
// Talos secrets (the parent chart), and the management cluster's kube-dns
// Service. It returns the values a worker config must carry, as it carries
// them (the CAs base64 as the Secrets hold them, the rest decoded).
func (e *env) createParentCluster(t testing.TB, namespace, parent string) map[string]string {
	t.Helper()
	kubernetesCA, kubernetesKey := selfSignedCA(t, "kubernetes", false)
	talosCA, talosKey := selfSignedCA(t, "talos", true)
	b64 := func(b []byte) string { return encodeBase64(b) }
	tokens := map[string]string{
		"token":          "k3j9x2.q8w7e6r5t4y3u2i1",
		"clusterId":      "Zk3oQ1n8uVb2Lx7RcW5tYp0aHs6dJf9E",
		"clusterSecret":  "m4Nq8Tz1Wk6Pv3Yr9Ls2Hd5Gf7Jc0Xb1",
		"bootstrapToken": "a1b2c3.d4e5f6g7h8i9j0k1",
	}
	if _, ok := e.get(t, "v1", "Service", "kube-system", "kube-dns"); !ok {
		e.createYAML(t, `apiVersion: v1
kind: Service
metadata: {name: kube-dns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec:
  selector: {k8s-app: kube-dns}
  ports: [{name: dns, port: 53, protocol: UDP}, {name: dns-tcp, port: 53, protocol: TCP}]
`)
	}
	e.createYAML(t, fmt.Sprintf(`apiVersion: controlplane.cluster.x-k8s.io/v1alpha1
kind: KamajiControlPlane
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  dataStoreName: default
  version: v1.35.6
  network:
    serviceType: ClusterIP
    certSANs: [%[1]s.%[2]s.svc, %[1]s.%[2]s.svc.cluster.local]
---
apiVersion: v1
kind: Service
metadata: {name: %[1]s, namespace: %[2]s, labels: {kamaji.clastix.io/name: %[1]s}}
spec:
  type: ClusterIP
  selector: {kamaji.clastix.io/name: %[1]s}
  ports: [{name: kube-apiserver, port: 6443, targetPort: 6443}, {name: talos-trustd, port: 50001, targetPort: 50001}]
---
apiVersion: v1
kind: Secret
metadata: {name: %[1]s-ca, namespace: %[2]s, labels: {kamaji.clastix.io/name: %[1]s}}
data: {ca.crt: %[3]s, ca.key: %[4]s}
---
apiVersion: v1
kind: Secret
type: kubernetes.io/tls
metadata: {name: %[1]s-talos-ca, namespace: %[2]s, annotations: {cert-manager.io/certificate-name: %[1]s-talos-ca, cert-manager.io/issuer-kind: Issuer, cert-manager.io/issuer-name: %[1]s-talos-bootstrap}}
data: {ca.crt: %[5]s, tls.crt: %[5]s, tls.key: %[6]s}
---
apiVersion: v1
kind: Secret
type: Opaque
metadata: {name: %[1]s-talos-secrets, namespace: %[2]s}
data: {token: %[7]s, clusterId: %[8]s, clusterSecret: %[9]s, bootstrapToken: %[10]s, bootstrapTokenId: %[11]s, bootstrapTokenSecret: %[12]s}
`, parent, namespace, b64(kubernetesCA), b64(kubernetesKey), b64(talosCA), b64(talosKey),
		b64([]byte(tokens["token"])), b64([]byte(tokens["clusterId"])), b64([]byte(tokens["clusterSecret"])), b64([]byte(tokens["bootstrapToken"])),
		b64([]byte("a1b2c3")), b64([]byte("d4e5f6g7h8i9j0k1"))))
	tokens["kubernetesCA"] = b64(kubernetesCA)
	tokens["talosCA"] = b64(talosCA)
	return tokens
}

// selfSignedCA returns a CA certificate and key as PEM: Ed25519 as
// cert-manager issues the Talos CA, ECDSA P-256 as Kamaji's Kubernetes CA.
func selfSignedCA(t testing.TB, name string, ed bool) (cert, key []byte) {
	t.Helper()
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	var pub, priv interface{}
	if ed {
		p, s, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		pub, priv = p, s
	} else {
		s, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		pub, priv = &s.PublicKey, s
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, pub, priv)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
}

func encodeBase64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// decodeRelease reads a release record as the API shows data.release: base64
// of what Helm stores, base64 of gzip of the release's JSON.
func decodeRelease(wire string) (string, error) {
	stored, err := base64.StdEncoding.DecodeString(wire)
	if err != nil {
		return "", err
	}
	gz, err := base64.StdEncoding.DecodeString(string(stored))
	if err != nil {
		return "", err
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return "", err
	}
	raw, err := io.ReadAll(zr)
	return string(raw), err
}

// filledTalosConfigTemplate is the TalosConfigTemplate a pool render's
// reconcile Job applies, its placeholders filled with values of the shapes the
// Job accepts (the Job's own run is WorkersJoin).
func filledTalosConfigTemplate(t testing.TB, m *render.Manifest) *render.Manifest {
	t.Helper()
	var text string
	for _, d := range m.OfKind("ConfigMap") {
		if data, ok := d.Object["data"].(map[string]interface{}); ok {
			if s, ok := data["talosconfigtemplate.yaml"].(string); ok {
				text = s
			}
		}
	}
	if text == "" {
		t.Fatal("the render has no talos-config ConfigMap")
	}
	for k, v := range map[string]string{
		"@TALOS_TOKEN@": "k3j9x2.q8w7e6r5t4y3u2i1", "@TALOS_CA@": encodeBase64([]byte("ca")), "@CLUSTER_ID@": "Zk3oQ1n8uVb2Lx7RcW5tYp0aHs6dJf9E",
		"@CLUSTER_SECRET@": "m4Nq8Tz1Wk6Pv3Yr9Ls2Hd5Gf7Jc0Xb1", "@BOOTSTRAP_TOKEN@": "a1b2c3.d4e5f6g7h8i9j0k1", "@KUBERNETES_CA@": encodeBase64([]byte("ca")),
		"@SERVICE_IP@": "10.95.0.17", "@DNS_IP@": "10.96.0.10", "@CONTROL_PLANE_UID@": "5d0f3f5e-8d31-4c55-9a47-5a2b9d0c7e11",
	} {
		text = strings.ReplaceAll(text, k, v)
	}
	objs, err := render.ParseObjects([]byte(text))
	if err != nil || len(objs) != 1 {
		t.Fatalf("the ConfigMap's talosconfigtemplate.yaml is not one object (%v)", err)
	}
	return &render.Manifest{Docs: []render.Doc{{Text: text, Object: objs[0].Object}}}
}
