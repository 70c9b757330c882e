// Package apply moves pools to a rollout's target, as internal/rollout
// planned it; it decides nothing of the move (which pools, what values, the
// waves and their bounds are the plan's), only when a write may go: wave by
// wave, it patches each pool's HelmRelease spec.values (the storage behind
// Cozystack's KubernetesNodes application, never a valuesFrom Secret) while
// the HelmRelease is at the generation the plan read, then waits until
// helm-controller has released the new generation and Cluster API has
// rolled the pool's MachineDeployment onto
// the new template, before the next wave. It stops at the first pool that
// fails or a wave that times out, saying which and why; run again, the plan
// skips the pools already on the target and waits for those the rollout's
// record says it wrote: each patch is added to that record (a ConfigMap in
// the platform's namespace, report.RolloutRecord) as soon as it lands.
//
// It is the only product code that writes to a cluster (tests/structure
// holds every other package to reads).
package apply

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/cozystack/golden-worker-images/internal/rollout"
	"helm.sh/helm/v3/pkg/engine"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

const machineDeploymentAPI = "cluster.x-k8s.io/v1beta1"

// Options say how long to wait and how, and where to say where it is.
type Options struct {
	// Timeout bounds each wave, from its first patch to its last pool done.
	Timeout time.Duration
	// Poll is how often a wave's pools are read while it waits.
	Poll time.Duration
	// Now and Sleep are the clock; nil for the real one.
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
	// Tick, when set, is told at each poll where the wave is, in a line (a
	// terminal's progress line; not an event).
	Tick func(line string)
	// Factory asks the Image Factory for wave 1's images before the first
	// patch (rollout.CheckWaveImages); nil: rollout.FactoryReader{}.
	Factory *rollout.FactoryReader
}

func (o *Options) defaults() {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Sleep == nil {
		o.Sleep = func(ctx context.Context, d time.Duration) error {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-t.C:
				return nil
			}
		}
	}
	if o.Poll <= 0 {
		o.Poll = 2 * time.Second
	}
}

// run is one rollout under way.
type run struct {
	p     engine.ClientProvider
	plan  *rollout.RolloutPlan
	o     Options
	emit  func(rollout.RolloutEvent)
	start time.Time
	// record is the rollout's record as this run read and wrote it; mine
	// is this run's own writes not on the target yet: what a record deleted
	// during the run is created again with.
	record, mine *report.RolloutRecord
	// surges are the pools whose patch wrote a maxSurge to hold a bound,
	// with the UID written: their own is put back after the last wave.
	surges []surgeWrite
}

// surgeWrite is a pool whose patch wrote a maxSurge, and its HelmRelease's
// UID as patched.
type surgeWrite struct {
	pool rollout.RolloutPool
	uid  string
}

// poolWait is one pool of the wave under way.
type poolWait struct {
	pool rollout.RolloutPool
	// generation is the HelmRelease generation it must be Ready at.
	generation int64
	last       rollout.RolloutStatus
	seen, done bool
}

