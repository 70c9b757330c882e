package main

import (
	"os"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// platformRecord is the platform's Helm release record (release cozystack
// in cozy-system, chart platform) holding values.
func platformRecord(t *testing.T, values map[string]any) string {
	t.Helper()
	rec, err := fleet.EncodeRecord("cozystack", "cozy-system", "platform", 3, "deployed", values)
	require.NoError(t, err)
	b, err := (&unstructured.Unstructured{Object: rec}).MarshalJSON()
	require.NoError(t, err)
	return "---\n" + string(b) + "\n"
}

// The catalog change adopt and rollout print is the platform's values
// whole, as its release holds them, with the new images list: every other
// key stays. Without a readable release, the kubernetesWorkerImage section,
// said to be only that.
func TestCatalogChangeIsThePlatformsWholeValues(t *testing.T) {
	base, err := os.ReadFile(td("adopt", "fleet.yaml"))
	require.NoError(t, err)
	values := map[string]any{
		"bundles":               map[string]any{"enabledPackages": []any{"cozystack.kubernetes-worker-image"}},
		"kubernetesWorkerImage": map[string]any{"storageClass": "replicated", "images": []any{}},
	}
	state := writeTemp(t, "fleet.yaml", string(base)+platformRecord(t, values))
	r := adoptOf(t, "-cluster", state)
	require.True(t, r.Catalog.Changed)
	assert.True(t, r.Catalog.WholePlatform)
	assert.Contains(t, r.Catalog.ValuesFrom, "the values of the platform's release cozy-system/cozystack (Helm release record cozy-system/sh.helm.release.v1.cozystack.v3")
	assert.Contains(t, r.Catalog.Values, "bundles:\n  enabledPackages:\n    - cozystack.kubernetes-worker-image\nkubernetesWorkerImage:\n  images:\n")
	assert.Contains(t, r.Catalog.Values, "\n  storageClass: replicated\n")

	res := cli(t, "adopt", "-cluster", state)
	require.Equal(t, exitOK, res.code, res.stderr)
	assert.Contains(t, res.stdout, "catalog: the platform's values with the catalog's new images list, complete: upgrade the platform with them as they are")

	// The neighbour: no record, the section alone, and it says so.
	r = adoptOf(t, "-cluster", td("adopt", "fleet.yaml"))
	assert.False(t, r.Catalog.WholePlatform)
	assert.Contains(t, r.Catalog.ValuesFrom, "no Helm release record of the platform chart for release cozy-system/cozystack is readable")
	assert.NotContains(t, r.Catalog.Values, "bundles:")
}

// catalog -f with a part of the platform's values prints the whole values
// they make: the platform release's values with the files layered over
// them; with no readable release, no such section (nothing to layer over).
func TestCatalogPrintsThePlatformsWholeValues(t *testing.T) {
	images := "[{schematicID: " + defaultSchematic + ", version: " + defaultVersion + "}, {schematicID: " + defaultSchematic + ", version: v1.13.7}]"
	snippet := writeTemp(t, "snippet.yaml", "bundles: {enabledPackages: [cozystack.kubernetes-worker-image]}\nkubernetesWorkerImage: {images: "+images+"}\n")
	state := stateWith(t, "golden", platformRecord(t, map[string]any{
		"bundles":               map[string]any{"disabledPackages": []any{"cozystack.foo"}},
		"kubernetesWorkerImage": map[string]any{"storageClass": "replicated"},
	}))
	r := catalogOf(t, exitOK, "-f", snippet, "--cluster", state)
	assert.Equal(t, map[string]any{
		"bundles": map[string]any{"disabledPackages": []any{"cozystack.foo"}, "enabledPackages": []any{"cozystack.kubernetes-worker-image"}},
		"kubernetesWorkerImage": map[string]any{"storageClass": "replicated", "images": []any{
			map[string]any{"schematicID": defaultSchematic, "version": defaultVersion},
			map[string]any{"schematicID": defaultSchematic, "version": "v1.13.7"},
		}},
	}, r.Platform)
	assert.Contains(t, r.PlatformFrom, "the values of the platform's release cozy-system/cozystack")
	res := cli(t, "catalog", "-f", snippet, "--cluster", state)
	require.Equal(t, exitOK, res.code, res.stderr)
	assert.Contains(t, res.stdout, "\nplatform values: the values of the platform's release cozy-system/cozystack")
	assert.Contains(t, res.stdout, "bundles:\n  disabledPackages:\n    - cozystack.foo\n  enabledPackages:\n    - cozystack.kubernetes-worker-image\nkubernetesWorkerImage:\n  images:\n")
	assert.Contains(t, res.stdout, "      version: v1.13.7\n  storageClass: replicated\n")

	r = catalogOf(t, exitOK, "-f", snippet, "--cluster", td("state", "golden.yaml"))
	assert.Nil(t, r.Platform, "no release values to layer over")
}
