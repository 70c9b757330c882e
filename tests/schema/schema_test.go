// Package schema checks each chart's values.schema.json on its own, with an
// independent JSON Schema implementation, so that what Helm refuses before
// rendering is pinned down value by value.
package schema

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/santhosh-tekuri/jsonschema/v5"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

func compile(t *testing.T, chartDir string) *jsonschema.Schema {
	t.Helper()
	path := filepath.Join(support.RepoRoot(), chartDir, "values.schema.json")
	s, err := jsonschema.Compile(path)
	require.NoError(t, err, "%s must compile", path)
	return s
}

// document turns YAML into the JSON-shaped value the validator reads.
func document(t *testing.T, yamlText string) interface{} {
	t.Helper()
	raw, err := yaml.YAMLToJSON([]byte(yamlText))
	require.NoError(t, err)
	var v interface{}
	require.NoError(t, json.Unmarshal(raw, &v))
	return v
}

func fileDocument(t *testing.T, path string) interface{} {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	return document(t, string(raw))
}

// checkCases asserts each accepted document validates and each refused one does not.
func checkCases(t *testing.T, s *jsonschema.Schema, accepted, refused []string) {
	t.Helper()
	for _, v := range accepted {
		require.NoError(t, s.Validate(document(t, v)), "schema must accept %s", v)
	}
	for _, v := range refused {
		require.Error(t, s.Validate(document(t, v)), "schema must refuse %s", v)
	}
}

// withCluster gives each flow-mapping pool snippet the one value a pool has
// no default for (cluster, which the schema requires), unless it sets it: so
// a refused snippet is refused for what it says, not for the missing cluster.
func withCluster(snippets ...string) []string {
	out := make([]string, len(snippets))
	for i, s := range snippets {
		switch {
		case strings.Contains(s, "cluster:") && !strings.Contains(s, "_cluster:"), strings.Contains(s, "{cluster:"):
			out[i] = s
		case s == "{}":
			out[i] = "{cluster: acme}"
		default:
			out[i] = "{cluster: acme, " + strings.TrimPrefix(s, "{")
		}
	}
	return out
}

// Every chart's own values.yaml passes its own schema; the pool chart's with
// the cluster it has no default for (its "" is refused: cluster is required).
func TestEverySchemaAcceptsItsChartDefaults(t *testing.T) {
	for _, chart := range []string{poolChart, catalogChart, platformChart} {
		s := compile(t, chart)
		defaults := fileDocument(t, filepath.Join(support.RepoRoot(), chart, "values.yaml")).(map[string]interface{})
		if chart == poolChart {
			err := s.Validate(defaults)
			require.Error(t, err, "cluster \"\" is no cluster")
			require.Contains(t, fmt.Sprintf("%#v", err), "/cluster")
			defaults["cluster"] = "acme"
		}
		require.NoError(t, s.Validate(defaults), chart+"/values.yaml")
	}
}