// Run moves the plan's pools, wave by wave, telling emit each step. done is
// false when it stopped (a pool failed, a wave timed out, ctx ended): the
// events say where and why. It refuses a plan that cannot start.
func Run(ctx context.Context, p engine.ClientProvider, plan *rollout.RolloutPlan, o Options, emit func(rollout.RolloutEvent)) (done bool, err error) {
	if !plan.CanStart {
		return false, fmt.Errorf("the plan cannot start: %d selected pools are blocked", len(plan.Blocked))
	}
	if o.Timeout <= 0 {
		return false, fmt.Errorf("a wave needs a timeout above zero")
	}
	o.defaults()
	r := &run{p: p, plan: plan, o: o, emit: emit, start: o.Now()}
	if len(plan.Waves) > 0 {
		// A read, before anything is written: an image the factory does not
		// serve is a wave that waits out its timeout.
		asked, err := rollout.CheckWaveImages(ctx, plan.Waves[0], o.Factory)
		if err != nil {
			return false, err
		}
		if len(asked) > 0 {
			r.event(rollout.RolloutEvent{Event: rollout.EventImagesChecked, Wave: 1, Waves: len(plan.Waves),
				Message: "wave 1's images are served by their factory: " + strings.Join(asked, ", ")})
		}
	}
	// The maxSurge an earlier run wrote and did not put back: pools on the
	// target now, put back after the last wave as this run's own are.
	for _, p := range plan.Restore {
		r.surges = append(r.surges, surgeWrite{pool: p, uid: p.UID})
	}
	if patches(plan) || len(r.surgesPlanned()) > 0 {
		if why := r.openRecord(ctx); why != "" {
			r.event(rollout.RolloutEvent{Event: rollout.EventStopped, Waves: len(plan.Waves), Elapsed: r.since(r.start),
				Message: "stopped before wave 1: " + why + "; nothing was patched"})
			return false, nil
		}
	}
	for i := range plan.Waves {
		if !r.wave(ctx, i) {
			return false, nil
		}
	}
	if !r.restoreSurges(ctx) {
		return false, nil
	}
	pools := len(plan.Pools())
	r.event(rollout.RolloutEvent{Event: rollout.EventDone, Waves: len(plan.Waves), Elapsed: r.since(r.start),
		Message: fmt.Sprintf("done: %s on the target, in %s", report.Count(pools, "pool"), report.Count(len(plan.Waves), "wave"))})
	return true, nil
}

func (r *run) event(e rollout.RolloutEvent) {
	e.Time = r.o.Now()
	r.emit(e)
}

func (r *run) since(t time.Time) float64 {
	return r.o.Now().Sub(t).Round(time.Millisecond).Seconds()
}

