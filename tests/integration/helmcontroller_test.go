//go:build integration

package integration

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/rollout"
	"github.com/cozystack/golden-worker-images/tests/support"
	"helm.sh/helm/v3/pkg/chartutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The shard Cozystack's ApplicationDefinitions put tenants' HelmReleases in
// (spec.release.labels of kubernetes-nodes-rd): the tests' helm-controller
// watches that shard only, as a Cozystack tenants shard does.
const (
	fluxShardLabel = support.CozystackShardLabel
	fluxShard      = support.CozystackShard
)

// helmController is Flux's helm-controller running against the tier's API
// server, and the loopback HTTP server that serves the pool chart's artifact
// the way source-controller serves it.
type helmController struct {
	proc     *process
	artifact string // the ExternalArtifact's name, in cozy-system
	digest   string // sha256:<hex> of the served archive
	chart    string // the pool chart's version, as packaged
	url      string // where the archive is served
	size     int
	file     string // the archive's file name
}

// startHelmController builds the pool chart's artifact, serves it, gives the
// Cozystack ExternalArtifact that status, and starts helm-controller
// (`make helm-controller`) the way Cozystack runs it: every namespace, the
// ExternalArtifact feature gate, no leader election, the tenants shard. It
// stops when the subtest ends.
func (e *env) startHelmController(t *testing.T) *helmController {
	t.Helper()
	bin, ok, why := support.Tool("helm-controller", "HELM_CONTROLLER")
	if !ok {
		t.Fatal(why)
	}
	for _, ns := range []string{"cozy-system", "cozy-fluxcd"} {
		e.createNamespace(t, ns)
	}
	if _, served := e.get(t, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "helmreleases.helm.toolkit.fluxcd.io"); !served {
		e.installCRDFile(t, helmReleaseCRDFile)
	}

	// The pool chart packaged as `helm package` does (its library inside),
	// served over loopback as source-controller serves an artifact.
	chrt, err := support.LoadChart(render.PoolChart)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	archive, err := chartutil.Save(chrt, dir)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(raw)
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	hc := &helmController{artifact: cozystackArtifact, digest: "sha256:" + hex.EncodeToString(sum[:]), chart: chrt.Metadata.Version,
		url: srv.URL + "/" + filepath.Base(archive), size: len(raw), file: filepath.Base(archive)}
	hc.publish(t, e, hc.artifact)

	health := freePort(t)
	hc.proc = e.startWith(t, "helm-controller", []string{"KUBECONFIG=" + e.kubeconfig, "RUNTIME_NAMESPACE=cozy-fluxcd"}, bin,
		"--watch-all-namespaces",
		"--enable-leader-election=false",
		fmt.Sprintf("--metrics-addr=127.0.0.1:%d", freePort(t)),
		fmt.Sprintf("--health-addr=127.0.0.1:%d", health),
		"--watch-label-selector="+fluxShardLabel+"="+fluxShard,
		"--concurrent=5",
		"--requeue-dependency=30s",
		"--feature-gates=ExternalArtifact=true",
		"--log-level=debug",
	)
	t.Cleanup(hc.proc.stop)
	waitFor(t, 60*time.Second, "helm-controller ready", func() string {
		select {
		case <-hc.proc.done:
			t.Fatalf("helm-controller exited: %v", hc.proc.err)
		default:
		}
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", health))
		if err != nil {
			return err.Error()
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return resp.Status
		}
		return ""
	})
	return hc
}

// publish gives the ExternalArtifact name in cozy-system (created when
// missing) the status Cozystack's source-watcher leaves: the served archive's
// URL, digest and revision (latest@<digest>), Ready.
func (hc *helmController) publish(t *testing.T, e *env, name string) {
	t.Helper()
	if _, ok := e.get(t, "source.toolkit.fluxcd.io/v1", "ExternalArtifact", "cozy-system", name); !ok {
		e.createYAML(t, "apiVersion: source.toolkit.fluxcd.io/v1\nkind: ExternalArtifact\nmetadata: {name: "+name+", namespace: cozy-system}\nspec: {}\n")
	}
	now := time.Now().UTC().Format(time.RFC3339)
	status, _ := json.Marshal(map[string]any{"status": map[string]any{
		"artifact": map[string]any{
			"path":           "externalartifact/cozy-system/" + name + "/" + hc.file,
			"url":            hc.url,
			"revision":       "latest@" + hc.digest,
			"digest":         hc.digest,
			"size":           hc.size,
			"lastUpdateTime": now,
		},
		"conditions": []any{map[string]any{"type": "Ready", "status": "True", "reason": "Succeeded", "message": "reconciliation succeeded", "lastTransitionTime": now}},
	}})
	if _, err := e.client(t, "source.toolkit.fluxcd.io/v1", "ExternalArtifact", "cozy-system").Patch(t.Context(), name, types.MergePatchType, status, metav1.PatchOptions{}, "status"); err != nil {
		t.Fatalf("status of ExternalArtifact %s: %v", name, err)
	}
}

