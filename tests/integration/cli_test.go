//go:build integration

package integration

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// cli is the operator CLI, built once per env from this checkout.
func (e *env) cli(t testing.TB) string {
	t.Helper()
	e.mu.Lock()
	bin := e.cliBin
	e.mu.Unlock()
	if bin != "" {
		return bin
	}
	bin = filepath.Join(e.dir, "workerimage")
	build := exec.Command("go", "build", "-o", bin, "./cmd/workerimage")
	build.Dir = support.RepoRoot()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/workerimage: %v\n%s", err, out)
	}
	e.mu.Lock()
	e.cliBin = bin
	e.mu.Unlock()
	return bin
}

// workerimage runs the operator CLI, built once per env from this checkout,
// and returns its stdout, its stderr and its exit code.
func (e *env) workerimage(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(e.cli(t), args...)
	cmd.Env = withImageFactory(t, os.Environ())
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if errOut.Len() > 0 {
		t.Logf("workerimage %s: stderr: %s", strings.Join(args, " "), errOut.String())
	}
	return out.String(), errOut.String(), code
}

// What this test reads of `workerimage pins -o json`.
type livePins struct {
	Goldens []struct {
		Name         string     `json:"name"`
		FoundAs      string     `json:"foundAs"`
		Phase        string     `json:"phase"`
		SafeToDelete bool       `json:"safeToDelete"`
		Pools        []livePool `json:"pools"`
		Disks        []struct {
			Namespace    string `json:"namespace"`
			Name         string `json:"name"`
			HostAssisted bool   `json:"hostAssisted"`
			CSIClone     bool   `json:"csiClone"`
		} `json:"disks"`
		NoPoolDisks []struct {
			Namespace string `json:"namespace"`
			Name      string `json:"name"`
			Pool      string `json:"pool"`
		} `json:"noPoolDisks"`
	} `json:"goldens"`
	Unused       []string `json:"unused"`
	HostAssisted []struct {
		Name           string `json:"name"`
		FallbackReason string `json:"fallbackReason"`
	} `json:"hostAssisted"`
	HTTPPools  []livePool `json:"httpPools"`
	Unresolved []livePool `json:"unresolved"`
	PoolsRead  int        `json:"poolsRead"`
}

type livePool struct {
	HelmRelease string `json:"helmRelease"`
	FoundBy     string `json:"foundBy"`
	Pool        string `json:"pool"`
	Disks       int    `json:"disks"`
	Refusal     string `json:"refusal"`
	Unresolved  string `json:"unresolved"`
}

// allPools lists every pool the report names, once per golden it is under.
func (r livePins) allPools() []livePool {
	var out []livePool
	for _, g := range r.Goldens {
		out = append(out, g.Pools...)
	}
	return append(append(out, r.HTTPPools...), r.Unresolved...)
}

// testCLIPinsLive: `workerimage pins -kubeconfig` on the real API server. A
// cluster that serves no HelmRelease is a problem (exit 2), never "no pool
// uses this golden". With Flux's kind served, goldens, HelmReleases and
// worker disks created through the real schemas are reported as the fixture
// tests expect: who declares a golden, who cloned it, what fell back to a
// host-assisted copy, and what is safe to delete. Versions no other subtest
// uses keep the verdicts independent of what those left behind.
// cozystackArtifact is the ExternalArtifact Cozystack names the
// KubernetesNodes application's chart by.
const cozystackArtifact = support.CozystackArtifact