// wave patches a wave's pools and waits for them; false when it stopped.
func (r *run) wave(ctx context.Context, i int) bool {
	w := r.plan.Waves[i]
	n := len(r.plan.Waves)
	var names []string
	for _, p := range w.Pools {
		names = append(names, p.HelmRelease)
	}
	started := r.o.Now()
	r.event(rollout.RolloutEvent{Event: rollout.EventWave, Wave: w.Wave, Waves: n, Pools: names,
		Message: fmt.Sprintf("wave %d of %d: %s: %s", w.Wave, n, report.Count(len(w.Pools), "pool"), strings.Join(names, ", "))})
	var pending []*poolWait
	for _, p := range w.Pools {
		pw := &poolWait{pool: p, generation: p.Generation}
		if p.State != rollout.StateMoves && p.SurgeRestore != nil {
			// Rolling from an earlier run that bounded it: its own maxSurge
			// is put back after the last wave, as for this run's moves.
			r.surges = append(r.surges, surgeWrite{pool: p, uid: p.UID})
		}
		if p.State == rollout.StateMoves {
			gen, uid, why := r.patch(ctx, p)
			if why != "" {
				r.stop(w, pending, started, p.HelmRelease, why)
				return false
			}
			pw.generation = gen
			if p.SurgeRestore != nil {
				r.surges = append(r.surges, surgeWrite{pool: p, uid: uid})
			}
			r.event(rollout.RolloutEvent{Event: rollout.EventPatched, Wave: w.Wave, Waves: n, Pool: p.HelmRelease, Generation: gen, Elapsed: r.since(started),
				Message: fmt.Sprintf("patched %s: %s (generation %d -> %d), to render %s", p.HelmRelease, changesText(p.Changes), p.Generation, gen, p.MachineTemplate.Target)})
			if why := r.recordWrite(ctx, w.Wave, p, uid, gen); why != "" {
				r.stop(w, append(pending, pw), started, p.HelmRelease, why)
				return false
			}
		}
		pending = append(pending, pw)
	}
	deadline := started.Add(r.o.Timeout)
	for {
		ready := 0
		for _, pw := range pending {
			if pw.done {
				ready++
				continue
			}
			st, err := r.status(ctx, pw)
			if err != nil {
				r.stop(w, pending, started, pw.pool.HelmRelease, err.Error())
				return false
			}
			if st.Failed != "" {
				r.event(rollout.RolloutEvent{Event: rollout.EventFailed, Wave: w.Wave, Waves: n, Pool: pw.pool.HelmRelease, Generation: pw.generation, Status: &st, Elapsed: r.since(started),
					Message: fmt.Sprintf("failed %s: %s", pw.pool.HelmRelease, st.Failed)})
				r.stop(w, pending, started, pw.pool.HelmRelease, st.Failed)
				return false
			}
			if st.Done() {
				pw.done = true
				ready++
				r.event(rollout.RolloutEvent{Event: rollout.EventReady, Wave: w.Wave, Waves: n, Pool: pw.pool.HelmRelease, Generation: pw.generation, Status: &st, Elapsed: r.since(started),
					Message: fmt.Sprintf("ready %s: %s; %s", pw.pool.HelmRelease, st.HelmRelease, st.MachineDeployment)})
				continue
			}
			if !pw.seen || st != pw.last {
				r.event(rollout.RolloutEvent{Event: rollout.EventProgress, Wave: w.Wave, Waves: n, Pool: pw.pool.HelmRelease, Generation: pw.generation, Status: &st, Elapsed: r.since(started),
					Message: fmt.Sprintf("waiting %s: %s; %s", pw.pool.HelmRelease, st.HelmRelease, st.MachineDeployment)})
			}
			pw.seen, pw.last = true, st
		}
		if ready == len(pending) {
			msg := fmt.Sprintf("wave %d of %d done: %s on the target after %s", w.Wave, n, report.Count(len(pending), "pool"), r.o.Now().Sub(started).Round(time.Second))
			if r.record != nil {
				if why := r.prune(ctx, pending); why != "" {
					// Harmless: a pool on the target is read so with or
					// without its write; the next write drops them.
					msg += fmt.Sprintf("; they stay in the rollout's record until its next write: %s", why)
				}
			}
			r.event(rollout.RolloutEvent{Event: rollout.EventWaveDone, Wave: w.Wave, Waves: n, Pools: names, Elapsed: r.since(started), Message: msg})
			return true
		}
		if r.o.Tick != nil {
			r.o.Tick(fmt.Sprintf("wave %d of %d: %d of %s on the target, %s of %s", w.Wave, n, ready, report.Count(len(pending), "pool"), r.o.Now().Sub(started).Round(time.Second), r.o.Timeout))
		}
		if !r.o.Now().Before(deadline) {
			for _, pw := range pending {
				if !pw.done {
					st := pw.last
					why := fmt.Sprintf("timed out after %s (--timeout, per wave): %s; %s", r.o.Timeout, st.HelmRelease, st.MachineDeployment)
					r.event(rollout.RolloutEvent{Event: rollout.EventFailed, Wave: w.Wave, Waves: n, Pool: pw.pool.HelmRelease, Generation: pw.generation, Status: &st, Elapsed: r.since(started),
						Message: fmt.Sprintf("failed %s: %s", pw.pool.HelmRelease, why)})
					r.stop(w, pending, started, pw.pool.HelmRelease, why)
					return false
				}
			}
		}
		if err := r.o.Sleep(ctx, min(r.o.Poll, max(deadline.Sub(r.o.Now()), 0))); err != nil {
			r.stop(w, pending, started, "", "interrupted ("+err.Error()+")")
			return false
		}
	}
}

// stop says where the rollout stopped: the pool and why, the pools of the
// wave still rolling in the cluster, the waves not started, and how to go on.
func (r *run) stop(w rollout.RolloutWave, pending []*poolWait, started time.Time, pool, why string) {
	var rolling []string
	for _, pw := range pending {
		if !pw.done {
			rolling = append(rolling, pw.pool.HelmRelease)
		}
	}
	msg := fmt.Sprintf("stopped in wave %d of %d", w.Wave, len(r.plan.Waves))
	if pool != "" {
		msg += " at " + pool
	}
	msg += ": " + why
	if len(rolling) > 0 {
		msg += fmt.Sprintf("; patched and not on the target yet (they go on in the cluster): %s", strings.Join(rolling, ", "))
	}
	if left := len(r.plan.Waves) - w.Wave; left > 0 {
		msg += fmt.Sprintf("; %s not started", report.Count(left, "wave"))
	}
	msg += "; fix the cause and run the same command again: it skips the pools on the target and waits for those still rolling"
	if len(r.surges) > 0 {
		// The record keeps each pool's own maxSurge: the same command run
		// again puts it back; by hand, this does.
		var restore []string
		for _, sw := range r.surges {
			restore = append(restore, surgeRestoreCommand(sw.pool))
		}
		msg += fmt.Sprintf("; the maxSurge written to hold the bound stays in %s until the next run to the same target puts it back after its last wave (the rollout's record %s keeps each pool's own); to put it back yourself once it has rolled: %s", report.Count(len(r.surges), "pool"), r.recordRef(), strings.Join(restore, "; "))
	}
	r.event(rollout.RolloutEvent{Event: rollout.EventStopped, Wave: w.Wave, Waves: len(r.plan.Waves), Pool: pool, Pools: rolling, Elapsed: r.since(r.start), Message: msg})
}

