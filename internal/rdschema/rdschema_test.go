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
