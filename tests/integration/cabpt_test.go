//go:build integration

package integration

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/cozystack/golden-worker-images/tests/support"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

// cabptModulePath is the Talos bootstrap provider's module: tools/
// cluster-api-bootstrap-provider-talos pins the release the tier's manager is
// built from, and the tier registers that release's webhooks.
const (
	cabptModulePath = "github.com/siderolabs/cluster-api-bootstrap-provider-talos"
	cabptTool       = "cluster-api-bootstrap-provider-talos"
)

// startCABPT starts the Talos bootstrap provider's manager built by `make
// cluster-api-bootstrap-provider-talos` against the tier's API server, as
// startClusterAPI starts Cluster API's (no leader election, which is its
// default; endpoints on free loopback ports; a self-signed serving
// certificate), registers its validating webhooks for TalosConfig and
// TalosConfigTemplate from the module's config/webhook/manifests.yaml and
// waits until it is ready.
func (e *env) startCABPT(t testing.TB, bin string) {
	t.Helper()
	certDir := filepath.Join(e.dir, "cabpt-certs")
	caPEM := writeServingCert(t, certDir)
	webhookPort, healthPort := freePort(t), freePort(t)
	e.start(t, "cabpt", bin,
		"--kubeconfig="+e.kubeconfig,
		fmt.Sprintf("--webhook-port=%d", webhookPort),
		"--webhook-cert-dir="+certDir,
		fmt.Sprintf("--health-addr=127.0.0.1:%d", healthPort),
		fmt.Sprintf("--diagnostics-address=127.0.0.1:%d", freePort(t)),
		"--insecure-diagnostics",
		"--v=2",
	)
	version, sum := toolModule(t, cabptTool, cabptModulePath)
	e.registerWebhooks(t, "cabpt-", filepath.Join(moduleDir(t, e.dir, cabptModulePath, version, sum), "config", "webhook", "manifests.yaml"), webhookPort, caPEM)
	e.waitReadyz(t, "cabpt", healthPort)
}

// bootstrapData is one bootstrap data Secret the provider wrote, with the
// TalosConfig it generated it from (Cluster API's clone of the pool's
// TalosConfigTemplate), read when the Secret appeared: the Machines of a
// rolled pool go, and their TalosConfigs and Secrets with them.
type bootstrapData struct {
	namespace, secret, talosConfig, pool string
	value, input                         string
}

// bootstrapDataLog collects every bootstrap data Secret written in the tier
// (a Secret owned by a TalosConfig) from a watch started before any pool
// exists, so none is missed however briefly its Machine lives.
type bootstrapDataLog struct {
	mu       sync.Mutex
	seen     []bootstrapData
	problems []string
}

func (l *bootstrapDataLog) all() ([]bootstrapData, []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]bootstrapData(nil), l.seen...), append([]string(nil), l.problems...)
}

// watchBootstrapData watches Secrets of every namespace until the test ends.
func (e *env) watchBootstrapData(t *testing.T) *bootstrapDataLog {
	l := &bootstrapDataLog{}
	ctx, stop := context.WithCancel(context.Background())
	secrets := e.dynamic.Resource(secretGVR)
	list, err := secrets.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rv := list.GetResourceVersion()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			w, err := secrets.Watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
			if err != nil {
				if ctx.Err() == nil {
					l.mu.Lock()
					l.problems = append(l.problems, fmt.Sprintf("watch Secrets: %v", err))
					l.mu.Unlock()
				}
				return
			}
			for ev := range w.ResultChan() {
				obj, ok := ev.Object.(*unstructured.Unstructured)
				if !ok {
					continue
				}
				rv = obj.GetResourceVersion()
				if ev.Type == watch.Added {
					l.record(ctx, e, obj)
				}
			}
			w.Stop()
		}
	}()
	t.Cleanup(func() { stop(); <-done })
	return l
}

