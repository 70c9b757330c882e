package output

import (
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	yaml2 "go.yaml.in/yaml/v2"
	yaml "go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"
)

// Strings YAML 1.1 (Helm reads values with sigs.k8s.io/yaml) or YAML 1.2
// would read as another type or value when written bare, and their plain
// neighbours.
var yamlLookalikes = []string{
	"0x10", "0b101", "0o7", "yes", "on", "~", ".inf", "2026-01-01",
	"Yes", "ON", "off", "n", "y", "null", "NULL", "true", "False", "-.inf", ".NaN", "0123", "1_000", "1:20", "190:20:30",
	"1e3", "6Gi", "-1", "+1", "0.5", "2026-01-01T10:00:00Z", "", " ", "a: b", "- x", "#c", "a #b", "'q'", `"dq"`, "{x}", "[x]", "*a", "&a", "!t", "%d", "@x", "`x", "|", ">",
	"fast", "replicated", "v1.13.6", "https://factory.talos.dev", "ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515",
}

// Every field of adopt's catalog values, and of a pool's values change,
// reads back as the string written under YAML 1.1 and 1.2 readers.
func TestPasteableYAMLReadsBackUnderYAML11And12(t *testing.T) {
	for _, s := range yamlLookalikes {
		class := s
		entries := []report.CatalogEntry{{
			Plain: "talos-worker-x-v1", Change: report.ChangeNew, Pools: []string{"tenant-a/kubernetes-nodes-a-" + s},
			Notes: []string{"its pools boot it from " + s + "\nkubernetesWorkerImage: {images: []}"},
			Entry: report.CatalogImage{SchematicID: s, Version: s, ImageFactoryURL: s, Storage: s, StorageClass: &class, AdditionalStorageClasses: []string{s, s}},
		}}
		entry := map[string]any{"schematicID": s, "version": s, "imageFactoryURL": s, "storage": s, "storageClass": s, "additionalStorageClasses": []any{s, s}}
		if s == "" {
			// Empty fields are left out, as the catalog's defaults apply.
			entry = map[string]any{"schematicID": s, "version": s, "storageClass": s, "additionalStorageClasses": []any{s, s}}
		}
		section := map[string]any{"images": []any{entry}}
		requireReadsBack(t, catalogValuesYAML(report.AdoptCatalog{ChangeShape: report.ShapePlatform, Images: entries}), map[string]any{"kubernetesWorkerImage": section})
		requireReadsBack(t, catalogValuesYAML(report.AdoptCatalog{ChangeShape: report.ShapePackage, Images: entries}),
			map[string]any{"spec": map[string]any{"components": map[string]any{"kubernetes-worker-image": map[string]any{"values": section}}}})

		change := valuesText(map[string]any{"osImage": map[string]any{"builtin": map[string]any{"schematicID": s, "version": s}}})
		assert.NotContains(t, change, "\n", "%q: one line", s)
		requireReadsBack(t, change, map[string]any{"osImage": map[string]any{"builtin": map[string]any{"schematicID": s, "version": s}}})
	}
}

// requireReadsBack parses text with Helm's reader (YAML 1.1), go-yaml v2
// (YAML 1.1) and v3 (YAML 1.2), and wants the same values from each.
func requireReadsBack(t *testing.T, text string, want map[string]any) {
	t.Helper()
	var helm map[string]any
	require.NoError(t, sigsyaml.Unmarshal([]byte(text), &helm), text)
	assert.Equal(t, want, helm, "Helm's reader (YAML 1.1):\n%s", text)
	var v2 map[string]any
	require.NoError(t, yaml2.Unmarshal([]byte(text), &v2), text)
	assert.Equal(t, want, normalize(v2), "YAML 1.1 (go-yaml v2):\n%s", text)
	var v3 map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(text), &v3), text)
	assert.Equal(t, want, v3, "YAML 1.2 (go-yaml v3):\n%s", text)
}

// normalize turns go-yaml v2's map[any]any into string keys.
func normalize(v any) any {
	switch x := v.(type) {
	case map[any]any:
		out := map[string]any{}
		for k, e := range x {
			out[k.(string)] = normalize(e)
		}
		return out
	case map[string]any:
		for k, e := range x {
			x[k] = normalize(e)
		}
		return x
	case []any:
		for i := range x {
			x[i] = normalize(x[i])
		}
	}
	return v
}

