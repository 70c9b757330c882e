package render

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
)

func schemaChart() *chart.Chart {
	return &chart.Chart{
		Metadata:  &chart.Metadata{Name: "c", Version: "0.1.0", APIVersion: "v2"},
		Schema:    []byte(`{"type": "object", "properties": {"size": {"type": "string", "pattern": "^[0-9]+(\\.[0-9]+)?Gi$"}}}`),
		Templates: []*chart.File{{Name: "templates/x.yaml", Data: []byte("size: {{ .Values.size }}\n")}},
	}
}

// A schema refusal is a *SchemaError carrying Helm's own message, byte for
// byte; skipping the schema renders the same values; valid values render.
func TestSchemaRefusalIsTypedWithHelmsMessage(t *testing.T) {
	c := schemaChart()
	vals := map[string]interface{}{"size": "20GB"}
	_, err := Render(c, Options{Release: Release{Name: "r", Namespace: "n"}, Values: vals})
	var schema *SchemaError
	if !errors.As(err, &schema) {
		t.Fatalf("want a SchemaError, got %v", err)
	}
	_, helmErr := chartutil.ToRenderValuesWithSchemaValidation(c, vals, chartutil.ReleaseOptions{Name: "r", Namespace: "n", Revision: 1, IsInstall: true}, nil, false)
	if helmErr == nil || err.Error() != helmErr.Error() {
		t.Fatalf("message differs from Helm's:\n%v\n%v", err, helmErr)
	}
	if _, err := Render(c, Options{Release: Release{Name: "r", Namespace: "n", SkipSchemaValidation: true}, Values: vals}); err != nil {
		t.Fatalf("schema off: %v", err)
	}
	if _, err := Render(c, Options{Release: Release{Name: "r", Namespace: "n"}, Values: map[string]interface{}{"size": "20Gi"}}); err != nil {
		t.Fatalf("valid values: %v", err)
	}
}

// A values file is a map; anything else says what it is and what a values
// file must be. An empty file (or only comments) is no values, as Helm reads it.
func TestReadValuesSaysWhatTheFileIs(t *testing.T) {
	dir := t.TempDir()
	for text, want := range map[string]string{
		"- a\n":        "is a list, not a map: " + ValuesFileIs,
		"just words\n": "is a single string value, not a map: " + ValuesFileIs,
		"a: [b\n":      "is not YAML (line 1: did not find expected ',' or ']'): " + ValuesFileIs,
	} {
		p := filepath.Join(dir, "v.yaml")
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := ReadValues(p)
		if err == nil || err.Error() != want {
			t.Errorf("%q: got %v, want %q", text, err, want)
		}
		if err != nil && strings.Contains(err.Error(), p) {
			t.Errorf("%q: the caller names the file, not ReadValues: %v", text, err)
		}
	}
	for _, text := range []string{"", "# only a comment\n", "a: b\n"} {
		p := filepath.Join(dir, "v.yaml")
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadValues(p); err != nil {
			t.Errorf("%q: %v", text, err)
		}
	}
}
