package fleet

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// The counts that bound a document before it is decoded agree with the
// decoded document: exactly for JSON, at least for YAML.
func TestCountsBeforeDecoding(t *testing.T) {
	for _, doc := range []string{
		`{}`, `[]`, `1`, `"s"`, `null`,
		`{"a":1,"b":[true,false,null,-1.5e3],"c":{"d":"x:y,[z]","e":[]}}`,
		`[[],[],{"k":"\"quoted\" \\ ,:["}]`,
		` { "a" : [ 1 , 2 ] , "b" : "v" } `,
	} {
		var v any
		require.NoError(t, json.Unmarshal([]byte(doc), &v), doc)
		want, _ := measure(v)
		assert.Equal(t, want, jsonElements([]byte(doc)), doc)
	}
	for _, doc := range []string{
		"a: 1\nb: [x, y]\nc: {d: e}\n",
		"list:\n- a\n- b: c\n  d: e\n- - nested\n",
		"s: |\n  block\n  text\n",
		"k: some-dashed-value\nurl: https://mirror.example:5000/path\n",
		"? complex\n: value\n",
	} {
		var v any
		require.NoError(t, yaml.Unmarshal([]byte(doc), &v), doc)
		want, _ := measure(v)
		assert.GreaterOrEqual(t, yamlNodes(doc), want, doc)
	}
	for _, expr := range []string{"a=1", "a=1,b=2", "a[3]=x", "a={x,y,z}", "a.b.c=1,d.e[2].f=x", "a=v1.13.6,k[65535]=1"} {
		vals := map[string]any{}
		path, value, _ := strings.Cut(expr, "=")
		require.NoError(t, setPath(vals, path, value, false))
		set, _ := measure(vals)
		assert.GreaterOrEqual(t, strvalsElements(expr), set-1, expr)
	}
}