// Plain strings keep their bare form, as the committed reports show them.
func TestPasteableYAMLKeepsPlainStringsBare(t *testing.T) {
	class := "replicated"
	text := catalogValuesYAML(report.AdoptCatalog{ChangeShape: report.ShapePlatform, Images: []report.CatalogEntry{{Plain: "talos-worker-abc-v1.13.6", Change: report.ChangeKept, Entry: report.CatalogImage{
		SchematicID: "abc", Version: "v1.13.6", ImageFactoryURL: "https://factory.talos.dev", Storage: "6Gi", StorageClass: &class, AdditionalStorageClasses: []string{"fast"}, Retire: true,
	}}}})
	assert.Equal(t, `kubernetesWorkerImage:
  images:
    # kept as its golden talos-worker-abc-v1.13.6 shows it
    - schematicID: abc
      version: v1.13.6
      imageFactoryURL: https://factory.talos.dev
      storage: 6Gi
      storageClass: replicated
      additionalStorageClasses: [fast]
      retire: true
`, text)
	assert.Equal(t, "osImage: {builtin: {version: v1.13.5}}", valuesText(map[string]any{"osImage": map[string]any{"builtin": map[string]any{"version": "v1.13.5"}}}))
	assert.Equal(t, "osImage: {builtin: {}}", valuesText(map[string]any{"osImage": map[string]any{"builtin": map[string]any{}}}))
	assert.Equal(t, `osImage: {builtin: {schematicID: "0x10"}}`, valuesText(map[string]any{"osImage": map[string]any{"builtin": map[string]any{"schematicID": "0x10"}}}))
	assert.True(t, strings.Contains(catalogValuesYAML(report.AdoptCatalog{Images: []report.CatalogEntry{{Change: report.ChangeNew, Entry: report.CatalogImage{SchematicID: "0b101", Version: "v1"}}}}), `schematicID: "0b101"`))
}

// The catalog change is the platform's values whole where they hold the
// catalog's: every key they hold kept, kubernetesWorkerImage's other keys
// kept, its images replaced; where the operator's Package holds them, that
// Package whole: every field kept, its values' images replaced.
func TestCatalogValuesAreThePlatformsWholeValues(t *testing.T) {
	c := report.AdoptCatalog{
		Platform: map[string]any{
			"bundles":               map[string]any{"enabledPackages": []any{"cozystack.kubernetes-worker-image"}},
			"kubernetesWorkerImage": map[string]any{"imageFactoryURL": "https://factory.mirror.internal", "images": []any{map[string]any{"schematicID": "old", "version": "v1"}}},
		},
		ChangeShape:   report.ShapePlatform,
		WholePlatform: true,
		Images:        []report.CatalogEntry{{Plain: "talos-worker-abc-v1.13.7", Change: report.ChangeNew, Entry: report.CatalogImage{SchematicID: "abc", Version: "v1.13.7"}}},
	}
	assert.Equal(t, `bundles:
  enabledPackages:
    - cozystack.kubernetes-worker-image
kubernetesWorkerImage:
  imageFactoryURL: https://factory.mirror.internal
  images:
    # new, golden talos-worker-abc-v1.13.7, for new pools
    - schematicID: abc
      version: v1.13.7
`, catalogValuesYAML(c))

	c.ChangeShape, c.Platform = report.ShapePackage, nil
	c.Package = map[string]any{
		"apiVersion": "cozystack.io/v1alpha1", "kind": "Package", "metadata": map[string]any{"name": "cozystack.kubernetes-worker-image"},
		"spec": map[string]any{"variant": "default", "ignoreDependencies": []any{"cozystack.kubevirt-cdi"}, "components": map[string]any{"kubernetes-worker-image": map[string]any{"values": map[string]any{
			"storageClass": "replicated", "images": []any{map[string]any{"schematicID": "old", "version": "v1"}},
			"tenantWorkers": map[string]any{"talos": map[string]any{"imageFactoryURL": "https://factory.mirror.internal"}},
		}}}},
	}
	assert.Equal(t, `apiVersion: cozystack.io/v1alpha1
kind: Package
metadata:
  name: cozystack.kubernetes-worker-image
spec:
  components:
    kubernetes-worker-image:
      values:
        images:
          # new, golden talos-worker-abc-v1.13.7, for new pools
          - schematicID: abc
            version: v1.13.7
        storageClass: replicated
        tenantWorkers:
          talos:
            imageFactoryURL: https://factory.mirror.internal
  ignoreDependencies:
    - cozystack.kubevirt-cdi
  variant: default
`, catalogValuesYAML(c))
	// A Package without values yet gets them.
	c.Package = map[string]any{"apiVersion": "cozystack.io/v1alpha1", "kind": "Package", "metadata": map[string]any{"name": "cozystack.kubernetes-worker-image"}, "spec": map[string]any{"variant": "default"}}
	assert.Equal(t, "apiVersion: cozystack.io/v1alpha1\nkind: Package\nmetadata:\n  name: cozystack.kubernetes-worker-image\nspec:\n  variant: default\n  components:\n    kubernetes-worker-image:\n      values:\n        images:\n          # new, golden talos-worker-abc-v1.13.7, for new pools\n          - schematicID: abc\n            version: v1.13.7\n", catalogValuesYAML(c))
}