func (l *bootstrapDataLog) record(ctx context.Context, e *env, secret *unstructured.Unstructured) {
	var owner string
	for _, ref := range secret.GetOwnerReferences() {
		if ref.Kind == "TalosConfig" && ref.Controller != nil && *ref.Controller {
			owner = ref.Name
		}
	}
	if owner == "" {
		return
	}
	value, _, _ := unstructured.NestedString(secret.Object, "data", "value")
	raw, err := base64.StdEncoding.DecodeString(value)
	d := bootstrapData{namespace: secret.GetNamespace(), secret: secret.GetName(), talosConfig: owner, value: string(raw)}
	tc, getErr := e.dynamic.Resource(talosConfigGVR).Namespace(d.namespace).Get(ctx, owner, metav1.GetOptions{})
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case err != nil:
		l.problems = append(l.problems, fmt.Sprintf("Secret %s/%s: value is not base64: %v", d.namespace, d.secret, err))
	case getErr != nil:
		if ctx.Err() == nil || !apierrors.IsNotFound(getErr) {
			l.problems = append(l.problems, fmt.Sprintf("TalosConfig %s/%s of Secret %s: %v", d.namespace, owner, d.secret, getErr))
		}
	default:
		d.input, _, _ = unstructured.NestedString(tc.Object, "spec", "data")
		d.pool = tc.GetLabels()["cluster.x-k8s.io/deployment-name"]
		l.seen = append(l.seen, d)
	}
}

// workerConfigRead is what validate-worker-config (tests/talos) prints of a
// file: Talos's verdict and what Talos reads of the config.
type workerConfigRead struct {
	File         string              `json:"file"`
	Error        string              `json:"error"`
	MachineType  string              `json:"machineType"`
	InstallImage string              `json:"installImage"`
	KubeletImage string              `json:"kubeletImage"`
	Endpoint     string              `json:"endpoint"`
	Mirrors      map[string][]string `json:"mirrors"`
	RegistryCAs  map[string]string   `json:"registryCAs"`
}

// validateWorkerConfigs builds tests/talos's validate-worker-config once
// (Talos's machinery stays in that module) and runs it over the files: what
// Talos reads of each, by file, and whether it refused any.
func (e *env) validateWorkerConfigs(t *testing.T, files []string) (map[string]workerConfigRead, bool) {
	t.Helper()
	bin := filepath.Join(e.dir, "validate-worker-config")
	if _, err := os.Stat(bin); err != nil {
		build := exec.Command("go", "build", "-trimpath", "-o", bin, "./cmd/validate-worker-config")
		build.Dir = filepath.Join(support.RepoRoot(), "tests", "talos")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("build tests/talos/cmd/validate-worker-config: %v\n%s", err, out)
		}
	}
	cmd := exec.Command(bin, files...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	refused := false
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 1 {
		refused = true
	} else if err != nil {
		t.Fatalf("validate-worker-config: %v\n%s", err, stderr.String())
	}
	var reads []workerConfigRead
	if err := json.Unmarshal(out, &reads); err != nil {
		t.Fatalf("validate-worker-config printed no JSON: %v\n%s", err, out)
	}
	byFile := map[string]workerConfigRead{}
	for _, r := range reads {
		byFile[r.File] = r
	}
	if len(byFile) != len(files) {
		t.Fatalf("validate-worker-config read %d files of %d", len(byFile), len(files))
	}
	return byFile, refused
}

