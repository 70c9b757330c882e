//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/rollout"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// testRolloutRecreatedHelmRelease: a tenant deletes a pool's HelmRelease
// and creates it again, with values of its own, after the plan and before
// the pool's wave. The new object is at generation 1, as the planned one
// was: rollout --apply does not write the plan's values over it (the patch
// tests the UID the plan read), stops saying it changed since the plan, and
// the tenant's values stand. The pool of wave 1 moved. Flux's own
// helm-controller releases the pools: the deleted HelmRelease is uninstalled
// (its finalizer) before the tenant can create it again.
func testRolloutRecreatedHelmRelease(t *testing.T, e *env) {
	schematicID, _ := poolDefaults(t)
	const from, to = "v1.13.6", "v1.13.7"
	first := rolloutPool{"tenant-guard-a", "kubernetes-nodes-ga-first", "{cluster: ga}", 1}
	second := rolloutPool{"tenant-guard-a", "kubernetes-nodes-ga-second", "{cluster: ga}", 1}
	r := setUpRollout(t, e, "kubernetes-worker-image-guard-a", []rolloutPool{first, second}, []string{from, to})
	hrs := e.dynamic.Resource(helmReleaseResource).Namespace(second.namespace)
	planned, _ := e.get(t, fleet.HelmReleaseAPI, "HelmRelease", second.namespace, second.release)

	// Once wave 1 has patched the first pool, and before Cluster API rolls
	// it (so before wave 2 starts), the second pool's HelmRelease is deleted
	// and, once helm-controller has uninstalled it and let it go, created
	// again with the tenant's new values.
	var again types.UID                // set on the hold's goroutine, under r.mu
	var old *unstructured.Unstructured // the deleted object, on that goroutine
	createdAgain := func() types.UID {
		r.mu.Lock()
		defer r.mu.Unlock()
		return again
	}
	r.hold(t, first, func(ctx context.Context) bool {
		if createdAgain() != "" {
			return true
		}
		hr, err := e.dynamic.Resource(helmReleaseResource).Namespace(first.namespace).Get(ctx, first.release, metav1.GetOptions{})
		if err != nil || hr.GetGeneration() < 2 {
			return false
		}
		if old == nil {
			hr, err := hrs.Get(ctx, second.release, metav1.GetOptions{})
			if err != nil {
				r.problem("get %s to create it again: %v", second.id(), err)
				return false
			}
			if err := hrs.Delete(ctx, second.release, metav1.DeleteOptions{}); err != nil {
				r.problem("delete %s: %v", second.id(), err)
				return false
			}
			old = hr
		}
		if _, err := hrs.Get(ctx, second.release, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return false // helm-controller is uninstalling it
		}
		spec := old.Object["spec"].(map[string]any)
		spec["values"] = map[string]any{"cluster": "ga", "maxReplicas": int64(9), "instanceType": "u1.large"}
		created, err := hrs.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": fleet.HelmReleaseAPI, "kind": "HelmRelease",
			// The labels cozystack-api writes, the shard's among them.
			"metadata": map[string]any{"name": second.release, "namespace": second.namespace, "labels": old.Object["metadata"].(map[string]any)["labels"]},
			"spec":     spec,
		}}, metav1.CreateOptions{})
		if err != nil {
			r.problem("create %s again: %v", second.id(), err)
			return false
		}
		r.mu.Lock()
		again = created.GetUID()
		r.mu.Unlock()
		return true
	})

	events := e.applyRollout(t, 1, "over a HelmRelease created again", "-n", first.namespace, "--to-talos", to, "--flavor", schematicID+"/"+from,
		"--wave", "1", "--timeout", "60s", "--poll", "200ms")
	uidAgain := createdAgain()
	var uids []string
	for _, p := range events[0].Plan.Pools() {
		uids = append(uids, p.HelmRelease+" "+p.UID)
	}
	if want := []string{first.id() + " " + string(e.mustGet(t, first).GetUID()), second.id() + " " + string(planned.GetUID())}; fmt.Sprint(uids) != fmt.Sprint(want) {
		t.Errorf("the plan's pools and UIDs: %q, want %q (one a wave)", uids, want)
	}
	if uidAgain == "" || uidAgain == planned.GetUID() {
		t.Fatalf("the second pool's HelmRelease was not created again during wave 1 (uid %q, planned %q): %q", uidAgain, planned.GetUID(), eventList(events[1:]))
	}
	got := eventList(events[1:])
	want := []string{"wave", "patched " + first.id(), "ready " + first.id(), "wave-done", "wave", "stopped " + second.id()}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("events: %q, want %q", got, want)
	}
	stopped := events[len(events)-1]
	for _, part := range []string{
		"HelmRelease " + second.id() + " changed since the plan: deleted and created again (uid " + string(planned.GetUID()) + ", now " + string(uidAgain) + ")",
		"not written; run again to plan with what it holds now",
	} {
		if !strings.Contains(stopped.Message, part) {
			t.Errorf("the stop says %q, want %q in it", stopped.Message, part)
		}
	}

	// The tenant's object is as the tenant wrote it: its values, generation 1.
	hr, _ := e.get(t, fleet.HelmReleaseAPI, "HelmRelease", second.namespace, second.release)
	vals, _, _ := unstructured.NestedMap(hr.Object, "spec", "values")
	if hr.GetUID() != uidAgain || hr.GetGeneration() != 1 || fmt.Sprint(vals) != fmt.Sprint(map[string]any{"cluster": "ga", "instanceType": "u1.large", "maxReplicas": int64(9)}) {
		t.Errorf("%s after the rollout: uid %s, generation %d, values %v; want uid %s at generation 1 with maxReplicas 9 and instanceType u1.large, and no talos version written", second.id(), hr.GetUID(), hr.GetGeneration(), vals, uidAgain)
	}
	if v, _, _ := unstructured.NestedString(e.mustGet(t, first).Object, "spec", "values", "talos", "version"); v != to {
		t.Errorf("%s, the same object at the planned generation, has talos.version %q, want %s", first.id(), v, to)
	}
	// helm-controller, not a stand-in, released the first pool's patch: its
	// finalizer, both releases in the history, the chart carrying the digest.
	moved := e.mustGet(t, first)
	history, _, _ := unstructured.NestedSlice(moved.Object, "status", "history")
	if !slices.Contains(moved.GetFinalizers(), "finalizers.fluxcd.io") || len(history) != 2 || !strings.Contains(fmt.Sprint(history[0].(map[string]any)["chartVersion"]), "+") {
		t.Errorf("%s was not released by helm-controller: finalizers %v, history %v", first.id(), moved.GetFinalizers(), history)
	}
}