// openRecord reads the rollout's record, or creates it, before anything is
// patched: a run that could not say what it wrote would leave a later run
// unable to wait for it. A ConfigMap under its name that is not this
// target's record, or holds the layout of releases before, is written over
// whole (an event says so). Pools the plan found on the target leave it.
// It checks that the record, with the largest wave's patches, fits (each
// wave's pools leave it once the wave is done). It says why it could not.
func (r *run) openRecord(ctx context.Context) string {
	r.record = rollout.NewRolloutRecord(r.plan.Target)
	r.mine = r.record.Empty()
	c, err := r.records()
	if err != nil {
		return recordAccess(r.record, "read", err)
	}
	cm, err := c.Get(ctx, r.record.Name, metav1.GetOptions{})
	absent := apierrors.IsNotFound(err)
	switch {
	case absent:
	case err != nil:
		return recordAccess(r.record, "read", err)
	default:
		if r.record, err = rollout.DecodeRolloutRecord(r.plan.Target, cm); err != nil {
			return err.Error()
		}
	}
	for _, p := range r.plan.OnTarget {
		// On the target: a later run reads it so without the record, unless
		// the record keeps the maxSurge to put back (until it is).
		if p.SurgeRestore != nil {
			continue
		}
		_, name, _ := strings.Cut(p.HelmRelease, "/")
		r.record.Remove(p.Namespace, name)
	}
	// A wave's writes leave the record when it is done, but those that keep
	// a maxSurge to put back stay until after the last wave: they add up.
	largest, surges := 0, 0
	for _, w := range r.plan.Waves {
		probe := 0
		for _, p := range w.Pools {
			_, name, _ := strings.Cut(p.HelmRelease, "/")
			if _, held := r.record.Written(p.Namespace, name); p.State == rollout.StateMoves && !held {
				n := report.WriteBytes(w.Wave, written(p, p.Generation+1))
				if p.SurgeRestore != nil {
					surges += n
				} else {
					probe += n
				}
			}
		}
		largest = max(largest, probe)
	}
	if err := r.record.FitsWith(surges + largest); err != nil {
		return err.Error()
	}
	switch {
	case absent:
		fresh, err := r.record.ConfigMap()
		if err == nil {
			_, err = c.Create(ctx, fresh, metav1.CreateOptions{FieldManager: rollout.FieldManager})
		}
		if err != nil {
			return recordAccess(r.record, "created", err)
		}
		r.record.Stored()
	case r.record.Rewrite() != "":
		why := r.record.Rewrite()
		whole, err := r.record.ConfigMap()
		if err == nil {
			whole.SetResourceVersion(cm.GetResourceVersion())
			_, err = c.Update(ctx, whole, metav1.UpdateOptions{FieldManager: rollout.FieldManager})
		}
		if err != nil {
			return recordAccess(r.record, "written", err)
		}
		r.record.Stored()
		r.event(rollout.RolloutEvent{Event: rollout.EventRecord, Waves: len(r.plan.Waves), Elapsed: r.since(r.start),
			Message: fmt.Sprintf("the rollout's record %s was written whole: %s", r.record.Ref(), why)})
	default:
		if why := r.flush(ctx); why != "" {
			return why
		}
	}
	return ""
}