func testCLIPinsLive(t *testing.T, e *env) {
	schematicID, _ := poolDefaults(t)
	declared := support.GoldenName(schematicID, "v1.13.2") // a pool declares it, a disk cloned it
	unused := support.GoldenName(schematicID, "v1.13.1")   // nobody: safe to delete
	missing := support.GoldenName(schematicID, "v1.13.0")  // declared, absent from cozy-public
	const tenant = "tenant-pins"

	// Without Flux's HelmRelease, and with no pool release record or pool
	// object left by the earlier subtests, there is no pool: pins reports
	// that (an empty fleet), exit 0.
	out, problem, code := e.workerimage(t, "pins", "-kubeconfig", e.kubeconfig, "-o", "json")
	var empty livePins
	if code != 0 || json.Unmarshal([]byte(out), &empty) != nil || empty.PoolsRead != 0 {
		t.Fatalf("pins on a cluster without HelmRelease and without pools: exit %d, want 0 and no pool read:\n%s%s", code, out, problem)
	}
	// An idle pool's KubevirtMachineTemplate appears, still no pool readable:
	// pins refuses to conclude rather than call its golden unused.
	e.createNamespace(t, tenant)
	e.createYAML(t, `
apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1
kind: KubevirtMachineTemplate
metadata: {name: kubernetes-pins-idle-111111, namespace: `+tenant+`}
spec:
  template:
    spec:
      virtualMachineTemplate:
        spec:
          dataVolumeTemplates:
          - metadata: {name: disk-system}
            spec:
              source: {pvc: {namespace: `+catalogNamespace+`, name: `+declared+`}}
              storage: {storageClassName: replicated, resources: {requests: {storage: 20Gi}}}
          template: {spec: {domain: {devices: {}}}}
`)
	out, problem, code = e.workerimage(t, "pins", "-kubeconfig", e.kubeconfig)
	if code != 2 || out != "" || !strings.Contains(problem, "could not read the pools: the cluster serves no HelmRelease (helm.toolkit.fluxcd.io/v2)") || !strings.Contains(problem, tenant+"/KubevirtMachineTemplate/kubernetes-pins-idle-111111") {
		t.Fatalf("pins with a pool's template but no readable pool: exit %d, want 2, no report, and a problem naming the template:\n%s%s", code, out, problem)
	}

	// Flux's HelmRelease CRD, generated by controller-gen from
	// github.com/fluxcd/helm-controller/api v1.4.0 (tools/crds).
	e.installCRDFile(t, helmReleaseCRDFile)
	e.createNamespace(t, catalogNamespace)
	e.createNamespace(t, tenant)

	golden := func(name, version string) string {
		return `
apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata: {name: ` + name + `, namespace: ` + catalogNamespace + `}
spec:
  source: {http: {url: "https://factory.talos.dev/image/` + schematicID + `/` + version + `/openstack-amd64.raw.xz"}}
  storage: {storageClassName: replicated, resources: {requests: {storage: 6Gi}}}
`
	}
	e.createYAML(t, golden(declared, "v1.13.2"))
	e.createYAML(t, golden(unused, "v1.13.1"))
	e.setPhase(t, catalogNamespace, declared, "Succeeded")
	e.setPhase(t, catalogNamespace, unused, "Succeeded")

	helmRelease := func(name, chart, values string) string {
		return `
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: ` + name + `, namespace: ` + tenant + `}
spec:
  interval: 10m
  chart: {spec: {chart: ` + chart + `, sourceRef: {kind: HelmRepository, name: cozystack-apps, namespace: cozy-public}}}
  values: ` + values + `
`
	}
	// Cozystack's shape, as cozystack-api writes it: chartRef to the
	// application's ExternalArtifact in cozy-system (its CRD generated from
	// source-controller/api), values from the namespace's cozystack-values
	// Secret, then spec.values.
	cozystackRelease := func(name, values string) string {
		return cozystackHelmRelease(tenant, strings.TrimPrefix(name, support.CozystackReleasePrefix), values)
	}
	e.createNamespace(t, "cozy-system")
	e.createYAML(t, `
apiVersion: source.toolkit.fluxcd.io/v1
kind: ExternalArtifact
metadata: {name: `+cozystackArtifact+`, namespace: cozy-system}
spec: {}
---
`+cozystackValues(tenant, `
_cluster:
  osImage: {builtin: {}}
_namespace: {host: pins.example.org}`))
	// The real schema, unlike the open stand-in it replaces, refuses a
	// HelmRelease without the interval and chart source Flux requires.
	bare, err := render.ParseObjects([]byte(`
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: kubernetes-nodes-pins-bare, namespace: ` + tenant + `}
spec:
  chart: {spec: {chart: kubernetes-nodes}}
`))
	if err != nil {
		t.Fatal(err)
	}
	if _, problems := e.dryRunApply(t, &render.Manifest{Docs: []render.Doc{{Object: bare[0].Object}}}, tenant); len(problems) != 1 || !strings.Contains(problems[0], "interval") || !strings.Contains(problems[0], "sourceRef") {
		t.Errorf("a HelmRelease without interval and sourceRef: want the dry-run to refuse both, got %q", problems)
	} else {
		t.Logf("refused as it should be: %s", problems[0])
	}
	e.createYAML(t, cozystackRelease("kubernetes-nodes-pins-golden", "{cluster: pins, talos: {version: v1.13.2}, osImage: {builtin: {}}}"))
	e.createYAML(t, cozystackRelease("kubernetes-nodes-pins-gone", "{cluster: pins, talos: {version: v1.13.0}, osImage: {builtin: {}}}"))
	// Its golden only from _cluster.osImage: not created yet, so today's
	// platform default applies.
	e.createYAML(t, cozystackRelease("kubernetes-nodes-pins-spot", "{cluster: pins, talos: {version: v1.13.2}}"))
	// The legacy shape, without cozystack-values: an HTTP pool.
	e.createYAML(t, helmRelease("kubernetes-nodes-pins-http", "kubernetes-nodes", "{cluster: pins, talos: {version: v1.13.2}}"))
	e.createYAML(t, helmRelease("postgres-main", "postgres", "{osImage: {builtin: {}}}"))

	// The golden pool's MachineDeployment, through Cluster API's real schema:
	// its disks below are its own because they sit beside it.
	e.createYAML(t, `
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata: {name: kubernetes-pins-golden, namespace: `+tenant+`}
spec:
  clusterName: kubernetes-pins
  selector: {matchLabels: {cluster.x-k8s.io/deployment-name: kubernetes-pins-golden}}
  template:
    metadata: {labels: {cluster.x-k8s.io/deployment-name: kubernetes-pins-golden}}
    spec:
      clusterName: kubernetes-pins
      bootstrap: {configRef: {apiVersion: bootstrap.cluster.x-k8s.io/v1alpha3, kind: TalosConfigTemplate, name: kubernetes-pins-golden}}
      infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1, kind: KubevirtMachineTemplate, name: kubernetes-pins-golden-000000}
`)
	// Two disks of the golden pool, as KubeVirt and CDI leave them: one a CSI
	// clone, one that fell back to a host-assisted copy; and one another
	// tenant forged, naming the golden pool, in a namespace without it.
	e.createNamespace(t, tenant+"-evil")
	for _, d := range []struct{ namespace, name, pvcAnnotations string }{
		{tenant, "kubernetes-pins-golden-aaaaa-disk-system", `{cdi.kubevirt.io/cloneType: csi-clone}`},
		{tenant, "kubernetes-pins-golden-bbbbb-disk-system", `{cdi.kubevirt.io/cloneType: copy, cdi.kubevirt.io/cloneFallbackReason: "The volume expansion is disabled for the target StorageClass"}`},
		{tenant + "-evil", "kubernetes-pins-golden-ccccc-disk-system", `{cdi.kubevirt.io/cloneType: csi-clone}`},
	} {
		e.createYAML(t, `
apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata:
  name: `+d.name+`
  namespace: `+d.namespace+`
  annotations:
    kubernetes-worker-image.cozystack.io/golden: `+declared+`
    kubernetes-worker-image.cozystack.io/pool: kubernetes-pins-golden
spec:
  source: {pvc: {namespace: `+catalogNamespace+`, name: `+declared+`}}
  storage: {storageClassName: replicated, resources: {requests: {storage: 20Gi}}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: `+d.name+`
  namespace: `+d.namespace+`
  annotations: `+d.pvcAnnotations+`
spec:
  storageClassName: replicated
  accessModes: [ReadWriteMany]
  resources: {requests: {storage: 20Gi}}
`)
	}

	out, _, code = e.workerimage(t, "pins", "-kubeconfig", e.kubeconfig, "-o", "json")
	if code != 0 {
		t.Fatalf("pins -kubeconfig -o json: exit %d:\n%s", code, out)
	}
	var r livePins
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("pins -o json: %v\n%s", err, out)
	}
	found := map[string]int{}
	for i, g := range r.Goldens {
		found[g.Name] = i
	}
	for _, name := range []string{declared, unused, missing} {
		if _, ok := found[name]; !ok {
			t.Fatalf("pins reports no golden %s:\n%s", name, out)
		}
	}

	g := r.Goldens[found[declared]]
	if g.FoundAs != "DataVolume" || g.Phase != "Succeeded" || g.SafeToDelete {
		t.Errorf("%s: foundAs %q, phase %q, safeToDelete %v; want DataVolume, Succeeded, not safe", declared, g.FoundAs, g.Phase, g.SafeToDelete)
	}
	if len(g.Pools) != 2 || g.Pools[0].HelmRelease != tenant+"/kubernetes-nodes-pins-golden" || g.Pools[0].Pool != "kubernetes-pins-golden" || g.Pools[0].Disks != 2 || g.Pools[0].Refusal != "" ||
		g.Pools[0].FoundBy != "spec.chartRef ExternalArtifact cozy-system/"+cozystackArtifact ||
		g.Pools[1].HelmRelease != tenant+"/kubernetes-nodes-pins-spot" || g.Pools[1].Disks != 0 {
		t.Errorf("%s: pools %+v, want %s/kubernetes-nodes-pins-golden (pool kubernetes-pins-golden, 2 disks, rendering, found by its chartRef) and kubernetes-nodes-pins-spot (golden from _cluster.osImage, no disk)", declared, g.Pools, tenant)
	}
	if len(g.Disks) != 2 || !g.Disks[0].CSIClone || g.Disks[0].HostAssisted || g.Disks[1].CSIClone || !g.Disks[1].HostAssisted {
		t.Errorf("%s: disks %+v, want aaaaa a CSI clone and bbbbb a host-assisted copy", declared, g.Disks)
	}
	if len(g.NoPoolDisks) != 1 || g.NoPoolDisks[0].Namespace != tenant+"-evil" || g.NoPoolDisks[0].Pool != "kubernetes-pins-golden" {
		t.Errorf("%s: disks of no pool %+v, want only the forged %s-evil/kubernetes-pins-golden-ccccc-disk-system", declared, g.NoPoolDisks, tenant)
	}

	g = r.Goldens[found[unused]]
	if !g.SafeToDelete || len(g.Pools) != 0 || len(g.Disks) != 0 {
		t.Errorf("%s: safeToDelete %v with pools %+v and disks %+v; nobody uses it", unused, g.SafeToDelete, g.Pools, g.Disks)
	}
	if !slices.Contains(r.Unused, unused) || slices.Contains(r.Unused, declared) || slices.Contains(r.Unused, missing) {
		t.Errorf("unused goldens %v: want %s listed, %s and %s not", r.Unused, unused, declared, missing)
	}

	g = r.Goldens[found[missing]]
	if g.FoundAs != "absent" || g.SafeToDelete || len(g.Pools) != 1 || g.Pools[0].HelmRelease != tenant+"/kubernetes-nodes-pins-gone" || !strings.Contains(g.Pools[0].Refusal, missing) {
		t.Errorf("%s: foundAs %q, safeToDelete %v, pools %+v; want absent, declared by %s/kubernetes-nodes-pins-gone whose render is refused naming it", missing, g.FoundAs, g.SafeToDelete, g.Pools, tenant)
	}

	hostAssisted := 0
	for _, d := range r.HostAssisted {
		if d.Name == "kubernetes-pins-golden-bbbbb-disk-system" && d.FallbackReason != "" {
			hostAssisted++
		}
	}
	if hostAssisted != 1 {
		t.Errorf("host-assisted disks %+v: want kubernetes-pins-golden-bbbbb-disk-system with its fallback reason", r.HostAssisted)
	}
	httpPool := false
	for _, p := range r.HTTPPools {
		httpPool = httpPool || p.HelmRelease == tenant+"/kubernetes-nodes-pins-http"
	}
	if !httpPool {
		t.Errorf("pools that import over HTTP %+v: want %s/kubernetes-nodes-pins-http", r.HTTPPools, tenant)
	}
	if strings.Contains(out, "postgres-main") {
		t.Errorf("pins counts a HelmRelease of another chart:\n%s", out)
	}

	text, _, code := e.workerimage(t, "pins", "-kubeconfig", e.kubeconfig)
	if code != 0 || !strings.Contains(text, "disks that fell back to a host-assisted copy:\n") || !strings.Contains(text, "  "+unused+"\n") {
		t.Errorf("pins -kubeconfig (text): exit %d, want 0 listing %s as unused and the host-assisted disk:\n%s", code, unused, text)
	}

	// adopt reads the same pools: the _cluster pool clones, the legacy one imports over HTTP.
	adoptOut, adoptProblem, code := e.workerimage(t, "adopt", "-kubeconfig", e.kubeconfig, "-o", "json")
	if code != 0 {
		t.Fatalf("adopt -kubeconfig -o json: exit %d:\n%s%s", code, adoptOut, adoptProblem)
	}
	var a struct {
		Cloning []struct {
			HelmRelease string `json:"helmRelease"`
			Golden      string `json:"golden"`
		} `json:"cloning"`
	}
	if err := json.Unmarshal([]byte(adoptOut), &a); err != nil {
		t.Fatalf("adopt -o json: %v\n%s", err, adoptOut)
	}
	spot := false
	for _, p := range a.Cloning {
		spot = spot || (p.HelmRelease == tenant+"/kubernetes-nodes-pins-spot" && p.Golden == declared)
	}
	if !spot || !strings.Contains(adoptOut, tenant+"/kubernetes-nodes-pins-http") {
		t.Errorf("adopt: want %s/kubernetes-nodes-pins-spot cloning %s (from _cluster) and the HTTP pool listed:\n%s", tenant, declared, adoptOut)
	}

	// A pool installed with plain helm install: only its Helm release
	// records. The newest (deployed) imports over HTTP; the superseded one
	// before it cloned the unused golden, and the API server leaves it out of
	// the list pins asks for, so the golden stays unused.
	for _, rec := range []struct {
		version int
		status  string
		values  map[string]interface{}
	}{
		{1, "superseded", map[string]interface{}{"cluster": "pins", "talos": map[string]interface{}{"version": "v1.13.1"}, "osImage": map[string]interface{}{"builtin": map[string]interface{}{}}}},
		{2, "deployed", map[string]interface{}{"cluster": "pins", "talos": map[string]interface{}{"version": "v1.13.1"}}},
	} {
		obj, err := fleet.EncodeRecord("kubernetes-nodes-pins-plain", tenant, "kubernetes-nodes", rec.version, rec.status, rec.values)
		if err != nil {
			t.Fatal(err)
		}
		e.create(t, &unstructured.Unstructured{Object: obj})
	}
	out, _, code = e.workerimage(t, "pins", "-kubeconfig", e.kubeconfig, "-o", "json")
	var plain livePins
	if code != 0 || json.Unmarshal([]byte(out), &plain) != nil {
		t.Fatalf("pins with a plain helm install: exit %d:\n%s", code, out)
	}
	plainFound := false
	for _, p := range plain.HTTPPools {
		plainFound = plainFound || (p.HelmRelease == tenant+"/kubernetes-nodes-pins-plain" && strings.HasSuffix(p.FoundBy, "sh.helm.release.v1.kubernetes-nodes-pins-plain.v2 (no HelmRelease)"))
	}
	if !plainFound || !slices.Contains(plain.Unused, unused) {
		t.Errorf("pins: want %s/kubernetes-nodes-pins-plain read from its v2 record as an HTTP pool, and %s still unused:\n%s", tenant, unused, out)
	}

	// The Secret gone: the Cozystack pools are not resolved, with Flux's reason.
	e.deleteOne(t, "v1", "Secret", tenant, "cozystack-values")
	out, _, code = e.workerimage(t, "pins", "-kubeconfig", e.kubeconfig, "-o", "json")
	if code != 0 || !strings.Contains(out, `could not resolve Secret chart values reference '`+tenant+`/cozystack-values' with key 'values.yaml'`) {
		t.Errorf("pins without cozystack-values: exit %d, want 0 with the pools not resolved:\n%s", code, out)
	}
}