// testRolloutNotReadyBystander: pools of the namespace already on the
// target by their own values (their tenant wrote talos.version, the rollout's
// field manager never did), one with a worker NotReady and one whose release
// failed, are neither selected nor waited on: the pool the selection chose
// moves, and the rollout is done.
func testRolloutNotReadyBystander(t *testing.T, e *env) {
	schematicID, _ := poolDefaults(t)
	const from, to = "v1.13.6", "v1.13.7"
	moves := rolloutPool{"tenant-guard-b", "kubernetes-nodes-gb-moves", "{cluster: gb}", 1}
	notReady := rolloutPool{"tenant-guard-b", "kubernetes-nodes-gb-own", "{cluster: gb, talos: {version: " + to + "}}", 2}
	failed := rolloutPool{"tenant-guard-b", "kubernetes-nodes-gb-failed", "{cluster: gb, talos: {version: " + to + "}}", 1}
	setUpRollout(t, e, "kubernetes-worker-image-guard-b", []rolloutPool{moves, notReady, failed}, []string{from, to})
	ctx := t.Context()

	// One worker of notReady's two goes NotReady (its kubelet stops
	// posting): Cluster API counts it out of readyReplicas.
	machines, err := e.client(t, capiAPIVersion, "Machine", notReady.namespace).List(ctx, metav1.ListOptions{LabelSelector: "cluster.x-k8s.io/deployment-name=" + notReady.machineDeployment()})
	if err != nil || len(machines.Items) != 2 {
		t.Fatalf("Machines of %s: %v, %v; want 2", notReady.id(), err, machines)
	}
	node, _, _ := unstructured.NestedString(machines.Items[0].Object, "status", "nodeRef", "name")
	now := time.Now().UTC().Format(time.RFC3339)
	body, _ := json.Marshal(map[string]any{"status": map[string]any{"conditions": []any{map[string]any{
		"type": "Ready", "status": "False", "reason": "KubeletNotReady", "message": "the stand-in's kubelet stopped", "lastHeartbeatTime": now, "lastTransitionTime": now,
	}}}})
	if _, err := e.dynamic.Resource(nodeGVR).Patch(ctx, node, types.StrategicMergePatchType, body, metav1.PatchOptions{}, "status"); err != nil {
		t.Fatalf("Node %q of %s NotReady: %v", node, notReady.id(), err)
	}
	waitFor(t, 60*time.Second, "Cluster API counts "+notReady.id()+"'s NotReady worker", func() string {
		md, _ := e.get(t, capiAPIVersion, "MachineDeployment", notReady.namespace, notReady.machineDeployment())
		if st := rollout.MachineDeploymentRolledOut(md.Object, rollout.RunningTemplate(md.Object), notReady.workers); st.ReadyReplicas != 1 || st.UpdatedReplicas != 2 {
			return st.Says
		}
		return ""
	})
	// failed's tenant asks for an instanceType the cluster lacks:
	// helm-controller's upgrade fails at that generation.
	body, _ = json.Marshal(map[string]any{"spec": map[string]any{"values": map[string]any{"instanceType": "u1.nosuch"}}})
	if _, err := e.client(t, fleet.HelmReleaseAPI, "HelmRelease", failed.namespace).Patch(ctx, failed.release, types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "helm-controller failed "+failed.id()+" at generation 2", func() string {
		if _, failure, says := rollout.HelmReleaseStatus(e.mustGet(t, failed).Object, 2); failure == "" {
			return says
		}
		return ""
	})
	generations := map[string]int64{}
	for _, p := range []rolloutPool{notReady, failed} {
		generations[p.id()] = e.mustGet(t, p).GetGeneration()
	}

	events := e.applyRollout(t, 0, "beside pools on the target by their own values", "-n", moves.namespace, "--to-talos", to, "--flavor", schematicID+"/"+from,
		"--timeout", "30s", "--poll", "200ms")
	var chosen []string
	for _, p := range append(events[0].Plan.Pools(), events[0].Plan.Blocked...) {
		chosen = append(chosen, p.HelmRelease+" "+p.State)
	}
	if want := []string{moves.id() + " " + rollout.StateMoves}; fmt.Sprint(chosen) != fmt.Sprint(want) {
		t.Errorf("the plan's pools: %q, want %q alone", chosen, want)
	}
	for _, ev := range events[1:] {
		if ev.Pool == notReady.id() || ev.Pool == failed.id() || slices.Contains(ev.Pools, notReady.id()) || slices.Contains(ev.Pools, failed.id()) {
			t.Errorf("the rollout names a pool it did not choose: %s %s: %s", ev.Event, ev.Pool, ev.Message)
		}
	}
	if got, want := eventList(events[1:]), []string{"wave", "patched " + moves.id(), "ready " + moves.id(), "wave-done", "done"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("events: %q, want %q", got, want)
	}
	for _, p := range []rolloutPool{notReady, failed} {
		if hr := e.mustGet(t, p); hr.GetGeneration() != generations[p.id()] {
			t.Errorf("%s, not chosen, was written: generation %d, was %d", p.id(), hr.GetGeneration(), generations[p.id()])
		}
	}
}

