package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/cozystack/golden-worker-images/internal/rollout"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stockExample is the stock example cluster: the catalog as the operator's
// Package, publishing a closed network's factory, installer and mirrors.
var stockExample = support.Path("examples", "cluster-state.yaml")

// readmeFlavor is the README's "Adding a flavor" file in the catalog's own
// values, with a schematic ID in place of its placeholder.
func readmeFlavor(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile(support.Path("README.md"))
	require.NoError(t, err)
	section := string(raw)[strings.Index(string(raw), "### Adding a flavor"):]
	m := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindStringSubmatch(section)
	require.NotNil(t, m, "the section has a yaml block")
	require.True(t, strings.HasPrefix(m[1], "images:\n"), "the catalog's own values come first: %q", m[1])
	return writeTemp(t, "flavor.yaml", strings.ReplaceAll(m[1], "<your schematic ID>", strings.Repeat("ab", 32)))
}

func removalKeys(r report.CatalogReport) []string {
	out := []string{}
	for _, x := range r.Removes {
		out = append(out, x.Key)
	}
	return out
}

// catalog -f on a stock cluster merges the file over the Package's values as
// helm upgrade --reuse-values -f does: the README's partial file keeps the
// published mirrors, installer and factory, and says, each on its own line,
// the entries its list (replaced whole) removes; a null deletes; --reset-values
// previews the file alone and says every default it unpublishes.
func TestCatalogMergesOverTheClustersPackage(t *testing.T) {
	flavor := readmeFlavor(t)
	r := catalogOf(t, exitOK, "-f", flavor, "--cluster", stockExample)
	assert.Equal(t, "registry.mirror.internal/siderolabs/installer", render.Get(r.Values, "tenantWorkers.talos.installerRepository"))
	assert.Equal(t, "https://factory.mirror.internal", render.Get(r.Values, "tenantWorkers.talos.imageFactoryURL"))
	assert.Len(t, render.Get(r.Values, "registries.mirrors"), 2)
	for _, f := range r.Publishes.Fields {
		assert.False(t, f.Changes, "nothing published moves: %s", f.Field)
	}
	assert.Equal(t, r.Values, render.Get(r.Package, "spec.components.kubernetes-worker-image.values"), "the Package printed holds what is previewed")
	assert.Equal(t, []string{"images[] {schematicID: " + defaultSchematic + ", version: v1.13.5}"}, removalKeys(r), "the Package lists v1.13.5, the file's list does not")
	text := cli(t, "catalog", "-f", flavor, "--cluster", stockExample).stdout
	assert.Contains(t, text, "\n  installer      registry.mirror.internal/siderolabs/installer  (unchanged)\n")
	assert.Contains(t, text, "\nremoves  images[] {schematicID: "+defaultSchematic+", version: v1.13.5}: its golden "+goldenName("v1.13.5")+" is no longer managed by the catalog (Helm keeps it while it lives)\n")
	assert.Contains(t, text, "\n            installerRepository: registry.mirror.internal/siderolabs/installer\n", "the Package to apply keeps it")

	// The file: only the new version. Both entries the Package
	// lists are removed, each said; nothing published is.
	r = catalogOf(t, exitOK, "-f", writeTemp(t, "new.yaml", "images: [{schematicID: "+defaultSchematic+", version: v1.13.8}]\n"), "--cluster", stockExample)
	assert.Equal(t, []string{"images[] {schematicID: " + defaultSchematic + ", version: v1.13.5}", "images[] {schematicID: " + defaultSchematic + ", version: v1.13.6}"}, removalKeys(r))
	assert.Equal(t, "https://factory.mirror.internal", r.TenantFactory.Value)

	// A file that only adds a registry CA keeps every mirror.
	ca, err := os.ReadFile(support.Path("examples", "platform", "mirror-ca.pem"))
	require.NoError(t, err)
	r = catalogOf(t, exitOK, "-f", writeTemp(t, "ca.yaml", "registries:\n  config:\n    registry.mirror.internal:\n      tls:\n        ca: |\n"+indent(string(ca), "          ")), "--cluster", stockExample)
	assert.Empty(t, r.Removes)
	assert.Len(t, render.Get(r.Values, "registries.mirrors"), 2)
	assert.Contains(t, render.Get(r.Values, "registries.config"), "registry.mirror.internal")

	// null deletes a key, as Helm's merge does, and the removal is said.
	r = catalogOf(t, exitOK, "-f", writeTemp(t, "null.yaml", "registries: {mirrors: {docker.io: null}}\n"), "--cluster", stockExample)
	assert.Equal(t, []report.CatalogRemoval{{Kind: report.RemovesDefault, Key: "registries.mirrors.docker.io", Was: "https://registry.mirror.internal/v2/docker.io"}}, r.Removes)
	assert.Equal(t, []string{"factory.talos.dev"}, report.SortedKeys(render.Get(r.Package, "spec.components.kubernetes-worker-image.values.registries.mirrors").(map[string]any)))

	// --reset-values: the file alone; every default it drops, each line.
	r = catalogOf(t, exitOK, "-f", flavor, "--reset-values", "--cluster", stockExample)
	assert.Equal(t, []string{
		"tenantWorkers.talos.installerRepository",
		"tenantWorkers.talos.imageFactoryURL",
		"registries.mirrors.docker.io",
		"registries.mirrors.factory.talos.dev",
		"images[] {schematicID: " + defaultSchematic + ", version: v1.13.5}",
	}, removalKeys(r))
	assert.Contains(t, r.MergedOver, "the -f files alone (--reset-values, as Helm's flag)")
	text = cli(t, "catalog", "-f", flavor, "--reset-values", "--cluster", stockExample).stdout
	for _, line := range []string{
		"\nremoves  tenantWorkers.talos.installerRepository (registry.mirror.internal/siderolabs/installer): no longer published for new pools\n",
		"\nremoves  tenantWorkers.talos.imageFactoryURL (https://factory.mirror.internal): no longer published for new pools\n",
		"\nremoves  registries.mirrors.docker.io (https://registry.mirror.internal/v2/docker.io): no longer published for new pools\n",
		"\nremoves  registries.mirrors.factory.talos.dev (https://registry.mirror.internal/v2/factory.talos.dev): no longer published for new pools\n",
	} {
		assert.Contains(t, text, line)
	}

	// --reset-values says what it resets: without -f there is nothing.
	requireProblem(t, cli(t, "catalog", "--reset-values", "--cluster", stockExample), "--reset-values previews the -f files alone: give the values with -f")
}

