package apply_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cozystack/golden-worker-images/internal/apply"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/cozystack/golden-worker-images/internal/rollout"
	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// cluster is an API server as far as apply uses one: get, and JSON patches
// of a HelmRelease, which bump metadata.generation when the spec changes
// (client-go's fake dynamic client does not: its tracker keeps the
// generation as written, and apply waits for the one the patch answers).
// flux and capi stand in for helm-controller and Cluster API: each clock
// step, flux releases every HelmRelease generation it has not observed
// (moving its MachineDeployment to the pool's next template, unless told to
// fail), and capi rolls every MachineDeployment one worker further.
type cluster struct {
	mu      sync.Mutex
	objs    map[string]*unstructured.Unstructured
	patches []string
	// next is each pool's template once its HelmRelease is released.
	next map[string]string
	// flux says, by HelmRelease name, what releasing it does: "" applies
	// it, "fail" marks it not Ready, "retry" fails once while retrying,
	// "stall" marks it Stalled, "hold" does nothing.
	flux map[string]string
	// capiStuck: MachineDeployments Cluster API never rolls.
	capiStuck map[string]bool
	now       time.Time
	steps     int
	// onStep, when set, runs before each step (a tenant's edit, say).
	onStep func(step int)
	// version counts the writes, each object's resourceVersion; recordWrites
	// are the ConfigMaps written (create or update), denied what the API
	// server refuses to this identity ("ConfigMap": a role without them).
	version      int
	recordWrites int
	// recordBytes are the bytes of the record's writes: the data of each
	// create and update, each merge patch's body.
	recordBytes int
	// recordMax is the most data (bytes, as JSON) the record held.
	recordMax int
	denied    map[string]bool
	// onRecordUpdate, when set, runs before an update of a ConfigMap (another
	// run writing the record first, say).
	onRecordUpdate func()
}

func newCluster() *cluster {
	return &cluster{objs: map[string]*unstructured.Unstructured{}, next: map[string]string{}, flux: map[string]string{}, capiStuck: map[string]bool{}, denied: map[string]bool{}, now: time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)}
}

func key(kind, ns, name string) string { return kind + "/" + ns + "/" + name }

// pool adds a pool's HelmRelease at generation 1, released, and its
// MachineDeployment on template running with workers, all updated.
func (c *cluster) pool(name, running, next string, workers int64) rollout.RolloutPool {
	ns, hr, _ := strings.Cut(name, "/")
	md := "kubernetes-" + strings.TrimPrefix(hr, "kubernetes-nodes-")
	c.objs[key("HelmRelease", ns, hr)] = &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
		"metadata": map[string]any{"name": hr, "namespace": ns, "generation": int64(1), "uid": "uid-" + hr},
		"spec":     map[string]any{"values": map[string]any{"cluster": "c", "talos": map[string]any{"version": "v1.13.6"}}},
		"status":   map[string]any{"observedGeneration": int64(1), "conditions": []any{map[string]any{"type": "Ready", "status": "True", "observedGeneration": int64(1)}}},
	}}
	c.objs[key("MachineDeployment", ns, md)] = &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineDeployment",
		"metadata": map[string]any{"name": md, "namespace": ns, "generation": int64(1)},
		"spec":     map[string]any{"replicas": workers, "template": map[string]any{"spec": map[string]any{"infrastructureRef": map[string]any{"name": running}}}},
		"status":   map[string]any{"observedGeneration": int64(1), "replicas": workers, "updatedReplicas": workers, "readyReplicas": workers},
	}}
	c.next[hr] = next
	return rollout.RolloutPool{HelmRelease: name, Namespace: ns, Release: hr, Pool: md, State: rollout.StateMoves, Generation: 1, UID: "uid-" + hr, Workers: workers, MachineDeployment: true,
		Changes:         []rollout.ValueChange{{Field: "talos.version", From: "v1.13.6", Source: "talos.version", To: "v1.13.7"}},
		ValuesChange:    map[string]any{"talos": map[string]any{"version": "v1.13.7"}},
		SpecValues:      map[string]any{"cluster": "c", "talos": map[string]any{"version": "v1.13.7"}},
		MachineTemplate: rollout.RolloutTemplates{Running: running, Current: running, Target: next}}
}

func (c *cluster) get(kind, ns, name string) *unstructured.Unstructured {
	c.mu.Lock()
	defer c.mu.Unlock()
	if o := c.objs[key(kind, ns, name)]; o != nil {
		return o.DeepCopy()
	}
	return nil
}

// step is one tick of the controllers.
func (c *cluster) step() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.steps++
	if c.onStep != nil {
		c.mu.Unlock()
		c.onStep(c.steps)
		c.mu.Lock()
	}
	for _, hr := range c.objs {
		if hr.GetKind() != "HelmRelease" {
			continue
		}
		gen := hr.GetGeneration()
		observed, _, _ := unstructured.NestedInt64(hr.Object, "status", "observedGeneration")
		if observed >= gen {
			continue
		}
		cond := func(kind, status, reason string) any {
			return map[string]any{"type": kind, "status": status, "reason": reason, "observedGeneration": gen, "message": reason + " at " + fmt.Sprint(gen)}
		}
		switch c.flux[hr.GetName()] {
		case "hold":
			continue
		case "fail":
			hr.Object["status"] = map[string]any{"observedGeneration": gen, "conditions": []any{cond("Ready", "False", "UpgradeFailed")}}
			continue
		case "stall":
			hr.Object["status"] = map[string]any{"observedGeneration": gen, "conditions": []any{cond("Stalled", "True", "RetriesExceeded"), cond("Ready", "False", "UpgradeFailed")}}
			continue
		case "retry":
			// The previous generation's failures while this one runs: not
			// this generation's, so waited through.
			hr.Object["status"] = map[string]any{"observedGeneration": gen - 1, "lastAttemptedGeneration": gen - 1, "failures": int64(2),
				"conditions": []any{cond("Ready", "Unknown", "Progressing"), cond("Reconciling", "True", "Progressing")}}
			c.flux[hr.GetName()] = ""
			continue
		case "retrying":
			// helm-controller under RetryOnFailure, a retry running after
			// the generation failed: Ready Unknown, the error on Released.
			hr.Object["status"] = map[string]any{"observedGeneration": gen, "lastAttemptedGeneration": gen, "failures": int64(1),
				"conditions": []any{cond("Reconciling", "True", "Progressing"), cond("Ready", "Unknown", "Progressing"), cond("Released", "False", "UpgradeFailed")}}
			continue
		}
		md := c.objs[key("MachineDeployment", hr.GetNamespace(), "kubernetes-"+strings.TrimPrefix(hr.GetName(), "kubernetes-nodes-"))]
		ref, _, _ := unstructured.NestedString(md.Object, "spec", "template", "spec", "infrastructureRef", "name")
		if ref != c.next[hr.GetName()] {
			_ = unstructured.SetNestedField(md.Object, c.next[hr.GetName()], "spec", "template", "spec", "infrastructureRef", "name")
			md.SetGeneration(md.GetGeneration() + 1)
		}
		hr.Object["status"] = map[string]any{"observedGeneration": gen, "conditions": []any{cond("Ready", "True", "UpgradeSucceeded")}}
	}
	for _, md := range c.objs {
		if md.GetKind() != "MachineDeployment" || c.capiStuck[md.GetName()] {
			continue
		}
		desired, _, _ := unstructured.NestedInt64(md.Object, "spec", "replicas")
		observed, _, _ := unstructured.NestedInt64(md.Object, "status", "observedGeneration")
		updated, _, _ := unstructured.NestedInt64(md.Object, "status", "updatedReplicas")
		if observed < md.GetGeneration() {
			// A new template: every worker is an old one now; one surges.
			md.Object["status"] = map[string]any{"observedGeneration": md.GetGeneration(), "replicas": desired + min(desired, 1), "updatedReplicas": int64(0), "readyReplicas": desired}
			continue
		}
		if updated < desired {
			updated++
			replicas := desired
			if updated < desired {
				replicas++
			}
			md.Object["status"] = map[string]any{"observedGeneration": observed, "replicas": replicas, "updatedReplicas": updated, "readyReplicas": replicas}
		}
	}
}

func (c *cluster) GetClientFor(apiVersion, kind string) (dynamic.NamespaceableResourceInterface, bool, error) {
	return &resource{c: c, kind: kind}, true, nil
}

// resource implements what apply calls of a dynamic client: Get, Patch,
// and for the rollout's record Create and Update (which hold to the
// resourceVersion, as the API server does).
type resource struct {
	dynamic.NamespaceableResourceInterface
	c        *cluster
	kind, ns string
}

