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

	"github.com/cozystack/golden-worker-images/internal/rdschema"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/santhosh-tekuri/jsonschema/v5"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// compile reads the rules a chart's schema states: its values.schema.json
// with every x-form merged (rdschema.Form), as a form validates them. What
// Helm reads (the file as written, which leaves the x-form rules to the
// templates' own words) is compileHelm.
func compile(t *testing.T, chartDir string) *jsonschema.Schema {
	t.Helper()
	return compileText(t, chartDir+"/values.schema.json (x-form merged)", formText(t, chartDir))
}

// compileHelm compiles a chart's values.schema.json as written: what Helm
// validates before any template runs.
func compileHelm(t *testing.T, chartDir string) *jsonschema.Schema {
	t.Helper()
	path := filepath.Join(support.RepoRoot(), chartDir, "values.schema.json")
	s, err := jsonschema.Compile(path)
	require.NoError(t, err, "%s must compile", path)
	return s
}

// compileForm compiles the pool's form schema: the ApplicationDefinition's
// openAPISchema as generated (make generate), which the dashboard's form
// validates a tenant's values against.
func compileForm(t *testing.T) *jsonschema.Schema {
	t.Helper()
	return compileText(t, rdschema.Out, chartFile(t, rdschema.Out))
}

func compileText(t *testing.T, name, text string) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft7
	url := "file:///" + strings.ReplaceAll(name, " ", "_")
	require.NoError(t, c.AddResource(url, strings.NewReader(text)), name)
	s, err := c.Compile(url)
	require.NoError(t, err, "%s must compile", name)
	return s
}

// formText is a chart's values.schema.json with every x-form merged.
func formText(t *testing.T, chartDir string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(support.RepoRoot(), chartDir, "values.schema.json"))
	require.NoError(t, err)
	form, err := rdschema.Form(raw, chartDir+"/values.schema.json")
	require.NoError(t, err)
	return string(form)
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
