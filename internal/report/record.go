// The rollout's own record. A pool counts as on its way from an earlier run
// of rollout --apply only when that run wrote it: the record, a ConfigMap in
// the platform's namespace (cozy-system), holds the HelmReleases runs
// patched and that are not on the target yet, each with its wave, its UID
// and the generation the patch gave it. Only the operator's identity writes
// cozy-system (no tenant role reaches it), whereas a HelmRelease's
// managedFields name whatever field manager a client chose, cozystack-api
// passing a tenant's through: they prove nothing. A pool whose HelmRelease
// is another object now (UID), or was written since (generation), is not
// the rollout's write any more.
//
// One record per target, named for it and holding it (a record holding
// another target, or none, is not read as this one's): every run to that
// target (the same command run again after a stop, another selection, the
// next part of a fleet) reads and adds to the same record. The record, its
// keys and its read are here, as pins reads every record; internal/rollout
// names and reads the record of its target, internal/apply writes it, one
// key per HelmRelease.

package report

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const (
	// RecordNamespace is where rollout keeps its records: the platform's
	// namespace, which tenants cannot write.
	RecordNamespace = platformNamespace
	RecordPrefix    = "workerimage-rollout-"
	// recordTargetKey holds the target the record is named for (the CA as
	// the digest of its certificates, never the PEM).
	recordTargetKey = "target"
	// recordMaxBytes bounds a record's data: the API server takes at most
	// 1 MiB of a ConfigMap's data. One HelmRelease takes about 190 bytes, and
	// each appears once (its latest write) while it is not on the target, so
	// a record holds about 5,500 pools still rolling.
	recordMaxBytes = 1<<20 - 4<<10
	wavePrefix     = "wave-"
	// poolKeyPrefix starts the data key of one HelmRelease's write: one key
	// per HelmRelease, so a write is a merge patch of that key alone (the
	// bytes a run writes grow with the pools it patches, not with the
	// record), and runs writing other pools never conflict.
	poolKeyPrefix = "hr-"
)

// RecordLabels mark a record as rollout's, for kubectl get -l.
var RecordLabels = map[string]string{"app.kubernetes.io/managed-by": "workerimage", "app.kubernetes.io/component": "rollout-record"}

// RecordedWrite is one HelmRelease rollout --apply patched: the object (its
// UID) and the generation the patch gave it.
type RecordedWrite struct {
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
	UID        string `json:"uid"`
	Generation int64  `json:"generation"`
	// Surge is the maxSurge the patch wrote to hold a bound and the pool's
	// own before it; nil when it wrote none. It stays in the record until
	// the pool's own is put back (after the last wave), so a run stopped
	// before that leaves the next run to the target what to put back.
	Surge *SurgeRestore `json:"surge,omitempty"`
}

func (w RecordedWrite) id() string { return w.Namespace + "/" + w.Name }

// WaveWrite is a write as one data key holds it: the wave key
// ("<run start>.wave-<n>") beside the write.
type WaveWrite struct {
	Wave string `json:"wave"`
	RecordedWrite
	// raw is the entry's data value, as written.
	raw string
}

// RolloutRecord is a rollout's record: the ConfigMap's name, the target it
// is named for, and the latest write of each HelmRelease, by
// namespace/name. dirty are the HelmReleases changed (added or removed)
// since it was last written: Patch writes those alone.
type RolloutRecord struct {
	Name   string
	target string
	writes map[string]WaveWrite
	dirty  map[string]bool
	// size is the bytes of its data, as ConfigMap writes it.
	size int
	// ignored says why the ConfigMap read was not read as this target's
	// record (its target is another's, or it has none); legacy: it held
	// waves as lists, as releases before wrote them (Rewrite says so).
	ignored string
	legacy  bool
}

// RecordNamed is the empty record named name of target (its JSON, as the
// record's target key holds it).
func RecordNamed(name, target string) *RolloutRecord {
	return &RolloutRecord{Name: name, target: target, writes: map[string]WaveWrite{}, dirty: map[string]bool{}, size: len(recordTargetKey) + len(target)}
}

// Empty is a record of the same target holding no write: a record
// rewritten from scratch.
func (r *RolloutRecord) Empty() *RolloutRecord {
	return RecordNamed(r.Name, r.target)
}

// Ref is the record as the plan names it: ConfigMap <namespace>/<name>.
func (r *RolloutRecord) Ref() string { return "ConfigMap " + RecordNamespace + "/" + r.Name }