func (r *resource) Namespace(ns string) dynamic.ResourceInterface {
	return &resource{c: r.c, kind: r.kind, ns: ns}
}

func (r *resource) Get(_ context.Context, name string, _ metav1.GetOptions, _ ...string) (*unstructured.Unstructured, error) {
	if o := r.c.get(r.kind, r.ns, name); o != nil {
		return o, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: strings.ToLower(r.kind) + "s"}, name)
}

func (r *resource) Create(_ context.Context, obj *unstructured.Unstructured, opts metav1.CreateOptions, _ ...string) (*unstructured.Unstructured, error) {
	r.c.mu.Lock()
	defer r.c.mu.Unlock()
	gr := schema.GroupResource{Resource: strings.ToLower(r.kind) + "s"}
	if r.c.denied[r.kind] {
		return nil, apierrors.NewForbidden(gr, obj.GetName(), fmt.Errorf("User \"tenant\" cannot create resource"))
	}
	if opts.FieldManager != rollout.FieldManager {
		return nil, fmt.Errorf("field manager %q", opts.FieldManager)
	}
	k := key(r.kind, r.ns, obj.GetName())
	if r.c.objs[k] != nil {
		return nil, apierrors.NewAlreadyExists(gr, obj.GetName())
	}
	o := obj.DeepCopy()
	o.SetNamespace(r.ns)
	r.c.version++
	o.SetResourceVersion(fmt.Sprint(r.c.version))
	r.c.objs[k] = o
	r.c.recordWrites++
	r.c.recordBytes += dataBytes(o)
	r.c.recordMax = max(r.c.recordMax, dataBytes(o))
	return o.DeepCopy(), nil
}

// dataBytes is the size of an object's data as JSON.
func dataBytes(o *unstructured.Unstructured) int {
	raw, _ := json.Marshal(o.Object["data"])
	return len(raw)
}

func (r *resource) Update(_ context.Context, obj *unstructured.Unstructured, opts metav1.UpdateOptions, _ ...string) (*unstructured.Unstructured, error) {
	if f := r.c.onRecordUpdate; f != nil {
		r.c.onRecordUpdate = nil
		f()
	}
	r.c.mu.Lock()
	defer r.c.mu.Unlock()
	gr := schema.GroupResource{Resource: strings.ToLower(r.kind) + "s"}
	if r.c.denied[r.kind] {
		return nil, apierrors.NewForbidden(gr, obj.GetName(), fmt.Errorf("User \"tenant\" cannot update resource"))
	}
	if opts.FieldManager != rollout.FieldManager {
		return nil, fmt.Errorf("field manager %q", opts.FieldManager)
	}
	k := key(r.kind, r.ns, obj.GetName())
	now := r.c.objs[k]
	switch {
	case now == nil:
		return nil, apierrors.NewNotFound(gr, obj.GetName())
	case now.GetResourceVersion() != obj.GetResourceVersion():
		return nil, apierrors.NewConflict(gr, obj.GetName(), fmt.Errorf("the object has been modified"))
	}
	o := obj.DeepCopy()
	r.c.version++
	o.SetResourceVersion(fmt.Sprint(r.c.version))
	r.c.objs[k] = o
	r.c.recordWrites++
	r.c.recordBytes += dataBytes(o)
	r.c.recordMax = max(r.c.recordMax, dataBytes(o))
	return o.DeepCopy(), nil
}

func (r *resource) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, sub ...string) (*unstructured.Unstructured, error) {
	if r.kind == "ConfigMap" {
		return r.patchRecord(name, pt, data, opts)
	}
	r.c.mu.Lock()
	defer r.c.mu.Unlock()
	r.c.patches = append(r.c.patches, string(data))
	o := r.c.objs[key(r.kind, r.ns, name)]
	if o == nil {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "helmreleases"}, name)
	}
	if pt != types.JSONPatchType || opts.FieldManager != rollout.FieldManager {
		return nil, fmt.Errorf("patch type %s, field manager %q", pt, opts.FieldManager)
	}
	patch, err := jsonpatch.DecodePatch(data)
	if err != nil {
		return nil, err
	}
	doc, _ := json.Marshal(o.Object)
	out, err := patch.Apply(doc)
	if err != nil {
		return nil, apierrors.NewInvalid(schema.GroupKind{Kind: r.kind}, name, nil)
	}
	next := &unstructured.Unstructured{}
	if err := next.UnmarshalJSON(out); err != nil {
		return nil, err
	}
	if !equality.Semantic.DeepEqual(next.Object["spec"], o.Object["spec"]) {
		next.SetGeneration(o.GetGeneration() + 1)
	}
	r.c.objs[key(r.kind, r.ns, name)] = next
	return next.DeepCopy(), nil
}

// patchRecord is a JSON merge patch of a ConfigMap, as the API server
// makes it (no resourceVersion: it never conflicts).
func (r *resource) patchRecord(name string, pt types.PatchType, data []byte, opts metav1.PatchOptions) (*unstructured.Unstructured, error) {
	if f := r.c.onRecordUpdate; f != nil {
		r.c.onRecordUpdate = nil
		f()
	}
	r.c.mu.Lock()
	defer r.c.mu.Unlock()
	gr := schema.GroupResource{Resource: "configmaps"}
	if r.c.denied[r.kind] {
		return nil, apierrors.NewForbidden(gr, name, fmt.Errorf("User \"tenant\" cannot patch resource"))
	}
	if pt != types.MergePatchType || opts.FieldManager != rollout.FieldManager {
		return nil, fmt.Errorf("patch type %s, field manager %q", pt, opts.FieldManager)
	}
	k := key(r.kind, r.ns, name)
	o := r.c.objs[k]
	if o == nil {
		return nil, apierrors.NewNotFound(gr, name)
	}
	doc, _ := json.Marshal(o.Object)
	out, err := jsonpatch.MergePatch(doc, data)
	if err != nil {
		return nil, err
	}
	next := &unstructured.Unstructured{}
	if err := next.UnmarshalJSON(out); err != nil {
		return nil, err
	}
	r.c.version++
	next.SetResourceVersion(fmt.Sprint(r.c.version))
	r.c.objs[k] = next
	r.c.recordWrites++
	r.c.recordBytes += len(data)
	r.c.recordMax = max(r.c.recordMax, dataBytes(next))
	return next.DeepCopy(), nil
}

// run runs a plan on the cluster with a clock each sleep advances, the
// controllers stepping once per poll, and returns what it emitted.
func (c *cluster) run(t *testing.T, ctx context.Context, plan *rollout.RolloutPlan, timeout time.Duration) (bool, []rollout.RolloutEvent) {
	t.Helper()
	var events []rollout.RolloutEvent
	o := apply.Options{
		Timeout: timeout,
		Poll:    10 * time.Second,
		Now:     func() time.Time { return c.now },
		Sleep: func(ctx context.Context, d time.Duration) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			c.now = c.now.Add(d)
			c.step()
			return nil
		},
	}
	done, err := apply.Run(ctx, c, plan, o, func(e rollout.RolloutEvent) { events = append(events, e) })
	require.NoError(t, err)
	return done, events
}

func planOf(waves ...[]rollout.RolloutPool) *rollout.RolloutPlan {
	p := &rollout.RolloutPlan{CanStart: true, WaveSize: 2}
	for i, pools := range waves {
		p.Waves = append(p.Waves, rollout.RolloutWave{Wave: i + 1, Pools: pools})
	}
	return p
}

// kinds lists the events as "<event> <pool>".
func kinds(events []rollout.RolloutEvent) []string {
	var out []string
	for _, e := range events {
		if e.Event == rollout.EventProgress {
			continue
		}
		out = append(out, strings.TrimSpace(e.Event+" "+e.Pool))
	}
	return out
}

