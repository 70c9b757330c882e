package schema

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

const catalogChart = render.CatalogChart

func TestCatalogSchema(t *testing.T) {
	s := compile(t, catalogChart)
	checkCases(t, s, support.CatalogSchemaCases.Accepted, support.CatalogSchemaCases.Refused)
}

// definedPatterns reads the patterns a chart's templates check, from the YAML
// body of the named template `define`.
func definedPatterns(t *testing.T, file, define string) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(support.RepoRoot(), file))
	require.NoError(t, err)
	body := regexp.MustCompile(`(?s)\{\{- define "` + regexp.QuoteMeta(define) + `" -\}\}\n(.*?)\n\{\{- end -\}\}`).FindSubmatch(raw)
	require.NotNil(t, body, "%s defines %s", file, define)
	// A pattern may include another define of the file (the port): read it expanded, as the chart does.
	expanded := regexp.MustCompile(`\{\{ include "([^"]+)" \. \}\}`).ReplaceAllFunc(body[1], func(call []byte) []byte {
		name := regexp.MustCompile(`"([^"]+)"`).FindSubmatch(call)[1]
		inner := regexp.MustCompile(`(?s)\{\{- define "` + regexp.QuoteMeta(string(name)) + `" -\}\}\n(.*?)\n\{\{- end -\}\}`).FindSubmatch(raw)
		require.NotNil(t, inner, "%s defines %s, which %s includes", file, name, define)
		return inner[1]
	})
	out := map[string]string{}
	require.NoError(t, yaml.Unmarshal(expanded, &out))
	return out
}

// libraryPatterns are the value patterns every chart includes from the library chart.
func libraryPatterns(t *testing.T) map[string]string {
	t.Helper()
	return definedPatterns(t, "packages/library/worker-image-lib/templates/_patterns.tpl", "worker-image-lib.patterns")
}

// The schema and the template guard the same fields with the same patterns, so
// neither lets through what the other refuses.
func TestCatalogSchemaPatternsAreTheTemplates(t *testing.T) {
	patterns := libraryPatterns(t)
	schema := document(t, chartFile(t, catalogChart+"/values.schema.json"))
	for field, path := range map[string][]string{
		"schematicID":     {"properties", "images", "then", "items", "properties", "schematicID", "pattern"},
		"version":         {"properties", "images", "then", "items", "properties", "version", "pattern"},
		"imageFactoryURL": {"definitions", "factoryURL", "pattern"},
		"quantity":        {"definitions", "quantity", "pattern"},
		"storageClass":    {"properties", "storageClass", "pattern"},
	} {
		require.Equal(t, patterns[field], jsonAt(t, schema, path...), field)
	}
}

// chartFile reads a file of the repository; a chart's values.schema.json is
// read with its x-form rules merged (formText), where the rules it states
// live.
func chartFile(t *testing.T, rel string) string {
	t.Helper()
	if dir, ok := strings.CutSuffix(rel, "/values.schema.json"); ok {
		return formText(t, dir)
	}
	raw, err := os.ReadFile(filepath.Join(support.RepoRoot(), rel))
	require.NoError(t, err)
	return string(raw)
}

func jsonAt(t *testing.T, v interface{}, path ...string) interface{} {
	t.Helper()
	for _, p := range path {
		m, ok := v.(map[string]interface{})
		require.True(t, ok, "%v: %s is not under an object", path, p)
		v = m[p]
	}
	return v
}

// The monitoring values' schema (the catalog's, and the platform's, which
// forwards it) repeats the template's patterns: thresholds, runbook URL, label
// values.
func TestMonitoringSchemaPatternsAreTheTemplates(t *testing.T) {
	patterns := libraryPatterns(t)
	for _, file := range []string{catalogChart + "/values.schema.json", "packages/core/platform/values.schema.json"} {
		schema := document(t, chartFile(t, file))
		monitoring := []string{"definitions", "monitoring", "properties"}
		for field, path := range map[string][]string{
			"alertDuration":   append(append([]string{}, monitoring...), "goldenFailedFor", "pattern"),
			"imageFactoryURL": append(append([]string{}, monitoring...), "runbookURL", "pattern"),
			"labelValue":      append(append([]string{}, monitoring...), "labels", "then", "additionalProperties", "pattern"),
		} {
			require.Equal(t, patterns[field], jsonAt(t, schema, path...), "%s: %s", file, field)
		}
		require.Equal(t, jsonAt(t, schema, append(monitoring, "goldenFailedFor", "pattern")...), jsonAt(t, schema, append(monitoring, "goldenNotSucceededFor", "pattern")...), file)
	}
}