// Where this repository's platform release holds the catalog's values,
// platform values merge over the release's values (as helm upgrade
// --reuse-values): the preview renders what the merged values forward, the
// whole values printed keep _cluster's defaults; --reset-values says each
// default and switch the file alone drops.
func TestCatalogMergesPlatformValuesOverTheRelease(t *testing.T) {
	state := writeTemp(t, "cluster.yaml", mustRead(t, stockState)+platformRecord(t, map[string]any{
		"tenantWorkers":         map[string]any{"talos": map[string]any{"imageFactoryURL": "https://factory.platform.internal", "installerRepository": "registry.mirror.internal/siderolabs/installer"}},
		"registries":            map[string]any{"mirrors": map[string]any{"docker.io": map[string]any{"endpoints": []any{"https://registry.mirror.internal/v2/docker.io"}}}},
		"kubernetesWorkerImage": map[string]any{"storageClass": "replicated", "monitoring": map[string]any{"enabled": true}},
	}))
	file := writeTemp(t, "platform.yaml", "kubernetesWorkerImage:\n  images:\n    - {schematicID: "+defaultSchematic+", version: v1.13.6}\n    - {schematicID: "+defaultSchematic+", version: v1.13.8}\n")
	r := catalogOf(t, exitOK, "-f", file, "--cluster", state)
	assert.Equal(t, report.ShapePlatform, r.ChangeShape)
	assert.Equal(t, "https://factory.platform.internal", render.Get(r.Platform, "tenantWorkers.talos.imageFactoryURL"))
	assert.Equal(t, true, render.Get(r.Values, "monitoring.enabled"), "the release's kubernetesWorkerImage reaches the preview")
	assert.Len(t, render.Get(r.Values, "images"), 2)
	assert.Equal(t, "https://factory.platform.internal", r.TenantFactory.Value)
	assert.Empty(t, r.Removes, "the release lists no images: the default v1.13.6 is kept")

	r = catalogOf(t, exitOK, "-f", file, "--reset-values", "--cluster", state)
	assert.Nil(t, render.Get(r.Platform, "tenantWorkers"))
	assert.Equal(t, []string{"tenantWorkers.talos.installerRepository", "tenantWorkers.talos.imageFactoryURL", "registries.mirrors.docker.io", "kubernetesWorkerImage.monitoring.enabled"}, removalKeys(r))
	assert.Contains(t, r.RemovesFrom, "the platform release's values")
}