// Two waves: each pool's HelmRelease is patched while at the planned
// generation, with its whole new spec.values; the next wave starts only
// once helm-controller released each pool's new generation and Cluster API
// rolled every worker onto the new template; a pool at zero workers is done
// as soon as its MachineDeployment names the new template.
func TestRunMovesPoolsWaveByWave(t *testing.T) {
	c := newCluster()
	a := c.pool("tenant-a/kubernetes-nodes-a-web", "kubernetes-a-web-111111", "kubernetes-a-web-222222", 3)
	b := c.pool("tenant-b/kubernetes-nodes-b-batch", "kubernetes-b-batch-111111", "kubernetes-b-batch-222222", 0)
	d := c.pool("tenant-c/kubernetes-nodes-c-edge", "kubernetes-c-edge-111111", "kubernetes-c-edge-222222", 1)
	done, events := c.run(t, t.Context(), planOf([]rollout.RolloutPool{a, b}, []rollout.RolloutPool{d}), time.Hour)
	require.True(t, done)
	assert.Equal(t, []string{
		"wave", "patched tenant-a/kubernetes-nodes-a-web", "patched tenant-b/kubernetes-nodes-b-batch",
		"ready tenant-b/kubernetes-nodes-b-batch", "ready tenant-a/kubernetes-nodes-a-web", "wave-done",
		"wave", "patched tenant-c/kubernetes-nodes-c-edge", "ready tenant-c/kubernetes-nodes-c-edge", "wave-done",
		"done",
	}, kinds(events))

	require.Len(t, c.patches, 3)
	var ops []map[string]any
	require.NoError(t, json.Unmarshal([]byte(c.patches[0]), &ops))
	assert.Equal(t, []map[string]any{
		{"op": "test", "path": "/metadata/generation", "value": float64(1)},
		{"op": "test", "path": "/metadata/uid", "value": "uid-kubernetes-nodes-a-web"},
		{"op": "add", "path": "/spec/values", "value": map[string]any{"cluster": "c", "talos": map[string]any{"version": "v1.13.7"}}},
	}, ops)
	hr := c.get("HelmRelease", "tenant-a", "kubernetes-nodes-a-web")
	assert.Equal(t, int64(2), hr.GetGeneration())
	for _, e := range events {
		if e.Event == rollout.EventPatched {
			assert.Equal(t, int64(2), e.Generation, "the generation the patch answered")
			assert.Contains(t, e.Message, "talos.version v1.13.6 -> v1.13.7 (generation 1 -> 2)")
		}
		if e.Event == rollout.EventReady && e.Pool == "tenant-a/kubernetes-nodes-a-web" {
			require.NotNil(t, e.Status)
			assert.Equal(t, rollout.RolloutStatus{HelmRelease: "HelmRelease Ready at generation 2", HelmReleaseReady: true,
				MachineDeployment: "MachineDeployment on kubernetes-a-web-222222: 3 of 3 updated, 3 ready, 3 in all", Template: "kubernetes-a-web-222222",
				Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: 3, RolledOut: true}, *e.Status)
		}
	}
	// While a-web rolls, each change it makes is one progress event, none twice.
	var progress []string
	for _, e := range events {
		if e.Event == rollout.EventProgress && e.Pool == "tenant-a/kubernetes-nodes-a-web" {
			progress = append(progress, e.Status.MachineDeployment)
		}
	}
	assert.Equal(t, []string{
		"MachineDeployment still names kubernetes-a-web-111111, waiting for kubernetes-a-web-222222",
		"MachineDeployment rolling onto kubernetes-a-web-222222: 0 of 3 updated, 3 ready, 4 in all",
		"MachineDeployment rolling onto kubernetes-a-web-222222: 1 of 3 updated, 4 ready, 4 in all",
		"MachineDeployment rolling onto kubernetes-a-web-222222: 2 of 3 updated, 4 ready, 4 in all",
	}, progress)
	last := events[len(events)-1]
	assert.Equal(t, "done: 3 pools on the target, in 2 waves", last.Message)
	assert.Equal(t, c.now, last.Time)
	assert.Positive(t, last.Elapsed)
}

// A pool whose HelmRelease is not Ready at its new generation stops the
// rollout: the event names it and helm-controller's reason, the wave's
// other pools are said to go on rolling, and the next wave is not patched.
// A failure helm-controller retries is waited through; a Stalled release
// stops it too.
func TestRunStopsAtTheFirstFailure(t *testing.T) {
	for _, how := range []string{"fail", "stall", "retrying"} {
		c := newCluster()
		a := c.pool("tenant-a/kubernetes-nodes-a-web", "kubernetes-a-web-111111", "kubernetes-a-web-222222", 2)
		b := c.pool("tenant-b/kubernetes-nodes-b-web", "kubernetes-b-web-111111", "kubernetes-b-web-222222", 2)
		d := c.pool("tenant-c/kubernetes-nodes-c-web", "kubernetes-c-web-111111", "kubernetes-c-web-222222", 2)
		c.flux["kubernetes-nodes-b-web"] = how
		done, events := c.run(t, t.Context(), planOf([]rollout.RolloutPool{a, b}, []rollout.RolloutPool{d}), time.Hour)
		assert.False(t, done, how)
		got := kinds(events)
		assert.Equal(t, []string{"wave", "patched tenant-a/kubernetes-nodes-a-web", "patched tenant-b/kubernetes-nodes-b-web", "failed tenant-b/kubernetes-nodes-b-web", "stopped tenant-b/kubernetes-nodes-b-web"}, got, how)
		failed := events[len(events)-2]
		want := map[string]string{
			"fail":     "failed tenant-b/kubernetes-nodes-b-web: HelmRelease not Ready at generation 2: UpgradeFailed: UpgradeFailed at 2",
			"stall":    "failed tenant-b/kubernetes-nodes-b-web: HelmRelease stalled at generation 2: RetriesExceeded: RetriesExceeded at 2",
			"retrying": "failed tenant-b/kubernetes-nodes-b-web: HelmRelease not Ready at generation 2: UpgradeFailed: UpgradeFailed at 2 (helm-controller keeps retrying it on its own, 1 failure so far: fix its values so it releases, or stop the retries with flux suspend helmrelease kubernetes-nodes-b-web -n tenant-b; once fixed, flux reconcile helmrelease kubernetes-nodes-b-web -n tenant-b --force releases it at once)",
		}[how]
		assert.Equal(t, want, failed.Message, how)
		stopped := events[len(events)-1]
		assert.Equal(t, []string{"tenant-a/kubernetes-nodes-a-web", "tenant-b/kubernetes-nodes-b-web"}, stopped.Pools, how)
		assert.Contains(t, stopped.Message, "stopped in wave 1 of 2 at tenant-b/kubernetes-nodes-b-web: HelmRelease")
		assert.Contains(t, stopped.Message, "1 wave not started")
		assert.Contains(t, stopped.Message, "run the same command again")
		assert.Equal(t, int64(1), c.get("HelmRelease", "tenant-c", "kubernetes-nodes-c-web").GetGeneration(), "the next wave is not patched")
	}

	c := newCluster()
	a := c.pool("tenant-a/kubernetes-nodes-a-web", "kubernetes-a-web-111111", "kubernetes-a-web-222222", 1)
	c.flux["kubernetes-nodes-a-web"] = "retry"
	done, events := c.run(t, t.Context(), planOf([]rollout.RolloutPool{a}), time.Hour)
	assert.True(t, done, "the previous generation's failures are waited through: %v", kinds(events))
	var progress bool
	for _, e := range events {
		progress = progress || (e.Event == rollout.EventProgress && strings.Contains(e.Message, "HelmRelease Ready is Unknown at generation 2"))
	}
	assert.True(t, progress, "the release under way is a progress event: %v", kinds(events))
}

// A wave that does not finish within --timeout stops the rollout, naming
// the first pool not done and where it is.
func TestRunStopsWhenAWaveTimesOut(t *testing.T) {
	c := newCluster()
	a := c.pool("tenant-a/kubernetes-nodes-a-web", "kubernetes-a-web-111111", "kubernetes-a-web-222222", 2)
	b := c.pool("tenant-b/kubernetes-nodes-b-web", "kubernetes-b-web-111111", "kubernetes-b-web-222222", 2)
	c.capiStuck["kubernetes-b-web"] = true
	start := c.now
	done, events := c.run(t, t.Context(), planOf([]rollout.RolloutPool{a, b}), 5*time.Minute)
	assert.False(t, done)
	assert.Equal(t, []string{"wave", "patched tenant-a/kubernetes-nodes-a-web", "patched tenant-b/kubernetes-nodes-b-web", "ready tenant-a/kubernetes-nodes-a-web", "failed tenant-b/kubernetes-nodes-b-web", "stopped tenant-b/kubernetes-nodes-b-web"}, kinds(events))
	failed := events[len(events)-2]
	assert.Equal(t, "failed tenant-b/kubernetes-nodes-b-web: timed out after 5m0s (--timeout, per wave): HelmRelease Ready at generation 2; MachineDeployment on kubernetes-b-web-222222, Cluster API has not observed generation 2 yet (2 of 2 updated, 2 ready, 2 in all)", failed.Message)
	assert.Equal(t, start.Add(5*time.Minute), c.now, "it waited exactly the timeout")
	assert.Equal(t, []string{"tenant-b/kubernetes-nodes-b-web"}, events[len(events)-1].Pools)
}

