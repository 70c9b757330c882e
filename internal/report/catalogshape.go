// Which values catalog -f was given: the platform's (kubernetesWorkerImage,
// forwarded by the platform chart), the catalog's own (what its Package
// holds), or the catalog's Package whole. A key no shape takes is refused,
// never ignored: a typo must not preview as "nothing changes".

package report

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	charts "github.com/cozystack/golden-worker-images"
	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/render"
)

// Shapes of the values catalog -f reads (valuesShape in -o json).
const (
	// ValuesPlatform: platform values; their kubernetesWorkerImage reaches
	// the catalog, as the platform chart forwards it.
	ValuesPlatform = ShapePlatform
	// ValuesCatalog: the catalog's own values, what its Package holds under
	// spec.components.kubernetes-worker-image.values.
	ValuesCatalog = "catalog-values"
	// ValuesPackage: the Package cozystack.kubernetes-worker-image whole.
	ValuesPackage = ShapePackage
)

// packageFields are the fields of a Package object (cozystack.io/v1alpha1),
// its spec and a component of its spec.
var (
	packageFields   = []string{"apiVersion", "kind", "metadata", "spec", "status"}
	packageSpec     = []string{"variant", "ignoreDependencies", "components"}
	packageOverride = []string{"enabled", "values"}
)

// CatalogInput is what catalog -f was given, read in its shape.
type CatalogInput struct {
	// Shape is ValuesPlatform, ValuesCatalog or ValuesPackage.
	Shape string
	// Why says how the shape was told.
	Why string
	// Values are the platform values (ValuesPlatform) or the catalog's
	// values (the others).
	Values map[string]any
	// Enabled is the Package component's enabled, when it sets one.
	Enabled *bool
	// Package is the Package as given (ValuesPackage): apiVersion, kind,
	// metadata.name and spec.
	Package map[string]any
}

// valuesSchemas are the values.schema.json of the platform chart and of the
// catalog chart built into this binary.
func valuesSchemas() (platform, catalog []byte, err error) {
	p, err := render.LoadChartFS(charts.FS, render.PlatformChart)
	if err != nil {
		return nil, nil, fmt.Errorf("built-in chart %s: %v", render.PlatformChart, err)
	}
	c, err := fleet.CatalogChart()
	if err != nil {
		return nil, nil, fmt.Errorf("built-in chart %s: %v", render.CatalogChart, err)
	}
	return p.Schema, c.Schema, nil
}

// valuesKeys are the top-level keys each chart's values take, from its
// values.schema.json: the platform chart's and the catalog chart's.
func valuesKeys() (platform, catalog []string, err error) {
	p, c, err := valuesSchemas()
	if err != nil {
		return nil, nil, err
	}
	if platform, err = schemaKeys(p); err != nil {
		return nil, nil, fmt.Errorf("built-in chart %s: %v", render.PlatformChart, err)
	}
	if catalog, err = schemaKeys(c); err != nil {
		return nil, nil, fmt.Errorf("built-in chart %s: %v", render.CatalogChart, err)
	}
	return platform, catalog, nil
}

// nestedUnknownKey refuses the first key below the top of vals that the
// chart's schema (platform or catalog) does not take, as a key unknown at the
// top is refused: a typo anywhere is bad input, never a preview of values
// that are not the ones meant. where names vals ("the values"), shape what
// they were read as, why how.
func nestedUnknownKey(schema []byte, vals map[string]any, where, shape, why string) error {
	u := FirstUnknownKey(schema, vals)
	if u == nil {
		return nil
	}
	parent := strings.TrimSuffix(strings.TrimSuffix(u.Path, u.Key), ".")
	// A key of the top written one level down (the Package's registries
	// copied under kubernetesWorkerImage) is named where it goes.
	top, err := schemaKeys(schema)
	if err != nil {
		return err
	}
	return unknownKey(u.Key, where+" at "+parent, "a key of "+parent+" in "+shape, why, u.Known, top, "the top-level ")
}

// schemaKeys are the properties a values.schema.json lists at the top.
func schemaKeys(schema []byte) ([]string, error) {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, fmt.Errorf("values.schema.json: %v", err)
	}
	return SortedKeys(s.Properties), nil
}