// A typo anywhere in the values (nested keys, an images[] entry, a
// registry host's mirror) is bad input, exit 2, as a top-level one is: it
// names the key, where it is and the nearest key; the neighbour previews.
func TestCatalogRefusesNestedTypos(t *testing.T) {
	pkg := func(values string) string {
		return "apiVersion: cozystack.io/v1alpha1\nkind: Package\nmetadata: {name: cozystack.kubernetes-worker-image}\nspec: {components: {kubernetes-worker-image: {values: " + values + "}}}\n"
	}
	for _, c := range []struct {
		name, bad, good string
		fragments       []string
	}{
		{"tenantWorkers.talos", "tenantWorkers: {talos: {imageFactoryUrl: https://factory.mirror.internal}}\n", "tenantWorkers: {talos: {imageFactoryURL: https://factory.mirror.internal}}\n",
			[]string{`the values at tenantWorkers.talos: "imageFactoryUrl" is not a key of tenantWorkers.talos in the catalog's own values`, "did you mean imageFactoryURL?"}},
		{"an images entry", "images: [{schematicID: " + defaultSchematic + ", version: v1.13.6, retier: true}]\n", "images: [{schematicID: " + defaultSchematic + ", version: v1.13.6}]\n",
			[]string{`the values at images[0]: "retier" is not a key of images[0]`, "did you mean retire?"}},
		{"a mirror", "registries: {mirrors: {docker.io: {endpoint: [https://registry.mirror.internal/v2/docker.io]}}}\n", "registries: {mirrors: {docker.io: {endpoints: [https://registry.mirror.internal/v2/docker.io]}}}\n",
			[]string{`the values at registries.mirrors.docker.io: "endpoint" is not a key of registries.mirrors.docker.io`, "did you mean endpoints?"}},
		{"monitoring", "monitoring: {enable: true}\n", "monitoring: {enabled: true}\n",
			[]string{`"enable" is not a key of monitoring`, "did you mean enabled?"}},
		{"a Package's values", pkg("{tenantWorkers: {osImage: {builtin: {versoin: v1.13.6}}}}"), pkg("{tenantWorkers: {osImage: {builtin: {version: v1.13.6}}}}"),
			[]string{`the Package's spec.components.kubernetes-worker-image.values at tenantWorkers.osImage.builtin: "versoin" is not a key`, "did you mean version?"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			requireProblem(t, cli(t, "catalog", "-f", writeTemp(t, "bad.yaml", c.bad), "--cluster", stockState), append(c.fragments, "refused rather than ignored")...)
			good := cli(t, "catalog", "-f", writeTemp(t, "good.yaml", c.good), "--cluster", stockState, "-o", "json")
			assert.NotEqual(t, exitProblem, good.code, good.stderr)
		})
	}
}

// rollout's printed Package keeps an entry the cluster's Package lists
// whose golden is not created yet, as the Package writes it, beside the
// entries read back from the goldens and the new one.
func TestRolloutPackageKeepsEntriesNotCreatedYet(t *testing.T) {
	raw := mustRead(t, stockExample)
	listed := "            additionalStorageClasses: [ceph-rbd]\n---"
	require.Equal(t, 1, strings.Count(raw, listed))
	state := writeTemp(t, "cluster.yaml", strings.Replace(raw, listed, "            additionalStorageClasses: [ceph-rbd]\n          - {schematicID: "+defaultSchematic+", version: v1.13.7, storage: 8Gi}\n---", 1))
	res := cli(t, "rollout", "--to-talos", "v1.13.8", "-n", "tenant-acme", "--cluster", state, "-o", "json")
	require.NotEqual(t, exitProblem, res.code, res.stderr)
	rep := decode[rollout.RolloutPlan](t, res)
	require.NotNil(t, rep.Catalog)
	var versions []string
	for _, e := range rep.Catalog.Images {
		versions = append(versions, e.Entry.Version+"/"+e.Change)
	}
	assert.Equal(t, []string{"v1.13.5/kept", "v1.13.6/kept", "v1.13.7/listed", "v1.13.8/new"}, versions)
	assert.Contains(t, rep.Catalog.Values, "          # kept as the cluster's catalog values list it: its golden "+goldenName("v1.13.7")+" is not created yet\n          - schematicID: "+defaultSchematic+"\n            version: v1.13.7\n            storage: 8Gi\n")
}