// A HelmRelease its tenant edited since the plan is not overwritten: the
// patch holds only at the planned generation, and the rollout stops saying
// so. One deleted since is named too.
func TestRunNeverOverwritesAnEditSinceThePlan(t *testing.T) {
	c := newCluster()
	a := c.pool("tenant-a/kubernetes-nodes-a-web", "kubernetes-a-web-111111", "kubernetes-a-web-222222", 1)
	b := c.pool("tenant-b/kubernetes-nodes-b-web", "kubernetes-b-web-111111", "kubernetes-b-web-222222", 1)
	edited := c.objs[key("HelmRelease", "tenant-b", "kubernetes-nodes-b-web")]
	_ = unstructured.SetNestedField(edited.Object, int64(4), "spec", "values", "minReplicas")
	edited.SetGeneration(2)
	done, events := c.run(t, t.Context(), planOf([]rollout.RolloutPool{a}, []rollout.RolloutPool{b}), time.Hour)
	assert.False(t, done)
	assert.Equal(t, []string{"wave", "patched tenant-a/kubernetes-nodes-a-web", "ready tenant-a/kubernetes-nodes-a-web", "wave-done", "wave", "stopped tenant-b/kubernetes-nodes-b-web"}, kinds(events))
	assert.Contains(t, events[len(events)-1].Message, "HelmRelease tenant-b/kubernetes-nodes-b-web changed since the plan (generation 1, now 2): not overwritten")
	v, _, _ := unstructured.NestedInt64(c.get("HelmRelease", "tenant-b", "kubernetes-nodes-b-web").Object, "spec", "values", "minReplicas")
	assert.Equal(t, int64(4), v, "the tenant's edit stands")

	c = newCluster()
	a = c.pool("tenant-a/kubernetes-nodes-a-web", "kubernetes-a-web-111111", "kubernetes-a-web-222222", 1)
	delete(c.objs, key("HelmRelease", "tenant-a", "kubernetes-nodes-a-web"))
	done, events = c.run(t, t.Context(), planOf([]rollout.RolloutPool{a}), time.Hour)
	assert.False(t, done)
	assert.Contains(t, events[len(events)-1].Message, "HelmRelease tenant-a/kubernetes-nodes-a-web is gone since the plan")

	// Deleted while the wave waits: the pool fails, naming it.
	c = newCluster()
	a = c.pool("tenant-a/kubernetes-nodes-a-web", "kubernetes-a-web-111111", "kubernetes-a-web-222222", 1)
	c.flux["kubernetes-nodes-a-web"] = "hold"
	c.onStep = func(step int) {
		if step == 2 {
			c.mu.Lock()
			delete(c.objs, key("HelmRelease", "tenant-a", "kubernetes-nodes-a-web"))
			c.mu.Unlock()
		}
	}
	done, events = c.run(t, t.Context(), planOf([]rollout.RolloutPool{a}), time.Hour)
	assert.False(t, done)
	assert.Equal(t, "failed tenant-a/kubernetes-nodes-a-web: HelmRelease tenant-a/kubernetes-nodes-a-web is gone", events[len(events)-2].Message)
}

// recreate deletes a pool's HelmRelease and creates it again as its tenant
// would: a new UID, generation 1 again, released, with values of its own.
func (c *cluster) recreate(ns, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	hr := c.objs[key("HelmRelease", ns, name)].DeepCopy()
	hr.SetUID(types.UID("uid-again-" + name))
	hr.SetGeneration(1)
	hr.Object["spec"] = map[string]any{"values": map[string]any{"cluster": "c", "maxReplicas": int64(9), "instanceType": "u1.large", "talos": map[string]any{"version": "v1.13.6"}}}
	hr.Object["status"] = map[string]any{"observedGeneration": int64(1), "conditions": []any{map[string]any{"type": "Ready", "status": "True", "observedGeneration": int64(1)}}}
	c.objs[key("HelmRelease", ns, name)] = hr
}

// A HelmRelease deleted and created again since the plan is another object
// at the planned generation (1 again): the patch's UID test keeps the plan's
// values off it, the rollout stops saying it changed since the plan, and
// its own values stand. The neighbour, same UID at the same generation, is
// patched (the wave before it moved).
func TestRunNeverWritesAHelmReleaseCreatedAgain(t *testing.T) {
	c := newCluster()
	a := c.pool("tenant-a/kubernetes-nodes-a-web", "kubernetes-a-web-111111", "kubernetes-a-web-222222", 1)
	b := c.pool("tenant-b/kubernetes-nodes-b-web", "kubernetes-b-web-111111", "kubernetes-b-web-222222", 1)
	c.recreate("tenant-b", "kubernetes-nodes-b-web")
	done, events := c.run(t, t.Context(), planOf([]rollout.RolloutPool{a}, []rollout.RolloutPool{b}), time.Hour)
	assert.False(t, done)
	assert.Equal(t, []string{"wave", "patched tenant-a/kubernetes-nodes-a-web", "ready tenant-a/kubernetes-nodes-a-web", "wave-done", "wave", "stopped tenant-b/kubernetes-nodes-b-web"}, kinds(events))
	assert.Contains(t, events[len(events)-1].Message, "at tenant-b/kubernetes-nodes-b-web: HelmRelease tenant-b/kubernetes-nodes-b-web changed since the plan: deleted and created again (uid uid-kubernetes-nodes-b-web, now uid-again-kubernetes-nodes-b-web): not written; run again to plan with what it holds now")
	again := c.get("HelmRelease", "tenant-b", "kubernetes-nodes-b-web")
	assert.Equal(t, int64(1), again.GetGeneration(), "not written")
	assert.Equal(t, map[string]any{"cluster": "c", "maxReplicas": int64(9), "instanceType": "u1.large", "talos": map[string]any{"version": "v1.13.6"}}, again.Object["spec"].(map[string]any)["values"], "its own values stand")
	moved, _, _ := unstructured.NestedString(c.get("HelmRelease", "tenant-a", "kubernetes-nodes-a-web").Object, "spec", "values", "talos", "version")
	assert.Equal(t, "v1.13.7", moved, "the same object at the same generation is patched")
	assert.Len(t, c.patches, 2, "the patch was tried, and its test refused it")
}

// A HelmRelease deleted and created again while its wave waits is not
// waited on as the pool the plan read (its status is another object's): the
// pool fails saying it changed since the plan, and the rollout stops.
func TestRunStopsWhenAHelmReleaseIsCreatedAgainDuringTheWait(t *testing.T) {
	c := newCluster()
	a := c.pool("tenant-a/kubernetes-nodes-a-web", "kubernetes-a-web-111111", "kubernetes-a-web-222222", 1)
	d := c.pool("tenant-c/kubernetes-nodes-c-web", "kubernetes-c-web-111111", "kubernetes-c-web-222222", 1)
	c.flux["kubernetes-nodes-a-web"] = "hold"
	c.onStep = func(step int) {
		if step == 2 {
			c.recreate("tenant-a", "kubernetes-nodes-a-web")
		}
	}
	done, events := c.run(t, t.Context(), planOf([]rollout.RolloutPool{a}, []rollout.RolloutPool{d}), time.Hour)
	assert.False(t, done)
	assert.Equal(t, []string{"wave", "patched tenant-a/kubernetes-nodes-a-web", "failed tenant-a/kubernetes-nodes-a-web", "stopped tenant-a/kubernetes-nodes-a-web"}, kinds(events))
	assert.Equal(t, "failed tenant-a/kubernetes-nodes-a-web: HelmRelease tenant-a/kubernetes-nodes-a-web changed since the plan: deleted and created again (uid uid-kubernetes-nodes-a-web, now uid-again-kubernetes-nodes-a-web): not waited on; run again to plan with what it holds now", events[len(events)-2].Message)
	assert.Contains(t, events[len(events)-1].Message, "1 wave not started")
	assert.Equal(t, int64(1), c.get("HelmRelease", "tenant-c", "kubernetes-nodes-c-web").GetGeneration(), "the next wave is not patched")
}

// A pool an earlier run left rolling is waited for, never patched again;
// a wave of such pools patches nothing.
func TestRunWaitsForPoolsLeftRolling(t *testing.T) {
	c := newCluster()
	a := c.pool("tenant-a/kubernetes-nodes-a-web", "kubernetes-a-web-111111", "kubernetes-a-web-222222", 2)
	hr := c.objs[key("HelmRelease", "tenant-a", "kubernetes-nodes-a-web")]
	hr.SetGeneration(2)
	a.State, a.Generation, a.ValuesChange, a.SpecValues, a.Changes = rollout.StateRolling, 2, nil, nil, nil
	done, events := c.run(t, t.Context(), planOf([]rollout.RolloutPool{a}), time.Hour)
	assert.True(t, done)
	assert.Empty(t, c.patches)
	assert.Equal(t, []string{"wave", "ready tenant-a/kubernetes-nodes-a-web", "wave-done", "done"}, kinds(events))
}