// surgesPlanned are the pools whose maxSurge an earlier run wrote and this
// one puts back: on the target (Restore), or rolling in a wave.
func (r *run) surgesPlanned() []rollout.RolloutPool {
	out := append([]rollout.RolloutPool{}, r.plan.Restore...)
	for _, p := range r.plan.Pools() {
		if p.State != rollout.StateMoves && p.SurgeRestore != nil {
			out = append(out, p)
		}
	}
	return out
}

// patches: the plan patches a pool (a plan of pools rolling already only
// waits).
func patches(plan *rollout.RolloutPlan) bool {
	for _, p := range plan.Pools() {
		if p.State == rollout.StateMoves {
			return true
		}
	}
	return false
}

// recordAccess says that the record could not be read or written, and,
// when the API server refused this identity, what it needs for it.
func recordAccess(rec *report.RolloutRecord, what string, err error) string {
	msg := fmt.Sprintf("the rollout's record %s could not be %s (%v)", rec.Ref(), what, err)
	if apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) {
		msg += fmt.Sprintf(": --apply needs get, create and update of ConfigMaps in %s, the platform's namespace, which tenants cannot write", report.RecordNamespace)
	}
	return msg
}

func (r *run) records() (dynamic.ResourceInterface, error) {
	c, _, err := r.p.GetClientFor("v1", "ConfigMap")
	if err != nil {
		return nil, err
	}
	return c.Namespace(report.RecordNamespace), nil
}

// written is the record's entry of a pool's HelmRelease at generation,
// with the maxSurge its patch writes and the pool's own, if it writes one.
func written(p rollout.RolloutPool, generation int64) report.RecordedWrite {
	_, name, _ := strings.Cut(p.HelmRelease, "/")
	return report.RecordedWrite{Namespace: p.Namespace, Name: name, UID: p.UID, Generation: generation, Surge: p.SurgeRestore}
}

// recordRef names the record, opened or not.
func (r *run) recordRef() string {
	if r.record == nil {
		return rollout.NewRolloutRecord(r.plan.Target).Ref()
	}
	return r.record.Ref()
}

// recordWrite adds the pool's patch (the UID of the HelmRelease it wrote,
// the generation it gave it) to the rollout's record. It says why it could
// not.
func (r *run) recordWrite(ctx context.Context, wave int, p rollout.RolloutPool, uid string, generation int64) string {
	w := written(p, generation)
	w.UID = uid
	r.record.Add(report.WaveKey(r.start, wave), w)
	r.mine.Add(report.WaveKey(r.start, wave), w)
	if why := r.flush(ctx); why != "" {
		return fmt.Sprintf("%s was patched (generation %d) and goes on in the cluster, but %s: a later run reads it as on the target by its own values and does not wait for it; watch it yourself (flux get helmrelease %s -n %s, and MachineDeployment %s)",
			p.HelmRelease, generation, why, w.Name, w.Namespace, p.Pool)
	}
	return ""
}

// prune drops the pools of a wave done from the record: on the target, a
// later run reads them so without it, and the record's size follows the
// pools still moving. It says why it could not (they stay in it until the
// next write).
func (r *run) prune(ctx context.Context, pending []*poolWait) string {
	for _, pw := range pending {
		if pw.pool.SurgeRestore != nil {
			// Its own maxSurge is put back after the last wave: the record
			// keeps it until then, for a run that stops before.
			continue
		}
		_, name, _ := strings.Cut(pw.pool.HelmRelease, "/")
		r.record.Remove(pw.pool.Namespace, name)
		r.mine.Remove(pw.pool.Namespace, name)
	}
	return r.flush(ctx)
}

