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
	}`))
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
	} {
		_, err := rdschema.OpenAPISchema([]byte(schema))
		require.Error(t, err, schema)
		assert.Contains(t, err.Error(), want, schema)
	}
}
