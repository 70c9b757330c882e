package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// servedKind is one resource the test API server knows.
type servedKind struct {
	apiVersion, kind, resource string
	namespaced                 bool
}

var servedKinds = []servedKind{
	{"v1", "ConfigMap", "configmaps", true},
	{"v1", "PersistentVolumeClaim", "persistentvolumeclaims", true},
	{"v1", "Secret", "secrets", true},
	{"storage.k8s.io/v1", "StorageClass", "storageclasses", false},
	{"cdi.kubevirt.io/v1beta1", "DataVolume", "datavolumes", true},
	// A cluster with CDI serves its CDI resource and StorageProfiles with DataVolumes.
	{"cdi.kubevirt.io/v1beta1", "CDI", "cdis", false},
	{"cdi.kubevirt.io/v1beta1", "StorageProfile", "storageprofiles", false},
	{"cdi.kubevirt.io/v1beta1", "CDIConfig", "cdiconfigs", false},
	{"storage.k8s.io/v1", "CSIDriver", "csidrivers", false},
	{"v1", "PersistentVolume", "persistentvolumes", false},
	{"instancetype.kubevirt.io/v1beta1", "VirtualMachineClusterInstancetype", "virtualmachineclusterinstancetypes", false},
	{"cluster.x-k8s.io/v1beta1", "MachineDeployment", "machinedeployments", true},
	{"helm.toolkit.fluxcd.io/v2", "HelmRelease", "helmreleases", true},
	{"infrastructure.cluster.x-k8s.io/v1alpha1", "KubevirtMachineTemplate", "kubevirtmachinetemplates", true},
	{"snapshot.storage.k8s.io/v1", "VolumeSnapshotClass", "volumesnapshotclasses", false},
}

// apiServer answers what the live provider asks of a kube-apiserver: the
// version, discovery of a group version, and get and list of a resource,
// from the objects of a cluster-state file. Kinds whose apiVersion is in
// without are not served at all, as on a cluster without that API.
type apiServer struct {
	*httptest.Server
	objs    []*unstructured.Unstructured
	without map[string]bool
	// fail answers every get and list of a resource ("storageclasses") with
	// that Status, as an API server refusing or failing a request does.
	fail map[string]apiFailure

	mu        sync.Mutex
	discovery map[string]int
}

