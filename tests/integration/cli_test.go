//go:build integration

package integration

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/tests/support"
)

// workerimage runs the operator CLI, built once per env from this checkout,
// and returns its stdout, its stderr and its exit code.
func (e *env) workerimage(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	e.mu.Lock()
	bin := e.cliBin
	e.mu.Unlock()
	if bin == "" {
		bin = filepath.Join(e.dir, "workerimage")
		build := exec.Command("go", "build", "-o", bin, "./cmd/workerimage")
		build.Dir = support.RepoRoot()
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build ./cmd/workerimage: %v\n%s", err, out)
		}
		e.mu.Lock()
		e.cliBin = bin
		e.mu.Unlock()
	}
	cmd := exec.Command(bin, args...)
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

// helmReleaseCRD stands in for Flux's HelmRelease CRD, which no module served
// here ships: pins reads only spec.chart.spec.chart, spec.values,
// spec.releaseName and spec.targetNamespace, so an open schema is enough to
// make the real server serve the kind.
const helmReleaseCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: helmreleases.helm.toolkit.fluxcd.io
spec:
  group: helm.toolkit.fluxcd.io
  names: {kind: HelmRelease, listKind: HelmReleaseList, plural: helmreleases, singular: helmrelease}
  scope: Namespaced
  versions:
    - name: v2
      served: true
      storage: true
      subresources: {status: {}}
      schema:
        openAPIV3Schema:
          type: object
          x-kubernetes-preserve-unknown-fields: true
`

// What this test reads of `workerimage pins -o json`.
type livePins struct {
	Goldens []struct {
		Name         string `json:"name"`
		FoundAs      string `json:"foundAs"`
		Phase        string `json:"phase"`
		SafeToDelete bool   `json:"safeToDelete"`
		Pools        []struct {
			HelmRelease string `json:"helmRelease"`
			Pool        string `json:"pool"`
			Disks       int    `json:"disks"`
			Refusal     string `json:"refusal"`
		} `json:"pools"`
		Disks []struct {
			Namespace    string `json:"namespace"`
			Name         string `json:"name"`
			HostAssisted bool   `json:"hostAssisted"`
			CSIClone     bool   `json:"csiClone"`
		} `json:"disks"`
	} `json:"goldens"`
	Unused       []string `json:"unused"`
	HostAssisted []struct {
		Name           string `json:"name"`
		FallbackReason string `json:"fallbackReason"`
	} `json:"hostAssisted"`
	HTTPPools []struct {
		HelmRelease string `json:"helmRelease"`
	} `json:"httpPools"`
}

// testCLIPinsLive: `workerimage pins -kubeconfig` on the real API server. A
// cluster that serves no HelmRelease is a problem (exit 2), never "no pool
// uses this golden". With Flux's kind served, goldens, HelmReleases and
// worker disks created through the real schemas are reported as the fixture
// tests expect: who declares a golden, who cloned it, what fell back to a
// host-assisted copy, and what is safe to delete. Versions no other subtest
// uses keep the verdicts independent of what those left behind.
func testCLIPinsLive(t *testing.T, e *env) {
	schematicID, _ := poolDefaults(t)
	declared := support.GoldenName(schematicID, "v1.13.2") // a pool declares it, a disk cloned it
	unused := support.GoldenName(schematicID, "v1.13.1")   // nobody: safe to delete
	missing := support.GoldenName(schematicID, "v1.13.0")  // declared, absent from cozy-public
	const tenant = "tenant-pins"

	out, problem, code := e.workerimage(t, "pins", "-kubeconfig", e.kubeconfig)
	if code != 2 || out != "" || !strings.Contains(problem, "the cluster serves no HelmRelease (helm.toolkit.fluxcd.io/v2)") || !strings.Contains(problem, "cannot tell whether any golden is in use") {
		t.Fatalf("pins on a cluster that serves no HelmRelease: exit %d, want 2, no report, and a problem saying Flux's HelmRelease is not served:\n%s%s", code, out, problem)
	}

	e.createYAML(t, helmReleaseCRD)
	e.waitEstablished(t, "helmreleases.helm.toolkit.fluxcd.io")
	e.resetMapper()
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
  chart: {spec: {chart: ` + chart + `}}
  values: ` + values + `
`
	}
	e.createYAML(t, helmRelease("kubernetes-nodes-pins-golden", "kubernetes-nodes", "{cluster: pins, talos: {version: v1.13.2}, osImage: {builtin: {}}}"))
	e.createYAML(t, helmRelease("kubernetes-nodes-pins-gone", "kubernetes-nodes", "{cluster: pins, talos: {version: v1.13.0}, osImage: {builtin: {}}}"))
	e.createYAML(t, helmRelease("kubernetes-nodes-pins-http", "kubernetes-nodes", "{cluster: pins, talos: {version: v1.13.2}}"))
	e.createYAML(t, helmRelease("postgres-main", "postgres", "{osImage: {builtin: {}}}"))

	// Two disks of the golden pool, as KubeVirt and CDI leave them: one a CSI
	// clone, one that fell back to a host-assisted copy.
	for _, d := range []struct{ name, pvcAnnotations string }{
		{"kubernetes-pins-golden-aaaaa-disk-system", `{cdi.kubevirt.io/cloneType: csi-clone}`},
		{"kubernetes-pins-golden-bbbbb-disk-system", `{cdi.kubevirt.io/cloneType: copy, cdi.kubevirt.io/cloneFallbackReason: "The volume expansion is disabled for the target StorageClass"}`},
	} {
		e.createYAML(t, `
apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata:
  name: `+d.name+`
  namespace: `+tenant+`
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
  namespace: `+tenant+`
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
	if len(g.Pools) != 1 || g.Pools[0].HelmRelease != tenant+"/kubernetes-nodes-pins-golden" || g.Pools[0].Pool != "kubernetes-pins-golden" || g.Pools[0].Disks != 2 || g.Pools[0].Refusal != "" {
		t.Errorf("%s: pools %+v, want only %s/kubernetes-nodes-pins-golden (pool kubernetes-pins-golden, 2 disks, rendering)", declared, g.Pools, tenant)
	}
	if len(g.Disks) != 2 || !g.Disks[0].CSIClone || g.Disks[0].HostAssisted || g.Disks[1].CSIClone || !g.Disks[1].HostAssisted {
		t.Errorf("%s: disks %+v, want aaaaa a CSI clone and bbbbb a host-assisted copy", declared, g.Disks)
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
}
