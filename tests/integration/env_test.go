//go:build integration

// Package integration installs, upgrades and uninstalls the charts for real:
// Helm's Go SDK against a kube-apiserver + etcd started on loopback for the
// test run, with the real Cluster API, CAPK, CABPT, CDI, KubeVirt, Flux and
// CSI snapshot CRD schemas. Build the binaries with `make apiserver`; run with `make integration`.
package integration

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cozystack/golden-worker-images/tests/support"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// kubeVersion is what `make apiserver` stamps into kube-apiserver.
const kubeVersion = "v1.36.3"

// env is one running API server and the clients the tests use on it.
type env struct {
	dir        string // temporary folder holding everything the processes write
	kubeconfig string
	config     *rest.Config
	dynamic    dynamic.Interface
	mapper     *restmapper.DeferredDiscoveryRESTMapper

	mu       sync.Mutex
	warnings []string // API warnings, collected by warningRecorder
	procs    []*process
	cliBin   string // workerimage, built on first use
	// capi: the stand-ins for what needs a kubelet or a VM, where Cluster
	// API runs (TestPlatformControllers).
	capi *capiStandIns
}

// process is a child started in its own process group, so stopping it also
// stops anything it started.
type process struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{} // closed when the process has exited
	err  error
	once sync.Once
}

// binDir is where `make apiserver` leaves kube-apiserver and etcd.
func binDir() string {
	if dir := os.Getenv("KUBE_APISERVER_BIN_DIR"); dir != "" {
		return dir
	}
	return filepath.Join(support.RepoRoot(), ".cache", "apiserver", "bin")
}