// mustGet reads a pool's HelmRelease.
func (e *env) mustGet(t *testing.T, p rolloutPool) *unstructured.Unstructured {
	t.Helper()
	hr, ok := e.get(t, fleet.HelmReleaseAPI, "HelmRelease", p.namespace, p.release)
	if !ok {
		t.Fatalf("HelmRelease %s is gone", p.id())
	}
	return hr
}

// testRolloutRetryOnFailure: Flux's own helm-controller fails a pool's
// upgrade (the chart refuses an instanceType the cluster no longer has)
// under Cozystack's RetryOnFailure, which never stalls it: Ready False with
// the error while Reconciling is True, a retry every 30 s. rollout --apply
// stops the wave at once, naming the pool and the chart's error, and says
// helm-controller keeps retrying and what ends it. Fixed (the instancetype
// back, a forced reconcile as flux reconcile --force asks for one), the
// retry releases it and rollout reads the pool as on the target.
func testRolloutRetryOnFailure(t *testing.T, e *env) {
	schematicID, _ := poolDefaults(t)
	const from, to, instancetype = "v1.13.6", "v1.13.7", "u1.retry"
	const instancetypeAPI, instancetypeKind = "instancetype.kubevirt.io/v1beta1", "VirtualMachineClusterInstancetype"
	instancetypeYAML := "apiVersion: " + instancetypeAPI + "\nkind: " + instancetypeKind + "\nmetadata: {name: " + instancetype + "}\nspec: {cpu: {guest: 2}, memory: {guest: 4Gi}}\n"
	e.createYAML(t, instancetypeYAML)
	t.Cleanup(func() {
		if _, ok := e.get(t, instancetypeAPI, instancetypeKind, "", instancetype); ok {
			e.deleteOne(t, instancetypeAPI, instancetypeKind, "", instancetype)
		}
	})
	first := rolloutPool{"tenant-retry", "kubernetes-nodes-rt-first", "{cluster: rt}", 1}
	failing := rolloutPool{"tenant-retry", "kubernetes-nodes-rt-second", "{cluster: rt, instanceType: " + instancetype + "}", 1}
	r := setUpRollout(t, e, "kubernetes-worker-image-retry", []rolloutPool{first, failing}, []string{from, to})

	// The plan renders the failing pool with its instancetype there; once
	// wave 1 has patched the first pool, and before Cluster API rolls it
	// (so before wave 2 patches the second), the instancetype goes.
	instancetypes := e.client(t, instancetypeAPI, instancetypeKind, "")
	var gone bool // on the hold's goroutine
	r.hold(t, first, func(ctx context.Context) bool {
		if gone {
			return true
		}
		hr, err := e.dynamic.Resource(helmReleaseResource).Namespace(first.namespace).Get(ctx, first.release, metav1.GetOptions{})
		if err != nil || hr.GetGeneration() < 2 {
			return false
		}
		if err := instancetypes.Delete(ctx, instancetype, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			r.problem("delete %s %s: %v", instancetypeKind, instancetype, err)
			return false
		}
		gone = true
		return true
	})

	const timeout = 120 * time.Second
	start := time.Now()
	events := e.applyRollout(t, 1, "over a release helm-controller fails", "-n", first.namespace, "--to-talos", to, "--flavor", schematicID+"/"+from,
		"--wave", "1", "--timeout", timeout.String(), "--poll", "200ms")
	took := time.Since(start)
	hr := e.mustGet(t, failing)
	status, _ := json.Marshal(hr.Object["status"])
	t.Logf("rollout stopped after %s; %s as helm-controller wrote it: %s", took.Round(time.Millisecond), failing.id(), status)
	if took > timeout/2 {
		t.Errorf("rollout --apply took %s to stop at the failed release, want it well before --timeout %s", took.Round(time.Millisecond), timeout)
	}
	got := eventList(events[1:])
	want := []string{"wave", "patched " + first.id(), "ready " + first.id(), "wave-done", "wave", "patched " + failing.id(), "failed " + failing.id(), "stopped " + failing.id()}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events: %q, want %q", got, want)
	}
	t.Logf("the failure stopped wave 2 %.2fs after it started", events[len(events)-2].Elapsed)
	for _, ev := range events[len(events)-2:] {
		for _, part := range []string{
			"HelmRelease not Ready at generation 2: UpgradeFailed: Helm upgrade failed for release " + failing.id(),
			`instanceType "` + instancetype + `" is not a VirtualMachineClusterInstancetype of this cluster`,
			"helm-controller keeps retrying it on its own every 30s",
			"flux suspend helmrelease " + failing.release + " -n " + failing.namespace,
			"flux reconcile helmrelease " + failing.release + " -n " + failing.namespace + " --force",
		} {
			if !strings.Contains(ev.Message, part) {
				t.Errorf("the %s event says %q, want %q in it", ev.Event, ev.Message, part)
			}
		}
	}
	if c := conditionNamed(hr.Object, "Reconciling"); c["status"] != "True" || conditionNamed(hr.Object, "Stalled") != nil {
		t.Errorf("%s is not retried by helm-controller as this test expects: Reconciling %v, Stalled %v", failing.id(), c, conditionNamed(hr.Object, "Stalled"))
	}

	// Fixed: the instancetype is back, and a forced reconcile (what flux
	// reconcile --force writes) has helm-controller release it now.
	e.createYAML(t, instancetypeYAML)
	r.forceReconcile(t, failing)
	waitFor(t, 90*time.Second, "helm-controller released "+failing.id()+" after the fix", func() string {
		ready, _, says := rollout.HelmReleaseStatus(e.mustGet(t, failing).Object, 2)
		if !ready {
			return says
		}
		return ""
	})
	// The same command again: the pool is released at the generation the
	// rollout wrote, so it is on the target (or rolling, waited for).
	out, problem, code := e.workerimage(t, "rollout", "--kubeconfig", e.kubeconfig, "-n", first.namespace, "--to-talos", to, "--flavor", schematicID+"/"+from,
		"--wave", "1", "--apply", "--timeout", timeout.String(), "--poll", "200ms")
	if code != 0 || strings.Contains(out, "release-failed") || strings.Contains(out, "stopped") {
		t.Errorf("rollout --apply once helm-controller's retry released the pool: exit %d, want 0, nothing failed:\n%s%s", code, out, problem)
	}
}

