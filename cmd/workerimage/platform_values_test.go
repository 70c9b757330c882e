package main

import (
	"os"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/cozystack/golden-worker-images/internal/rollout"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
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

	assert.Equal(t, report.ShapePlatform, r.Catalog.ChangeShape)

	// The neighbours: no record and no Package, the Package as a stock
	// Cozystack installs it, and it says so; no record and the operator's
	// Package, that Package whole, every field it holds kept.
	r = adoptOf(t, "-cluster", td("adopt", "fleet.yaml"))
	assert.False(t, r.Catalog.WholePlatform)
	assert.Equal(t, report.ShapePackage, r.Catalog.ChangeShape)
	assert.Contains(t, r.Catalog.ValuesFrom, "the cluster holds no Package cozystack.kubernetes-worker-image and no Helm release record of this repository's platform chart (release cozy-system/cozystack) is readable")
	assert.NotContains(t, r.Catalog.Values, "bundles:")
	assert.NotContains(t, r.Catalog.Values, "kubernetesWorkerImage")

	withPackage := writeTemp(t, "fleet.yaml", string(base)+`---
apiVersion: cozystack.io/v1alpha1
kind: Package
metadata: {name: cozystack.kubernetes-worker-image, uid: 1234, resourceVersion: "9"}
spec:
  variant: default
  ignoreDependencies: [cozystack.kubevirt-cdi]
  components:
    kubernetes-worker-image:
      values:
        storageClass: replicated
        cloneSubjects: [{kind: Group, apiGroup: rbac.authorization.k8s.io, name: "system:serviceaccounts:tenant-acme"}]
        tenantWorkers: {talos: {imageFactoryURL: https://factory.mirror.internal}}
status: {conditions: [{type: Ready, status: "True"}]}
`)
	r = adoptOf(t, "-cluster", withPackage)
	assert.Equal(t, report.ShapePackage, r.Catalog.ChangeShape)
	assert.False(t, r.Catalog.WholePlatform)
	assert.Contains(t, r.Catalog.ValuesFrom, "the Package cozystack.kubernetes-worker-image as the cluster holds it")
	var pkg map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(r.Catalog.Values), &pkg))
	pkgValues := pkg["spec"].(map[string]any)["components"].(map[string]any)["kubernetes-worker-image"].(map[string]any)["values"].(map[string]any)
	assert.Len(t, pkgValues["images"], 3, "the catalog's whole list")
	delete(pkgValues, "images")
	assert.Equal(t, map[string]any{
		"apiVersion": "cozystack.io/v1alpha1", "kind": "Package", "metadata": map[string]any{"name": "cozystack.kubernetes-worker-image"},
		"spec": map[string]any{"variant": "default", "ignoreDependencies": []any{"cozystack.kubevirt-cdi"}, "components": map[string]any{"kubernetes-worker-image": map[string]any{"values": map[string]any{
			"storageClass":  "replicated",
			"cloneSubjects": []any{map[string]any{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "system:serviceaccounts:tenant-acme"}},
			"tenantWorkers": map[string]any{"talos": map[string]any{"imageFactoryURL": "https://factory.mirror.internal"}},
		}}}},
	}, pkg, "the Package as the cluster holds it, its metadata but the name and its status left out")
	res = cli(t, "adopt", "-cluster", withPackage)
	require.Equal(t, exitOK, res.code, res.stderr)
	assert.Contains(t, res.stdout, "\ncatalog: the catalog's Package with its new images list, complete: the Package cozystack.kubernetes-worker-image as the cluster holds it")
	assert.Contains(t, res.stdout, "apply it with kubectl apply -f FILE")
	assert.NotContains(t, res.stdout, "upgrade the platform")
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

// rollout prints the catalog change it waits for as adopt does, in the shape
// the cluster holds the catalog's values: on the operator's Package, that
// Package whole to apply with kubectl; with the platform's release record,
// the platform's values.
func TestRolloutCatalogChangeFollowsWhatRuns(t *testing.T) {
	base, err := os.ReadFile(rolloutFixture)
	require.NoError(t, err)
	args := []string{"rollout", "--to-talos", "v1.13.8", "-n", "tenant-beta"}
	withPackage := writeTemp(t, "cluster.yaml", string(base)+catalogPackageOf("{storageClass: replicated, tenantWorkers: {talos: {imageFactoryURL: https://factory.mirror.internal}}}"))
	res := cli(t, append(args, "--cluster", withPackage, "-o", "json")...)
	require.Equal(t, exitAttn, res.code, res.stderr)
	r := decode[rollout.RolloutPlan](t, res)
	require.NotNil(t, r.Catalog)
	require.True(t, r.Catalog.Changed)
	assert.Equal(t, report.ShapePackage, r.Catalog.ChangeShape)
	var pkg map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(r.Catalog.Values), &pkg))
	assert.Equal(t, "Package", pkg["kind"])
	values := pkg["spec"].(map[string]any)["components"].(map[string]any)["kubernetes-worker-image"].(map[string]any)["values"].(map[string]any)
	assert.Equal(t, "https://factory.mirror.internal", render.Get(values, "tenantWorkers.talos.imageFactoryURL"), "every key the Package holds is kept")
	assert.Contains(t, r.Catalog.Values, "version: v1.13.8")
	text := cli(t, append(args, "--cluster", withPackage)...).stdout
	assert.Contains(t, text, "\ncatalog: the catalog's Package with its new images list, complete: the Package cozystack.kubernetes-worker-image as the cluster holds it")
	assert.NotContains(t, text, "upgrade the platform")

	// The neighbour: the platform's release record, its values.
	withRecord := writeTemp(t, "cluster.yaml", string(base)+platformRecord(t, map[string]any{"kubernetesWorkerImage": map[string]any{"storageClass": "replicated"}}))
	res = cli(t, append(args, "--cluster", withRecord, "-o", "json")...)
	require.Equal(t, exitAttn, res.code, res.stderr)
	r = decode[rollout.RolloutPlan](t, res)
	assert.Equal(t, report.ShapePlatform, r.Catalog.ChangeShape)
	assert.True(t, strings.HasPrefix(r.Catalog.Values, "kubernetesWorkerImage:\n  storageClass: replicated\n  images:\n"), r.Catalog.Values)
}
