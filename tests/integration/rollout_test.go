//go:build integration

package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/cozystack/golden-worker-images/internal/rollout"
	"github.com/cozystack/golden-worker-images/tests/support"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"
)

// rolloutPool is one pool of the rollout tier's fleet.
type rolloutPool struct {
	namespace, release, values string
	workers                    int64
}

func (p rolloutPool) id() string { return p.namespace + "/" + p.release }

// machineDeployment is the pool's MachineDeployment's name.
func (p rolloutPool) machineDeployment() string {
	return "kubernetes-" + strings.TrimPrefix(p.release, "kubernetes-nodes-")
}

// The rollout tier's fleet: pools of three tenants as Cozystack creates
// them (a HelmRelease with a chartRef to the application's artifact, values
// from the namespace's cozystack-values Secret, then its own), booting the
// example fleet's flavor: clones of its golden, one from the platform's
// default osImage, HTTP imports, one pool at zero workers. Sorted by
// HelmRelease, as the plan orders them: waves of 3 put the first three in
// wave 1.
var rolloutFleet = []rolloutPool{
	{"tenant-roll-a", "kubernetes-nodes-ra-golden", "{cluster: ra, osImage: {builtin: {}}}", 2},
	{"tenant-roll-a", "kubernetes-nodes-ra-spot", "{cluster: ra}", 1},
	{"tenant-roll-b", "kubernetes-nodes-rb-batch", "{cluster: rb, minReplicas: 0, osImage: {builtin: {}}}", 0},
	{"tenant-roll-b", "kubernetes-nodes-rb-web", "{cluster: rb, osImage: {}}", 3},
	{"tenant-roll-c", "kubernetes-nodes-rc-edge", "{cluster: rc, osImage: {}}", 1},
}

// cluster is the workload cluster the pool's values name.
func (p rolloutPool) cluster(t testing.TB) string {
	var vals struct{ Cluster string }
	if err := yaml.Unmarshal([]byte(p.values), &vals); err != nil || vals.Cluster == "" {
		t.Fatalf("pool %s: values %q name no cluster (%v)", p.id(), p.values, err)
	}
	return vals.Cluster
}

// pausedAnnotation pauses Cluster API's reconciliation of the object it is
// on: how the tier holds a pool's MachineDeployment where it is.
const pausedAnnotation = "cluster.x-k8s.io/paused"