// testBootstrapData: every machine config the Talos bootstrap provider
// generated in this run, for every pool the subtests before it released and
// rolled, passes checkBootstrapData, and the closed-network pools' mirrors
// and registry CAs were among what it compared. Run last.
func testBootstrapData(t *testing.T, e *env, log *bootstrapDataLog) {
	seen, problems := log.all()
	for _, p := range problems {
		t.Error(p)
	}
	if len(seen) == 0 {
		t.Fatal("the bootstrap provider wrote no bootstrap data")
	}
	reads := checkBootstrapData(t, e, seen)
	pools := map[string]int{}
	var withMirrors, withCAs int
	for i, d := range seen {
		if len(reads[i].Mirrors) > 0 {
			withMirrors++
		}
		if len(reads[i].RegistryCAs) > 0 {
			withCAs++
		}
		pools[d.namespace+"/"+d.pool]++
	}
	// The example pools with mirrors and a registry CA were among them (the
	// closed-network page's), so comparing those fields compared something.
	if withMirrors == 0 || withCAs == 0 {
		t.Errorf("%d configs with registry mirrors, %d with a registry CA: want the closed-network pools' among them", withMirrors, withCAs)
	}
	var names []string
	for p, n := range pools {
		names = append(names, fmt.Sprintf("%s (%d)", p, n))
	}
	sort.Strings(names)
	t.Logf("%d machine configs generated by the bootstrap provider, accepted by Talos (%d with mirrors, %d with a registry CA), for %d pools: %s",
		len(seen), withMirrors, withCAs, len(pools), strings.Join(names, ", "))
}

// checkBootstrapData: each machine config the bootstrap provider generated
// is a worker config Talos's own validator accepts (strict, cloud mode:
// tests/talos's check), named after its TalosConfig, and carries what the
// pool chose as its TalosConfigTemplate states it (Cluster API's clone of
// it, the provider's input): the installer, the registry mirrors and their
// CAs, the control plane and the kubelet, as Talos reads each. It returns
// what Talos read of each generated config, in seen's order.
func checkBootstrapData(t *testing.T, e *env, seen []bootstrapData) []workerConfigRead {
	t.Helper()
	dir := t.TempDir()
	var files []string
	for i, d := range seen {
		for _, f := range []struct{ suffix, text string }{{"out", d.value}, {"in", d.input}} {
			path := filepath.Join(dir, fmt.Sprintf("%03d-%s-%s.%s.yaml", i, d.namespace, d.secret, f.suffix))
			writeFile(t, path, f.text)
			files = append(files, path)
		}
	}
	// The control: Talos refuses a generated config with an unknown field.
	broken := filepath.Join(dir, "control.yaml")
	writeFile(t, broken, seen[0].value+"machineTypo: {}\n")
	reads, _ := e.validateWorkerConfigs(t, append(files, broken))
	if reads[broken].Error == "" {
		t.Fatalf("Talos accepted %s with an unknown field: the check cannot fail", seen[0].secret)
	}

	generated := make([]workerConfigRead, len(seen))
	for i, d := range seen {
		out := reads[files[2*i]]
		in := reads[files[2*i+1]]
		generated[i] = out
		what := fmt.Sprintf("bootstrap data %s/%s (TalosConfig %s, pool %s)", d.namespace, d.secret, d.talosConfig, d.pool)
		if out.Error != "" {
			t.Errorf("%s: Talos refuses it: %s", what, out.Error)
			continue
		}
		if in.Error != "" {
			t.Errorf("%s: Talos refuses its TalosConfig's data: %s", what, in.Error)
		}
		if out.MachineType != "worker" {
			t.Errorf("%s: machine type %q, want worker", what, out.MachineType)
		}
		if want := d.talosConfig + "-bootstrap-data"; d.secret != want {
			t.Errorf("%s: named %s, want %s", what, d.secret, want)
		}
		for field, got := range map[string][2]any{
			"installer":     {out.InstallImage, in.InstallImage},
			"kubelet":       {out.KubeletImage, in.KubeletImage},
			"control plane": {out.Endpoint, in.Endpoint},
			"mirrors":       {out.Mirrors, in.Mirrors},
			"registry CAs":  {out.RegistryCAs, in.RegistryCAs},
		} {
			if !reflect.DeepEqual(got[0], got[1]) {
				t.Errorf("%s: Talos reads the %s %v, the pool's TalosConfigTemplate says %v", what, field, got[0], got[1])
			}
		}
		if !strings.Contains(out.InstallImage, "/installer") {
			t.Errorf("%s: installs %q, not a Talos installer", what, out.InstallImage)
		}
	}
	return generated
}