// startEnv starts etcd and kube-apiserver on loopback ports and installs the
// CRDs. Everything is stopped and removed by t.Cleanup, also when the test
// fails or panics; a timer stops the processes before `go test -timeout`
// would kill the binary without running cleanups, and an interrupt does the
// same before exiting.
func startEnv(t testing.TB) *env {
	t.Helper()
	bin := binDir()
	for _, name := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(bin, name)); err != nil {
			t.Fatalf("%s is not built in %s: run `make apiserver` first (or set KUBE_APISERVER_BIN_DIR)", name, bin)
		}
	}
	// Short names: etcd and the apiserver put unix sockets under some of these paths.
	dir, err := os.MkdirTemp("", "apiserver-tier-")
	if err != nil {
		t.Fatal(err)
	}
	e := &env{dir: dir}
	t.Cleanup(func() {
		e.stop()
		if t.Failed() {
			e.dumpLogs(t)
		}
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("removing %s: %v", dir, err)
		}
	})
	e.guard(t)

	etcdClient, etcdPeer := freePort(t), freePort(t)
	apiPort := freePort(t)
	token := randomHex(t, 16)
	for _, sub := range []string{"etcd", "certs"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(dir, "tokens.csv"), token+",admin,admin,system:masters\n")
	writeServiceAccountKey(t, dir)

	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", etcdClient)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", etcdPeer)
	e.start(t, "etcd", filepath.Join(bin, "etcd"),
		"--name=tier",
		"--data-dir="+filepath.Join(dir, "etcd"),
		"--listen-client-urls="+etcdURL,
		"--advertise-client-urls="+etcdURL,
		"--listen-peer-urls="+peerURL,
		"--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=tier="+peerURL,
		"--unsafe-no-fsync",
		"--log-level=warn",
	)
	e.start(t, "kube-apiserver", filepath.Join(bin, "kube-apiserver"),
		"--etcd-servers="+etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", apiPort),
		"--cert-dir="+filepath.Join(dir, "certs"),
		"--token-auth-file="+filepath.Join(dir, "tokens.csv"),
		// RBAC, as a cluster authorizes: the admin token is system:masters,
		// and a tenant's identity is refused what its roles do not grant.
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file="+filepath.Join(dir, "sa.pub"),
		"--service-account-signing-key-file="+filepath.Join(dir, "sa.key"),
		"--service-cluster-ip-range=10.0.0.0/24",
		// No kubelets, controllers or pods here: skip what only they need.
		"--endpoint-reconciler-type=none",
		"--enable-priority-and-fairness=false",
		"--disable-admission-plugins=ServiceAccount",
	)

	host := fmt.Sprintf("https://127.0.0.1:%d", apiPort)
	e.config = &rest.Config{
		Host:        host,
		BearerToken: token,
		// The server writes its self-signed certificate and CA here at start.
		TLSClientConfig: rest.TLSClientConfig{CAFile: filepath.Join(dir, "certs", "apiserver.crt")},
		QPS:             100,
		Burst:           200,
		WarningHandler:  warningRecorder{e},
	}
	e.waitReady(t, 90*time.Second)

	e.kubeconfig = filepath.Join(dir, "kubeconfig")
	writeFile(t, e.kubeconfig, fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: tier
  cluster:
    server: %s
    certificate-authority: %s
users:
- name: admin
  user:
    token: %s
contexts:
- name: tier
  context: {cluster: tier, user: admin}
current-context: tier
`, host, e.config.CAFile, token))

	if e.dynamic, err = dynamic.NewForConfig(e.config); err != nil {
		t.Fatal(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(e.config)
	if err != nil {
		t.Fatal(err)
	}
	e.mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))

	if v, err := dc.ServerVersion(); err != nil {
		t.Fatal(err)
	} else if v.GitVersion != kubeVersion {
		t.Fatalf("kube-apiserver reports version %q, want %q (built without the version ldflags?)", v.GitVersion, kubeVersion)
	}
	return e
}

// guard stops the processes and removes the folder before the test binary's
// own deadline (which panics without running cleanups), and on SIGINT/SIGTERM.
func (e *env) guard(t testing.TB) {
	if deadline, ok := testDeadline(t); ok {
		left := time.Until(deadline)
		timer := time.AfterFunc(left-min(30*time.Second, left/10), func() {
			fmt.Fprintln(os.Stderr, "integration: test deadline near, stopping kube-apiserver and etcd and removing", e.dir)
			e.stop()
			os.RemoveAll(e.dir)
		})
		t.Cleanup(func() { timer.Stop() })
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	quit := make(chan struct{})
	go func() {
		select {
		case <-sigs:
			e.stop()
			os.RemoveAll(e.dir)
			os.Exit(2)
		case <-quit:
		}
	}()
	t.Cleanup(func() {
		signal.Stop(sigs)
		close(quit)
	})
}

// testDeadline is the test's deadline. A benchmark has none (testing.B has no
// Deadline): the signal handler and Pdeathsig still stop the processes.
func testDeadline(t testing.TB) (time.Time, bool) {
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		return d.Deadline()
	}
	return time.Time{}, false
}

func (e *env) start(t testing.TB, name, path string, args ...string) *process {
	t.Helper()
	return e.startWith(t, name, nil, path, args...)
}

// startWith starts a process with environ added to this one's environment
// (a controller reads its kubeconfig and namespace from there).
func (e *env) startWith(t testing.TB, name string, environ []string, path string, args ...string) *process {
	t.Helper()
	logPath := filepath.Join(e.dir, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd := exec.Command(path, args...)
	cmd.Dir = e.dir
	if environ != nil {
		cmd.Env = append(os.Environ(), environ...)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Own process group, so the whole group can be signalled; and killed by
	// the kernel if this test binary dies before its cleanups run.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	p := &process{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	e.mu.Lock()
	e.procs = append(e.procs, p)
	e.mu.Unlock()
	return p
}

// stop stops the processes, newest first (the API server before its etcd):
// SIGTERM to the group, SIGKILL after 10 s. Safe to call more than once.
func (e *env) stop() {
	e.mu.Lock()
	procs := append([]*process(nil), e.procs...)
	e.mu.Unlock()
	for i := len(procs) - 1; i >= 0; i-- {
		procs[i].stop()
	}
}

// stop stops one process and its group: SIGTERM, SIGKILL after 10 s. Safe to
// call more than once.
func (p *process) stop() {
	p.once.Do(func() {
		pgid := p.cmd.Process.Pid
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			<-p.done
		}
	})
}

func (e *env) dumpLogs(t testing.TB) {
	for _, p := range e.procs {
		raw, err := os.ReadFile(p.log)
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
		if len(lines) > 40 {
			lines = lines[len(lines)-40:]
		}
		t.Logf("last lines of %s:\n%s", p.name, strings.Join(lines, "\n"))
	}
}

// waitReady polls /readyz, failing early if a process has exited.
func (e *env) waitReady(t testing.TB, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var lastErr error
	for time.Now().Before(deadline) {
		for _, p := range e.procs {
			select {
			case <-p.done:
				e.dumpLogs(t)
				t.Fatalf("%s exited during start-up: %v", p.name, p.err)
			default:
			}
		}
		// The CA file appears only once the server has generated it.
		if _, err := os.Stat(e.config.CAFile); err == nil {
			if lastErr = e.readyz(); lastErr == nil {
				return
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	e.dumpLogs(t)
	t.Fatalf("kube-apiserver not ready after %s: %v", timeout, lastErr)
}

func (e *env) readyz() error {
	cfg := rest.CopyConfig(e.config)
	cfg.Timeout = 5 * time.Second
	client, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	body, err := client.RESTClient().Get().AbsPath("/readyz").DoRaw(context.Background())
	if err != nil {
		return fmt.Errorf("%w: %s", err, body)
	}
	return nil
}

// resetMapper forgets discovery, after CRDs are added.
func (e *env) resetMapper() { e.mapper.Reset() }

// resourceFor maps an apiVersion/kind to its resource and whether it is namespaced.
func (e *env) resourceFor(apiVersion, kind string) (*meta.RESTMapping, error) {
	gv, err := parseGroupVersion(apiVersion)
	if err != nil {
		return nil, err
	}
	return e.mapper.RESTMapping(gv.WithKind(kind).GroupKind(), gv.Version)
}

// warningRecorder keeps every API warning, so a test can require none.
type warningRecorder struct{ e *env }

func (w warningRecorder) HandleWarningHeader(code int, agent, text string) {
	if code != 299 || text == "" {
		return
	}
	w.e.mu.Lock()
	w.e.warnings = append(w.e.warnings, text)
	w.e.mu.Unlock()
}

// takeWarnings returns and forgets the warnings seen so far.
func (e *env) takeWarnings() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	w := e.warnings
	e.warnings = nil
	return w
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func randomHex(t testing.TB, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// writeServiceAccountKey writes the key pair kube-apiserver requires to sign
// and check service account tokens (none are used here, but it will not start
// without them).
func writeServiceAccountKey(t testing.TB, dir string) {
	t.Helper()
	writeRSAKeyPair(t, filepath.Join(dir, "sa.key"), filepath.Join(dir, "sa.pub"))
}

// writeRSAKeyPair writes a new 2048-bit RSA key as PKCS#1 PEM to private and
// its public half as PKIX PEM to public.
func writeRSAKeyPair(t testing.TB, private, public string) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, private, string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})))
	writeFile(t, public, string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})))
}
