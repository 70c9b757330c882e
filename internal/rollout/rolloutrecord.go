// The rollout's record of one target: named for the target and holding it
// (the record itself, its keys and its read are internal/report's: pins
// reads every record too). The plan reads it here; internal/apply writes it.

package rollout

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/cozystack/golden-worker-images/internal/report"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// NewRolloutRecord is the empty record of a rollout to target (Defaults
// resolved, as the plan holds it).
func NewRolloutRecord(target RolloutTarget) *report.RolloutRecord {
	t := struct {
		TalosVersion    string `json:"talosVersion,omitempty"`
		SchematicID     string `json:"schematicID,omitempty"`
		Defaults        bool   `json:"defaults,omitempty"`
		Builtin         bool   `json:"builtin,omitempty"`
		ImageFactoryURL string `json:"imageFactoryURL,omitempty"`
		ImageFactoryCA  string `json:"imageFactoryCA,omitempty"`
	}{target.TalosVersion, target.SchematicID, target.Defaults, target.Builtin, target.FactoryURL, report.CertificatesDigest(target.FactoryCA)}
	raw, _ := json.Marshal(t)
	sum := sha256.Sum256(raw)
	return report.RecordNamed(report.RecordPrefix+hex.EncodeToString(sum[:])[:10], string(raw))
}

// DecodeRolloutRecord reads a record for target from its ConfigMap. One
// whose target is not this one (or that names none) is not this target's:
// the record read is empty, and Ignored says why. A key that is not a
// HelmRelease's write (or a wave's list of writes, as releases before
// wrote them) is refused, naming the key and the fix.
func DecodeRolloutRecord(target RolloutTarget, cm *unstructured.Unstructured) (*report.RolloutRecord, error) {
	return report.DecodeRecordInto(NewRolloutRecord(target), cm)
}

// readRolloutRecord reads the record of a rollout to target from the
// cluster: empty when there is none yet, or no cluster.
func readRolloutRecord(t report.Target, target RolloutTarget) (*report.RolloutRecord, error) {
	r := NewRolloutRecord(target)
	if t.Provider == nil {
		return r, nil
	}
	cm, err := fleet.Get(context.Background(), t.Provider, "v1", "ConfigMap", report.RecordNamespace, r.Name)
	if err != nil {
		return nil, fmt.Errorf("the rollout's record %s: %v", r.Ref(), err)
	}
	if cm == nil {
		return r, nil
	}
	return DecodeRolloutRecord(target, cm)
}

// surgeToRestore is the maxSurge the record's write of hr bounded its roll
// with, and the pool's own to put back: only while the write is the
// rollout's as hr is now (wrote), nil otherwise or when it wrote none.
func surgeToRestore(r *report.RolloutRecord, hr *unstructured.Unstructured) *report.SurgeRestore {
	if ours, _ := r.Wrote(hr); !ours {
		return nil
	}
	w, _ := r.Written(hr.GetNamespace(), hr.GetName())
	return w.Surge
}