// Interrupted (Ctrl-C), it stops, saying which pools go on rolling.
func TestRunStopsWhenInterrupted(t *testing.T) {
	c := newCluster()
	a := c.pool("tenant-a/kubernetes-nodes-a-web", "kubernetes-a-web-111111", "kubernetes-a-web-222222", 2)
	ctx, cancel := context.WithCancel(t.Context())
	c.onStep = func(step int) {
		if step == 1 {
			cancel()
		}
	}
	done, events := c.run(t, ctx, planOf([]rollout.RolloutPool{a}), time.Hour)
	assert.False(t, done)
	last := events[len(events)-1]
	assert.Equal(t, rollout.EventStopped, last.Event)
	assert.Contains(t, last.Message, "stopped in wave 1 of 1: interrupted (context canceled); patched and not on the target yet (they go on in the cluster): tenant-a/kubernetes-nodes-a-web")
}

// A plan that cannot start, or a wave with no time, is refused: nothing is
// patched.
func TestRunRefusesAPlanThatCannotStart(t *testing.T) {
	c := newCluster()
	a := c.pool("tenant-a/kubernetes-nodes-a-web", "kubernetes-a-web-111111", "kubernetes-a-web-222222", 2)
	plan := planOf([]rollout.RolloutPool{a})
	plan.CanStart = false
	_, err := apply.Run(t.Context(), c, plan, apply.Options{Timeout: time.Minute}, func(rollout.RolloutEvent) {})
	require.Error(t, err)
	plan.CanStart = true
	_, err = apply.Run(t.Context(), c, plan, apply.Options{}, func(rollout.RolloutEvent) {})
	require.Error(t, err)
	assert.Empty(t, c.patches)
}

// record reads the rollout's record of plan from the cluster.
func (c *cluster) record(t *testing.T, plan *rollout.RolloutPlan) *report.RolloutRecord {
	t.Helper()
	name := rollout.NewRolloutRecord(plan.Target).Name
	cm := c.get("ConfigMap", report.RecordNamespace, name)
	require.NotNil(t, cm, "no record %s/%s", report.RecordNamespace, name)
	rec, err := rollout.DecodeRolloutRecord(plan.Target, cm)
	require.NoError(t, err)
	return rec
}

// Each patch lands in the rollout's record, in the platform's namespace, as
// soon as it is made: the HelmRelease, its UID and the generation the patch
// gave it, under its run and wave, one data key per HelmRelease written by a
// merge patch of that key alone. The record exists before the first patch,
// and is labelled as the rollout's. A wave's pools leave it once the wave is
// done: on the target, a later run reads them so without it.
func TestRunRecordsEachWrite(t *testing.T) {
	c := newCluster()
	a := c.pool("tenant-a/kubernetes-nodes-a-web", "kubernetes-a-web-111111", "kubernetes-a-web-222222", 1)
	b := c.pool("tenant-b/kubernetes-nodes-b-web", "kubernetes-b-web-111111", "kubernetes-b-web-222222", 1)
	plan := planOf([]rollout.RolloutPool{a}, []rollout.RolloutPool{b})
	plan.Target = rollout.RolloutTarget{TalosVersion: "v1.13.7"}
	name := rollout.NewRolloutRecord(plan.Target).Name
	var atFirstPatch *unstructured.Unstructured
	c.onStep = func(step int) {
		if step == 1 {
			atFirstPatch = c.get("ConfigMap", report.RecordNamespace, name)
		}
	}
	start := c.now
	done, events := c.run(t, t.Context(), plan, time.Hour)
	require.True(t, done, "%v", kinds(events))
	require.NotNil(t, atFirstPatch, "the record is written with the first patch")
	first, err := rollout.DecodeRolloutRecord(plan.Target, atFirstPatch)
	require.NoError(t, err)
	w, ok := first.Written("tenant-a", "kubernetes-nodes-a-web")
	require.True(t, ok, "wave 1's pool is in the record before the wave waits")
	assert.Equal(t, report.RecordedWrite{Namespace: "tenant-a", Name: "kubernetes-nodes-a-web", UID: "uid-kubernetes-nodes-a-web", Generation: 2}, w)
	data, _, _ := unstructured.NestedStringMap(atFirstPatch.Object, "data")
	assert.Equal(t, map[string]string{
		"target": `{"talosVersion":"v1.13.7"}`,
		report.PoolKey("tenant-a", "kubernetes-nodes-a-web"): `{"wave":"` + report.WaveKey(start, 1) + `","namespace":"tenant-a","name":"kubernetes-nodes-a-web","uid":"uid-kubernetes-nodes-a-web","generation":2}`,
	}, data)

	cm := c.get("ConfigMap", report.RecordNamespace, name)
	assert.Equal(t, report.RecordLabels, cm.GetLabels())
	data, _, _ = unstructured.NestedStringMap(cm.Object, "data")
	assert.Equal(t, map[string]string{"target": `{"talosVersion":"v1.13.7"}`}, data, "both waves done: both pools left the record")
	assert.Equal(t, 5, c.recordWrites, "created, then one patch per pool patched and one per wave done")
}

// A run that can neither read nor create its record patches nothing: it
// stops before wave 1, saying what the operator's identity needs.
func TestRunStopsBeforeAnyPatchWithoutItsRecord(t *testing.T) {
	c := newCluster()
	a := c.pool("tenant-a/kubernetes-nodes-a-web", "kubernetes-a-web-111111", "kubernetes-a-web-222222", 1)
	c.denied["ConfigMap"] = true
	done, events := c.run(t, t.Context(), planOf([]rollout.RolloutPool{a}), time.Hour)
	assert.False(t, done)
	assert.Empty(t, c.patches)
	assert.Equal(t, []string{"stopped"}, kinds(events))
	assert.Regexp(t, `^stopped before wave 1: the rollout's record ConfigMap cozy-system/workerimage-rollout-[0-9a-f]{10} could not be created \(.*cannot create resource\): --apply needs get, create and update of ConfigMaps in cozy-system, the platform's namespace, which tenants cannot write; nothing was patched$`, events[0].Message)
}

// A record the run can no longer write once it patched a pool stops the
// rollout at that pool: it goes on in the cluster, and the message says a
// later run will not wait for it.
func TestRunStopsWhenAWriteCannotBeRecorded(t *testing.T) {
	c := newCluster()
	a := c.pool("tenant-a/kubernetes-nodes-a-web", "kubernetes-a-web-111111", "kubernetes-a-web-222222", 1)
	b := c.pool("tenant-b/kubernetes-nodes-b-web", "kubernetes-b-web-111111", "kubernetes-b-web-222222", 1)
	d := c.pool("tenant-c/kubernetes-nodes-c-web", "kubernetes-c-web-111111", "kubernetes-c-web-222222", 1)
	c.onStep = func(step int) {
		c.mu.Lock()
		c.denied["ConfigMap"] = true
		c.mu.Unlock()
	}
	done, events := c.run(t, t.Context(), planOf([]rollout.RolloutPool{a}, []rollout.RolloutPool{b}, []rollout.RolloutPool{d}), time.Hour)
	assert.False(t, done)
	assert.Equal(t, []string{"wave", "patched tenant-a/kubernetes-nodes-a-web", "ready tenant-a/kubernetes-nodes-a-web", "wave-done", "wave", "patched tenant-b/kubernetes-nodes-b-web", "stopped tenant-b/kubernetes-nodes-b-web"}, kinds(events))
	stopped := events[len(events)-1]
	assert.Contains(t, stopped.Message, "tenant-b/kubernetes-nodes-b-web was patched (generation 2) and goes on in the cluster, but the rollout's record ConfigMap cozy-system/")
	assert.Contains(t, stopped.Message, "could not be written (")
	assert.Contains(t, stopped.Message, "a later run reads it as on the target by its own values and does not wait for it; watch it yourself (flux get helmrelease kubernetes-nodes-b-web -n tenant-b, and MachineDeployment kubernetes-b-web)")
	assert.Contains(t, stopped.Message, "patched and not on the target yet (they go on in the cluster): tenant-b/kubernetes-nodes-b-web; 1 wave not started")
	assert.Equal(t, []string{"tenant-b/kubernetes-nodes-b-web"}, stopped.Pools)
	assert.Equal(t, int64(1), c.get("HelmRelease", "tenant-c", "kubernetes-nodes-c-web").GetGeneration(), "the next wave is not patched")
}

