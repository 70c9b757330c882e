package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/cli/values"
	"helm.sh/helm/v3/pkg/getter"
)

// -f files layer exactly as Helm's own -f does (helm's pkg/cli/values,
// MergeValues, run here beside ours on the same files): later files win,
// maps merge key by key, a list or a scalar replaces, a null is kept for the
// render to drop, a map replaces a scalar and back, "-" reads standard input.
func TestValuesFilesLayerAsHelmLayersThem(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
		return p
	}
	pool := write("pool.yaml", `cluster: acme
diskSize: 20Gi
roles: [ingress-nginx, monitoring]
talos:
  version: v1.13.5
  registryMirrors:
    docker.io: {endpoints: [https://a.example]}
resources: {cpu: 2, memory: 4Gi}
osImage: {builtin: {}}
`)
	over := write("over.yaml", `diskSize: 25Gi
roles: [ingress-nginx]
talos:
  registryMirrors:
    ghcr.io: {endpoints: [https://b.example]}
resources: null
osImage: {factory: {version: v1.13.6}}
minReplicas: 2
`)
	scalar := write("scalar.yaml", "talos: plain\nmaxReplicas: 3\n")
	mapAgain := write("map.yaml", "talos: {schematicID: abc}\n")
	empty := write("empty.yaml", "# only a comment\n")
	stdin := "maxReplicas: 7\nosImage: {factory: {schematicID: def}}\n"

	for _, files := range [][]string{
		{pool},
		{pool, over},
		{over, pool},
		{pool, over, scalar},
		{pool, scalar, mapAgain},
		{pool, empty, over},
		{pool, Stdin},
		{pool, Stdin, over},
	} {
		got, err := ReadValuesFiles(files, strings.NewReader(stdin))
		require.NoError(t, err, files)

		// Helm reads "-" from os.Stdin itself.
		in := write("stdin", stdin)
		f, err := os.Open(in)
		require.NoError(t, err)
		saved := os.Stdin
		os.Stdin = f
		want, err := (&values.Options{ValueFiles: files}).MergeValues(getter.Providers{})
		os.Stdin = saved
		_ = f.Close()
		require.NoError(t, err, files)
		assert.Equal(t, want, got, "%v layer as helm -f layers them", files)
	}

	_, err := ReadValuesFiles([]string{Stdin, Stdin}, strings.NewReader(stdin))
	assert.ErrorContains(t, err, "standard input) is given twice")
	_, err = ReadValuesFiles([]string{empty}, strings.NewReader(""))
	assert.ErrorContains(t, err, "is empty")
	_, err = ReadValuesFiles([]string{Stdin}, strings.NewReader("- a\n"))
	assert.ErrorContains(t, err, "values from standard input is a list, not a map")
	_, err = ReadValuesFiles([]string{Stdin}, strings.NewReader(strings.Repeat("#", render.MaxValuesBytes+1)))
	assert.ErrorContains(t, err, "values from standard input is larger than 1048576 bytes")

	// A file is bounded as standard input is: one byte over is refused
	// before it is parsed, a device that never ends is not read to its end,
	// and a file at the bound is read.
	atBound := "cluster: acme\n"
	atBound += strings.Repeat("#", render.MaxValuesBytes-len(atBound))
	dir = t.TempDir()
	over = filepath.Join(dir, "over.yaml")
	require.NoError(t, os.WriteFile(over, []byte(atBound+"#"), 0o600))
	_, err = ReadValuesFiles([]string{over}, strings.NewReader(""))
	assert.ErrorContains(t, err, "values "+over+" is larger than 1048576 bytes")
	if _, statErr := os.Stat("/dev/zero"); statErr == nil {
		_, err = ReadValuesFiles([]string{"/dev/zero"}, strings.NewReader(""))
		assert.ErrorContains(t, err, "values /dev/zero is larger than 1048576 bytes")
	}
	exact := filepath.Join(dir, "exact.yaml")
	require.NoError(t, os.WriteFile(exact, []byte(atBound), 0o600))
	vals, err := ReadValuesFiles([]string{exact}, strings.NewReader(""))
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"cluster": "acme"}, vals)
}

// The nearest known key is a misspelling's, and nothing is suggested for a
// key far from every known one.
func TestNearestWordSuggestsOnlyMisspellings(t *testing.T) {
	keys := []string{"osImage", "talos", "diskSize", "storageClass", "schematicID"}
	for word, want := range map[string]string{
		"osimage":      "osImage",
		"osImgae":      "osImage",
		"disksize":     "diskSize",
		"storageclass": "storageClass",
		"storagClass":  "storageClass",
		"schematicId":  "schematicID",
		"talso":        "talos",
		"replicas":     "",
		"x":            "",
		"zz":           "",
	} {
		assert.Equal(t, want, NearestWord(word, keys), word)
	}
	assert.Empty(t, NearestWord(strings.Repeat("a", 300), keys), "a long word costs nothing")
}

// Unknown keys are found in maps the schema closes, beside maps a schema
// opens (additionalProperties a schema), and in list items.
func TestSuggestKeysWalksTheSchema(t *testing.T) {
	schema := []byte(`{"type":"object","additionalProperties":false,"properties":{
		"mirrors":{"type":"object","additionalProperties":{"type":"object"}},
		"talos":{"type":"object","additionalProperties":false,"properties":{"schematicID":{},"version":{}}},
		"images":{"type":"array","items":{"type":"object","additionalProperties":false,"properties":{"retire":{},"version":{}}}}}}`)
	got := SuggestKeys(schema, map[string]any{
		"mirors":    map[string]any{},
		"mirrors":   map[string]any{"docker.io": map[string]any{}},
		"talos":     map[string]any{"schematicId": "x", "verison": "v1"},
		"images":    []any{map[string]any{"retier": true}, map[string]any{"version": "v1"}},
		"elsewhere": 1,
	})
	assert.Equal(t, []KeySuggestion{
		{Path: "images[0].retier", Key: "retier", Nearest: "retire"},
		{Path: "mirors", Key: "mirors", Nearest: "mirrors"},
		{Path: "talos.schematicId", Key: "schematicId", Nearest: "schematicID"},
		{Path: "talos.verison", Key: "verison", Nearest: "version"},
	}, got)
	assert.Empty(t, SuggestKeys([]byte("not json"), map[string]any{"a": 1}))
}