// flush writes what changed in the record since it was last written: a
// merge patch of the changed HelmReleases' keys alone, so that the bytes a
// run writes grow with the pools it patches, and another run's keys are
// never overwritten. A record deleted meanwhile is created again with
// every write of this run not on the target yet (an event says so): what
// earlier runs wrote in it is gone, and a later run reads those pools as on
// the target by their own values. It says why it could not.
func (r *run) flush(ctx context.Context) string {
	body, err := r.record.Patch()
	if body == nil && err == nil {
		return ""
	}
	c, cerr := r.records()
	if err == nil {
		err = cerr
	}
	for attempt := 0; err == nil && attempt < 5; attempt++ {
		if _, err = c.Patch(ctx, r.record.Name, types.MergePatchType, body, metav1.PatchOptions{FieldManager: rollout.FieldManager}); err == nil {
			r.record.Stored()
			return ""
		}
		if !apierrors.IsNotFound(err) {
			break
		}
		whole := r.mine.Empty()
		for _, w := range r.mine.Writes() {
			whole.Add(w.Wave, w.RecordedWrite)
		}
		var cm *unstructured.Unstructured
		if cm, err = whole.ConfigMap(); err != nil {
			break
		}
		_, err = c.Create(ctx, cm, metav1.CreateOptions{FieldManager: rollout.FieldManager})
		if apierrors.IsAlreadyExists(err) {
			// Another run created it first: patch this run's writes into it.
			err = nil
			for _, w := range r.mine.Writes() {
				r.record.Add(w.Wave, w.RecordedWrite)
			}
			if body, err = r.record.Patch(); body == nil && err == nil {
				return ""
			}
			continue
		}
		if err != nil {
			break
		}
		whole.Stored()
		r.record = whole
		r.event(rollout.RolloutEvent{Event: rollout.EventRecord, Waves: len(r.plan.Waves), Elapsed: r.since(r.start),
			Message: fmt.Sprintf("the rollout's record %s was deleted during the run: created again with every write of this run not on the target yet (%s); writes of earlier runs it held are gone, and a later run reads those pools as on the target by their own values", r.record.Ref(), report.Count(whole.Len(), "HelmRelease"))})
		return ""
	}
	if err == nil {
		err = fmt.Errorf("it was deleted and created again at each of 5 tries")
	}
	return recordAccess(r.record, "written", err)
}

// patch writes the pool's new spec.values, only while its HelmRelease is
// the object (UID) at the generation the plan was made against (a JSON
// patch's tests): a HelmRelease its tenant edited, or deleted and created
// again, since is not overwritten. It returns the generation the patch gave
// it and its UID, or why it could not.
func (r *run) patch(ctx context.Context, p rollout.RolloutPool) (generation int64, uid, why string) {
	ns, name, _ := strings.Cut(p.HelmRelease, "/")
	c, _, err := r.p.GetClientFor(fleet.HelmReleaseAPI, "HelmRelease")
	if err != nil {
		return 0, "", fmt.Sprintf("HelmRelease %s: %v", p.HelmRelease, err)
	}
	ops := []map[string]any{{"op": "test", "path": "/metadata/generation", "value": p.Generation}}
	if p.UID != "" {
		// The generation alone does not tell the object apart: one deleted
		// and created again starts at generation 1 again.
		ops = append(ops, map[string]any{"op": "test", "path": "/metadata/uid", "value": p.UID})
	}
	body, err := json.Marshal(append(ops, map[string]any{"op": "add", "path": "/spec/values", "value": p.SpecValues}))
	if err != nil {
		return 0, "", fmt.Sprintf("HelmRelease %s: encoding the patch: %v", p.HelmRelease, err)
	}
	obj, err := c.Namespace(ns).Patch(ctx, name, types.JSONPatchType, body, metav1.PatchOptions{FieldManager: rollout.FieldManager})
	if err != nil {
		now, getErr := fleet.Get(ctx, r.p, fleet.HelmReleaseAPI, "HelmRelease", ns, name)
		switch {
		case getErr == nil && now == nil:
			return 0, "", fmt.Sprintf("HelmRelease %s is gone since the plan", p.HelmRelease)
		case getErr == nil && recreated(p, now.GetUID()):
			return 0, "", recreatedText(p, now.GetUID()) + ": not written; run again to plan with what it holds now"
		case getErr == nil && now.GetGeneration() != p.Generation:
			return 0, "", fmt.Sprintf("HelmRelease %s changed since the plan (generation %d, now %d): not overwritten; run again to plan with what it holds now", p.HelmRelease, p.Generation, now.GetGeneration())
		}
		return 0, "", fmt.Sprintf("patching HelmRelease %s: %v", p.HelmRelease, err)
	}
	return obj.GetGeneration(), string(obj.GetUID()), ""
}