// Another run writing the record meanwhile loses nothing: each run patches
// its own HelmReleases' keys alone.
func TestRunKeepsAnotherRunsWritesInTheRecord(t *testing.T) {
	c := newCluster()
	a := c.pool("tenant-a/kubernetes-nodes-a-web", "kubernetes-a-web-111111", "kubernetes-a-web-222222", 1)
	c.flux["kubernetes-nodes-a-web"] = "hold"
	plan := planOf([]rollout.RolloutPool{a})
	other := report.RecordedWrite{Namespace: "tenant-z", Name: "kubernetes-nodes-z-web", UID: "uid-z", Generation: 5}
	c.onRecordUpdate = func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		cm := c.objs[key("ConfigMap", report.RecordNamespace, rollout.NewRolloutRecord(plan.Target).Name)]
		rec, err := rollout.DecodeRolloutRecord(plan.Target, cm)
		require.NoError(t, err)
		rec.Add(report.WaveKey(c.now.Add(-time.Hour), 1), other)
		next, err := rec.ConfigMap()
		require.NoError(t, err)
		c.version++
		next.SetResourceVersion(fmt.Sprint(c.version))
		c.objs[key("ConfigMap", report.RecordNamespace, rec.Name)] = next
	}
	done, events := c.run(t, t.Context(), plan, time.Minute)
	require.False(t, done, "%v", kinds(events))
	rec := c.record(t, plan)
	got, ok := rec.Written("tenant-z", "kubernetes-nodes-z-web")
	assert.True(t, ok)
	assert.Equal(t, other, got)
	_, ok = rec.Written("tenant-a", "kubernetes-nodes-a-web")
	assert.True(t, ok, "still rolling: still in the record")
}

// The record deleted between two writes of one wave is created again with
// every write of the run, not the last alone, and an event says so: a later
// run still waits for the pools written before it was deleted.
func TestRunCreatesADeletedRecordAgainWithEveryWrite(t *testing.T) {
	c := newCluster()
	a := c.pool("tenant-a/kubernetes-nodes-a-web", "kubernetes-a-web-111111", "kubernetes-a-web-222222", 1)
	b := c.pool("tenant-b/kubernetes-nodes-b-web", "kubernetes-b-web-111111", "kubernetes-b-web-222222", 1)
	plan := planOf([]rollout.RolloutPool{a, b})
	plan.Target = rollout.RolloutTarget{TalosVersion: "v1.13.7"}
	name := rollout.NewRolloutRecord(plan.Target).Name
	c.onRecordUpdate = func() {
		// a's write: let it land; b's: the record is deleted first.
		c.onRecordUpdate = func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			delete(c.objs, key("ConfigMap", report.RecordNamespace, name))
		}
	}
	c.flux["kubernetes-nodes-a-web"], c.flux["kubernetes-nodes-b-web"] = "hold", "hold"
	done, events := c.run(t, t.Context(), plan, time.Minute)
	require.False(t, done, "held: the wave times out")
	assert.Equal(t, []string{"wave", "patched tenant-a/kubernetes-nodes-a-web", "patched tenant-b/kubernetes-nodes-b-web", "record"}, kinds(events)[:4])
	assert.Equal(t, "the rollout's record ConfigMap cozy-system/"+name+" was deleted during the run: created again with every write of this run not on the target yet (2 HelmReleases); writes of earlier runs it held are gone, and a later run reads those pools as on the target by their own values", events[3].Message)
	rec := c.record(t, plan)
	assert.Equal(t, 2, rec.Len())
	for _, p := range []rollout.RolloutPool{a, b} {
		_, hr, _ := strings.Cut(p.HelmRelease, "/")
		w, ok := rec.Written(p.Namespace, hr)
		require.True(t, ok, p.HelmRelease)
		assert.Equal(t, report.RecordedWrite{Namespace: p.Namespace, Name: hr, UID: p.UID, Generation: 2}, w)
	}
}

// A ConfigMap under the record's name holding another target's record (or
// none) is not read as this target's: the run writes this target's record
// over it before the first patch, and says so.
func TestRunWritesItsRecordOverAnotherTargets(t *testing.T) {
	c := newCluster()
	a := c.pool("tenant-a/kubernetes-nodes-a-web", "kubernetes-a-web-111111", "kubernetes-a-web-222222", 1)
	plan := planOf([]rollout.RolloutPool{a})
	plan.Target = rollout.RolloutTarget{TalosVersion: "v1.13.7"}
	name := rollout.NewRolloutRecord(plan.Target).Name
	c.objs[key("ConfigMap", report.RecordNamespace, name)] = &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name, "namespace": report.RecordNamespace, "resourceVersion": "1"},
		"data": map[string]any{"target": `{"talosVersion":"v9.9.9"}`, "20260822T000000Z.wave-1": `[{"namespace":"tenant-z","name":"kubernetes-nodes-z-web","uid":"u","generation":3}]`},
	}}
	c.flux["kubernetes-nodes-a-web"] = "hold"
	done, events := c.run(t, t.Context(), plan, time.Minute)
	require.False(t, done)
	require.Equal(t, "record", events[0].Event)
	assert.Equal(t, "the rollout's record ConfigMap cozy-system/"+name+` was written whole: the ConfigMap cozy-system/`+name+` is for target {"talosVersion":"v9.9.9"}, not this rollout's {"talosVersion":"v1.13.7"}: not read as its record (no pool is waited on for it), and --apply writes this target's record over it`, events[0].Message)
	rec := c.record(t, plan)
	_, ok := rec.Written("tenant-z", "kubernetes-nodes-z-web")
	assert.False(t, ok)
	_, ok = rec.Written("tenant-a", "kubernetes-nodes-a-web")
	assert.True(t, ok)
}

// rollInParts moves n pools to one target in parts of part pools, waves of
// wave, one run per part, the record never deleted; it returns the bytes
// written to the record and the most it held.
func rollInParts(t *testing.T, n, part, wave int) (written, most int) {
	return rollInPartsSurged(t, n, part, wave, false)
}

// rollInPartsSurged is rollInParts where, when surged, each pool's move
// writes a maxSurge (put back after its run's last wave).
func rollInPartsSurged(t *testing.T, n, part, wave int, surged bool) (written, most int) {
	c := newCluster()
	var pools []rollout.RolloutPool
	for i := range n {
		name := fmt.Sprintf("tenant-%05d/kubernetes-nodes-p%05d-web", i, i)
		if surged {
			pools = append(pools, c.surged(name, "kubernetes-p-111111", "kubernetes-p-222222", 1, nil))
		} else {
			pools = append(pools, c.pool(name, "kubernetes-p-111111", "kubernetes-p-222222", 1))
		}
	}
	for from := 0; from < n; from += part {
		var waves [][]rollout.RolloutPool
		for w := from; w < min(from+part, n); w += wave {
			waves = append(waves, pools[w:min(w+wave, from+part, n)])
		}
		plan := planOf(waves...)
		plan.Target = rollout.RolloutTarget{TalosVersion: "v1.13.7"}
		done, events := c.run(t, t.Context(), plan, time.Hour)
		require.True(t, done, "part from %d: %s", from, events[len(events)-1].Message)
	}
	return c.recordBytes, c.recordMax
}

// The bytes a rollout writes to its record grow with the pools it patches
// (each write patches its own key; each wave done drops its pools), not with
// the square of them as a record written whole at each write did; and one
// target past what a record holds at once (10,000 pools, about 5,500 fit)
// rolls in parts without deleting anything.
func TestRunRecordBytesGrowLinearly(t *testing.T) {
	if testing.Short() {
		t.Skip("rolls 11,000 pools")
	}
	small, smallMost := rollInParts(t, 1000, 1000, 100)
	large, largeMost := rollInParts(t, 10000, 2500, 100)
	t.Logf("1,000 pools in 1 part: %d bytes written to the record (%d per pool), at most %d held", small, small/1000, smallMost)
	t.Logf("10,000 pools in 4 parts: %d bytes written to the record (%d per pool), at most %d held; written whole at each write: about %d", large, large/10000, largeMost, 10000*10000/2*190)
	assert.Less(t, large, 11*small, "10 times the pools: about 10 times the bytes")
	assert.Less(t, large/10000, 400, "bytes per pool patched")
	assert.Less(t, largeMost, 100*400, "the record holds a wave's pools at most")
}