// conditionNamed is obj's status condition of type kind, or nil.
func conditionNamed(obj map[string]any, kind string) map[string]any {
	list, _, _ := unstructured.NestedSlice(obj, "status", "conditions")
	for _, item := range list {
		if c, ok := item.(map[string]any); ok && c["type"] == kind {
			return c
		}
	}
	return nil
}

// testRolloutStallTimesOut: the new workers of a pool never boot (their VMs
// stay starting): helm-controller released the pool, Cluster API created
// its new Machines, and they never become ready. rollout --apply waits until
// --timeout, then stops the wave at the pool, saying what helm-controller
// and Cluster API say and that the pool goes on in the cluster. Once the VMs
// boot, the same command finds the pool on its way: it is waited for, not
// patched again, and the rollout is done.
func testRolloutStallTimesOut(t *testing.T, e *env) {
	schematicID, _ := poolDefaults(t)
	const from, to = "v1.13.6", "v1.13.7"
	stuck := rolloutPool{"tenant-stall", "kubernetes-nodes-st-stuck", "{cluster: st}", 2}
	setUpRollout(t, e, "kubernetes-worker-image-stall", []rolloutPool{stuck}, []string{from, to})
	e.capi.neverBoot(stuck.namespace, stuck.machineDeployment(), true)
	t.Cleanup(func() { e.capi.neverBoot(stuck.namespace, stuck.machineDeployment(), false) })

	const timeout = 15 * time.Second
	args := []string{"-n", stuck.namespace, "--to-talos", to, "--flavor", schematicID + "/" + from, "--poll", "200ms"}
	start := time.Now()
	events := e.applyRollout(t, 1, "over a pool whose workers never boot", append(args, "--timeout", timeout.String())...)
	took := time.Since(start)
	if took < timeout {
		t.Errorf("rollout --apply stopped after %s, before its --timeout %s", took.Round(time.Millisecond), timeout)
	}
	if got, want := eventList(events[1:]), []string{"wave", "patched " + stuck.id(), "failed " + stuck.id(), "stopped " + stuck.id()}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events: %q, want %q", got, want)
	}
	failed, stopped := events[len(events)-2], events[len(events)-1]
	md, _ := e.get(t, capiAPIVersion, "MachineDeployment", stuck.namespace, stuck.machineDeployment())
	st := rollout.MachineDeploymentRolledOut(md.Object, rollout.RunningTemplate(md.Object), stuck.workers)
	t.Logf("stopped after %s: %s; Cluster API's counts then: %s", took.Round(time.Millisecond), failed.Message, st.Says)
	for _, part := range []string{
		"timed out after " + timeout.String() + " (--timeout, per wave): HelmRelease Ready at generation 2",
		"MachineDeployment rolling onto " + rollout.RunningTemplate(md.Object) + ": 2 of 2 updated, 1 ready",
	} {
		if !strings.Contains(failed.Message, part) {
			t.Errorf("the failed event says %q, want %q in it", failed.Message, part)
		}
	}
	if st.RolledOut || st.UpdatedReplicas != stuck.workers || st.ReadyReplicas == stuck.workers {
		t.Errorf("Cluster API reads %s: want the new workers created and not all ready", st.Says)
	}
	if !strings.Contains(stopped.Message, "patched and not on the target yet (they go on in the cluster): "+stuck.id()) {
		t.Errorf("the stop says %q, want the pool named as going on in the cluster", stopped.Message)
	}
	if n := e.mustGet(t, stuck).GetGeneration(); n != 2 {
		t.Errorf("%s at generation %d after the stop, want 2: patched once", stuck.id(), n)
	}

	// The VMs boot: the same command waits for the pool, patches nothing.
	e.capi.neverBoot(stuck.namespace, stuck.machineDeployment(), false)
	out, problem, code := e.workerimage(t, append(append([]string{"rollout", "--kubeconfig", e.kubeconfig}, args...), "--apply", "--timeout", "60s")...)
	if code != 0 || strings.Contains(out, "patched ") || !strings.Contains(out, "\nready "+stuck.id()+": HelmRelease Ready at generation 2;") {
		t.Errorf("rollout --apply once the VMs boot: exit %d, want 0, the pool waited for and not patched again:\n%s%s", code, out, problem)
	}
	if n := e.mustGet(t, stuck).GetGeneration(); n != 2 {
		t.Errorf("%s at generation %d after the second run, want 2", stuck.id(), n)
	}
	if n, history := releases(e.mustGet(t, stuck)); n != 2 {
		t.Errorf("%s: helm-controller's history %v holds %d releases that deployed, want 2", stuck.id(), history, n)
	}
}

