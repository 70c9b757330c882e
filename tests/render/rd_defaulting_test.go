package render

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
)

// cozystackReads is what cozystack-api returns for a pool's values and what
// the next edit writes back: its read-time defaulting with the
// ApplicationDefinition's schema (applyDefaults), after it strips the "_" keys.
func cozystackReads(t testing.TB, s *structuralschema.Structural, values map[string]interface{}) map[string]interface{} {
	t.Helper()
	spec := deepCopy(values)
	for k := range spec {
		if strings.HasPrefix(k, "_") {
			delete(spec, k)
		}
	}
	return applyDefaults(spec, s, true).(map[string]interface{})
}

func rdSpecSchema(t testing.TB) *structuralschema.Structural {
	t.Helper()
	s, err := specSchema(render.Get(ourRD(t), "spec.application.openAPISchema").(string))
	require.NoError(t, err, "cozystack-api could not build the schema and would default nothing")
	return s
}

// refusedEitherWay renders values as Flux does (the schema on) and with it
// off: nil when both render, else what refused them.
func refusedEitherWay(t *testing.T, values map[string]interface{}) (withSchema, withoutSchema error) {
	t.Helper()
	_, withSchema = renderPool(t, values, nil)
	_, withoutSchema = renderPoolAs(t, schemaOff, values, nil)
	return withSchema, withoutSchema
}

// A refused osImage stays refused after a round trip through cozystack-api:
// its defaulting reads every value of osImage as written (the generated
// schema gives osImage no type of its own to coerce it to), so null, a
// string, builtin: false or factory: 0 never come back as {} (the HTTP
// import) or builtin: {} (a clone). Their valid neighbours come back as
// written and render.
func TestRefusedOSImageStaysRefusedAfterCozystackReadsIt(t *testing.T) {
	s := rdSpecSchema(t)
	for _, osImage := range []string{"null", "builtin", "''", "false", "0", "[]", "[builtin]",
		"{builtin: false}", "{factory: 0}", "{builtin: null}", "{factory: null}", "{builtin: yes}", "{factory: []}",
		"{builtin: {}, factory: {}}", "{builtin: {schematicID: 7}}", "{bultin: {}}"} {
		t.Run(osImage, func(t *testing.T) {
			values := vals(t, "{cluster: acme, osImage: "+osImage+"}")
			withSchema, off := refusedEitherWay(t, values)
			require.Error(t, withSchema, "refused as written")
			require.Error(t, off, "refused as written, the schema off")
			read := cozystackReads(t, s, values)
			assert.Equal(t, normalise(t, values).(map[string]any)["osImage"], normalise(t, read).(map[string]any)["osImage"], "cozystack-api reads osImage as written")
			withSchema, off = refusedEitherWay(t, read)
			require.Error(t, withSchema, "refused after the round trip")
			require.Error(t, off, "refused after the round trip, the schema off")
		})
	}
	for _, osImage := range []string{"{}", "{builtin: {}}", "{factory: {}}", "{factory: {schematicID: abc, version: v1.13.5, imageFactoryURL: 'https://f.internal'}}"} {
		values := vals(t, "{cluster: acme, osImage: "+osImage+"}")
		read := cozystackReads(t, s, values)
		assert.Equal(t, normalise(t, values), normalise(t, read), osImage)
		_, err := renderPool(t, read, nil)
		require.NoError(t, err, osImage)
	}
}

// The same walk over the other objects and lists of the form: each refused
// value of another kind is either kept as written (still refused) or, for the
// fields below, read as {} or []. Those keep their type in the generated
// schema because the dashboard builds their fields from it (upstream's form
// has them, the GPU picker among them) and a value of another kind is not a
// choice of path for them: this list pins that decision, so a new object or
// list in the schema is a deliberate one.
func TestWhatCozystackReadsAsEmptyIsKnown(t *testing.T) {
	s := rdSpecSchema(t)
	var schema map[string]interface{}
	require.NoError(t, json.Unmarshal([]byte(render.Get(ourRD(t), "spec.application.openAPISchema").(string)), &schema))
	var paths []string
	var walk func(prefix string, props map[string]interface{})
	walk = func(prefix string, props map[string]interface{}) {
		for name, node := range props {
			n := node.(map[string]interface{})
			if n["type"] == "object" || n["type"] == "array" || n["allOf"] != nil {
				paths = append(paths, prefix+name)
			}
			if sub, ok := n["properties"].(map[string]interface{}); ok && n["type"] == "object" {
				walk(prefix+name+".", sub)
			}
		}
	}
	walk("", schema["properties"].(map[string]interface{}))
	sort.Strings(paths)
	readAsEmpty := map[string]bool{}
	for _, path := range paths {
		for _, bad := range []interface{}{"x", 0, false, nil} {
			values := map[string]interface{}{"cluster": "acme"}
			cur := values
			parts := strings.Split(path, ".")
			for _, p := range parts[:len(parts)-1] {
				next := map[string]interface{}{}
				cur[p] = next
				cur = next
			}
			cur[parts[len(parts)-1]] = bad
			withSchema, off := refusedEitherWay(t, values)
			if withSchema == nil && off == nil {
				continue
			}
			read := cozystackReads(t, s, values)
			if fmt.Sprint(normalise(t, read)) == fmt.Sprint(normalise(t, values)) {
				continue
			}
			readAsEmpty[path] = true
		}
	}
	require.Contains(t, paths, "osImage", "the walk above reaches osImage")
	assert.Equal(t, map[string]bool{
		"gpus": true, "images": true, "kubelet": true, "resources": true, "roles": true, "talos": true, "talos.registryMirrors": true,
	}, readAsEmpty, "a refused value of another kind that cozystack-api reads as {} or []")
}
