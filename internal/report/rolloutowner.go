// Who moved a pool to the target: a pool on the target by values its
// tenant wrote is not this rollout's, one this tool's earlier run moved is
// (it is waited for). The API server records, per field, the manager that
// last changed it (metadata.managedFields); rollout patches under
// FieldManager.

package report

import (
	"regexp"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// maxManagedFields bounds the managedFields entries read: the API server
// keeps one per manager and operation, and anyone who writes the object
// can add more.
const maxManagedFields = 256

// valuesField is a values path the chart names as where a flavor's part
// came from (talos.version, osImage.builtin.version); any other source (a
// default, what the pool runs, a platform default) is not in spec.values.
var valuesField = regexp.MustCompile(`^(talos|osImage)(\.[A-Za-z]+)+$`)

// writtenByRollout: FieldManager last wrote the fields of the HelmRelease's
// spec.values that put the pool on the target (the fields its flavor's
// parts come from, osImage.builtin for --to-builtin, talos.imageFactoryCA
// for --factory-ca), as managedFields records it: its entry owns each, and
// no other manager's entry owns one later. A pool whose target comes from
// elsewhere (a default, valuesFrom, a tenant's edit) is not.
func writtenByRollout(hr *unstructured.Unstructured, f *chartFacts, target RolloutTarget) bool {
	if hr == nil || f == nil {
		return false
	}
	ds := f.DiskSource
	var fields []string
	for _, part := range []struct {
		set    bool
		source string
	}{
		{target.TalosVersion != "", string(ds.VersionSource)},
		{target.SchematicID != "", string(ds.SchematicIDSource)},
		{target.FactoryURL != "", string(ds.ImageFactoryURLSource)},
	} {
		if !part.set {
			continue
		}
		if !valuesField.MatchString(part.source) {
			return false
		}
		fields = append(fields, part.source)
	}
	if target.Builtin {
		fields = append(fields, "osImage.builtin")
	}
	if target.FactoryCA != "" {
		fields = append(fields, "talos.imageFactoryCA")
	}
	if len(fields) == 0 {
		return false
	}
	entries, _, _ := unstructured.NestedSlice(hr.Object, "metadata", "managedFields")
	if len(entries) > maxManagedFields {
		return false
	}
	for _, field := range fields {
		if !ownedLastBy(entries, FieldManager, append([]string{"spec", "values"}, strings.Split(field, ".")...)) {
			return false
		}
	}
	return true
}

// ownedLastBy: an entry of manager owns path, and no entry of another
// manager owns it at a later time (or at a time not recorded).
func ownedLastBy(entries []any, manager string, path []string) bool {
	var ours time.Time
	found := false
	for _, e := range entries {
		m, _ := e.(map[string]any)
		if m["manager"] != manager || !owns(m, path) {
			continue
		}
		if at := entryTime(m); !found || at.After(ours) {
			ours = at
		}
		found = true
	}
	if !found {
		return false
	}
	for _, e := range entries {
		m, _ := e.(map[string]any)
		if m["manager"] == manager || !owns(m, path) {
			continue
		}
		if at := entryTime(m); at.IsZero() || !at.Before(ours) {
			return false
		}
	}
	return true
}

// owns: the entry's fieldsV1 holds path (f:spec, f:values, ...).
func owns(entry map[string]any, path []string) bool {
	node, _ := entry["fieldsV1"].(map[string]any)
	for _, k := range path {
		next, ok := node["f:"+k].(map[string]any)
		if !ok {
			return false
		}
		node = next
	}
	return true
}

func entryTime(entry map[string]any) time.Time {
	s, _ := entry["time"].(string)
	at, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}
	}
	return at
}