// A move that writes a maxSurge keeps it, and the pool's own, in the
// record until it is put back after the run's last wave: about 30 bytes
// more per pool written (the surge) and one more key written (its removal),
// and the record holds the run's surged pools at once rather than a wave's.
// A run whose surged pools would not fit in the record at once refuses
// before the first patch, saying to roll in parts.
func TestRunRecordKeepsSurgesWithinItsBytes(t *testing.T) {
	if testing.Short() {
		t.Skip("rolls 2,000 pools")
	}
	plain, plainMost := rollInParts(t, 1000, 1000, 100)
	surged, surgedMost := rollInPartsSurged(t, 1000, 1000, 100, true)
	t.Logf("1,000 pools: %d bytes written to the record without a surge (%d per pool, at most %d held), %d with one (%d per pool, at most %d held)", plain, plain/1000, plainMost, surged, surged/1000, surgedMost)
	assert.Less(t, surged/1000, 400, "bytes per pool patched")
	assert.Less(t, surged/1000-plain/1000, 100, "what keeping the surge adds per pool")
	assert.Greater(t, surgedMost, 1000*200, "the run's surged pools held at once, until put back")

	c := newCluster()
	var pools []rollout.RolloutPool
	for i := range 6000 {
		pools = append(pools, c.surged(fmt.Sprintf("tenant-%05d/kubernetes-nodes-p%05d-web", i, i), "kubernetes-p-111111", "kubernetes-p-222222", 1, nil))
	}
	var waves [][]rollout.RolloutPool
	for w := 0; w < len(pools); w += 100 {
		waves = append(waves, pools[w:w+100])
	}
	done, events := c.run(t, t.Context(), planOf(waves...), time.Hour)
	assert.False(t, done)
	assert.Empty(t, c.patches)
	assert.Contains(t, events[0].Message, "stopped before wave 1: the rollout's record ConfigMap cozy-system/")
	assert.Contains(t, events[0].Message, "or in parts (-n, --flavor, --pool, --exclude) to the same target")
}

// A plan of pools rolling already (an earlier run wrote them) writes no
// record: it patches nothing.
func TestRunWritesNoRecordWhenItPatchesNothing(t *testing.T) {
	c := newCluster()
	a := c.pool("tenant-a/kubernetes-nodes-a-web", "kubernetes-a-web-111111", "kubernetes-a-web-222222", 2)
	c.objs[key("HelmRelease", "tenant-a", "kubernetes-nodes-a-web")].SetGeneration(2)
	a.State, a.Generation, a.ValuesChange, a.SpecValues, a.Changes = rollout.StateRolling, 2, nil, nil, nil
	done, _ := c.run(t, t.Context(), planOf([]rollout.RolloutPool{a}), time.Hour)
	assert.True(t, done)
	assert.Zero(t, c.recordWrites)
}

// A record that cannot take the plan's writes (a ConfigMap holds 1 MiB)
// stops the run before anything is patched, with what to do.
func TestRunStopsWhenTheRecordWouldOverflow(t *testing.T) {
	c := newCluster()
	a := c.pool("tenant-a/kubernetes-nodes-a-web", "kubernetes-a-web-111111", "kubernetes-a-web-222222", 1)
	plan := planOf([]rollout.RolloutPool{a})
	// Writes of pools still rolling until 10 KiB more would not fit: no
	// room for the wave's 100.
	rec := rollout.NewRolloutRecord(plan.Target)
	for i := 0; rec.FitsWith(10<<10) == nil; i++ {
		rec.Add(report.WaveKey(c.now.Add(-time.Hour), 1+i/100), report.RecordedWrite{Namespace: fmt.Sprintf("tenant-%06d", i), Name: "kubernetes-nodes-" + strings.Repeat("x", 40), UID: fmt.Sprintf("%036d", i), Generation: 2})
	}
	cm, err := rec.ConfigMap()
	require.NoError(t, err)
	cm.SetResourceVersion("1")
	c.objs[key("ConfigMap", report.RecordNamespace, rec.Name)] = cm
	var pools []rollout.RolloutPool
	for i := range 100 {
		pools = append(pools, c.pool(fmt.Sprintf("tenant-b/kubernetes-nodes-b-%03d", i), "kubernetes-b-111111", "kubernetes-b-222222", 1))
	}
	plan.Waves[0].Pools = append(plan.Waves[0].Pools, pools...)
	done, events := c.run(t, t.Context(), plan, time.Hour)
	assert.False(t, done)
	assert.Empty(t, c.patches)
	assert.Contains(t, events[0].Message, "stopped before wave 1: the rollout's record ConfigMap cozy-system/"+rec.Name+" would hold ")
	assert.Contains(t, events[0].Message, "roll in smaller waves (--wave) or in parts (-n, --flavor, --pool, --exclude) to the same target")
}

// surged is a pool whose move writes maxSurge to hold a bound: own is the
// pool's maxSurge before (nil: none).
func (c *cluster) surged(name, running, next string, workers int64, own any) rollout.RolloutPool {
	p := c.pool(name, running, next, workers)
	ns, hr, _ := strings.Cut(name, "/")
	restore := &report.SurgeRestore{Wrote: 0}
	if own != nil {
		o := c.objs[key("HelmRelease", ns, hr)]
		require.NoError(nil, unstructured.SetNestedField(o.Object, own, "spec", "values", "maxSurge"))
		restore.Had, restore.Own = true, own
	}
	p.SpecValues = map[string]any{"cluster": "c", "maxSurge": int64(0), "talos": map[string]any{"version": "v1.13.7"}}
	p.SurgeRestore = restore
	return p
}

// After the last wave, each pool whose move wrote a maxSurge gets its own
// back, one more patch guarded by the UID patched, the generation read
// then and the maxSurge written: removed where it had none, its value where
// it had one; a pool without a surge written is not patched again. The
// restore comes after the last wave, not after the pool's own.
func TestRunRestoresTheSurgeAfterTheLastWave(t *testing.T) {
	c := newCluster()
	a := c.surged("tenant-a/kubernetes-nodes-a-web", "kubernetes-a-web-111111", "kubernetes-a-web-222222", 3, nil)
	b := c.surged("tenant-b/kubernetes-nodes-b-web", "kubernetes-b-web-111111", "kubernetes-b-web-222222", 2, int64(4))
	d := c.pool("tenant-c/kubernetes-nodes-c-edge", "kubernetes-c-edge-111111", "kubernetes-c-edge-222222", 1)
	done, events := c.run(t, t.Context(), planOf([]rollout.RolloutPool{a}, []rollout.RolloutPool{b, d}), time.Hour)
	require.True(t, done)
	assert.Equal(t, []string{
		"wave", "patched tenant-a/kubernetes-nodes-a-web", "ready tenant-a/kubernetes-nodes-a-web", "wave-done",
		"wave", "patched tenant-b/kubernetes-nodes-b-web", "patched tenant-c/kubernetes-nodes-c-edge", "ready tenant-c/kubernetes-nodes-c-edge", "ready tenant-b/kubernetes-nodes-b-web", "wave-done",
		"surge-restored tenant-a/kubernetes-nodes-a-web", "surge-restored tenant-b/kubernetes-nodes-b-web",
		"done",
	}, kinds(events))
	require.Len(t, c.patches, 5, "three moves, two restores")
	var ops []map[string]any
	require.NoError(t, json.Unmarshal([]byte(c.patches[3]), &ops))
	assert.Equal(t, []map[string]any{
		{"op": "test", "path": "/metadata/generation", "value": float64(2)},
		{"op": "test", "path": "/metadata/uid", "value": "uid-kubernetes-nodes-a-web"},
		{"op": "test", "path": "/spec/values/maxSurge", "value": float64(0)},
		{"op": "remove", "path": "/spec/values/maxSurge"},
	}, ops)
	require.NoError(t, json.Unmarshal([]byte(c.patches[4]), &ops))
	assert.Equal(t, map[string]any{"op": "replace", "path": "/spec/values/maxSurge", "value": float64(4)}, ops[3])

	values := func(ns, name string) map[string]any {
		v, _, _ := unstructured.NestedMap(c.get("HelmRelease", ns, name).Object, "spec", "values")
		return v
	}
	assert.NotContains(t, values("tenant-a", "kubernetes-nodes-a-web"), "maxSurge")
	assert.Equal(t, map[string]any{"version": "v1.13.7"}, values("tenant-a", "kubernetes-nodes-a-web")["talos"], "the move stays")
	assert.EqualValues(t, 4, values("tenant-b", "kubernetes-nodes-b-web")["maxSurge"])
	assert.Equal(t, int64(2), c.get("HelmRelease", "tenant-c", "kubernetes-nodes-c-edge").GetGeneration(), "c-edge: its move only")
	for _, e := range events {
		if e.Event == rollout.EventSurgeRestored && e.Pool == "tenant-b/kubernetes-nodes-b-web" {
			assert.Equal(t, "restored tenant-b/kubernetes-nodes-b-web: maxSurge 0 back to its own 4 (the rolling update only: no worker rolls)", e.Message)
		}
	}
}