// Ignored says why the ConfigMap under the record's name was not read as
// this target's record ("" when it was, or there was none).
func (r *RolloutRecord) Ignored() string { return r.ignored }

// Rewrite says why the record must be written whole before a write is
// patched into it: the ConfigMap read held another target's record (or
// none), or waves as lists, as releases before wrote them. "" when not.
func (r *RolloutRecord) Rewrite() string {
	switch {
	case r.ignored != "":
		return r.ignored
	case r.legacy:
		return "it held its writes as lists by wave, as releases before this one wrote them: rewritten one key per HelmRelease"
	}
	return ""
}

// WaveKey is the data key of one wave of a run started at start.
func WaveKey(start time.Time, wave int) string {
	return start.UTC().Format("20060102T150405Z") + "." + wavePrefix + strconv.Itoa(wave)
}

// PoolKey is the data key of the write of HelmRelease namespace/name (a
// digest: a namespace and a name together may pass the 253 characters a
// data key takes).
func PoolKey(namespace, name string) string {
	sum := sha256.Sum256([]byte(namespace + "/" + name))
	return poolKeyPrefix + hex.EncodeToString(sum[:])[:20]
}

// Add records a write in a wave; an earlier write of the same HelmRelease,
// in any wave, is dropped: the latest write is the one that counts, and the
// record holds each pool once.
func (r *RolloutRecord) Add(waveKey string, w RecordedWrite) {
	e := WaveWrite{Wave: waveKey, RecordedWrite: w}
	raw, _ := json.Marshal(e)
	e.raw = string(raw)
	r.drop(w.id())
	r.writes[w.id()] = e
	r.size += len(PoolKey(w.Namespace, w.Name)) + len(e.raw)
	r.dirty[w.id()] = true
}

// Remove drops the write of HelmRelease namespace/name (a pool on the
// target needs none: a later run reads it as on the target).
func (r *RolloutRecord) Remove(namespace, name string) {
	id := namespace + "/" + name
	if _, ok := r.writes[id]; ok {
		r.drop(id)
		r.dirty[id] = true
	}
}

func (r *RolloutRecord) drop(id string) {
	if old, ok := r.writes[id]; ok {
		r.size -= len(PoolKey(old.Namespace, old.Name)) + len(old.raw)
		delete(r.writes, id)
	}
}

// Written is the record's write of the HelmRelease namespace/name, if any.
func (r *RolloutRecord) Written(namespace, name string) (RecordedWrite, bool) {
	e, ok := r.writes[namespace+"/"+name]
	return e.RecordedWrite, ok
}

// Len counts the HelmReleases the record holds.
func (r *RolloutRecord) Len() int { return len(r.writes) }

// Size is the bytes of the record's data, as ConfigMap writes it.
func (r *RolloutRecord) Size() int { return r.size }

// Writes are the record's writes, each HelmRelease's latest, in no order.
func (r *RolloutRecord) Writes() []WaveWrite {
	out := make([]WaveWrite, 0, len(r.writes))
	for _, e := range r.writes {
		out = append(out, e)
	}
	return out
}

// Fits says why the record is past the size a ConfigMap holds, and what
// to do; nil when it fits.
func (r *RolloutRecord) Fits() error { return r.FitsWith(0) }

// FitsWith is Fits with extra bytes more (the writes a wave will add).
func (r *RolloutRecord) FitsWith(extra int) error {
	if r.size+extra <= recordMaxBytes {
		return nil
	}
	return fmt.Errorf("the rollout's record %s would hold %d bytes, more than the %d a ConfigMap takes (about 5,500 pools not on the target yet): it holds each pool patched until it is on the target (a wave's pools leave it when the wave is done), so roll in smaller waves (--wave) or in parts (-n, --flavor, --pool, --exclude) to the same target, each part once the one before is done; a record full of pools still rolling empties as they arrive (run the same command again: it waits for them)", r.Ref(), r.size+extra, recordMaxBytes)
}