// ReadCatalogInput tells the shape of vals (the -f files, layered): a
// Package when it has apiVersion or kind; platform values when it has a key
// only the platform's values take (kubernetesWorkerImage, bundles); the
// catalog's values when it has a key only the catalog's take (images,
// imageFactoryURL, storageClass, ...); with only keys both take
// (tenantWorkers, registries), the shape of what the cluster runs (home).
// Keys of both kinds, or a key neither takes, are bad input naming the key,
// the shape read and the nearest key it takes.
func ReadCatalogInput(vals map[string]any, home CatalogHome) (CatalogInput, error) {
	if _, ok := vals["apiVersion"]; ok {
		return readPackageInput(vals)
	}
	if _, ok := vals["kind"]; ok {
		return readPackageInput(vals)
	}
	platformKeys, catalogKeys, err := valuesKeys()
	if err != nil {
		return CatalogInput{}, err
	}
	inPlatform, inCatalog := set(platformKeys), set(catalogKeys)
	var platformOnly, catalogOnly, unknown []string
	for _, k := range SortedKeys(vals) {
		switch {
		case inPlatform[k] && !inCatalog[k]:
			platformOnly = append(platformOnly, k)
		case inCatalog[k] && !inPlatform[k]:
			catalogOnly = append(catalogOnly, k)
		case !inPlatform[k] && !inCatalog[k]:
			unknown = append(unknown, k)
		}
	}
	in := CatalogInput{Values: vals}
	switch {
	case len(platformOnly) > 0 && len(catalogOnly) > 0:
		return CatalogInput{}, fmt.Errorf("the values hold both platform values (%s) and the catalog's own values (%s): give one shape; in platform values the catalog's values go under kubernetesWorkerImage, and the catalog's own values are what its Package holds under spec.components.kubernetes-worker-image.values", strings.Join(platformOnly, ", "), strings.Join(catalogOnly, ", "))
	case len(platformOnly) > 0:
		in.Shape, in.Why = ValuesPlatform, "they set "+strings.Join(platformOnly, ", ")+", which only platform values take"
	case len(catalogOnly) > 0:
		in.Shape, in.Why = ValuesCatalog, "they set "+strings.Join(catalogOnly, ", ")+", which only the catalog's own values take"
	case home.Shape == ShapePlatform:
		in.Shape, in.Why = ValuesPlatform, "they set only keys both shapes take, and the cluster's catalog values are the platform's"
	default:
		in.Shape, in.Why = ValuesCatalog, "they set only keys both shapes take, and the cluster's catalog is a Package"
	}
	if len(unknown) > 0 {
		// The nearest key of the other shape is named where it goes in this
		// one: a catalog key in platform values is under kubernetesWorkerImage.
		known, name, other, at := catalogKeys, "the catalog's own values", platformKeys, ""
		if in.Shape == ValuesPlatform {
			known, name, other, at = platformKeys, "platform values", catalogKeys, "kubernetesWorkerImage."
		}
		return CatalogInput{}, unknownKey(unknown[0], "the values", "a key of "+name, ", read as "+name+" since "+in.Why, known, other, at)
	}
	platformSchema, catalogSchema, err := valuesSchemas()
	if err != nil {
		return CatalogInput{}, err
	}
	schema, name := catalogSchema, "the catalog's own values"
	if in.Shape == ValuesPlatform {
		schema, name = platformSchema, "platform values"
	}
	if err := nestedUnknownKey(schema, vals, "the values", name, ", read as "+name+" since "+in.Why); err != nil {
		return CatalogInput{}, err
	}
	return in, nil
}

