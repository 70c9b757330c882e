// The rollout's own record. A pool counts as on its way from an earlier run
// of rollout --apply only when that run wrote it: the record, a ConfigMap in
// the platform's namespace (cozy-system), holds per wave the HelmReleases
// the run patched, each with its UID and the generation the patch gave it.
// Only the operator's identity writes cozy-system (no tenant role reaches
// it), whereas a HelmRelease's managedFields name whatever field manager a
// client chose, cozystack-api passing a tenant's through: they prove
// nothing. A pool whose HelmRelease is another object now (UID), or was
// written since (generation), is not the rollout's write any more.
//
// One record per target, named for it: every run to that target (the same
// command run again after a stop, another selection) reads and adds to the
// same record. The plan reads it here; internal/apply writes it.

package report

import (
	"context"
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
	recordPrefix    = "workerimage-rollout-"
	// recordTargetKey holds the target the record is named for (the CA as
	// the digest of its certificates, never the PEM).
	recordTargetKey = "target"
	// recordMaxBytes bounds a record's data: the API server takes at most
	// 1 MiB of a ConfigMap's data. One HelmRelease takes about 150 bytes, and
	// each appears once (its latest write), so a record holds about 6,900
	// pools.
	recordMaxBytes = 1<<20 - 4<<10
	wavePrefix     = "wave-"
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
}

func (w RecordedWrite) id() string { return w.Namespace + "/" + w.Name }

// RolloutRecord is a rollout's record: the ConfigMap's name, the target it
// is named for, and the writes by wave (key "<run start>.wave-<n>"), each
// HelmRelease once (index: its wave key).
type RolloutRecord struct {
	Name   string
	target string
	waves  map[string][]RecordedWrite
	index  map[string]string
}

// NewRolloutRecord is the empty record of a rollout to target (Defaults
// resolved, as the plan holds it).
func NewRolloutRecord(target RolloutTarget) *RolloutRecord {
	t := struct {
		TalosVersion    string `json:"talosVersion,omitempty"`
		SchematicID     string `json:"schematicID,omitempty"`
		Defaults        bool   `json:"defaults,omitempty"`
		Builtin         bool   `json:"builtin,omitempty"`
		ImageFactoryURL string `json:"imageFactoryURL,omitempty"`
		ImageFactoryCA  string `json:"imageFactoryCA,omitempty"`
	}{target.TalosVersion, target.SchematicID, target.Defaults, target.Builtin, target.FactoryURL, CertificatesDigest(target.FactoryCA)}
	raw, _ := json.Marshal(t)
	sum := sha256.Sum256(raw)
	return &RolloutRecord{Name: recordPrefix + hex.EncodeToString(sum[:])[:10], target: string(raw), waves: map[string][]RecordedWrite{}, index: map[string]string{}}
}

// Ref is the record as the plan names it: ConfigMap <namespace>/<name>.
func (r *RolloutRecord) Ref() string { return "ConfigMap " + RecordNamespace + "/" + r.Name }

// WaveKey is the data key of one wave of a run started at start.
func WaveKey(start time.Time, wave int) string {
	return start.UTC().Format("20060102T150405Z") + "." + wavePrefix + strconv.Itoa(wave)
}

// Add records a write in a wave; an earlier write of the same HelmRelease,
// in any wave, is dropped: the latest write is the one that counts, and the
// record holds each pool once.
func (r *RolloutRecord) Add(waveKey string, w RecordedWrite) {
	if k, ok := r.index[w.id()]; ok {
		var kept []RecordedWrite
		for _, old := range r.waves[k] {
			if old.id() != w.id() {
				kept = append(kept, old)
			}
		}
		if len(kept) == 0 {
			delete(r.waves, k)
		} else {
			r.waves[k] = kept
		}
	}
	r.waves[waveKey] = append(r.waves[waveKey], w)
	r.index[w.id()] = waveKey
}

// Written is the record's write of the HelmRelease namespace/name, if any.
func (r *RolloutRecord) Written(namespace, name string) (RecordedWrite, bool) {
	id := namespace + "/" + name
	for _, w := range r.waves[r.index[id]] {
		if w.id() == id {
			return w, true
		}
	}
	return RecordedWrite{}, false
}

