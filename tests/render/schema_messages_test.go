package render

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/require"
)

// poolSchemaAt reads a keyword of the pool chart's values.schema.json, so the
// expected messages below follow the schema rather than a copied output.
func poolSchemaAt(t *testing.T, path ...string) string {
	t.Helper()
	raw, err := os.ReadFile(support.Path(render.PoolChart, "values.schema.json"))
	require.NoError(t, err)
	var node interface{}
	require.NoError(t, json.Unmarshal(raw, &node))
	for _, p := range path {
		if list, ok := node.([]interface{}); ok {
			i, err := strconv.Atoi(p)
			require.NoError(t, err, "%v: %s indexes a list", path, p)
			node = list[i]
			continue
		}
		m, ok := node.(map[string]interface{})
		require.True(t, ok, "%v: %s is not under an object", path, p)
		node = m[p]
	}
	return fmt.Sprint(node)
}

// quoted is a pattern as the schema library prints it: backslashes escaped.
func quoted(pattern string) string { return strings.ReplaceAll(pattern, `\`, `\\`) }

// Helm prints schema errors before any template runs, so the schema's wording
// is what a tenant reads. Each rule's full message, through Helm's own
// validation (chartutil.ToRenderValuesWithSchemaValidation), names the field
// and what is expected; a rule JSON Schema cannot word (builtin and factory
// exclude each other) is left to the template's message.
func TestPoolSchemaMessagesNameTheFieldAndTheExpectation(t *testing.T) {
	header := "values don't meet the specifications of the schema(s) in the following chart(s):\nkubernetes-nodes:\n"
	quantity := quoted(poolSchemaAt(t, "definitions", "quantity", "pattern"))
	for _, tc := range []struct{ values, want string }{
		{"{cluster: acme, unknownKey: 1}", "- at '': additional properties 'unknownKey' not allowed"},
		{"{cluster: 7}", "- at '/cluster': got number, want string"},
		{"{cluster: Acme}", fmt.Sprintf("- at '/cluster': 'Acme' does not match pattern '%s'", poolSchemaAt(t, "properties", "cluster", "pattern"))},
		{"{cluster: acme, diskSize: 20GB}", fmt.Sprintf("- at '/diskSize': '20GB' does not match pattern '%s'", quantity)},
		{"{cluster: acme, storageClass: 'a..b'}", fmt.Sprintf("- at '/storageClass': 'a..b' does not match pattern '%s'", quoted(poolSchemaAt(t, "properties", "storageClass", "pattern")))},
		{"{cluster: acme, roles: [" + strings.Repeat("r", 64) + "]}", "- at '/roles/0': maxLength: got 64, want 63"},
		{"{cluster: acme, roles: [a, a]}", "- at '/roles': items at 0 and 1 are equal"},
		{"{cluster: acme, resources: {cpu: 0}}", "- at '/resources/cpu': minimum: got 0, want 1"},
		{"{cluster: acme, minReplicas: -1}", "- at '/minReplicas': minimum: got -1, want 0"},
		{"{cluster: acme, talos: {registryMirrors: {docker.io: {endpoints: []}}}}", "- at '/talos/registryMirrors/docker.io/endpoints': minItems: got 0, want 1"},
		{"{cluster: acme, osImage: {builtin: {schematicId: x}}}", "- at '/osImage/builtin': additional properties 'schematicId' not allowed"},
		{"{cluster: acme, maxUnhealthy: 101%}", fmt.Sprintf("- at '/maxUnhealthy': 'oneOf' failed, none matched\n  - at '/maxUnhealthy': got string, want integer\n  - at '/maxUnhealthy': '101%%' does not match pattern '%s'", poolSchemaAt(t, "properties", "maxUnhealthy", "oneOf", "1", "pattern"))},
	} {
		t.Run(tc.values, func(t *testing.T) {
			_, err := renderPool(t, vals(t, tc.values), nil)
			require.Error(t, err)
			require.Equal(t, header+tc.want+"\n", err.Error())
		})
	}
	// builtin and factory together pass the schema and meet the template's words.
	_, err := renderPool(t, vals(t, "{cluster: acme, osImage: {builtin: {}, factory: {}}}"), nil)
	requireRefusal(t, err, "pool kubernetes-acme-workers: osImage sets both builtin and factory; set osImage.builtin to clone the golden from cozy-public, or osImage.factory to import over HTTP, not both")
	require.NotContains(t, err.Error(), "'not' failed")
}
