// The values a rollout writes: each part of a pool's flavor is set at the
// field the chart says it came from (the pool's own osImage, the osImage
// recorded when the pool was created, else talos.*), as a JSON merge patch
// of the HelmRelease's spec.values. The chart then renders the patched
// values, and only its answer says whether the change reached the pool.

package rollout

import (
	"strconv"
	"strings"

	"github.com/cozystack/golden-worker-images/internal/report"

	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// recordedOSImage start the sources the chart names for a field of the
// osImage recorded when the pool was created, from _cluster or from the
// catalog's published defaults (kubernetes-nodes.recordedSource).
var recordedOSImage = []string{"the platform default _cluster.osImage.", "the default osImage."}

// valuesEdit builds a pool's change: the merge patch of its spec.values and
// each field it sets.
type valuesEdit struct {
	patch   map[string]any
	changes []ValueChange
	// recorded is the osImage the pool was created with (its creation
	// record), nil when none.
	recorded map[string]any
	// surge is the maxSurge the change writes to keep the pool's roll
	// within a bound (nil: none), and surgeNote says so.
	surge     *int64
	surgeNote string
}

func newValuesEdit(createdWith *report.CreatedWith) *valuesEdit {
	e := &valuesEdit{patch: map[string]any{}}
	if createdWith != nil && createdWith.OSImage != "" {
		var os map[string]any
		if yaml.Unmarshal([]byte(createdWith.OSImage), &os) == nil && os != nil {
			e.recorded = os
		}
	}
	return e
}

// osImagePathOf says which osImage path (builtin, factory) a field came
// from, and whether that osImage was the one recorded at creation; ok is
// false for a field the chart took from talos.*, a default, or a platform
// default other than osImage.
func osImagePathOf(source, field string) (path string, recorded, ok bool) {
	for _, p := range []string{"builtin", "factory"} {
		if source == "osImage."+p+"."+field {
			return p, false, true
		}
		for _, prefix := range recordedOSImage {
			if strings.HasPrefix(source, prefix+p+"."+field+" ") {
				return p, true, true
			}
		}
	}
	return "", false, false
}

// set moves one field of the pool's flavor (schematicID, version,
// imageFactoryURL), now cur, to value: at osImage.<path>.<field> when the
// chart took it from there (the recorded osImage becoming the pool's own,
// which it then wins over), else at talos.<field>, which the chart falls
// back to.
func (e *valuesEdit) set(field string, cur report.Sourced, value string) {
	if cur.Value == value {
		return
	}
	path := []string{"talos", field}
	if p, recorded, ok := osImagePathOf(cur.Source, field); ok && (!recorded || e.recorded != nil) {
		if recorded {
			e.takeRecorded()
		}
		path = []string{"osImage", p, field}
	}
	report.SetIn(e.patch, path, value)
	e.changes = append(e.changes, ValueChange{Field: strings.Join(path, "."), From: cur.Value, Source: cur.Source, To: value})
}

// setCA sets talos.imageFactoryCA, the one field the chart reads a pool's
// own CA from, to the target's PEM, unless the pool has that PEM already;
// cur is the CA the pool's import trusts now (nil: none), its ConfigMap as
// the chart names it.
func (e *valuesEdit) setCA(cur *report.Sourced, own string, target RolloutTarget) {
	if own == target.FactoryCA {
		return
	}
	from, source := "", "none: the import trusts CDI's system store alone"
	if cur != nil {
		from, source = cur.Value, cur.Source
	}
	report.SetIn(e.patch, []string{"talos", "imageFactoryCA"}, target.FactoryCA)
	e.changes = append(e.changes, ValueChange{Field: "talos.imageFactoryCA", From: from, Source: source, To: "the PEM of " + report.OrNone(target.FactoryCAFrom)})
}

// setSurge writes the pool value maxSurge, now cur (as rendered; nil
// unset), as to: a whole number, as the chart writes it into the
// MachineDeployment's rolling update.
func (e *valuesEdit) setSurge(cur *intstr.IntOrString, values map[string]any, to int64) {
	e.surge = &to
	e.patch["maxSurge"] = to
	e.changes = append(e.changes, ValueChange{Field: "maxSurge", From: surgeText(cur), Source: surgeSource(values), To: strconv.FormatInt(to, 10)})
}

// takeRecorded writes the recorded osImage as the pool's own, once, so a
// field of it can change: the chart reads the record only for a pool
// without an osImage of its own.
func (e *valuesEdit) takeRecorded() {
	if _, ok := e.patch["osImage"]; ok {
		return
	}
	e.patch["osImage"] = report.CopyMap(e.recorded)
}

// switchToBuiltin sets osImage to clone the golden of the flavor d resolves
// (builtinFor, as adopt proposes), dropping any other osImage path the
// pool's values hold, and returns d's flavor with the sources it has once
// switched, for the flavor's own change to follow.
func (e *valuesEdit) switchToBuiltin(d *report.DiskReport, values map[string]any) (schematicID, version report.Sourced) {
	builtin := report.BuiltinFor(d)
	os := map[string]any{"builtin": builtin}
	if own, ok := values["osImage"].(map[string]any); ok {
		for _, k := range report.SortedKeys(own) {
			if k != "builtin" {
				os[k] = nil
				e.changes = append(e.changes, ValueChange{Field: "osImage." + k, Removed: true, Source: "the pool's own osImage: a pool clones or imports, not both"})
			}
		}
	}
	e.patch["osImage"] = os
	schematicID, version = report.Sourced{Value: d.SchematicID.Value, Source: "talos.schematicID"}, report.Sourced{Value: d.Version.Value, Source: "talos.version"}
	if _, ok := builtin["schematicID"]; ok {
		schematicID.Source = "osImage.builtin.schematicID"
	}
	if _, ok := builtin["version"]; ok {
		version.Source = "osImage.builtin.version"
	}
	return schematicID, version
}

// MergePatch applies a JSON merge patch (RFC 7386) to values, as the API
// server applies one to a document: a map merges key by key, null removes
// a key, anything else replaces. Neither argument is written to. It works
// on the decoded values themselves, so every number keeps the type the API
// read it as.
func MergePatch(values, patch map[string]any) map[string]any {
	out := make(map[string]any, len(values)+len(patch))
	for k, v := range values {
		out[k] = v
	}
	for k, v := range patch {
		switch p := v.(type) {
		case nil:
			delete(out, k)
		case map[string]any:
			target, _ := out[k].(map[string]any)
			out[k] = MergePatch(target, p)
		default:
			out[k] = v
		}
	}
	return out
}