// Patch is the JSON merge patch that writes what changed since the record
// was last written (each HelmRelease's key, null for one removed), or nil
// when nothing did. Stored says it was written.
func (r *RolloutRecord) Patch() ([]byte, error) {
	if len(r.dirty) == 0 {
		return nil, nil
	}
	if err := r.Fits(); err != nil {
		return nil, err
	}
	data := make(map[string]any, len(r.dirty))
	for id := range r.dirty {
		ns, name, _ := strings.Cut(id, "/")
		if e, ok := r.writes[id]; ok {
			data[PoolKey(ns, name)] = e.raw
		} else {
			data[PoolKey(ns, name)] = nil
		}
	}
	return json.Marshal(map[string]any{"data": data})
}

// Stored marks the record as the cluster holds it: nothing to patch.
func (r *RolloutRecord) Stored() { r.dirty = map[string]bool{} }

// ConfigMap is the record as the API stores it: in RecordNamespace,
// labelled as rollout's, its target and each HelmRelease's write a data key
// (JSON). It refuses a record past the size a ConfigMap holds.
func (r *RolloutRecord) ConfigMap() (*unstructured.Unstructured, error) {
	if err := r.Fits(); err != nil {
		return nil, err
	}
	data := map[string]any{recordTargetKey: r.target}
	for _, e := range r.writes {
		data[PoolKey(e.Namespace, e.Name)] = e.raw
	}
	labels := map[string]any{}
	for k, v := range RecordLabels {
		labels[k] = v
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": r.Name, "namespace": RecordNamespace, "labels": labels},
		"data":     data,
	}}, nil
}

// readStoredRecord reads a record for the target it names itself (pins
// asks what each recorded rollout still moves, whatever its target).
func readStoredRecord(cm *unstructured.Unstructured) (*RolloutRecord, error) {
	target, _, _ := unstructured.NestedString(cm.Object, "data", recordTargetKey)
	return DecodeRecordInto(RecordNamed(cm.GetName(), target), cm)
}

func DecodeRecordInto(r *RolloutRecord, cm *unstructured.Unstructured) (*RolloutRecord, error) {
	data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
	if got, ok := data[recordTargetKey]; !ok || got != r.target {
		// A record under this name for another target (a digest's
		// collision, or written by hand) says nothing of this target's pools.
		seen := "names no target"
		if ok {
			seen = fmt.Sprintf("is for target %s", got)
		}
		r.ignored = fmt.Sprintf("the ConfigMap %s/%s %s, not this rollout's %s: not read as its record (no pool is waited on for it), and --apply writes this target's record over it", RecordNamespace, r.Name, seen, r.target)
		return r, nil
	}
	fix := "it is not what rollout --apply writes; delete it (kubectl delete configmap -n " + RecordNamespace + " " + r.Name + "), and the pools it held are on the target by their own values, not waited on"
	delete(data, recordTargetKey)
	type read struct {
		key string
		w   RecordedWrite
	}
	var reads []read
	for _, k := range SortedKeys(data) {
		if strings.HasPrefix(k, poolKeyPrefix) {
			var e WaveWrite
			if err := json.Unmarshal([]byte(data[k]), &e); err != nil {
				return nil, fmt.Errorf("the rollout's record %s: key %q is not a HelmRelease written (%v): %s", r.Ref(), k, err, fix)
			}
			if run, wave := splitWaveKey(e.Wave); run == e.Wave || wave < 1 {
				return nil, fmt.Errorf("the rollout's record %s: key %q holds a write without its wave (<run>.wave-<n>): %s", r.Ref(), k, fix)
			}
			if !complete(e.RecordedWrite) {
				return nil, fmt.Errorf("the rollout's record %s: key %q holds a write without namespace, name, uid or generation (or with a negative surge): %s", r.Ref(), k, fix)
			}
			if PoolKey(e.Namespace, e.Name) != k {
				return nil, fmt.Errorf("the rollout's record %s: key %q holds the write of %s/%s, whose key is %s: %s", r.Ref(), k, e.Namespace, e.Name, PoolKey(e.Namespace, e.Name), fix)
			}
			reads = append(reads, read{e.Wave, e.RecordedWrite})
			continue
		}
		run, wave := splitWaveKey(k)
		if run == k || wave < 1 {
			return nil, fmt.Errorf("the rollout's record %s: key %q is not a wave (<run>.wave-<n>) nor a HelmRelease's write (%s...): %s", r.Ref(), k, poolKeyPrefix, fix)
		}
		var ws []RecordedWrite
		if err := json.Unmarshal([]byte(data[k]), &ws); err != nil {
			return nil, fmt.Errorf("the rollout's record %s: key %q is not a list of HelmReleases written (%v): %s", r.Ref(), k, err, fix)
		}
		for _, w := range ws {
			if !complete(w) {
				return nil, fmt.Errorf("the rollout's record %s: key %q holds a write without namespace, name, uid or generation: %s", r.Ref(), k, fix)
			}
			reads = append(reads, read{k, w})
		}
		r.legacy = true
	}
	// In the order written: a later write of the same HelmRelease wins.
	sort.SliceStable(reads, func(i, j int) bool { return waveBefore(reads[i].key, reads[j].key) })
	for _, rd := range reads {
		r.Add(rd.key, rd.w)
	}
	r.Stored()
	return r, nil
}

