package main

import (
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// --to-apply prints exactly what the text report ends with (the Package to
// apply, on the stock example), and nothing else, so a pipe into kubectl
// apply applies what was previewed: the file's images, merged over the
// Package's published mirrors and installer.
func TestCatalogToApplyIsThePackageThePreviewEndsWith(t *testing.T) {
	state := support.Path("examples", "cluster-state.yaml")
	fix := writeTemp(t, "talos-fix.yaml", `images:
  - schematicID: `+defaultSchematic+`
    version: v1.13.6
    additionalStorageClasses: [ceph-rbd]
  - schematicID: `+defaultSchematic+`
    version: v1.13.8
`)
	text := cli(t, "catalog", "-f", fix, "--cluster", state)
	require.Equal(t, exitOK, text.code, text.stderr)
	_, tail, ok := strings.Cut(text.stdout, "The whole Package to apply (kubectl apply -f FILE):\n")
	require.True(t, ok, "the report ends with the Package:\n%s", text.stdout)

	res := cli(t, "catalog", "-f", fix, "--cluster", state, "--to-apply")
	require.Equal(t, exitOK, res.code, res.stderr)
	assert.Equal(t, tail, res.stdout, "--to-apply prints the report's Package alone")

	var pkg struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct{ Name string }
		Spec       struct {
			Components map[string]struct {
				Values map[string]any `json:"values"`
			} `json:"components"`
		} `json:"spec"`
	}
	require.NoError(t, yaml.Unmarshal([]byte(res.stdout), &pkg))
	assert.Equal(t, "Package", pkg.Kind)
	assert.Equal(t, "cozystack.kubernetes-worker-image", pkg.Metadata.Name)
	values := pkg.Spec.Components["kubernetes-worker-image"].Values
	images, _ := values["images"].([]any)
	require.Len(t, images, 2)
	assert.Equal(t, "v1.13.8", images[1].(map[string]any)["version"])
	assert.NotNil(t, values["registries"], "the mirrors the cluster's Package publishes stay")
	assert.Equal(t, "registry.mirror.internal/siderolabs/installer", values["tenantWorkers"].(map[string]any)["talos"].(map[string]any)["installerRepository"])

	// The printed Package, previewed as a file, renders as the same change:
	// it removes what the file's preview said it removes; a whole Package is applied as it is, so
	// --to-apply has nothing to add to it (exit 2, saying so).
	pkgFile := writeTemp(t, "package.yaml", res.stdout)
	assert.Equal(t, removalKeys(catalogOf(t, exitOK, "-f", fix, "--cluster", state)), removalKeys(catalogOf(t, exitOK, "-f", pkgFile, "--cluster", state)))
	assert.Len(t, removalKeys(catalogOf(t, exitOK, "-f", pkgFile, "--cluster", state)), 1, "the v1.13.5 entry the file leaves out")
	whole := cli(t, "catalog", "-f", pkgFile, "--cluster", state, "--to-apply")
	assert.Equal(t, exitProblem, whole.code)
	assert.Empty(t, whole.stdout)
	assert.Contains(t, whole.stderr, "apply it as it is")
}

// Platform values, where this repository's platform release holds the
// catalog's values: --to-apply prints them whole, as the report ends with.
func TestCatalogToApplyPrintsPlatformValuesWhole(t *testing.T) {
	state := writeTemp(t, "cluster.yaml", mustRead(t, stockState)+platformRecord(t, map[string]any{
		"tenantWorkers": map[string]any{"talos": map[string]any{"imageFactoryURL": "https://factory.platform.internal"}},
	}))
	file := writeTemp(t, "platform.yaml", "kubernetesWorkerImage:\n  images:\n    - {schematicID: "+defaultSchematic+", version: v1.13.6}\n    - {schematicID: "+defaultSchematic+", version: v1.13.8}\n")
	text := cli(t, "catalog", "-f", file, "--cluster", state)
	require.Equal(t, exitOK, text.code, text.stderr)
	_, tail, ok := strings.Cut(text.stdout, "The whole values to apply (helm upgrade cozystack -n cozy-system -f FILE):\n")
	require.True(t, ok, text.stdout)
	tail, _, _ = strings.Cut(tail, "\nnext: ")
	res := cli(t, "catalog", "-f", file, "--cluster", state, "--to-apply")
	require.Equal(t, exitOK, res.code, res.stderr)
	assert.Equal(t, strings.TrimSuffix(tail, "\n")+"\n", res.stdout)
	var values map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(res.stdout), &values))
	assert.Equal(t, "https://factory.platform.internal", values["tenantWorkers"].(map[string]any)["talos"].(map[string]any)["imageFactoryURL"], "the release's values stay")
	assert.Len(t, values["kubernetesWorkerImage"].(map[string]any)["images"], 2)
}

// A refused change prints nothing to apply: stdout stays empty (a pipe into
// kubectl applies nothing), the refusal is on stderr, exit 1 as the report's.
func TestCatalogToApplyPrintsNothingForARefusal(t *testing.T) {
	state := support.Path("examples", "platform", "cluster-state.yaml")
	res := cli(t, "catalog", "-f", support.Path("examples", "platform", "closed-network.yaml"), "--cluster", state, "--to-apply")
	assert.Equal(t, exitAttn, res.code)
	assert.Empty(t, res.stdout)
	assert.Contains(t, res.stderr, "nothing to apply")
	assert.Contains(t, res.stderr, "was edited after its golden was created")
}
