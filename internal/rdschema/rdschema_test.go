package rdschema_test

import (
	"testing"

	"github.com/cozystack/golden-worker-images/internal/rdschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// References are inlined (a description beside one kept over the
// definition's), $schema and definitions go, a size bound's then is merged
// into its node, and key order is the file's.
func TestOpenAPISchema(t *testing.T) {
	got, err := rdschema.OpenAPISchema([]byte(`{
	  "$schema": "http://json-schema.org/draft-07/schema#",
	  "type": "object",
	  "properties": {
	    "z": {"$ref": "#/definitions/q", "description": "mine"},
	    "a": {"type": "array", "maxItems": 3, "if": {"maxItems": 3}, "then": {"items": {"$ref": "#/definitions/q"}}},
	    "b": {"type": "array", "maxItems": 3, "if": {"maxItems": 2}, "then": {"items": {}}},
	    "c": {"type": "object", "maxProperties": 2, "if": {"maxProperties": 2}, "then": {"additionalProperties": {"type": "string"}}, "else": {}}
	  },
	  "definitions": {"q": {"type": "string", "description": "theirs", "pattern": "<&>"}}
	}`), nil)
	require.NoError(t, err)
	assert.Equal(t, `{"type":"object","properties":{`+
		`"z":{"type":"string","description":"mine","pattern":"<&>"},`+
		`"a":{"type":"array","maxItems":3,"items":{"type":"string","description":"theirs","pattern":"<&>"}},`+
		`"b":{"type":"array","maxItems":3,"if":{"maxItems":2},"then":{"items":{}}},`+
		`"c":{"type":"object","maxProperties":2,"if":{"maxProperties":2},"then":{"additionalProperties":{"type":"string"}},"else":{}}}}`+"\n", string(got))
}

// What cannot be written in the form cozystack-api reads is refused, naming
// the pool chart's schema and what is wrong.
func TestOpenAPISchemaRefuses(t *testing.T) {
	for schema, want := range map[string]string{
		`{`:     rdschema.PoolSchema + " is not JSON",
		`{} {}`: "text after the schema",
		`[]`:    "is not a JSON object",
		`{"properties": {"a": {"$ref": "#/definitions/missing"}}}`:                                                         `$ref "#/definitions/missing" names no entry of definitions`,
		`{"properties": {"a": {"$ref": "other.json#/x"}}, "definitions": {}}`:                                              `$ref "other.json#/x" names no entry of definitions`,
		`{"properties": {"a": {"$ref": "#/definitions/r"}}, "definitions": {"r": {"items": {"$ref": "#/definitions/r"}}}}`: "a recursive definition cannot be inlined",
		`{"type": "array", "maxItems": 2, "items": {}, "if": {"maxItems": 2}, "then": {"items": {}}}`:                      `a size bound's then sets "items", which its node sets too`,
		`{"properties": {"o": {"type": "object", "x-not-defaulted": "yes"}}}`:                                              `x-not-defaulted is yes: write it as true, or leave it out`,
		`{"properties": {"o": {"allOf": [{}], "x-not-defaulted": true}}}`:                                                  `a node marked x-not-defaulted has an allOf of its own`,
	} {
		_, err := rdschema.OpenAPISchema([]byte(schema), nil)
		require.Error(t, err, schema)
		assert.Contains(t, err.Error(), want, schema)
	}
}

// The tenant's form holds no internal key: Helm's global, the chart's
// dependencies' keys and the platform's "_" keys leave the top level, and
// only there (a nested key of the same name is the tenant's).
func TestOpenAPISchemaLeavesInternalKeysOut(t *testing.T) {
	internal, err := rdschema.InternalKeys([]byte("name: pool\ndependencies:\n  - {name: lib-a, version: 0.1.0}\n  - {name: lib-b}\n"))
	require.NoError(t, err)
	assert.Equal(t, []string{"global", "lib-a", "lib-b"}, internal)
	got, err := rdschema.OpenAPISchema([]byte(`{"type": "object", "required": ["cluster"], "properties": {
	  "global": {"type": "object"}, "_cluster": {"type": "object"}, "cluster": {"type": "string"},
	  "lib-a": {"type": "object"}, "lib-b": {"type": "object"}, "lib-c": {"type": "object"},
	  "talos": {"type": "object", "properties": {"global": {"type": "string"}, "_x": {"type": "string"}}}}}`), internal)
	require.NoError(t, err)
	assert.Equal(t, `{"type":"object","required":["cluster"],"properties":{"cluster":{"type":"string"},"lib-c":{"type":"object"},`+
		`"talos":{"type":"object","properties":{"global":{"type":"string"},"_x":{"type":"string"}}}}}`+"\n", string(got))

	_, err = rdschema.InternalKeys([]byte("dependencies: [{version: 1}]"))
	assert.ErrorContains(t, err, "a dependency without a name")
	_, err = rdschema.InternalKeys([]byte("dependencies: {a: b}"))
	assert.ErrorContains(t, err, rdschema.PoolChart+"/Chart.yaml")
}

// A node marked x-not-defaulted keeps its annotations and moves the rest
// into a one-element allOf, its references inlined; the marker goes.
func TestOpenAPISchemaKeepsMarkedNodesAsWritten(t *testing.T) {
	got, err := rdschema.OpenAPISchema([]byte(`{"properties": {"o": {
	  "type": "object", "description": "d", "additionalProperties": false, "maxProperties": 1,
	  "properties": {"a": {"$ref": "#/definitions/q"}}, "x-hint": 1, "x-not-defaulted": true}},
	  "definitions": {"q": {"type": "string"}}}`), nil)
	require.NoError(t, err)
	assert.Equal(t, `{"properties":{"o":{"description":"d","x-hint":1,"allOf":[`+
		`{"type":"object","additionalProperties":false,"maxProperties":1,"properties":{"a":{"type":"string"}}}]}}}`+"\n", string(got))
}

// A node's x-form keywords take its place in the node, at every depth
// (inside a size bound's then, a reference's target and x-form itself), and
// the rest is as OpenAPISchema writes it; Form merges them and changes
// nothing else.
func TestFormKeywordsAreMergedInPlace(t *testing.T) {
	schema := []byte(`{
	  "$schema": "http://json-schema.org/draft-07/schema#",
	  "type": "object",
	  "x-form": {"required": ["a"], "allOf": [{"anyOf": [{"not": {"required": ["b"]}}, {"required": ["a"]}]}]},
	  "properties": {
	    "a": {"type": "string", "x-form": {"pattern": "^x$", "maxLength": 3}, "description": "d"},
	    "b": {"$ref": "#/definitions/q"},
	    "c": {"type": "array", "maxItems": 2, "if": {"maxItems": 2}, "then": {"items": {"type": "string"}, "x-form": {"uniqueItems": true}}},
	    "o": {"type": "object", "x-form": {"maxProperties": 1}, "x-not-defaulted": true}
	  },
	  "definitions": {"q": {"type": "integer", "x-form": {"minimum": 1}}}
	}`)
	got, err := rdschema.OpenAPISchema(schema, nil)
	require.NoError(t, err)
	assert.Equal(t, `{"type":"object","required":["a"],"allOf":[{"anyOf":[{"not":{"required":["b"]}},{"required":["a"]}]}],"properties":{`+
		`"a":{"type":"string","pattern":"^x$","maxLength":3,"description":"d"},`+
		`"b":{"type":"integer","minimum":1},`+
		`"c":{"type":"array","maxItems":2,"items":{"type":"string"},"uniqueItems":true},`+
		`"o":{"allOf":[{"type":"object","maxProperties":1}]}}}`+"\n", string(got))

	form, err := rdschema.Form(schema, "s.json")
	require.NoError(t, err)
	assert.Contains(t, string(form), `"b":{"$ref":"#/definitions/q"}`, "Form keeps references")
	assert.Contains(t, string(form), `"definitions":{"q":{"type":"integer","minimum":1}}`)
	assert.Contains(t, string(form), `"c":{"type":"array","maxItems":2,"if":{"maxItems":2},"then":{"items":{"type":"string"},"uniqueItems":true}}`, "Form keeps size bounds as written")
	assert.NotContains(t, string(form), "x-form")

	for schema, want := range map[string]string{
		`{"type": "string", "pattern": "a", "x-form": {"pattern": "b"}}`: `x-form sets "pattern", which its node sets too`,
		`{"x-form": {"x-form": {}}}`:                                     `x-form sets "x-form"`,
		`{"x-form": ["pattern"]}`:                                        "not an object of keywords",
		`{"x-form": {"pattern": "^a$"}} {}`:                              "text after the schema",
	} {
		_, err := rdschema.Form([]byte(schema), "s.json")
		require.Error(t, err, schema)
		assert.Contains(t, err.Error(), want, schema)
		_, err = rdschema.OpenAPISchema([]byte(schema), nil)
		require.Error(t, err, schema)
		assert.Contains(t, err.Error(), want, schema)
	}
}