func complete(w RecordedWrite) bool {
	return w.Namespace != "" && w.Name != "" && w.UID != "" && w.Generation >= 1 && (w.Surge == nil || w.Surge.Wrote >= 0)
}

// waveBefore: wave key a was written before b (by run, then wave number).
func waveBefore(a, b string) bool {
	ra, wa := splitWaveKey(a)
	rb, wb := splitWaveKey(b)
	if ra != rb {
		return ra < rb
	}
	return wa < wb
}

func splitWaveKey(k string) (run string, wave int) {
	run, n, _ := strings.Cut(k, "."+wavePrefix)
	wave, _ = strconv.Atoi(n)
	return run, wave
}

// Wrote says whether the HelmRelease is as the rollout's write left it: the
// record holds a write of it, by UID the same object, at the generation it
// is at now. When not, why, in a phrase.
func (r *RolloutRecord) Wrote(hr *unstructured.Unstructured) (bool, string) {
	w, ok := r.Written(hr.GetNamespace(), hr.GetName())
	switch {
	case !ok:
		return false, fmt.Sprintf("on the target by its own values (the rollout's record, %s, holds no write of it)", r.Ref())
	case string(hr.GetUID()) != w.UID:
		return false, fmt.Sprintf("on the target, deleted and created again since this tool wrote it (the rollout's record, %s, holds uid %s; it is %s now)", r.Ref(), w.UID, OrNone(string(hr.GetUID())))
	case Generation(hr.Object) != w.Generation:
		return false, fmt.Sprintf("on the target, changed since this tool wrote it (the rollout's record, %s, holds generation %d of it; it is at generation %d now)", r.Ref(), w.Generation, Generation(hr.Object))
	}
	return true, ""
}

// WriteBytes is what a write of HelmRelease namespace/name in a wave of a
// run takes in the record: its key and its value.
func WriteBytes(wave int, w RecordedWrite) int {
	raw, _ := json.Marshal(WaveWrite{Wave: WaveKey(time.Time{}, wave), RecordedWrite: w})
	return len(PoolKey(w.Namespace, w.Name)) + len(raw)
}

// SurgeRestore is the maxSurge a rollout writes into a pool's spec.values
// for the roll, and the pool's own it puts back after its last wave: the
// rolling update is not part of the machine template, so neither write
// rolls a worker.
type SurgeRestore struct {
	// Wrote is the maxSurge the move writes.
	Wrote int64 `json:"wrote"`
	// Had: the pool's spec.values held maxSurge before, Own its value;
	// else the key is removed.
	Had bool `json:"had"`
	Own any  `json:"own,omitempty"`
}

// Text says what happens to the pool's maxSurge, for the plan and events.
func (s *SurgeRestore) Text() string {
	own := "the key removed, as the pool sets none"
	if s.Had {
		own = fmt.Sprintf("its own maxSurge %v put back", s.Own)
	}
	return fmt.Sprintf("set to %d during the roll, restored after the last wave (%s); a run that stops before leaves it to the next run to the same target (the rollout's record keeps it)", s.Wrote, own)
}

// ResumedText says what happens to the maxSurge an earlier run wrote into a
// pool and did not put back, for the plan.
func (s *SurgeRestore) ResumedText() string {
	own := "the key removed, as the pool set none"
	if s.Had {
		own = fmt.Sprintf("its own maxSurge %v put back", s.Own)
	}
	return fmt.Sprintf("set to %d by an earlier run to hold its bound, restored after the last wave (%s)", s.Wrote, own)
}

// Generation is an object's metadata.generation, read as the API wrote it
// or as a state file holds it.
func Generation(obj map[string]any) int64 {
	n, _ := fleet.Int64(obj, "metadata", "generation")
	return n
}
