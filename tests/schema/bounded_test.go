package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/orderedjson"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A chart's schema costs a values file at most 1.5x with validation on what
// it costs with it off (tests/render BenchmarkSchemaOnAgainstOff). A JSON
// Schema validator walks every item a keyword describes, even of a list
// already past its maxItems, and makes an error of each item of the wrong
// type; so no keyword that walks every item of a list (items, uniqueItems,
// additionalItems, contains) or every key of a map (additionalProperties,
// patternProperties, propertyNames) sits beside the bound: it sits under
// "then", behind an "if" holding the bound, and the bound beside it refuses a
// list or map past it without a walk. The schema still describes every item
// and key (a form builder resolves if/then), and a list within its bound is
// checked item by item as before.
//
// Every list has a bound (maxItems); every map whose keys a keyword walks has
// one (maxProperties). "additionalProperties: false" walks no schema: a map
// that takes only its listed keys names every unknown one in one error, for
// no more than the render costs without the schema (BenchmarkSchemaOnAgainstOff,
// unknown keys), and stays beside its properties, whose names it needs.
var (
	listWalkers = []string{"items", "uniqueItems", "additionalItems", "contains"}
	mapWalkers  = []string{"additionalProperties", "patternProperties", "propertyNames"}
)

// guard moves node's walking keywords under "then", behind an "if" holding
// its bound, where the first of them stood.
func guard(node *orderedjson.Object, bound string, walkers []string) *orderedjson.Object {
	moved := map[string]bool{}
	for _, w := range walkers {
		if v, ok := node.Lookup(w); ok && !isBool(v) {
			moved[w] = true
		}
	}
	if len(moved) == 0 {
		return node
	}
	out, then := &orderedjson.Object{}, &orderedjson.Object{}
	for _, m := range node.Members {
		if !moved[m.Key] {
			out.Set(m.Key, m.Value)
			continue
		}
		if len(then.Members) == 0 {
			cond := &orderedjson.Object{}
			cond.Set(bound, node.Get(bound))
			out.Set("if", cond)
			out.Set("then", then)
		}
		then.Set(m.Key, m.Value)
	}
	return out
}

func isBool(v any) bool { _, ok := v.(bool); return ok }

// boundWalks rewrites a schema so that every walking keyword sits behind its
// bound; a schema already so is returned as it is.
func boundWalks(v any) any {
	switch v := v.(type) {
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = boundWalks(x)
		}
		return out
	case *orderedjson.Object:
		node := &orderedjson.Object{}
		for _, m := range v.Members {
			node.Set(m.Key, boundWalks(m.Value))
		}
		if _, ok := node.Lookup("if"); ok {
			return node
		}
		if _, ok := node.Lookup("maxItems"); ok {
			node = guard(node, "maxItems", listWalkers)
		}
		if _, ok := node.Lookup("maxProperties"); ok {
			node = guard(node, "maxProperties", mapWalkers)
		}
		return node
	}
	return v
}

var schemaCharts = []string{poolChart, catalogChart, platformChart}

// Every chart schema is as boundWalks writes it. After an edit of a schema,
// `go test ./tests/schema -run TestSchemasBoundEveryWalk -update` rewrites it
// so; a list or map left without a bound fails below.
func TestSchemasBoundEveryWalk(t *testing.T) {
	for _, chart := range schemaCharts {
		path := filepath.Join(support.RepoRoot(), chart, "values.schema.json")
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		doc, err := orderedjson.Decode(dec)
		require.NoError(t, err, path)
		flat, err := orderedjson.Marshal(boundWalks(doc))
		require.NoError(t, err)
		var want bytes.Buffer
		require.NoError(t, json.Indent(&want, flat, "", "  "))
		want.WriteByte('\n')
		if *support.Update {
			require.NoError(t, os.WriteFile(path, want.Bytes(), 0o644))
			continue
		}
		assert.Equal(t, want.String(), string(raw), "%s: a keyword walks a list's items or a map's keys beside its bound; rewrite it with -update", path)

		// The form's keywords (x-form) walk where their node does.
		var plain any
		require.NoError(t, json.Unmarshal([]byte(formText(t, chart)), &plain))
		for _, problem := range unboundedWalks(plain, "#") {
			t.Errorf("%s: %s", path, problem)
		}
	}
}