// recreated: the HelmRelease under the pool's name is not the object the
// plan read (a plan that read no UID has none to compare).
func recreated(p rollout.RolloutPool, uid types.UID) bool {
	return p.UID != "" && string(uid) != p.UID
}

func recreatedText(p rollout.RolloutPool, uid types.UID) string {
	return fmt.Sprintf("HelmRelease %s changed since the plan: deleted and created again (uid %s, now %s)", p.HelmRelease, p.UID, uid)
}

// status reads where a pool is: its HelmRelease, the object the plan read,
// at the generation it must be Ready at, its MachineDeployment against the template it must run.
func (r *run) status(ctx context.Context, pw *poolWait) (rollout.RolloutStatus, error) {
	p := pw.pool
	var st rollout.RolloutStatus
	if ns, name, ok := strings.Cut(p.HelmRelease, "/"); ok {
		hr, err := fleet.Get(ctx, r.p, fleet.HelmReleaseAPI, "HelmRelease", ns, name)
		if err != nil {
			return st, err
		}
		if hr == nil {
			st.Failed = "HelmRelease " + p.HelmRelease + " is gone"
			return st, nil
		}
		if recreated(p, hr.GetUID()) {
			// Another object under the pool's name: its status says nothing
			// of what the rollout wrote.
			st.Failed = recreatedText(p, hr.GetUID()) + ": not waited on; run again to plan with what it holds now"
			st.HelmRelease = st.Failed
			return st, nil
		}
		st.HelmReleaseReady, st.Failed, st.HelmRelease = rollout.HelmReleaseStatus(hr.Object, pw.generation)
		if st.Failed != "" {
			st.HelmRelease = st.Failed
		}
	}
	md, err := fleet.Get(ctx, r.p, machineDeploymentAPI, "MachineDeployment", p.Namespace, p.Pool)
	if err != nil {
		return st, err
	}
	var obj map[string]any
	if md != nil {
		obj = md.Object
	}
	m := rollout.MachineDeploymentRolledOut(obj, p.MachineTemplate.Target, p.Workers)
	st.Template, st.Replicas, st.UpdatedReplicas, st.ReadyReplicas = m.Template, m.Replicas, m.UpdatedReplicas, m.ReadyReplicas
	st.RolledOut, st.MachineDeployment = m.RolledOut, m.Says
	return st, nil
}