// Len counts the HelmReleases the record holds.
func (r *RolloutRecord) Len() int { return len(r.index) }

// sortWaveKeys puts wave keys in the order they were written: by run, then
// by wave number.
func sortWaveKeys(keys []string) {
	sort.SliceStable(keys, func(i, j int) bool {
		ri, wi := splitWaveKey(keys[i])
		rj, wj := splitWaveKey(keys[j])
		if ri != rj {
			return ri < rj
		}
		return wi < wj
	})
}

func splitWaveKey(k string) (run string, wave int) {
	run, n, _ := strings.Cut(k, "."+wavePrefix)
	wave, _ = strconv.Atoi(n)
	return run, wave
}

// ConfigMap is the record as the API stores it: in RecordNamespace,
// labelled as rollout's, its target and each wave a data key (JSON). It
// refuses a record past the size a ConfigMap holds.
func (r *RolloutRecord) ConfigMap() (*unstructured.Unstructured, error) {
	data := map[string]any{recordTargetKey: r.target}
	size := len(recordTargetKey) + len(r.target)
	for k, ws := range r.waves {
		raw, err := json.Marshal(ws)
		if err != nil {
			return nil, err
		}
		data[k] = string(raw)
		size += len(k) + len(raw)
	}
	if size > recordMaxBytes {
		return nil, fmt.Errorf("the rollout's record %s would hold %d bytes, more than the %d a ConfigMap takes (about 6,900 pools): run the rollout in parts (-n, --flavor, --pool), each part to another target, or delete the record once every pool it holds is on the target", r.Ref(), size, recordMaxBytes)
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

// DecodeRolloutRecord reads a record for target from its ConfigMap: a key
// that is not the target's nor a wave's list of writes as ConfigMap writes
// it is refused, naming the key and the fix.
func DecodeRolloutRecord(target RolloutTarget, cm *unstructured.Unstructured) (*RolloutRecord, error) {
	r := NewRolloutRecord(target)
	data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
	fix := "it is not what rollout --apply writes; delete it (kubectl delete configmap -n " + RecordNamespace + " " + r.Name + "), and the pools it held are on the target by their own values, not waited on"
	delete(data, recordTargetKey)
	keys := SortedKeys(data)
	sortWaveKeys(keys)
	for _, k := range keys {
		run, wave := splitWaveKey(k)
		if run == k || wave < 1 {
			return nil, fmt.Errorf("the rollout's record %s: key %q is not a wave (<run>.wave-<n>): %s", r.Ref(), k, fix)
		}
		var ws []RecordedWrite
		if err := json.Unmarshal([]byte(data[k]), &ws); err != nil {
			return nil, fmt.Errorf("the rollout's record %s: key %q is not a list of HelmReleases written (%v): %s", r.Ref(), k, err, fix)
		}
		for _, w := range ws {
			if w.Namespace == "" || w.Name == "" || w.UID == "" || w.Generation < 1 {
				return nil, fmt.Errorf("the rollout's record %s: key %q holds a write without namespace, name, uid or generation: %s", r.Ref(), k, fix)
			}
			// In the order written: a later write of the same HelmRelease wins.
			r.Add(k, w)
		}
	}
	return r, nil
}

// readRolloutRecord reads the record of a rollout to target from the
// cluster: empty when there is none yet, or no cluster.
func readRolloutRecord(t Target, target RolloutTarget) (*RolloutRecord, error) {
	r := NewRolloutRecord(target)
	if t.Provider == nil {
		return r, nil
	}
	cm, err := fleet.Get(context.Background(), t.Provider, "v1", "ConfigMap", RecordNamespace, r.Name)
	if err != nil {
		return nil, fmt.Errorf("the rollout's record %s: %v", r.Ref(), err)
	}
	if cm == nil {
		return r, nil
	}
	return DecodeRolloutRecord(target, cm)
}

// wrote says whether the HelmRelease is as the rollout's write left it: the
// record holds a write of it, by UID the same object, at the generation it
// is at now. When not, why, in a phrase.
func (r *RolloutRecord) wrote(hr *unstructured.Unstructured) (bool, string) {
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