// unboundedWalks lists each walking keyword not behind a bound: at a node
// without one, or beside it rather than under its "then".
func unboundedWalks(v any, at string) []string {
	var out []string
	switch v := v.(type) {
	case []any:
		for i, x := range v {
			out = append(out, unboundedWalks(x, fmt.Sprintf("%s/%d", at, i))...)
		}
	case map[string]any:
		for _, c := range []struct {
			bound   string
			walkers []string
		}{{"maxItems", listWalkers}, {"maxProperties", mapWalkers}} {
			for _, w := range c.walkers {
				if _, ok := v[w]; !ok {
					continue
				}
				if isBool(v[w]) {
					continue
				}
				out = append(out, fmt.Sprintf("%s/%s walks every %s outside a %q bound's then", at, w, map[string]string{"maxItems": "item", "maxProperties": "key"}[c.bound], c.bound))
			}
		}
		if then, ok := v["then"].(map[string]any); ok {
			cond, _ := v["if"].(map[string]any)
			for _, c := range []struct {
				bound   string
				walkers []string
			}{{"maxItems", listWalkers}, {"maxProperties", mapWalkers}} {
				for _, w := range c.walkers {
					if _, ok := then[w]; ok && (len(cond) != 1 || cond[c.bound] == nil || cond[c.bound] != v[c.bound]) {
						out = append(out, fmt.Sprintf("%s/then/%s is behind if %v, not the node's own %s", at, w, cond, c.bound))
					}
				}
			}
		}
		if v["type"] == "array" && v["maxItems"] == nil {
			out = append(out, at+" is a list without maxItems")
		}
		for k, x := range v {
			if k == "then" {
				// Its keywords are checked above; what they hold is walked.
				if then, ok := x.(map[string]any); ok {
					for tk, tx := range then {
						out = append(out, unboundedWalks(tx, at+"/then/"+tk)...)
					}
				}
				continue
			}
			out = append(out, unboundedWalks(x, at+"/"+strings.ReplaceAll(k, "/", "~1"))...)
		}
	}
	return out
}

// The bound's guard changes what a schema refuses nothing: a list or map
// past its bound is refused by the bound alone, one within it item by item.
func TestBoundedWalksStillCheckEveryItem(t *testing.T) {
	pool := compile(t, poolChart)
	checkCases(t, pool,
		support.WithCluster("{roles: [a, b]}", "{talos: {registryMirrors: {docker.io: {endpoints: ['https://m.example']}}}}"),
		support.WithCluster(
			"{roles: [1]}", "{roles: [a, a]}", "{roles: ["+strings.TrimSuffix(strings.Repeat("a,", 33), ",")+"]}",
			"{talos: {registryMirrors: {docker.io: {endpoints: [1]}}}}",
			"{talos: {registryMirrors: {'bad host!': {endpoints: ['https://m.example']}}}}",
			"{osimage: {}}", "{osImage: {bultin: {}}}",
		))
	catalog := compile(t, catalogChart)
	checkCases(t, catalog,
		[]string{"{images: [{schematicID: abc, version: v1.13.6, additionalStorageClasses: [fast]}]}"},
		[]string{"{images: [1]}", "{images: [{schematicID: abc}]}", "{images: [{schematicID: abc, version: v1.13.6, additionalStorageClasses: [fast, fast]}]}", "{cloneSubjects: [{kind: Nobody, name: x}]}"})
	platform := compile(t, platformChart)
	checkCases(t, platform,
		[]string{"{registries: {mirrors: {docker.io: {endpoints: ['https://m.example']}}}}"},
		[]string{"{registries: {mirrors: {docker.io: {endpoints: [1]}}}}", "{bundles: {enabledPackages: [1]}}"})

	// The message of a refused item still names it.
	err := pool.Validate(document(t, "{cluster: acme, roles: [ok, 'Not_A_Label']}"))
	require.Error(t, err)
	assert.Contains(t, fmt.Sprintf("%#v", err), "/roles/1")
}