// changesText is a pool's changes on one line: field from -> to.
func changesText(changes []rollout.ValueChange) string {
	var parts []string
	for _, c := range changes {
		if c.Removed {
			parts = append(parts, c.Field+" removed")
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s -> %s", c.Field, report.OrNone(c.From), c.To))
	}
	return strings.Join(parts, ", ")
}

// restoreSurges puts back, after the last wave, each pool's own maxSurge
// where this run wrote one to hold a bound (the key removed where the pool
// had none): one more patch each, guarded as the move's was, by the UID it
// patched and the generation read now, and only while spec.values still
// holds the maxSurge this run wrote. maxSurge is not in the machine
// template: nothing rolls. false when one could not be put back (the
// event says which, and the command that does it).
func (r *run) restoreSurges(ctx context.Context) bool {
	for _, sw := range r.surges {
		p, s := sw.pool, sw.pool.SurgeRestore
		restore := surgeRestoreCommand(p)
		why := r.restoreSurge(ctx, sw)
		if why != "" {
			r.event(rollout.RolloutEvent{Event: rollout.EventStopped, Waves: len(r.plan.Waves), Pool: p.HelmRelease, Elapsed: r.since(r.start),
				Message: fmt.Sprintf("every wave is done, but the maxSurge %d written into %s to hold the bound was not put back: %s; put its own back yourself (%s), or it stays: every later roll of the pool keeps that surge", s.Wrote, p.HelmRelease, why, restore)})
			return false
		}
		own := "removed, as the pool had none"
		if s.Had {
			own = fmt.Sprintf("back to its own %v", s.Own)
		}
		msg := fmt.Sprintf("restored %s: maxSurge %d %s (the rolling update only: no worker rolls)", p.HelmRelease, s.Wrote, own)
		// Put back: the record has nothing more to keep of it.
		_, name, _ := strings.Cut(p.HelmRelease, "/")
		r.record.Remove(p.Namespace, name)
		r.mine.Remove(p.Namespace, name)
		if why := r.flush(ctx); why != "" {
			// Harmless: the write's generation is not the pool's any more,
			// so a later run does not read it as one to put back.
			msg += fmt.Sprintf("; it stays in the rollout's record until its next write: %s", why)
		}
		r.event(rollout.RolloutEvent{Event: rollout.EventSurgeRestored, Waves: len(r.plan.Waves), Pool: p.HelmRelease, Elapsed: r.since(r.start),
			Message: msg})
	}
	return true
}

// restoreSurge patches one pool's maxSurge back; it says why it could not.
func (r *run) restoreSurge(ctx context.Context, sw surgeWrite) string {
	p, s := sw.pool, sw.pool.SurgeRestore
	ns, name, _ := strings.Cut(p.HelmRelease, "/")
	now, err := fleet.Get(ctx, r.p, fleet.HelmReleaseAPI, "HelmRelease", ns, name)
	switch {
	case err != nil:
		return fmt.Sprintf("reading HelmRelease %s: %v", p.HelmRelease, err)
	case now == nil:
		return fmt.Sprintf("HelmRelease %s is gone", p.HelmRelease)
	case string(now.GetUID()) != sw.uid:
		return fmt.Sprintf("HelmRelease %s was deleted and created again since it was patched (uid %s, now %s): not written", p.HelmRelease, sw.uid, now.GetUID())
	}
	values, _, _ := unstructured.NestedMap(now.Object, "spec", "values")
	if got, ok := fleet.Int64(values, "maxSurge"); !ok || got != s.Wrote {
		return fmt.Sprintf("its spec.values maxSurge is %s now, not the %d this run wrote: someone set it since, and it is theirs", report.OrNone(fmt.Sprint(values["maxSurge"])), s.Wrote)
	}
	ops := []map[string]any{
		{"op": "test", "path": "/metadata/generation", "value": now.GetGeneration()},
		{"op": "test", "path": "/metadata/uid", "value": sw.uid},
		{"op": "test", "path": "/spec/values/maxSurge", "value": s.Wrote},
	}
	if s.Had {
		ops = append(ops, map[string]any{"op": "replace", "path": "/spec/values/maxSurge", "value": s.Own})
	} else {
		ops = append(ops, map[string]any{"op": "remove", "path": "/spec/values/maxSurge"})
	}
	body, err := json.Marshal(ops)
	if err != nil {
		return fmt.Sprintf("encoding the patch: %v", err)
	}
	c, _, err := r.p.GetClientFor(fleet.HelmReleaseAPI, "HelmRelease")
	if err != nil {
		return fmt.Sprintf("HelmRelease %s: %v", p.HelmRelease, err)
	}
	if _, err := c.Namespace(ns).Patch(ctx, name, types.JSONPatchType, body, metav1.PatchOptions{FieldManager: rollout.FieldManager}); err != nil {
		return fmt.Sprintf("patching HelmRelease %s (generation %d): %v", p.HelmRelease, now.GetGeneration(), err)
	}
	return ""
}

// surgeRestoreCommand is the kubectl command that puts a pool's own
// maxSurge back by hand (removes the key where it had none).
func surgeRestoreCommand(p rollout.RolloutPool) string {
	ns, name, _ := strings.Cut(p.HelmRelease, "/")
	if s := p.SurgeRestore; s != nil && s.Had {
		own, _ := json.Marshal(s.Own)
		return "kubectl patch helmrelease " + name + " -n " + ns + " --type merge -p '{\"spec\":{\"values\":{\"maxSurge\":" + string(own) + "}}}'"
	}
	return "kubectl patch helmrelease " + name + " -n " + ns + " --type json -p '[{\"op\":\"remove\",\"path\":\"/spec/values/maxSurge\"}]'"
}