// hold keeps Cluster API from reconciling the pool's MachineDeployment (its
// paused annotation, which Helm's upgrades leave alone: the chart never
// renders it) until until says true; until runs every 150ms on the tier's
// goroutine, so what it changes no other check of that goroutine reads half
// done. Cluster API then rolls the pool as it would have.
func (r *rolloutTier) hold(t *testing.T, p rolloutPool, until func(context.Context) bool) {
	t.Helper()
	mds := r.e.client(t, capiAPIVersion, "MachineDeployment", p.namespace)
	pause := func(ctx context.Context, on bool) error {
		var value any // null drops the annotation
		if on {
			value = "true"
		}
		body, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{pausedAnnotation: value}}})
		_, err := mds.Patch(ctx, p.machineDeployment(), types.MergePatchType, body, metav1.PatchOptions{})
		return err
	}
	if err := pause(t.Context(), true); err != nil {
		t.Fatalf("pause MachineDeployment of %s: %v", p.id(), err)
	}
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(150 * time.Millisecond)
		defer tick.Stop()
		for {
			if until(ctx) {
				if err := pause(ctx, false); err != nil && ctx.Err() == nil {
					r.problem("unpause MachineDeployment of %s: %v", p.id(), err)
				}
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(func() { stop(); <-done })
}

func (r *rolloutTier) problem(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// freeze makes the API server refuse to move the pool's MachineDeployment
// onto another template, as an operator's change freeze does (a
// ValidatingAdmissionPolicy, the API server's own): helm-controller's
// upgrade of the pool then fails with the policy's message, while Cluster
// API's own writes go through. It returns what lifts the freeze.
func (r *rolloutTier) freeze(t *testing.T, p rolloutPool) (lift func()) {
	t.Helper()
	name := "freeze-" + p.namespace + "-" + p.machineDeployment()
	r.e.createYAML(t, fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: %[1]s}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: [cluster.x-k8s.io]
      apiVersions: ["*"]
      operations: [UPDATE]
      resources: [machinedeployments]
  validations:
  - expression: "object.metadata.name != '%[3]s' || object.spec.template.spec.infrastructureRef.name == oldObject.spec.template.spec.infrastructureRef.name"
    message: "pool %[3]s is under a change freeze: its workers keep their template"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: %[1]s}
spec:
  policyName: %[1]s
  validationActions: [Deny]
  matchResources:
    namespaceSelector:
      matchLabels: {kubernetes.io/metadata.name: %[2]s}
`, name, p.namespace, p.machineDeployment()))
	// The API server loads policies on its own time: frozen once a dry run
	// of the move is refused.
	md, _ := r.e.get(t, capiAPIVersion, "MachineDeployment", p.namespace, p.machineDeployment())
	body, _ := json.Marshal(map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"infrastructureRef": map[string]any{"name": rollout.RunningTemplate(md.Object) + "-frozen"}}}}})
	waitFor(t, 30*time.Second, "the change freeze of "+p.id()+" in force", func() string {
		_, err := r.e.client(t, capiAPIVersion, "MachineDeployment", p.namespace).Patch(t.Context(), p.machineDeployment(), types.MergePatchType, body, metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
		if err == nil || !strings.Contains(err.Error(), "change freeze") {
			return fmt.Sprintf("a dry-run move is not refused: %v", err)
		}
		return ""
	})
	return func() {
		r.e.deleteOne(t, "admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding", "", name)
		r.e.deleteOne(t, "admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy", "", name)
		waitFor(t, 30*time.Second, "the change freeze of "+p.id()+" lifted", func() string {
			_, err := r.e.client(t, capiAPIVersion, "MachineDeployment", p.namespace).Patch(t.Context(), p.machineDeployment(), types.MergePatchType, body, metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
			if err != nil && strings.Contains(err.Error(), "change freeze") {
				return "a dry-run move is still refused"
			}
			return ""
		})
	}
}

// forceReconcile asks helm-controller to release a HelmRelease again now, as
// `flux reconcile helmrelease --force` does.
func (r *rolloutTier) forceReconcile(t *testing.T, p rolloutPool) {
	t.Helper()
	now := time.Now().UTC().Format(time.RFC3339Nano)
	body, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{"reconcile.fluxcd.io/requestedAt": now, "reconcile.fluxcd.io/forceAt": now}}})
	if _, err := r.e.client(t, fleet.HelmReleaseAPI, "HelmRelease", p.namespace).Patch(t.Context(), p.release, types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
		t.Fatalf("reconcile %s: %v", p.id(), err)
	}
}

// releases counts the pool's Helm releases that deployed (deployed or
// superseded), from the history helm-controller writes.
func releases(hr *unstructured.Unstructured) (deployed int, history []string) {
	list, _, _ := unstructured.NestedSlice(hr.Object, "status", "history")
	for _, h := range list {
		entry, _ := h.(map[string]any)
		status := fmt.Sprint(entry["status"])
		history = append(history, fmt.Sprintf("v%v %s", entry["version"], status))
		if status == "deployed" || status == "superseded" {
			deployed++
		}
	}
	return deployed, history
}

// rolloutEvents reads rollout -o json's output: the plan event, then one
// event a line.
func rolloutEvents(t *testing.T, out string) []rollout.RolloutEvent {
	t.Helper()
	var events []rollout.RolloutEvent
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var ev rollout.RolloutEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("rollout -o json: a line that is not one JSON event: %v\n%s\nwhole output:\n%s", err, sc.Text(), out)
		}
		events = append(events, ev)
	}
	return events
}

// applyRollout runs `workerimage rollout --kubeconfig ... ARGS --apply -o
// json` and returns its events, the plan first; the test stops unless it
// exits with want and prints the plan and at least one event after it.
func (e *env) applyRollout(t *testing.T, want int, what string, args ...string) []rollout.RolloutEvent {
	t.Helper()
	out, problem, code := e.workerimage(t, append(append([]string{"rollout", "--kubeconfig", e.kubeconfig}, args...), "--apply", "-o", "json")...)
	events := rolloutEvents(t, out)
	if code != want || len(events) < 2 || events[0].Event != rollout.EventPlan {
		t.Fatalf("rollout --apply %s: exit %d, want %d after the plan event:\n%s%s", what, code, want, out, problem)
	}
	return events
}

// eventList is "<event> <pool>" per event but progress, as a reader scans them.
func eventList(events []rollout.RolloutEvent) []string {
	var out []string
	for _, e := range events {
		if e.Event != rollout.EventProgress {
			out = append(out, strings.TrimSpace(e.Event+" "+e.Pool))
		}
	}
	return out
}

// rolloutTier is a rollout subtest's fleet, released by Flux's own
// helm-controller and run by Cluster API's own manager (the stand-ins of
// TestPlatformControllers booting its VMs), settled as the autoscaler and
// Cluster API leave it.
type rolloutTier struct {
	e     *env
	cat   *helm
	entry func(version string) map[string]any
	// templates: the KubevirtMachineTemplate each pool runs once settled.
	templates map[string]string
	mu        sync.Mutex
	errs      []string
}

// setUpRollout installs catalog with an entry of the pool chart's default
// schematic for each of installed (their goldens Succeeded, as CDI marks
// them), and pools, each in a namespace with its cozystack-values Secret and
// its workload cluster. Goldens of installed and later that other subtests
// kept (resource-policy keep) belong to their catalog releases: this catalog
// makes its own, and removes them when the subtest ends. Flux's own
// helm-controller installs and upgrades the pools (startHelmController) from
// HelmReleases as cozystack-api writes them, and uninstalls them when their
// HelmReleases go; Cluster API rolls their MachineDeployments.
func setUpRollout(t *testing.T, e *env, catalog string, pools []rolloutPool, installed []string, later ...string) *rolloutTier {
	t.Helper()
	if e.capi == nil {
		t.Fatal("setUpRollout needs Cluster API and its stand-ins: run it under TestPlatformControllers")
	}
	schematicID, _ := poolDefaults(t)
	ctx := t.Context()
	var goldens []string
	for _, v := range append(append([]string{}, installed...), later...) {
		goldens = append(goldens, support.GoldenName(schematicID, v))
	}
	namespaces := []string{catalogNamespace, "cozy-system"}
	clusters := map[string]bool{}
	for _, p := range pools {
		if !slices.Contains(namespaces, p.namespace) {
			namespaces = append(namespaces, p.namespace)
		}
		if key := p.namespace + "/" + p.cluster(t); !clusters[key] {
			clusters[key] = true
			e.createWorkloadCluster(t, p.namespace, p.cluster(t))
		}
	}
	if _, served := e.get(t, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "helmreleases.helm.toolkit.fluxcd.io"); !served {
		e.installCRDFile(t, helmReleaseCRDFile)
	}
	for _, ns := range namespaces {
		e.createNamespace(t, ns)
	}
	for _, g := range goldens {
		if _, ok := e.get(t, dataVolumeVersion, "DataVolume", catalogNamespace, g); ok {
			e.deleteOne(t, dataVolumeVersion, "DataVolume", catalogNamespace, g)
		}
	}
	cat := e.helm(t, catalogNamespace)
	entry := func(v string) map[string]any { return map[string]any{"schematicID": schematicID, "version": v} }
	var images []any
	for _, v := range installed {
		images = append(images, entry(v))
	}
	cat.mustInstall(catalog, render.CatalogChart, map[string]any{"images": images})
	t.Cleanup(func() {
		e.uninstallCatalog(t, cat, catalog)
		for _, g := range goldens {
			e.remove(t, objectRef{dataVolumeVersion, "DataVolume", catalogNamespace, g})
		}
	})
	for _, g := range goldens[:len(installed)] {
		e.setPhase(t, catalogNamespace, g, "Succeeded")
	}

	e.startHelmController(t)
	r := &rolloutTier{e: e, cat: cat, entry: entry, templates: map[string]string{}}
	t.Cleanup(func() {
		for _, p := range r.errs {
			t.Errorf("tier: %s", p)
		}
	})
	for _, ns := range namespaces[2:] {
		e.createYAML(t, cozystackValues(ns, `
_cluster:
  osImage: {builtin: {}}
_namespace: {host: `+ns+`.example.org}`))
	}
	var released []string
	t.Cleanup(func() { e.removeReleased(t, released...) })
	for _, p := range pools {
		e.createYAML(t, cozystackHelmRelease(p.namespace, strings.TrimPrefix(p.release, "kubernetes-nodes-"), p.values))
		released = append(released, p.namespace, p.release)
		waitFor(t, 60*time.Second, "helm-controller installed "+p.id(), func() string {
			hr, _ := e.get(t, fleet.HelmReleaseAPI, "HelmRelease", p.namespace, p.release)
			if ready, failed, says := rollout.HelmReleaseStatus(hr.Object, 1); !ready {
				if failed != "" {
					t.Fatalf("helm-controller's install of %s: %s", p.id(), failed)
				}
				return says
			}
			return ""
		})
		// The autoscaler's replicas: the chart leaves spec.replicas out, and
		// Cluster API's webhook set them from the min-size annotation.
		body, _ := json.Marshal(map[string]any{"spec": map[string]any{"replicas": p.workers}})
		if _, err := e.client(t, capiAPIVersion, "MachineDeployment", p.namespace).Patch(ctx, p.machineDeployment(), types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
			t.Fatalf("replicas of %s: %v", p.id(), err)
		}
	}
	// Settled: each HelmRelease Ready at generation 1, each MachineDeployment
	// rolled out by Cluster API, every worker's VM booted and its Node Ready.
	start := time.Now()
	waitFor(t, 90*time.Second, "the fleet settled", func() string {
		for _, p := range pools {
			hr, _ := e.get(t, fleet.HelmReleaseAPI, "HelmRelease", p.namespace, p.release)
			if ready, _, says := rollout.HelmReleaseStatus(hr.Object, 1); !ready {
				return p.id() + ": " + says
			}
			md, _ := e.get(t, capiAPIVersion, "MachineDeployment", p.namespace, p.machineDeployment())
			tpl := rollout.RunningTemplate(md.Object)
			if st := rollout.MachineDeploymentRolledOut(md.Object, tpl, p.workers); !st.RolledOut {
				return p.id() + ": " + st.Says
			}
			r.templates[p.id()] = tpl
		}
		return ""
	})
	t.Logf("%s released by helm-controller, their workers ready by Cluster API %s after", report.Count(len(pools), "pool"), time.Since(start).Round(100*time.Millisecond))
	return r
}

// testRollout: `workerimage rollout --apply` moves the example fleet's
// flavor, v1.13.6, to v1.13.7 on the real API server, pools of three tenants
// in two waves, released by Flux's helm-controller and rolled by Cluster
// API. Without the v1.13.7 golden the plan will not start and names the
// catalog entry; with it added and Succeeded, a pool whose release fails (an
// admission policy refuses its move) stops the rollout in its wave, the
// next wave untouched; run again once it is fixed, the rollout skips the
// pools on the target, waits for the one left, moves the rest; run a third
// time, there is nothing to do. The zero-worker pool is done as soon as its
// MachineDeployment names the new template.
func testRollout(t *testing.T, e *env) {
	schematicID, _ := poolDefaults(t)
	const from, to = "v1.13.6", "v1.13.7"
	const catalog = "kubernetes-worker-image-rollout"
	goldens := []string{support.GoldenName(schematicID, from), support.GoldenName(schematicID, to)}

	r := setUpRollout(t, e, catalog, rolloutFleet, []string{from}, to)
	cat, entry, templates := r.cat, r.entry, r.templates

	// The fleet's pools, by name, booting v1.13.6: other subtests leave
	// pools of that flavor (a plain helm install among them, which would
	// keep a fleet-wide rollout from starting).
	var names []string
	for _, p := range rolloutFleet {
		names = append(names, p.id())
	}
	args := []string{"rollout", "--kubeconfig", e.kubeconfig, "--to-talos", to, "--flavor", schematicID + "/" + from, "--pool", strings.Join(names, ","), "--wave", "3"}
	selected := func(plan *rollout.RolloutPlan) map[string]string {
		out := map[string]string{}
		for _, list := range [][]rollout.RolloutPool{plan.Pools(), plan.OnTarget, plan.Blocked} {
			for _, p := range list {
				if strings.HasPrefix(p.Namespace, "tenant-roll-") {
					out[p.HelmRelease] = p.State
				}
			}
		}
		return out
	}

	// 1. No golden of v1.13.7 yet: the plan names the entry to add, and
	// will not start.
	start := time.Now()
	out, _, code := e.workerimage(t, append(args, "-o", "json")...)
	planRun := time.Since(start)
	var plan rollout.RolloutPlan
	if err := json.Unmarshal([]byte(out), &plan); err != nil || code != 1 {
		t.Fatalf("rollout plan without the v1.13.7 golden: exit %d, want 1 and a plan: %v\n%s", code, err, out)
	}
	want := map[string]string{
		"tenant-roll-a/kubernetes-nodes-ra-golden": rollout.StateNeedsEntry, "tenant-roll-a/kubernetes-nodes-ra-spot": rollout.StateNeedsEntry,
		"tenant-roll-b/kubernetes-nodes-rb-batch": rollout.StateNeedsEntry, "tenant-roll-b/kubernetes-nodes-rb-web": rollout.StateMoves, "tenant-roll-c/kubernetes-nodes-rc-edge": rollout.StateMoves,
	}
	if got := selected(&plan); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("pools before the entry: %v, want %v", got, want)
	}
	if plan.Catalog == nil || !strings.Contains(plan.Catalog.Values, "version: "+to) {
		t.Errorf("the plan names no catalog entry for %s: %+v", to, plan.Catalog)
	}

	// 2. The entry added, its golden imported as CDI marks it.
	cat.mustUpgrade(catalog, render.CatalogChart, map[string]any{"images": []any{entry(from), entry(to)}})
	e.setPhase(t, catalogNamespace, goldens[1], "Succeeded")

	// 3. ra-spot's release fails (the API server refuses to move its
	// MachineDeployment): wave 1 stops there, wave 2 is not patched.
	spot := rolloutFleet[1]
	failing := spot.id()
	lift := r.freeze(t, spot)
	start = time.Now()
	out, problem, code := e.workerimage(t, append(args, "--apply", "--timeout", "60s", "--poll", "200ms", "-o", "json")...)
	firstRun := time.Since(start)
	events := rolloutEvents(t, out)
	if code != 1 || len(events) == 0 || events[0].Event != rollout.EventPlan {
		t.Fatalf("rollout --apply with a failing pool: exit %d, want 1 after the plan event:\n%s%s", code, out, problem)
	}
	if !events[0].Plan.CanStart {
		var blocked []string
		for _, p := range events[0].Plan.Blocked {
			blocked = append(blocked, p.HelmRelease+": "+p.State+": "+p.Reason)
		}
		t.Fatalf("the plan does not start: %s", strings.Join(blocked, "\n"))
	}
	if got := selected(events[0].Plan); len(got) != 5 || got[failing] != rollout.StateMoves {
		t.Errorf("the plan that starts: %v, want the 5 pools moving", got)
	}
	wantEvents := []string{
		"wave", "patched tenant-roll-a/kubernetes-nodes-ra-golden", "patched " + failing, "patched tenant-roll-b/kubernetes-nodes-rb-batch",
	}
	got := eventList(events[1:])
	if len(got) < len(wantEvents) || fmt.Sprint(got[:len(wantEvents)]) != fmt.Sprint(wantEvents) || got[len(got)-2] != "failed "+failing || got[len(got)-1] != "stopped "+failing {
		t.Errorf("events: %q, want %q first, then the failure of %s and the stop", got, wantEvents, failing)
	}
	for _, ev := range events {
		if ev.Event == rollout.EventFailed && !strings.Contains(ev.Message, "HelmRelease not Ready at generation 2: UpgradeFailed: Helm upgrade failed for release "+failing) {
			t.Errorf("the failure says %q, want helm-controller's reason", ev.Message)
		}
		if ev.Event == rollout.EventReady && ev.Pool == "tenant-roll-b/kubernetes-nodes-rb-batch" && !strings.Contains(ev.Status.MachineDeployment, "at zero workers") {
			t.Errorf("the zero-worker pool is ready with %q, want its template named at zero workers", ev.Status.MachineDeployment)
		}
	}
	for _, p := range rolloutFleet[3:] {
		if hr, _ := e.get(t, fleet.HelmReleaseAPI, "HelmRelease", p.namespace, p.release); hr.GetGeneration() != 1 {
			t.Errorf("%s of wave 2 was patched (generation %d) after wave 1 stopped", p.id(), hr.GetGeneration())
		}
	}
	if hr, _ := e.get(t, fleet.HelmReleaseAPI, "HelmRelease", "tenant-roll-a", "kubernetes-nodes-ra-spot"); render.Get(hr.Object, "spec.values.talos.version") != to ||
		len(hr.Object["spec"].(map[string]any)["valuesFrom"].([]any)) != 1 {
		t.Errorf("the failing pool's HelmRelease: spec %v, want talos.version %s in spec.values and valuesFrom untouched", hr.Object["spec"], to)
	}

	// 4. Run again as it is: the pool whose release failed cannot move and
	// is listed apart, saying how to release it again, while the rest can
	// start; with --strict it blocks the start.
	out, _, code = e.workerimage(t, args...)
	if code != 0 || !strings.Contains(out, "cannot move (left where they are, each with its fix; the rest moves):\n  pool  "+failing+"  release-failed: ") {
		t.Errorf("rollout with the failed release not fixed: exit %d, want 0 listing it apart:\n%s", code, out)
	}
	out, _, code = e.workerimage(t, append(args, "--strict")...)
	if code != 1 || !strings.Contains(out, "  pool  "+failing+"  release-failed: its values are on the target and HelmRelease not Ready at generation 2: UpgradeFailed") ||
		!strings.Contains(out, "(flux reconcile helmrelease kubernetes-nodes-ra-spot -n tenant-roll-a --force)") {
		t.Errorf("rollout --strict with the failed release not fixed: exit %d, want 1 naming it and the fix:\n%s", code, out)
	}

	// The rest of wave 1 went on without the rollout: helm-controller
	// released it, Cluster API rolls it; the operator looks before running
	// again.
	for _, p := range []rolloutPool{rolloutFleet[0], rolloutFleet[2]} {
		waitFor(t, 60*time.Second, p.id()+" on the target", func() string {
			hr := e.mustGet(t, p)
			if ready, _, says := rollout.HelmReleaseStatus(hr.Object, 2); !ready {
				return says
			}
			md, _ := e.get(t, capiAPIVersion, "MachineDeployment", p.namespace, p.machineDeployment())
			tpl := rollout.RunningTemplate(md.Object)
			if st := rollout.MachineDeploymentRolledOut(md.Object, tpl, p.workers); tpl == templates[p.id()] || !st.RolledOut {
				return st.Says
			}
			return ""
		})
	}

	// 5. Fixed (the freeze lifted, a forced reconcile, as the rollout's fix
	// says): helm-controller releases it again, Cluster API rolls it only
	// once the next run has started (so that run finds it rolling); run
	// again: the pools on the target no longer boot v1.13.6 nor are on their
	// way, so are not selected; ra-spot, on its way, is waited for, not
	// patched again; wave 2's pools move with it. Text, one line per event.
	r.hold(t, spot, func(ctx context.Context) bool {
		hr, err := e.dynamic.Resource(helmReleaseResource).Namespace(rolloutFleet[3].namespace).Get(ctx, rolloutFleet[3].release, metav1.GetOptions{})
		return err == nil && hr.GetGeneration() >= 2
	})
	lift()
	r.forceReconcile(t, spot)
	waitFor(t, 60*time.Second, failing+" released again", func() string {
		hr, _ := e.get(t, fleet.HelmReleaseAPI, "HelmRelease", "tenant-roll-a", "kubernetes-nodes-ra-spot")
		_, _, says := rollout.HelmReleaseStatus(hr.Object, 2)
		if !strings.Contains(says, "Ready at") {
			return says
		}
		return ""
	})
	start = time.Now()
	out, problem, code = e.workerimage(t, append(args, "--apply", "--timeout", "60s", "--poll", "200ms")...)
	secondRun := time.Since(start)
	if code != 0 {
		t.Fatalf("rollout --apply resumed: exit %d, want 0:\n%s%s", code, out, problem)
	}
	for _, line := range []string{
		"\nselected  3 pools: pools " + strings.Join(names, ", ") + ", booting " + schematicID + "/" + from + "\n",
		"  pool tenant-roll-a/kubernetes-nodes-ra-spot (kubernetes-ra-spot): 1 worker, rolling\n",
		"\nwave 1 of 1: 3 pools: tenant-roll-a/kubernetes-nodes-ra-spot, tenant-roll-b/kubernetes-nodes-rb-web, tenant-roll-c/kubernetes-nodes-rc-edge\n",
		"\nready tenant-roll-a/kubernetes-nodes-ra-spot: HelmRelease Ready at generation 2;",
		"\ndone: 3 pools on the target, in 1 wave\n",
	} {
		if !strings.Contains(out, line) {
			t.Errorf("the resumed rollout does not say %q:\n%s", line, out)
		}
	}
	if strings.Contains(out, "patched tenant-roll-a/kubernetes-nodes-ra-spot") {
		t.Errorf("the resumed rollout patched the pool left rolling again:\n%s", out)
	}

	// Every pool runs v1.13.7 now, each released once more and on the
	// template the chart renders for it.
	for _, p := range rolloutFleet {
		hr, _ := e.get(t, fleet.HelmReleaseAPI, "HelmRelease", p.namespace, p.release)
		md, _ := e.get(t, capiAPIVersion, "MachineDeployment", p.namespace, p.machineDeployment())
		tpl := rollout.RunningTemplate(md.Object)
		if ready, _, says := rollout.HelmReleaseStatus(hr.Object, 2); !ready || tpl == templates[p.id()] || !rollout.MachineDeploymentRolledOut(md.Object, tpl, p.workers).RolledOut {
			t.Errorf("%s after the rollout: %s, MachineDeployment on %s (was %s)", p.id(), says, tpl, templates[p.id()])
		}
		kmt, ok := e.get(t, kmtAPIVersion, kmtKind, p.namespace, tpl)
		disk := fmt.Sprint(render.Get(kmt.Object, "spec.template.spec.virtualMachineTemplate.spec.dataVolumeTemplates"))
		if !ok || !strings.Contains(disk, to) || strings.Contains(disk, from) {
			t.Errorf("%s runs %s, whose disk is not v1.13.7: %s", p.id(), tpl, disk)
		}
		if n, history := releases(hr); n != 2 {
			t.Errorf("%s: helm-controller's history %v holds %d releases that deployed, want 2: the install and the rollout's", p.id(), history, n)
		}
		if n, _, _ := unstructured.NestedInt64(hr.Object, "metadata", "generation"); n != 2 {
			t.Errorf("%s: HelmRelease at generation %d, want 2: patched once", p.id(), n)
		}
	}

	// 6. Nothing left to do.
	start = time.Now()
	out, _, code = e.workerimage(t, args...)
	lastRun := time.Since(start)
	if code != 0 || !strings.Contains(out, "selected  0 pools") || !strings.Contains(out, "result  nothing to do: every selected pool is on the target") {
		t.Errorf("rollout once done: exit %d, want 0 and nothing to do:\n%s", code, out)
	}
	t.Logf("rollout of %d pools of 3 tenants, waves of 3 (polling every 200ms; helm-controller and Cluster API): the plan without the golden %s; --apply stopped at the failing pool after %s; resumed, 3 pools in 1 wave, done after %s; nothing to do %s",
		len(rolloutFleet), planRun.Round(time.Millisecond), firstRun.Round(time.Millisecond), secondRun.Round(time.Millisecond), lastRun.Round(time.Millisecond))
}

// waitFor polls until check says nothing is left ("").
func waitFor(t *testing.T, timeout time.Duration, what string, check func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		left := check()
		if left == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %s: %s", what, timeout, left)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

var helmReleaseResource = schema.GroupVersionResource{Group: "helm.toolkit.fluxcd.io", Version: "v2", Resource: "helmreleases"}