// cozystackHelmRelease is the HelmRelease cozystack-api writes for a
// KubernetesNodes application named app in namespace: the shape the
// examples' and fixtures' pools are held to as well.
func cozystackHelmRelease(namespace, app, values string) string {
	return support.CozystackHelmRelease(namespace, app, values)
}

// testHelmControllerPool: Flux's helm-controller itself installs a pool from
// a HelmRelease as cozystack-api writes it, its chart the ExternalArtifact's
// archive served over loopback, its values from cozystack-values; then
// upgrades it when the application's values change. What it writes is what
// rollout and the fleet tools read: Ready at the generation, the history
// (the chart version carrying the artifact's digest), Helm's release Secret.
func testHelmControllerPool(t *testing.T, e *env) {
	const ns, app = "tenant-hc", "hc-pool"
	release := "kubernetes-nodes-" + app
	e.createWorkloadCluster(t, ns, "hc")
	hc := e.startHelmController(t)
	e.createYAML(t, cozystackValues(ns, `
_cluster:
  osImage: {builtin: {}}
_namespace: {host: `+ns+`.example.org}`))
	start := time.Now()
	e.createYAML(t, cozystackHelmRelease(ns, app, "{cluster: hc, osImage: {}}"))
	t.Cleanup(func() { e.removeReleased(t, ns, release) })

	released := func(generation int64, secret string) map[string]any {
		t.Helper()
		var hr map[string]any
		waitFor(t, 120*time.Second, fmt.Sprintf("helm-controller released %s/%s at generation %d", ns, release, generation), func() string {
			obj, _ := e.get(t, fleet.HelmReleaseAPI, "HelmRelease", ns, release)
			ready, failed, says := rollout.HelmReleaseStatus(obj.Object, generation)
			if failed != "" {
				t.Fatalf("%s/%s at generation %d: %s\nstatus: %v", ns, release, generation, failed, obj.Object["status"])
			}
			if !ready {
				return says
			}
			hr = obj.Object
			return ""
		})
		if got := render.Get(hr, "status.observedGeneration"); fmt.Sprint(got) != fmt.Sprint(generation) {
			t.Errorf("status.observedGeneration %v, want %d", got, generation)
		}
		if _, ok := e.get(t, "v1", "Secret", ns, secret); !ok {
			t.Errorf("no Helm release Secret %s/%s after generation %d", ns, secret, generation)
		}
		return hr
	}

	// 1. Installed: Ready, one history entry naming the chart with the
	// artifact's digest, Helm's release record v1, the pool's objects.
	hr := released(1, "sh.helm.release.v1."+release+".v1")
	installed := time.Since(start)
	history, _ := render.Get(hr, "status.history").([]any)
	wantVersion := hc.chart + "+" + strings.TrimPrefix(hc.digest, "sha256:")[:12]
	if len(history) != 1 || render.Get(history[0].(map[string]any), "chartVersion") != wantVersion ||
		render.Get(history[0].(map[string]any), "status") != "deployed" || fmt.Sprint(render.Get(history[0].(map[string]any), "version")) != "1" {
		t.Errorf("status.history after the install: %v, want one deployed v1 of chart %s", history, wantVersion)
	}
	md, ok := e.get(t, capiAPIVersion, "MachineDeployment", ns, "kubernetes-"+app)
	if !ok {
		t.Fatalf("helm-controller's install made no MachineDeployment kubernetes-%s", app)
	}
	first := rollout.RunningTemplate(md.Object)

	// 2. The application's values change (another Talos release): generation
	// 2, upgraded to Helm's v2, a second history entry, a new template.
	start = time.Now()
	body, _ := json.Marshal(map[string]any{"spec": map[string]any{"values": map[string]any{"talos": map[string]any{"version": "v1.13.7"}}}})
	if _, err := e.client(t, fleet.HelmReleaseAPI, "HelmRelease", ns).Patch(t.Context(), release, types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	hr = released(2, "sh.helm.release.v1."+release+".v2")
	upgraded := time.Since(start)
	history, _ = render.Get(hr, "status.history").([]any)
	if len(history) != 2 || fmt.Sprint(render.Get(history[0].(map[string]any), "version")) != "2" || render.Get(history[0].(map[string]any), "status") != "deployed" {
		t.Errorf("status.history after the upgrade: %v, want v2 deployed first, then v1", history)
	}
	md, _ = e.get(t, capiAPIVersion, "MachineDeployment", ns, "kubernetes-"+app)
	if second := rollout.RunningTemplate(md.Object); second == first || second == "" {
		t.Errorf("the MachineDeployment names %q after the upgrade, want a template other than %q", second, first)
	}
	// 3. pins reads the pool from what helm-controller wrote: the
	// HelmRelease's history names the release, Helm's record holds the
	// chart (its version carrying the artifact's digest) and the values.
	out, problem, code := e.workerimage(t, "pins", "-kubeconfig", e.kubeconfig, "-n", ns, "-o", "json")
	var pins livePins
	if err := json.Unmarshal([]byte(out), &pins); err != nil || code != 0 {
		t.Fatalf("pins over the pool helm-controller released: exit %d, %v\n%s%s", code, err, out, problem)
	}
	found := false
	for _, p := range pins.allPools() {
		if p.HelmRelease == ns+"/"+release {
			found = true
			if p.FoundBy != "spec.chartRef ExternalArtifact cozy-system/"+cozystackArtifact || p.Pool != "kubernetes-"+app || p.Refusal != "" || p.Unresolved != "" {
				t.Errorf("pins reads the pool helm-controller released as %+v, want it found by its chartRef, read, nothing refused", p)
			}
		}
	}
	if !found {
		t.Errorf("pins does not list %s/%s, which helm-controller released:\n%s", ns, release, out)
	}
	if got := md.GetLabels()["helm.toolkit.fluxcd.io/name"]; got != release {
		t.Errorf("the MachineDeployment's helm.toolkit.fluxcd.io/name label is %q, want %q (helm-controller labels what it releases)", got, release)
	}
	// 4. A release the chart refuses (an instanceType the cluster lacks),
	// under Cozystack's RetryOnFailure: helm-controller never stalls it. At
	// the generation, Ready is False (UpgradeFailed, the chart's message)
	// while Reconciling is True (ProgressingWithRetry), and status.failures
	// counts the attempts, one every retryInterval.
	body, _ = json.Marshal(map[string]any{"spec": map[string]any{"values": map[string]any{"instanceType": "u1.nosuch"}}})
	if _, err := e.client(t, fleet.HelmReleaseAPI, "HelmRelease", ns).Patch(t.Context(), release, types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "helm-controller failed generation 3", func() string {
		obj, _ := e.get(t, fleet.HelmReleaseAPI, "HelmRelease", ns, release)
		hr = obj.Object
		if f, _ := render.Get(hr, "status.failures").(int64); f < 1 {
			return fmt.Sprintf("status.failures %v", render.Get(hr, "status.failures"))
		}
		return ""
	})
	conds := map[string]map[string]any{}
	for _, c := range render.Get(hr, "status.conditions").([]any) {
		conds[fmt.Sprint(c.(map[string]any)["type"])] = c.(map[string]any)
	}
	if c := conds["Ready"]; c == nil || c["status"] != "False" || c["reason"] != "UpgradeFailed" || fmt.Sprint(c["observedGeneration"]) != "3" ||
		!strings.Contains(fmt.Sprint(c["message"]), `instanceType "u1.nosuch" is not a VirtualMachineClusterInstancetype of this cluster`) {
		t.Errorf("Ready after a refused upgrade: %v, want False, UpgradeFailed at generation 3 with the chart's message", c)
	}
	if c := conds["Reconciling"]; c == nil || c["status"] != "True" || c["reason"] != "ProgressingWithRetry" || conds["Stalled"] != nil {
		t.Errorf("Reconciling after a refused upgrade: %v (Stalled %v), want True, ProgressingWithRetry, and no Stalled: RetryOnFailure retries for ever", c, conds["Stalled"])
	}
	// rollout reads it as failed, with the chart's message and that
	// helm-controller keeps retrying (RolloutRetryOnFailure runs rollout
	// --apply on such a release).
	if _, failed, _ := rollout.HelmReleaseStatus(hr, 3); !strings.Contains(failed, `UpgradeFailed: Helm upgrade failed for release `+ns+"/"+release) ||
		!strings.Contains(failed, `instanceType "u1.nosuch"`) || !strings.Contains(failed, "helm-controller keeps retrying it on its own every 30s") {
		t.Errorf("rollout reads the refused upgrade as failed=%q, want the chart's error and helm-controller retrying", failed)
	}

	t.Logf("helm-controller: installed in %s, upgraded in %s (HelmRelease written to Ready)", installed.Round(time.Millisecond), upgraded.Round(time.Millisecond))
}

// removeReleased deletes HelmReleases helm-controller released (namespace,
// name pairs), all at once, and waits until they are gone: helm-controller
// uninstalls each release first (its finalizer), waiting until Cluster API
// has deleted the pool's Machines, so both must still run.
func (e *env) removeReleased(t *testing.T, namespaceNames ...string) {
	t.Helper()
	for i := 0; i+1 < len(namespaceNames); i += 2 {
		e.remove(t, objectRef{fleet.HelmReleaseAPI, "HelmRelease", namespaceNames[i], namespaceNames[i+1]})
	}
	waitFor(t, 90*time.Second, "helm-controller uninstalled "+strings.Join(namespaceNames, " "), func() string {
		for i := 0; i+1 < len(namespaceNames); i += 2 {
			if _, ok := e.get(t, fleet.HelmReleaseAPI, "HelmRelease", namespaceNames[i], namespaceNames[i+1]); ok {
				return "HelmRelease " + namespaceNames[i] + "/" + namespaceNames[i+1] + " still there"
			}
		}
		return ""
	})
}