// A run that stops before its last wave restores nothing: the surge stays
// as written, the rollout's record keeps it with the pool's own (past the
// end of the pool's wave, which drops the pools without one), and the stop
// says how to go on.
func TestRunLeavesTheSurgeWhenItStops(t *testing.T) {
	c := newCluster()
	a := c.surged("tenant-a/kubernetes-nodes-a-web", "kubernetes-a-web-111111", "kubernetes-a-web-222222", 2, nil)
	b := c.pool("tenant-b/kubernetes-nodes-b-web", "kubernetes-b-web-111111", "kubernetes-b-web-222222", 2)
	c.flux["kubernetes-nodes-b-web"] = "fail"
	plan := planOf([]rollout.RolloutPool{a}, []rollout.RolloutPool{b})
	done, events := c.run(t, t.Context(), plan, time.Hour)
	assert.False(t, done)
	assert.NotContains(t, kinds(events), "surge-restored tenant-a/kubernetes-nodes-a-web")
	assert.Len(t, c.patches, 2)
	v, _, _ := unstructured.NestedMap(c.get("HelmRelease", "tenant-a", "kubernetes-nodes-a-web").Object, "spec", "values")
	assert.EqualValues(t, 0, v["maxSurge"])
	stopped := events[len(events)-1]
	name := rollout.NewRolloutRecord(plan.Target).Name
	assert.Contains(t, stopped.Message, `; the maxSurge written to hold the bound stays in 1 pool until the next run to the same target puts it back after its last wave (the rollout's record ConfigMap cozy-system/`+name+` keeps each pool's own); to put it back yourself once it has rolled: kubectl patch helmrelease kubernetes-nodes-a-web -n tenant-a --type json -p '[{"op":"remove","path":"/spec/values/maxSurge"}]'`)
	w, ok := c.record(t, plan).Written("tenant-a", "kubernetes-nodes-a-web")
	require.True(t, ok, "its wave is done, and the record keeps its surge")
	assert.Equal(t, report.RecordedWrite{Namespace: "tenant-a", Name: "kubernetes-nodes-a-web", UID: "uid-kubernetes-nodes-a-web", Generation: 2, Surge: &report.SurgeRestore{Wrote: 0}}, w)
}

// The run after one that stopped before its last wave puts back the
// maxSurge the stopped run wrote, from what the record keeps (the plan
// gives it, rollout.Rollout reading the record): a pool on the target now
// (Restore) and a pool still rolling from it (a wave's, waited on), each
// to its own (removed where it had none), after this run's last wave; the
// record then holds neither. A run with no pool to patch still opens the
// record for it.
func TestRunRestoresTheSurgeAStoppedRunWrote(t *testing.T) {
	c := newCluster()
	a := c.surged("tenant-a/kubernetes-nodes-a-web", "kubernetes-a-web-111111", "kubernetes-a-web-222222", 2, nil)
	b := c.surged("tenant-b/kubernetes-nodes-b-web", "kubernetes-b-web-111111", "kubernetes-b-web-222222", 2, int64(3))
	e := c.surged("tenant-e/kubernetes-nodes-e-web", "kubernetes-e-web-111111", "kubernetes-e-web-222222", 1, nil)
	x := c.pool("tenant-x/kubernetes-nodes-x-web", "kubernetes-x-web-111111", "kubernetes-x-web-222222", 1)
	c.flux["kubernetes-nodes-x-web"] = "fail"
	first := planOf([]rollout.RolloutPool{a, e}, []rollout.RolloutPool{b}, []rollout.RolloutPool{x})
	done, _ := c.run(t, t.Context(), first, time.Hour)
	require.False(t, done, "stopped at x, after a's and b's waves")
	rec := c.record(t, first)

	// The next run's plan, as rollout.Rollout makes it from the record: a
	// on the target, b (say) rolling still, each with what the record kept.
	resumed := func(p rollout.RolloutPool, state string) rollout.RolloutPool {
		_, hr, _ := strings.Cut(p.HelmRelease, "/")
		w, ok := rec.Written(p.Namespace, hr)
		require.True(t, ok, p.HelmRelease)
		require.NotNil(t, w.Surge, p.HelmRelease)
		p.State, p.Generation, p.UID, p.SurgeRestore, p.ValuesChange, p.Changes = state, w.Generation, w.UID, w.Surge, nil, nil
		return p
	}
	onTarget, rolling := resumed(a, rollout.StateOnTarget), resumed(b, rollout.StateRolling)
	second := planOf([]rollout.RolloutPool{rolling})
	second.OnTarget = []rollout.RolloutPool{onTarget}
	second.Restore = []rollout.RolloutPool{onTarget}
	c.patches = nil
	done, events := c.run(t, t.Context(), second, time.Hour)
	require.True(t, done, events[len(events)-1].Message)
	assert.Equal(t, []string{"wave", "ready tenant-b/kubernetes-nodes-b-web", "wave-done",
		"surge-restored tenant-a/kubernetes-nodes-a-web", "surge-restored tenant-b/kubernetes-nodes-b-web", "done"}, kinds(events))
	assert.Len(t, c.patches, 2, "the two restores, nothing moved")
	values := func(ns, name string) map[string]any {
		v, _, _ := unstructured.NestedMap(c.get("HelmRelease", ns, name).Object, "spec", "values")
		return v
	}
	assert.NotContains(t, values("tenant-a", "kubernetes-nodes-a-web"), "maxSurge")
	assert.EqualValues(t, 3, values("tenant-b", "kubernetes-nodes-b-web")["maxSurge"])
	after := c.record(t, second)
	for _, p := range []rollout.RolloutPool{a, b} {
		_, hr, _ := strings.Cut(p.HelmRelease, "/")
		_, ok := after.Written(p.Namespace, hr)
		assert.False(t, ok, "%s: put back, the record keeps nothing of it", p.HelmRelease)
	}

	// A run with only a pool to put back (e, left out of the run before):
	// nothing to move or wait for, and the record is opened for it.
	third := planOf()
	third.Restore = []rollout.RolloutPool{resumed(e, rollout.StateOnTarget)}
	c.patches = nil
	done, events = c.run(t, t.Context(), third, time.Hour)
	require.True(t, done, events[len(events)-1].Message)
	assert.Equal(t, []string{"surge-restored tenant-e/kubernetes-nodes-e-web", "done"}, kinds(events))
	assert.Len(t, c.patches, 1)
	assert.NotContains(t, values("tenant-e", "kubernetes-nodes-e-web"), "maxSurge")
	_, ok := c.record(t, third).Written("tenant-e", "kubernetes-nodes-e-web")
	assert.False(t, ok, "put back, the record keeps nothing of it")
	_, ok = c.record(t, third).Written("tenant-x", "kubernetes-nodes-x-web")
	assert.True(t, ok, "x, whose release failed, is still the record's")
}

// A maxSurge someone set since the move is theirs: not written; the run
// says so and how to put the pool's own back itself (exit 1). (A
// HelmRelease created again stops the wait before: the restore's UID test
// is for one created again between the wave's end and the restore.)
func TestRunRestoresNoSurgeSetSince(t *testing.T) {
	for _, how := range []string{"edited"} {
		c := newCluster()
		a := c.surged("tenant-a/kubernetes-nodes-a-web", "kubernetes-a-web-111111", "kubernetes-a-web-222222", 1, int64(5))
		c.onStep = func(int) {
			c.mu.Lock()
			defer c.mu.Unlock()
			o := c.objs[key("HelmRelease", "tenant-a", "kubernetes-nodes-a-web")]
			if o.GetGeneration() < 2 || o.GetAnnotations()["edited"] != "" {
				return
			}
			o.SetAnnotations(map[string]string{"edited": how})
			require.NoError(t, unstructured.SetNestedField(o.Object, int64(2), "spec", "values", "maxSurge"))
		}
		done, events := c.run(t, t.Context(), planOf([]rollout.RolloutPool{a}), time.Hour)
		assert.False(t, done, how)
		require.Len(t, c.patches, 1, "%s: nothing written after the move", how)
		last := events[len(events)-1]
		assert.Equal(t, rollout.EventStopped, last.Event, how)
		assert.Contains(t, last.Message, "every wave is done, but the maxSurge 0 written into tenant-a/kubernetes-nodes-a-web to hold the bound was not put back: ", how)
		assert.Contains(t, last.Message, `kubectl patch helmrelease kubernetes-nodes-a-web -n tenant-a --type merge -p '{"spec":{"values":{"maxSurge":5}}}'`, how)
		assert.Contains(t, last.Message, "its spec.values maxSurge is 2 now, not the 0 this run wrote: someone set it since, and it is theirs", how)
	}
}