func newAPIServer(t *testing.T, stateFile string, without ...string) *apiServer {
	t.Helper()
	objs, err := render.LoadObjects(stateFile)
	require.NoError(t, err)
	s := &apiServer{objs: objs, without: map[string]bool{}, fail: map[string]apiFailure{}, discovery: map[string]int{}}
	for _, w := range without {
		s.without[w] = true
	}
	// A state file serves an API the charts ask .Capabilities about only
	// when it holds an object of it (render.State.APIVersions); so does this
	// server, so both render alike.
	for _, gv := range render.CapabilityAPIVersions {
		held := false
		for _, o := range objs {
			held = held || o.GetAPIVersion() == gv
		}
		if !held {
			s.without[gv] = true
		}
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *apiServer) serve(w http.ResponseWriter, r *http.Request) {
	path := strings.Trim(r.URL.Path, "/")
	if path == "version" {
		writeObject(w, http.StatusOK, map[string]any{"major": "1", "minor": "36", "gitVersion": "v1.36.2"})
		return
	}
	var gv, rest string
	switch {
	case path == "api/v1" || strings.HasPrefix(path, "api/v1/"):
		gv, rest = "v1", strings.TrimPrefix(strings.TrimPrefix(path, "api/v1"), "/")
	case strings.HasPrefix(path, "apis/"):
		parts := strings.SplitN(strings.TrimPrefix(path, "apis/"), "/", 3)
		if len(parts) < 2 {
			notFound(w)
			return
		}
		gv = parts[0] + "/" + parts[1]
		if len(parts) == 3 {
			rest = parts[2]
		}
	default:
		notFound(w)
		return
	}
	if s.without[gv] {
		notFound(w)
		return
	}
	if rest == "" {
		s.mu.Lock()
		s.discovery[gv]++
		s.mu.Unlock()
		var resources []map[string]any
		for _, k := range servedKinds {
			if k.apiVersion == gv {
				resources = append(resources, map[string]any{"name": k.resource, "kind": k.kind, "namespaced": k.namespaced, "singularName": "", "verbs": []string{"get", "list"}})
			}
		}
		if resources == nil {
			notFound(w)
			return
		}
		writeObject(w, http.StatusOK, map[string]any{"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources})
		return
	}
	seg := strings.Split(rest, "/")
	namespace := ""
	if len(seg) >= 3 && seg[0] == "namespaces" {
		namespace, seg = seg[1], seg[2:]
	}
	var kind *servedKind
	for i := range servedKinds {
		if servedKinds[i].apiVersion == gv && servedKinds[i].resource == seg[0] {
			kind = &servedKinds[i]
		}
	}
	if kind == nil || len(seg) > 2 {
		notFound(w)
		return
	}
	if f, ok := s.fail[kind.resource]; ok {
		writeObject(w, f.code, map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": f.reason, "code": f.code, "message": f.message})
		return
	}
	items := []any{}
	for _, o := range s.objs {
		if o.GetAPIVersion() == gv && o.GetKind() == kind.kind && (namespace == "" || o.GetNamespace() == namespace) {
			if len(seg) == 2 {
				if o.GetName() == seg[1] {
					writeObject(w, http.StatusOK, o.Object)
					return
				}
				continue
			}
			items = append(items, o.Object)
		}
	}
	if len(seg) == 2 {
		notFound(w)
		return
	}
	writeObject(w, http.StatusOK, map[string]any{"apiVersion": gv, "kind": kind.kind + "List", "metadata": map[string]any{"resourceVersion": "1"}, "items": items})
}

// apiFailure is a Status an API server answers a request with.
type apiFailure struct {
	code            int
	reason, message string
}

func writeObject(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func notFound(w http.ResponseWriter) {
	writeObject(w, http.StatusNotFound, map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404, "message": "the server could not find the requested resource"})
}

func writeKubeconfig(t *testing.T, server string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
  - name: test
    cluster: {server: %q}
users:
  - name: test
    user: {token: test}
contexts:
  - name: test
    context: {cluster: test, user: test}
current-context: test
`, server)
	require.NoError(t, os.WriteFile(path, []byte(cfg), 0o600))
	return path
}

// The real -kubeconfig path, over HTTP, reports what the state file reports.
func TestKubeconfigPlanMatchesTheStateFile(t *testing.T) {
	state := td("state", "golden.yaml")
	srv := newAPIServer(t, state)
	kubeconfig := writeKubeconfig(t, srv.URL)
	for _, pool := range []string{"builtin", "builtin-default-class", "builtin-local", "http"} {
		t.Run(pool, func(t *testing.T) {
			viaFile := cli(t, planArgs(pool, "golden", "-o", "json")...)
			live := cli(t, "plan", "-values", td("pools", pool+".yaml"), "-release", testRelease, "-namespace", testNamespace, "-kubeconfig", kubeconfig, "-o", "json")
			require.Equal(t, viaFile.code, live.code, "stderr: %s", live.stderr)
			a, b := decode[report.PlanReport](t, viaFile), decode[report.PlanReport](t, live)
			assert.Equal(t, "kubeconfig "+kubeconfig, b.Cluster)
			b.Cluster = a.Cluster
			assert.Equal(t, a, b)
		})
	}

	// One run discovers each group version it looks up once, however many
	// lookups the chart makes in it.
	once := newAPIServer(t, state)
	require.Equal(t, exitOK, cli(t, "plan", "-values", td("pools", "builtin-default-class.yaml"), "-release", testRelease, "-namespace", testNamespace, "-kubeconfig", writeKubeconfig(t, once.URL)).code)
	once.mu.Lock()
	defer once.mu.Unlock()
	require.NotEmpty(t, once.discovery)
	for gv, n := range once.discovery {
		assert.Equal(t, 1, n, gv)
	}
}

func TestKubeconfigPinsMatchesTheStateFile(t *testing.T) {
	state := td("pins", "cluster.yaml")
	srv := newAPIServer(t, state)
	live := cli(t, "pins", "-kubeconfig", writeKubeconfig(t, srv.URL), "-o", "json")
	require.Equal(t, exitOK, live.code, "stderr: %s", live.stderr)
	a, b := pinsOf(t, "cluster"), decode[report.PinsReport](t, live)
	b.Cluster = a.Cluster
	assert.Equal(t, a, b)
}

func TestKubeconfigClusterProblemsAreOneLine(t *testing.T) {
	// A port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := "http://" + l.Addr().String()
	require.NoError(t, l.Close())
	kubeconfig := writeKubeconfig(t, dead)
	for _, args := range [][]string{
		{"plan", "-values", td("pools", "http.yaml"), "-kubeconfig", kubeconfig},
		{"pins", "-kubeconfig", kubeconfig},
		{"rollcheck", "-base", support.RepoRoot(), "-head", support.RepoRoot(), "-values", td("pools", "http.yaml"), "-kubeconfig", kubeconfig},
	} {
		t.Run(args[0]+" unreachable", func(t *testing.T) {
			requireProblem(t, cli(t, args...), "cannot reach the cluster at "+dead, kubeconfig)
		})
	}

	// A reachable cluster without Flux that runs pools, none with a release
	// record: pins cannot read them, so it reports nothing rather than call
	// every golden unused.
	srv := newAPIServer(t, td("pins", "retiring.yaml"), "helm.toolkit.fluxcd.io/v2")
	requireProblem(t, cli(t, "pins", "-kubeconfig", writeKubeconfig(t, srv.URL)), "could not read the pools: the cluster serves no HelmRelease (helm.toolkit.fluxcd.io/v2)", "tenant-acme/MachineDeployment/kubernetes-acme-old", "no golden can be called unused")

	// With one pool readable from its release record, the report is made,
	// names the namespaces it could not read, calls no golden safe to
	// delete, and exits 2 saying why on one line.
	srv = newAPIServer(t, td("pins", "cluster.yaml"), "helm.toolkit.fluxcd.io/v2")
	res := cli(t, "pins", "-kubeconfig", writeKubeconfig(t, srv.URL))
	assert.Equal(t, exitProblem, res.code)
	assert.Equal(t, 1, strings.Count(res.stderr, "\n"), res.stderr)
	assert.Contains(t, res.stderr, "will not conclude: the pools of 1 namespace could not be read (tenant-acme), though they hold pool objects")
	assert.Contains(t, res.stdout, "unused goldens (safe to delete): not concluded while the pools of 1 namespace could not be read (below)\n")
}