// readPackageInput reads a Package object: the catalog's, with no field a
// Package does not have, and catalog values under its one component.
func readPackageInput(vals map[string]any) (CatalogInput, error) {
	apiVersion, _ := vals["apiVersion"].(string)
	kind, _ := vals["kind"].(string)
	name, _ := render.Get(vals, "metadata.name").(string)
	if apiVersion != packageAPI || kind != "Package" {
		return CatalogInput{}, fmt.Errorf("the values are an object of apiVersion %q, kind %q: a whole object given to catalog -f must be the catalog's Package (apiVersion %s, kind Package, name %s)", apiVersion, kind, packageAPI, catalogPackage)
	}
	if name != catalogPackage {
		return CatalogInput{}, fmt.Errorf("the values are the Package %q, not the catalog's: its Package is %s", name, catalogPackage)
	}
	const shape, why = "a field of a Package", ", read as the Package " + catalogPackage
	for _, k := range SortedKeys(vals) {
		if !set(packageFields)[k] {
			return CatalogInput{}, unknownKey(k, "the Package", shape, why, packageFields, nil, "")
		}
	}
	spec, ok := vals["spec"].(map[string]any)
	if _, has := vals["spec"]; has && !ok {
		return CatalogInput{}, fmt.Errorf("the Package %s: spec is %s, not a map", catalogPackage, describe(vals["spec"]))
	}
	for _, k := range SortedKeys(spec) {
		if !set(packageSpec)[k] {
			return CatalogInput{}, unknownKey(k, "the Package's spec", "a field of a Package's spec", why, packageSpec, nil, "")
		}
	}
	components, ok := spec["components"].(map[string]any)
	if _, has := spec["components"]; has && !ok {
		return CatalogInput{}, fmt.Errorf("the Package %s: spec.components is %s, not a map of component names", catalogPackage, describe(spec["components"]))
	}
	for _, k := range SortedKeys(components) {
		if k != catalogComponent {
			return CatalogInput{}, unknownKey(k, "the Package's spec.components", "a component of the catalog", why+", whose PackageSource has the one component "+catalogComponent, []string{catalogComponent}, nil, "")
		}
	}
	in := CatalogInput{Shape: ValuesPackage, Why: "they are the Package " + catalogPackage + " (apiVersion and kind)", Values: map[string]any{},
		Package: map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": name}}}
	if spec != nil {
		in.Package["spec"] = spec
	}
	raw, has := components[catalogComponent]
	if !has {
		return in, nil
	}
	component, ok := raw.(map[string]any)
	if raw != nil && !ok {
		return CatalogInput{}, fmt.Errorf("the Package %s: spec.components.%s is %s, not a map", catalogPackage, catalogComponent, describe(raw))
	}
	for _, k := range SortedKeys(component) {
		if !set(packageOverride)[k] {
			return CatalogInput{}, unknownKey(k, "the Package's spec.components."+catalogComponent, "a field of a Package's component", why, packageOverride, nil, "")
		}
	}
	if e, has := component["enabled"]; has {
		b, ok := e.(bool)
		if !ok {
			return CatalogInput{}, fmt.Errorf("the Package %s: spec.components.%s.enabled is %s, not true or false", catalogPackage, catalogComponent, describe(e))
		}
		in.Enabled = &b
	}
	if v, has := component["values"]; has && v != nil {
		values, ok := v.(map[string]any)
		if !ok {
			return CatalogInput{}, fmt.Errorf("the Package %s: spec.components.%s.values is %s, not a map of the catalog's values", catalogPackage, catalogComponent, describe(v))
		}
		_, catalogKeys, err := valuesKeys()
		if err != nil {
			return CatalogInput{}, err
		}
		for _, k := range SortedKeys(values) {
			if !set(catalogKeys)[k] {
				return CatalogInput{}, unknownKey(k, "the Package's spec.components."+catalogComponent+".values", "a key of the catalog's own values", why, catalogKeys, nil, "")
			}
		}
		_, catalogSchema, err := valuesSchemas()
		if err != nil {
			return CatalogInput{}, err
		}
		if err := nestedUnknownKey(catalogSchema, values, "the Package's spec.components."+catalogComponent+".values", "the catalog's own values", why); err != nil {
			return CatalogInput{}, err
		}
		in.Values = values
	}
	return in, nil
}

// unknownKey is the refusal of key at where, as what it is not (shape),
// why it was read so, the keys known there, and the nearest of them (else
// of also, the other shape's keys, where they go in this one: alsoAt) when
// one is near enough.
func unknownKey(key, where, shape, why string, known, also []string, alsoAt string) error {
	var sorted []string
	for _, k := range known {
		// Helm's global, the platform's channels and the library charts'
		// keys are taken but never the operator's to write: not listed.
		if k != "global" && !strings.HasPrefix(k, "_") && !strings.HasSuffix(k, "-lib") {
			sorted = append(sorted, k)
		}
	}
	sort.Strings(sorted)
	msg := fmt.Sprintf("%s: %q is not %s%s (known: %s)", where, key, shape, why, strings.Join(sorted, ", "))
	near := NearestWord(key, known)
	if near == "" {
		if n := NearestWord(key, also); n != "" {
			near = alsoAt + n
		}
	}
	switch {
	case near != "":
		msg += "; did you mean " + near + "?"
	case set(packageFields)[key]:
		msg += "; a whole Package needs its apiVersion: " + packageAPI + " and kind: Package."
	default:
		msg += "."
	}
	return fmt.Errorf("%s An unknown key is refused rather than ignored, so a typo never previews as no change", msg)
}

func set(keys []string) map[string]bool {
	out := make(map[string]bool, len(keys))
	for _, k := range keys {
		out[k] = true
	}
	return out
}

// describe names a value's type, as a refusal shows what it was given.
func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("the string %q", OneLine(v))
	case []any:
		return "a list"
	case map[string]any:
		return "a map"
	default:
		return fmt.Sprintf("%v", v)
	}
}
