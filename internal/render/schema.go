package render

import (
	"bytes"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
)

// compiledSchemas holds each chart schema compiled once, by its text: Helm
// compiles it again at every render (about a tenth of a pool's render, over
// a fleet of them).
var compiledSchemas sync.Map // string -> *jsonschema.Schema, or nil when it does not compile here

// validateValues is Helm's schema check (chartutil.ValidateAgainstSchema):
// values that the chart's schema, compiled once, takes are valid as Helm
// would find them; anything else (values it refuses, a schema of a
// subchart, one that does not compile without Helm's loaders) goes to
// Helm's own check, whose message the refusal quotes.
func validateValues(chrt *chart.Chart, values chartutil.Values) error {
	if s := compiledSchema(chrt); s != nil && s.Validate(values.AsMap()) == nil {
		return nil
	}
	return chartutil.ValidateAgainstSchema(chrt, values)
}

func compiledSchema(chrt *chart.Chart) *jsonschema.Schema {
	if len(chrt.Schema) == 0 {
		return nil
	}
	for _, d := range chrt.Dependencies() {
		if subchartSchemas(d) {
			return nil
		}
	}
	if s, ok := compiledSchemas.Load(string(chrt.Schema)); ok {
		return s.(*jsonschema.Schema)
	}
	var compiled *jsonschema.Schema
	// As Helm reads it: numbers kept as written, the same resource name.
	if doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(chrt.Schema)); err == nil {
		c := jsonschema.NewCompiler()
		if c.AddResource("file:///values.schema.json", doc) == nil {
			compiled, _ = c.Compile("file:///values.schema.json")
		}
	}
	compiledSchemas.Store(string(chrt.Schema), compiled)
	return compiled
}

func subchartSchemas(c *chart.Chart) bool {
	if len(c.Schema) > 0 {
		return true
	}
	for _, d := range c.Dependencies() {
		if subchartSchemas(d) {
			return true
		}
	}
	return false
}