// testRolloutTenantEdit: a tenant edits a pool's values (kubectl edit, or
// its application in the dashboard: a new generation of the same object)
// after the plan and before the pool's wave. rollout --apply does not write
// the plan's values over the edit (the patch tests the generation the plan
// read), stops saying it changed since the plan, and helm-controller
// releases the tenant's values as written; the pool of wave 1 moved.
func testRolloutTenantEdit(t *testing.T, e *env) {
	schematicID, _ := poolDefaults(t)
	const from, to = "v1.13.6", "v1.13.7"
	first := rolloutPool{"tenant-guard-e", "kubernetes-nodes-ge-first", "{cluster: ge}", 1}
	second := rolloutPool{"tenant-guard-e", "kubernetes-nodes-ge-second", "{cluster: ge}", 1}
	r := setUpRollout(t, e, "kubernetes-worker-image-guard-e", []rolloutPool{first, second}, []string{from, to})
	planned := e.mustGet(t, second)

	// Once wave 1 has patched the first pool, and while Cluster API holds it
	// (so before wave 2 starts), the tenant edits the second pool's values.
	var edited int64 // the edit's generation, on the hold's goroutine, under r.mu
	r.hold(t, first, func(ctx context.Context) bool {
		hr, err := e.dynamic.Resource(helmReleaseResource).Namespace(first.namespace).Get(ctx, first.release, metav1.GetOptions{})
		if err != nil || hr.GetGeneration() < 2 {
			return false
		}
		body, _ := json.Marshal(map[string]any{"spec": map[string]any{"values": map[string]any{"maxReplicas": 7}}})
		after, err := e.dynamic.Resource(helmReleaseResource).Namespace(second.namespace).Patch(ctx, second.release, types.MergePatchType, body, metav1.PatchOptions{FieldManager: "kubectl-edit"})
		if err != nil {
			r.problem("the tenant's edit of %s: %v", second.id(), err)
			return false
		}
		r.mu.Lock()
		edited = after.GetGeneration()
		r.mu.Unlock()
		return true
	})

	events := e.applyRollout(t, 1, "over a HelmRelease its tenant edited", "-n", first.namespace, "--to-talos", to, "--flavor", schematicID+"/"+from,
		"--wave", "1", "--timeout", "60s", "--poll", "200ms")
	r.mu.Lock()
	generation := edited
	r.mu.Unlock()
	if generation != planned.GetGeneration()+1 {
		t.Fatalf("the tenant's edit of %s did not land during wave 1 (generation %d, planned %d): %q", second.id(), generation, planned.GetGeneration(), eventList(events[1:]))
	}
	if got, want := eventList(events[1:]), []string{"wave", "patched " + first.id(), "ready " + first.id(), "wave-done", "wave", "stopped " + second.id()}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("events: %q, want %q", got, want)
	}
	if msg := events[len(events)-1].Message; !strings.Contains(msg, fmt.Sprintf("HelmRelease %s changed since the plan (generation %d, now %d): not overwritten", second.id(), planned.GetGeneration(), generation)) {
		t.Errorf("the stop says %q, want the edit named with both generations and not overwritten", msg)
	}

	// helm-controller releases the tenant's values, as written: no Talos
	// version the rollout wrote, the same template as before.
	waitFor(t, 60*time.Second, "helm-controller released the tenant's edit of "+second.id(), func() string {
		ready, failed, says := rollout.HelmReleaseStatus(e.mustGet(t, second).Object, generation)
		if failed != "" {
			t.Fatalf("helm-controller failed the tenant's edit of %s: %s", second.id(), failed)
		}
		if !ready {
			return says
		}
		return ""
	})
	hr := e.mustGet(t, second)
	vals, _, _ := unstructured.NestedMap(hr.Object, "spec", "values")
	if fmt.Sprint(vals) != fmt.Sprint(map[string]any{"cluster": "ge", "maxReplicas": int64(7)}) {
		t.Errorf("%s's values after the rollout: %v, want the tenant's alone (cluster ge, maxReplicas 7)", second.id(), vals)
	}
	for _, f := range hr.GetManagedFields() {
		if f.Manager == rollout.FieldManager {
			t.Errorf("%s carries fields of the rollout's manager: %s", second.id(), f.FieldsV1.String())
		}
	}
	md, _ := e.get(t, capiAPIVersion, "MachineDeployment", second.namespace, second.machineDeployment())
	if tpl := rollout.RunningTemplate(md.Object); tpl != r.templates[second.id()] {
		t.Errorf("%s runs %s after the tenant's edit, want %s: maxReplicas rolls nothing", second.id(), tpl, r.templates[second.id()])
	}
	if v, _, _ := unstructured.NestedString(e.mustGet(t, first).Object, "spec", "values", "talos", "version"); v != to {
		t.Errorf("%s, of wave 1, has talos.version %q, want %s", first.id(), v, to)
	}
}
