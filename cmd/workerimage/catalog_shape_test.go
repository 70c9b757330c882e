package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// stockState is a stock Cozystack: the catalog as the operator's Package,
// with the published ConfigMap, two goldens and pools.
var stockState = td("stock", "cluster.yaml")

// packageValues are the catalog's values a Package holds.
func packageValues(t *testing.T, pkg map[string]any) map[string]any {
	t.Helper()
	v, ok := render.Get(pkg, "spec.components.kubernetes-worker-image.values").(map[string]any)
	require.True(t, ok, "the Package holds values: %v", pkg)
	return v
}

// catalog -f reads the catalog's own values (what its Package holds), platform
// values and a whole Package, says which, and prints the change in the shape
// the cluster holds the catalog's values: on a stock Cozystack the Package,
// as the cluster holds it, with exactly the values previewed.
func TestCatalogReadsEachShape(t *testing.T) {
	stockFile := support.Path("examples", "stock-cozystack", "catalog-values.yaml")
	raw, err := os.ReadFile(stockFile)
	require.NoError(t, err)
	var fileValues map[string]any
	require.NoError(t, yaml.Unmarshal(raw, &fileValues))

	// The stock example's catalog values: tenantWorkers and registries,
	// which both shapes take, on a cluster whose catalog is a Package. They
	// merge over the Package's values (--reuse-values): the cluster's
	// storageClass and images stay, so nothing is removed.
	r := catalogOf(t, exitOK, "-f", stockFile, "--cluster", stockState)
	assert.Equal(t, report.ValuesCatalog, r.ValuesShape)
	assert.Equal(t, "they set only keys both shapes take, and the cluster's catalog is a Package", r.ValuesShapeWhy)
	held := map[string]any{}
	for k, v := range fileValues {
		held[k] = v
	}
	held["storageClass"] = "replicated"
	held["images"] = []any{map[string]any{"schematicID": defaultSchematic, "version": "v1.13.5"}, map[string]any{"schematicID": defaultSchematic, "version": "v1.13.6"}}
	assert.Equal(t, held, r.Values, "every key of the file reaches the catalog, over every key the Package holds")
	assert.Equal(t, held, packageValues(t, r.Package), "the Package holds exactly the values previewed")
	assert.Equal(t, map[string]string{goldenName("v1.13.5"): report.GoldenKeeps, goldenName("v1.13.6"): report.GoldenKeeps}, outcomes(r))
	assert.Empty(t, r.Removes)
	assert.Contains(t, r.MergedOver, "the -f files merged over the values of the cluster's Package cozystack.kubernetes-worker-image (spec.components.kubernetes-worker-image.values) as helm upgrade --reuse-values -f merges them")

	// --reset-values: the file alone, as Helm's flag. Its images are the
	// catalog's default: the golden the Package lists besides is dropped,
	// and its entry's removal is said on its own line.
	r = catalogOf(t, exitOK, "-f", stockFile, "--reset-values", "--cluster", stockState)
	assert.Equal(t, fileValues, r.Values, "every key reaches the catalog: none dropped")
	assert.Nil(t, r.Enabled)
	assert.Equal(t, report.ShapePackage, r.ChangeShape)
	assert.Nil(t, r.Platform)
	assert.Equal(t, "cozystack.kubernetes-worker-image", render.Get(r.Package, "metadata.name"))
	assert.Equal(t, "default", render.Get(r.Package, "spec.variant"), "the Package as the cluster holds it")
	assert.Equal(t, fileValues, packageValues(t, r.Package), "the Package holds exactly the values previewed")
	assert.Contains(t, r.PackageFrom, "the Package cozystack.kubernetes-worker-image as the cluster holds it")
	assert.Equal(t, map[string]string{goldenName("v1.13.5"): report.GoldenDropped, goldenName("v1.13.6"): report.GoldenKeeps}, outcomes(r))
	assert.Equal(t, []report.CatalogRemoval{{Kind: report.RemovesImage, Key: "images[] {schematicID: " + defaultSchematic + ", version: v1.13.5}", Was: "golden " + goldenName("v1.13.5")}}, r.Removes)
	text := cli(t, "catalog", "-f", stockFile, "--reset-values", "--cluster", stockState).stdout
	assert.Contains(t, text, "\nremoves  images[] {schematicID: "+defaultSchematic+", version: v1.13.5}: its golden "+goldenName("v1.13.5")+" is no longer managed by the catalog (Helm keeps it while it lives)\n")
	assert.Contains(t, text, "\nvalues           the catalog's own values "+stockFile+" (what its Package holds under spec.components.kubernetes-worker-image.values)\n")
	assert.Contains(t, text, "\nread as          the catalog's own values: they set only keys both shapes take, and the cluster's catalog is a Package\n")
	assert.Contains(t, text, "\nPackage: the Package cozystack.kubernetes-worker-image as the cluster holds it")
	assert.Contains(t, text, "The whole Package to apply (kubectl apply -f FILE):\napiVersion: cozystack.io/v1alpha1\nkind: Package\nmetadata:\n  name: cozystack.kubernetes-worker-image\nspec:\n  components:\n    kubernetes-worker-image:\n      values:\n        registries:\n")

	// A key only the catalog's own values take tells the shape by itself.
	own := writeTemp(t, "catalog.yaml", "storageClass: replicated\nimages:\n  - {schematicID: "+defaultSchematic+", version: v1.13.5}\n  - {schematicID: "+defaultSchematic+", version: v1.13.6}\n")
	r = catalogOf(t, exitOK, "-f", own, "--cluster", stockState)
	assert.Equal(t, report.ValuesCatalog, r.ValuesShape)
	assert.Equal(t, "they set images, storageClass, which only the catalog's own values take", r.ValuesShapeWhy)
	assert.Equal(t, map[string]string{goldenName("v1.13.5"): report.GoldenKeeps, goldenName("v1.13.6"): report.GoldenKeeps}, outcomes(r))

	// Platform values on that cluster: previewed as the platform forwards
	// them, merged over the Package's values, and printed as the Package
	// holding them.
	platform := writeTemp(t, "platform.yaml", "kubernetesWorkerImage:\n  storageClass: replicated\n  images:\n    - {schematicID: "+defaultSchematic+", version: v1.13.6}\ntenantWorkers: {talos: {imageFactoryURL: https://factory.mirror.internal}}\n")
	r = catalogOf(t, exitOK, "-f", platform, "--cluster", stockState)
	assert.Equal(t, "registry.mirror.internal/siderolabs/installer", render.Get(r.Values, "tenantWorkers.talos.installerRepository"), "the Package's published defaults stay")
	assert.Equal(t, r.Values, packageValues(t, r.Package))
	assert.Equal(t, []report.CatalogRemoval{{Kind: report.RemovesImage, Key: "images[] {schematicID: " + defaultSchematic + ", version: v1.13.5}", Was: "golden " + goldenName("v1.13.5")}}, r.Removes, "the list replaced whole")
	r = catalogOf(t, exitOK, "-f", platform, "--reset-values", "--cluster", stockState)
	assert.Equal(t, report.ValuesPlatform, r.ValuesShape)
	assert.Equal(t, "they set kubernetesWorkerImage, which only platform values take", r.ValuesShapeWhy)
	require.NotNil(t, r.Enabled)
	assert.Equal(t, report.ShapePackage, r.ChangeShape)
	assert.Equal(t, r.Values, packageValues(t, r.Package))
	assert.Equal(t, map[string]any{"storageClass": "replicated", "images": []any{map[string]any{"schematicID": defaultSchematic, "version": "v1.13.6"}}}, r.Values)
	assert.Contains(t, r.ChangeNote, "these platform values also set tenantWorkers, which reach pools through _cluster only where the platform chart carries them, and no release of such a platform chart is readable here: on a stock Cozystack, give them in the Package's values instead")

	// The Package adopt prints for this cluster, whole: read as the Package,
	// applied as it is.
	res := cli(t, "adopt", "--cluster", stockState, "-o", "json")
	require.Equal(t, exitOK, res.code, res.stderr)
	pkgFile := writeTemp(t, "package.yaml", decode[report.AdoptReport](t, res).Catalog.Values)
	r = catalogOf(t, exitOK, "-f", pkgFile, "--cluster", stockState)
	assert.Equal(t, report.ValuesPackage, r.ValuesShape)
	assert.Equal(t, "renders", r.Result)
	assert.Equal(t, map[string]string{goldenName("v1.13.4"): report.GoldenCreates, goldenName("v1.13.5"): report.GoldenKeeps, goldenName("v1.13.6"): report.GoldenKeeps}, outcomes(r), "adopt's Package: every entry kept as its golden shows it, the new one created")
	assert.Equal(t, "the Package is the file whole: apply it as it is, kubectl apply -f "+pkgFile, r.ChangeNote)
	assert.Empty(t, r.ChangeShape)
	assert.Equal(t, "https://factory.mirror.internal", render.Get(r.Values, "tenantWorkers.talos.imageFactoryURL"), "every key the cluster's Package holds")

	// Layered Package files: the Package they make, whole.
	more := writeTemp(t, "more.yaml", "spec: {components: {kubernetes-worker-image: {values: {storage: 8Gi}}}}\n")
	r = catalogOf(t, exitOK, "-f", pkgFile, "-f", more, "--cluster", stockState)
	assert.Equal(t, report.ShapePackage, r.ChangeShape)
	assert.Equal(t, "8Gi", render.Get(r.Package, "spec.components.kubernetes-worker-image.values.storage"))
	assert.Equal(t, "the -f files, layered as Helm layers -f files", r.PackageFrom)

	// A Package that turns its component off: previewed as if it were on.
	off := writeTemp(t, "off.yaml", "apiVersion: cozystack.io/v1alpha1\nkind: Package\nmetadata: {name: cozystack.kubernetes-worker-image}\nspec: {components: {kubernetes-worker-image: {enabled: false, values: {storageClass: replicated}}}}\n")
	r = catalogOf(t, exitOK, "-f", off, "--cluster", stockState)
	require.NotNil(t, r.Enabled)
	assert.False(t, *r.Enabled)
	assert.Contains(t, cli(t, "catalog", "-f", off, "--cluster", stockState).stdout, "\nenabled          no: the Package sets spec.components.kubernetes-worker-image.enabled: false, so the operator installs no catalog; previewed as if it did\n")

	// Values the catalog refuses (a golden's storage edited): nothing to
	// apply, in either shape.
	for _, edited := range []string{
		writeTemp(t, "edited.yaml", "storage: 9Gi\nimages: [{schematicID: "+defaultSchematic+", version: v1.13.6}]\n"),
		writeTemp(t, "edited-package.yaml", "apiVersion: cozystack.io/v1alpha1\nkind: Package\nmetadata: {name: cozystack.kubernetes-worker-image}\nspec: {components: {kubernetes-worker-image: {values: {storage: 9Gi, images: [{schematicID: "+defaultSchematic+", version: v1.13.6}]}}}}\n"),
	} {
		r = catalogOf(t, exitAttn, "-f", edited, "--cluster", stockState)
		assert.Equal(t, report.GoldenRefusesEdit, outcomes(r)[goldenName("v1.13.6")])
		assert.Empty(t, r.ChangeShape, edited)
		assert.Nil(t, r.Package)
		assert.Empty(t, r.ChangeNote)
		assert.NotContains(t, cli(t, "catalog", "-f", edited, "--cluster", stockState).stdout, "to apply")
	}
}

// Where this repository's platform release holds the catalog's values,
// catalog -f of the catalog's own values or of a Package says to give them
// in the platform's values instead (an applied Package would be overwritten
// at its next upgrade); platform values get the platform's whole values. A
// file with only keys both shapes take is read as platform values there.
func TestCatalogOnThePlatformsCatalog(t *testing.T) {
	withRecord := writeTemp(t, "cluster.yaml", mustRead(t, stockState)+platformRecord(t, map[string]any{"kubernetesWorkerImage": map[string]any{"storageClass": "replicated"}}))
	for _, file := range []string{
		writeTemp(t, "catalog.yaml", "storageClass: replicated\n"),
		writeTemp(t, "package.yaml", "apiVersion: cozystack.io/v1alpha1\nkind: Package\nmetadata: {name: cozystack.kubernetes-worker-image}\nspec: {components: {kubernetes-worker-image: {values: {storageClass: replicated}}}}\n"),
	} {
		r := catalogOf(t, exitOK, "-f", file, "--cluster", withRecord)
		assert.Empty(t, r.ChangeShape, file)
		assert.Nil(t, r.Package)
		assert.Contains(t, r.ChangeNote, "the cluster's catalog values are the platform's (the values of the platform's release cozy-system/cozystack")
		assert.Contains(t, r.ChangeNote, "give these values under kubernetesWorkerImage in the platform's values")
	}
	shared := writeTemp(t, "shared.yaml", "tenantWorkers: {talos: {imageFactoryURL: https://factory.mirror.internal}}\n")
	r := catalogOf(t, exitOK, "-f", shared, "--cluster", withRecord)
	assert.Equal(t, report.ValuesPlatform, r.ValuesShape)
	assert.Equal(t, "they set only keys both shapes take, and the cluster's catalog values are the platform's", r.ValuesShapeWhy)
	assert.Equal(t, report.ShapePlatform, r.ChangeShape)
	assert.Equal(t, "https://factory.mirror.internal", render.Get(r.Platform, "tenantWorkers.talos.imageFactoryURL"))
	assert.Equal(t, "replicated", render.Get(r.Platform, "kubernetesWorkerImage.storageClass"), "the release's values, the file layered over them")
	// The same file on the stock cluster is the catalog's own values.
	assert.Equal(t, report.ValuesCatalog, catalogOf(t, exitOK, "-f", shared, "--cluster", stockState).ValuesShape)
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(raw)
}

// A key catalog would otherwise ignore is bad input (exit 2, one line,
// nothing on stdout) naming the key, the shape read and the nearest key;
// so are keys of both shapes at once, and an object that is not the
// catalog's Package. Each has a neighbour that previews.
func TestCatalogRefusesKeysItWouldIgnore(t *testing.T) {
	pkg := func(spec string) string {
		return "apiVersion: cozystack.io/v1alpha1\nkind: Package\nmetadata: {name: cozystack.kubernetes-worker-image}\nspec: " + spec + "\n"
	}
	for _, c := range []struct {
		name, bad, good string
		fragments       []string
	}{
		{"a misspelt catalog key", "imageFactoryUrl: https://factory.mirror.internal\n", "imageFactoryURL: https://factory.mirror.internal\n",
			[]string{`the values: "imageFactoryUrl" is not a key of the catalog's own values, read as the catalog's own values since they set only keys both shapes take, and the cluster's catalog is a Package`, "did you mean imageFactoryURL?", "refused rather than ignored"}},
		{"a misspelt key beside a catalog key", "images: []\ntenantWorker: {}\n", "images: []\ntenantWorkers: {}\n",
			[]string{`"tenantWorker" is not a key of the catalog's own values, read as the catalog's own values since they set images, which only the catalog's own values take`, "did you mean tenantWorkers?"}},
		{"a catalog key in platform values", "kubernetesWorkerImage: {}\nstorageClas: replicated\n", "kubernetesWorkerImage: {storageClass: replicated}\n",
			[]string{`"storageClas" is not a key of platform values, read as platform values since they set kubernetesWorkerImage`, "did you mean kubernetesWorkerImage.storageClass?"}},
		{"a misspelt platform key", "kubernetesWorkerImag: {}\n", "kubernetesWorkerImage: {}\n",
			[]string{`"kubernetesWorkerImag" is not a key of the catalog's own values`, "did you mean kubernetesWorkerImage?"}},
		{"keys of both shapes", "kubernetesWorkerImage: {}\nimages: []\n", "kubernetesWorkerImage: {images: []}\n",
			[]string{"the values hold both platform values (kubernetesWorkerImage) and the catalog's own values (images): give one shape"}},
		{"a Package without apiVersion and kind", "metadata: {name: cozystack.kubernetes-worker-image}\nspec: {}\n", pkg("{}"),
			[]string{`"metadata" is not a key of the catalog's own values`, "a whole Package needs its apiVersion: cozystack.io/v1alpha1 and kind: Package"}},
		{"another object", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cozystack.kubernetes-worker-image}\n", pkg("{}"),
			[]string{`the values are an object of apiVersion "v1", kind "ConfigMap": a whole object given to catalog -f must be the catalog's Package`}},
		{"another Package", strings.Replace(pkg("{}"), "cozystack.kubernetes-worker-image", "cozystack.kubevirt-cdi", 1), pkg("{}"),
			[]string{`the values are the Package "cozystack.kubevirt-cdi", not the catalog's: its Package is cozystack.kubernetes-worker-image`}},
		{"a misspelt Package field", pkg("{}") + "stauts: {}\n", pkg("{}") + "status: {}\n",
			[]string{`the Package: "stauts" is not a field of a Package, read as the Package cozystack.kubernetes-worker-image`, "did you mean status?"}},
		{"a misspelt spec field", pkg("{componets: {}}"), pkg("{components: {}}"),
			[]string{`the Package's spec: "componets" is not a field of a Package's spec`, "did you mean components?"}},
		{"another component", pkg("{components: {kubernetes-worker-imag: {}}}"), pkg("{components: {kubernetes-worker-image: {}}}"),
			[]string{`the Package's spec.components: "kubernetes-worker-imag" is not a component of the catalog`, "whose PackageSource has the one component kubernetes-worker-image", "did you mean kubernetes-worker-image?"}},
		{"a misspelt component field", pkg("{components: {kubernetes-worker-image: {value: {}}}}"), pkg("{components: {kubernetes-worker-image: {values: {}}}}"),
			[]string{`"value" is not a field of a Package's component`, "did you mean values?"}},
		{"a misspelt key of the Package's values", pkg("{components: {kubernetes-worker-image: {values: {storageclass: replicated}}}}"), pkg("{components: {kubernetes-worker-image: {values: {storageClass: replicated}}}}"),
			[]string{`the Package's spec.components.kubernetes-worker-image.values: "storageclass" is not a key of the catalog's own values, read as the Package cozystack.kubernetes-worker-image`, "did you mean storageClass?"}},
		{"values that are no map", pkg("{components: {kubernetes-worker-image: {values: [a]}}}"), pkg("{components: {kubernetes-worker-image: {values: {}}}}"),
			[]string{"spec.components.kubernetes-worker-image.values is a list, not a map of the catalog's values"}},
		{"enabled that is no bool", pkg(`{components: {kubernetes-worker-image: {enabled: "no"}}}`), pkg("{components: {kubernetes-worker-image: {enabled: false}}}"),
			[]string{`spec.components.kubernetes-worker-image.enabled is the string "no", not true or false`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			requireProblem(t, cli(t, "catalog", "-f", writeTemp(t, "bad.yaml", c.bad), "--cluster", stockState), c.fragments...)
			good := cli(t, "catalog", "-f", writeTemp(t, "good.yaml", c.good), "--cluster", stockState, "-o", "json")
			assert.NotEqual(t, exitProblem, good.code, good.stderr)
			assert.Empty(t, good.stderr)
		})
	}
}

// The preview shows the defaults the values publish for new pools, field by
// field, beside what the cluster's ConfigMap publishes now; with no
// ConfigMap, nothing is published now.
func TestCatalogPreviewsThePublishedDefaults(t *testing.T) {
	moved := writeTemp(t, "catalog.yaml", `tenantWorkers:
  talos:
    imageFactoryURL: https://factory2.mirror.internal
    installerRepository: registry.mirror.internal/siderolabs/installer
registries:
  mirrors:
    docker.io: {endpoints: [https://registry.mirror.internal/v2/docker.io]}
`)
	// Merged over the Package's values, factory.talos.dev's mirror stays;
	// the file alone (--reset-values) publishes only docker.io's, and says
	// the other is removed.
	r := catalogOf(t, exitOK, "-f", moved, "--cluster", stockState)
	for _, f := range r.Publishes.Fields {
		assert.Equal(t, f.Field == "talos.imageFactoryURL", f.Changes, f.Field)
	}
	assert.Empty(t, r.Removes)
	r = catalogOf(t, exitOK, "-f", moved, "--reset-values", "--cluster", stockState)
	assert.Equal(t, []report.CatalogRemoval{
		{Kind: report.RemovesDefault, Key: "registries.mirrors.factory.talos.dev", Was: "https://registry.mirror.internal/v2/factory.talos.dev"},
		{Kind: report.RemovesImage, Key: "images[] {schematicID: " + defaultSchematic + ", version: v1.13.5}", Was: "golden " + goldenName("v1.13.5")},
	}, r.Removes, "the file lists no images: the chart's default list, which lacks the Package's v1.13.5")
	require.NotNil(t, r.Publishes)
	assert.Equal(t, "the cluster's ConfigMap cozy-public/kubernetes-worker-image-tenant-defaults", r.Publishes.NowFrom)
	fields := map[string]report.PublishedField{}
	var order []string
	for _, f := range r.Publishes.Fields {
		fields[f.Field] = f
		order = append(order, f.Field)
	}
	assert.Equal(t, []string{"talos.imageFactoryURL", "talos.imageFactoryCA", "talos.installerRepository", "talos.registryMirrors", "osImage"}, order)
	assert.Equal(t, report.PublishedField{Field: "talos.imageFactoryURL", Publishes: "https://factory2.mirror.internal", Now: "https://factory.mirror.internal", Changes: true}, fields["talos.imageFactoryURL"])
	assert.False(t, fields["talos.installerRepository"].Changes)
	assert.True(t, fields["talos.registryMirrors"].Changes, "factory.talos.dev's mirror is no longer published")
	assert.Equal(t, report.PublishedField{Field: "osImage"}, fields["osImage"])
	assert.Equal(t, &report.Sourced{Value: "https://factory2.mirror.internal", Source: "the catalog publishes it for new pools: its tenantWorkers.talos.imageFactoryURL, in ConfigMap cozy-public/kubernetes-worker-image-tenant-defaults"}, r.TenantFactory)
	text := cli(t, "catalog", "-f", moved, "--reset-values", "--cluster", stockState).stdout
	for _, line := range []string{
		"\n  factory        https://factory2.mirror.internal  (now: https://factory.mirror.internal)\n",
		"\n  factory CA     none  (unchanged)\n",
		"\n  installer      registry.mirror.internal/siderolabs/installer  (unchanged)\n",
		"\n  mirrors        docker.io -> https://registry.mirror.internal/v2/docker.io  (now: docker.io -> https://registry.mirror.internal/v2/docker.io; factory.talos.dev -> https://registry.mirror.internal/v2/factory.talos.dev)\n",
		"\n  osImage        none  (unchanged)\n",
	} {
		assert.Contains(t, text, line)
	}

	// A CA is shown by whether there is one; any other default by its JSON.
	ca, err := os.ReadFile(support.Path("examples", "platform", "mirror-ca.pem"))
	require.NoError(t, err)
	withCA := writeTemp(t, "ca.yaml", "tenantWorkers:\n  talos:\n    imageFactoryCA: |\n"+indent(string(ca), "      ")+"  osImage: {builtin: {}}\n")
	r = catalogOf(t, exitOK, "-f", withCA, "--reset-values", "--cluster", stockState)
	text = cli(t, "catalog", "-f", withCA, "--reset-values", "--cluster", stockState).stdout
	assert.Contains(t, text, "\n  factory CA     set (PEM certificates)  (now: none)\n")
	assert.Contains(t, text, "\n  osImage        {\"builtin\":{}}  (now: none)\n")
	assert.Contains(t, text, "\n  factory        none  (now: https://factory.mirror.internal)\n")
	assert.Nil(t, r.TenantFactory, "the values publish no factory")

	// No ConfigMap: nothing published now, so every default set changes.
	r = catalogOf(t, exitOK, "-f", moved, "--cluster", td("state", "golden.yaml"))
	assert.Equal(t, "the cluster has no ConfigMap cozy-public/kubernetes-worker-image-tenant-defaults: nothing is published now", r.Publishes.NowFrom)
	assert.Equal(t, map[string]any{}, r.Publishes.Now)
	assert.Contains(t, cli(t, "catalog", "-f", moved, "--cluster", td("state", "golden.yaml")).stdout, "\n  factory        https://factory2.mirror.internal  (now: none)\n")
}

func indent(s, prefix string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if l != "" {
			b.WriteString(prefix + l)
		}
	}
	return b.String()
}

// catalog says of each golden it creates or keeps that imports from another
// Image Factory than the one new pools are given, naming the key that sets
// it in the shape given: the stock example's Package publishes a mirror
// while its goldens import from the public factory; with the catalog's
// imageFactoryURL on the mirror, the golden to create is silent and the
// goldens kept still say where they came from.
func TestCatalogSaysWhichGoldensImportFromAnotherFactory(t *testing.T) {
	res := cli(t, "adopt", "--cluster", stockState, "-o", "json")
	require.Equal(t, exitOK, res.code, res.stderr)
	pkg := decode[report.AdoptReport](t, res).Catalog.Values
	r := catalogOf(t, exitOK, "-f", writeTemp(t, "package.yaml", pkg), "--cluster", stockState)
	require.NotNil(t, r.TenantFactory)
	assert.Equal(t, "https://factory.mirror.internal", r.TenantFactory.Value)
	notes := map[string]string{}
	for _, g := range r.Goldens {
		notes[g.Name] = g.FactoryNote
	}
	// The Package sets no imageFactoryURL: the golden to create imports from
	// the factory the catalog publishes, and says nothing; the goldens kept
	// stay as they were imported, and say so.
	assert.Empty(t, notes[goldenName("v1.13.4")])
	for i, v := range []string{"v1.13.5", "v1.13.6"} {
		assert.Equal(t, fmt.Sprintf("imported from https://factory.talos.dev, not from https://factory.mirror.internal, the Image Factory new pools are given; a golden's source never changes (its DataVolume cannot be edited) and pools clone it as it is (its entry names it in spec.components.kubernetes-worker-image.values.images[%d].imageFactoryURL)", i), notes[goldenName(v)])
	}
	for _, g := range r.Goldens {
		if g.Name == goldenName("v1.13.4") {
			assert.Equal(t, "https://factory.mirror.internal/image/"+defaultSchematic+"/v1.13.4/openstack-amd64.raw.xz", g.SourceURL)
		} else {
			assert.True(t, strings.HasPrefix(g.SourceURL, "https://factory.talos.dev/image/"), "a kept golden shows the source it renders with, the one it was imported from: %s", g.SourceURL)
		}
	}
	text := cli(t, "catalog", "-f", writeTemp(t, "package.yaml", pkg), "--cluster", stockState).stdout
	assert.Contains(t, text, "\ntenant factory   https://factory.mirror.internal  (the catalog publishes it for new pools: its tenantWorkers.talos.imageFactoryURL, in ConfigMap cozy-public/kubernetes-worker-image-tenant-defaults)\n")
	assert.Contains(t, text, "\n  factory  imported from https://factory.talos.dev, not from https://factory.mirror.internal")

	// The catalog's own imageFactoryURL on the public factory: the golden to
	// create imports from there, and says which key to change.
	onPublic := writeTemp(t, "public.yaml", strings.Replace(pkg, "      values:\n", "      values:\n        imageFactoryURL: https://factory.talos.dev\n", 1))
	r = catalogOf(t, exitOK, "-f", onPublic, "--cluster", stockState)
	for _, g := range r.Goldens {
		switch g.Name {
		case goldenName("v1.13.4"):
			assert.Equal(t, report.GoldenCreates, g.Outcome)
			assert.Equal(t, "imports from https://factory.talos.dev (the catalog's imageFactoryURL), not from https://factory.mirror.internal, the Image Factory new pools are given; for it to import from there, set spec.components.kubernetes-worker-image.values.imageFactoryURL of the Package to https://factory.mirror.internal, or remove it so the goldens import from the factory the catalog publishes", g.FactoryNote)
		default:
			assert.Contains(t, g.FactoryNote, "(its entry names it in spec.components.kubernetes-worker-image.values.images[", g.Name)
		}
	}

	// Platform values: the factory _cluster gives new pools, and the
	// platform's key.
	platform := writeTemp(t, "platform.yaml", "kubernetesWorkerImage:\n  images:\n    - {schematicID: "+defaultSchematic+", version: v1.13.6}\n    - {schematicID: "+defaultSchematic+", version: v1.13.8}\ntenantWorkers: {talos: {imageFactoryURL: https://factory.mirror.internal}}\n")
	r = catalogOf(t, exitOK, "-f", platform, "--cluster", td("state", "golden.yaml"))
	assert.Equal(t, &report.Sourced{Value: "https://factory.mirror.internal", Source: "the platform values give it to new pools in _cluster.talos.imageFactoryURL (their tenantWorkers.talos.imageFactoryURL), before the catalog's published defaults"}, r.TenantFactory)
	for _, g := range r.Goldens {
		if g.Name == goldenName("v1.13.8") {
			assert.Contains(t, g.FactoryNote, "set kubernetesWorkerImage.imageFactoryURL in the platform values to https://factory.mirror.internal")
		}
	}

	// Nothing given to new pools: nothing to compare with.
	r = catalogOf(t, exitOK, "-f", writeTemp(t, "bare.yaml", "kubernetesWorkerImage: {images: [{schematicID: "+defaultSchematic+", version: v1.13.8}]}\n"), "--cluster", td("state", "golden.yaml"))
	assert.Nil(t, r.TenantFactory)
	for _, g := range r.Goldens {
		assert.Empty(t, g.FactoryNote, g.Name)
	}
}

// Without -f, the values the cluster's Package holds, read as that Package;
// its goldens are compared with the factory new pools are given there: the
// one the catalog publishes, or where the platform's release holds the
// catalog's values, the one its _cluster gives.
func TestCatalogOfTheClusterSaysItsShape(t *testing.T) {
	r := catalogOf(t, exitOK, "--cluster", stockState)
	assert.Equal(t, report.ValuesPackage, r.ValuesShape)
	assert.Empty(t, r.ChangeShape, "nothing to apply: it is what the cluster holds")
	assert.Equal(t, "https://factory.mirror.internal", r.TenantFactory.Value)
	for _, g := range r.Goldens {
		assert.Equal(t, report.GoldenKeeps, g.Outcome, g.Name)
		assert.Contains(t, g.FactoryNote, "while the goldens the catalog creates import from https://factory.mirror.internal, the factory it publishes for new pools", g.Name)
	}
	for _, f := range r.Publishes.Fields {
		assert.False(t, f.Changes, "the published ConfigMap is what the Package's values render: %s", f.Field)
	}

	assert.Equal(t, report.ValuesCatalog, catalogOf(t, exitOK, "--cluster", td("state", "golden.yaml")).ValuesShape, "no Package: the catalog's built-in values")

	withRecord := writeTemp(t, "cluster.yaml", mustRead(t, stockState)+platformRecord(t, map[string]any{
		"kubernetesWorkerImage": map[string]any{"storageClass": "replicated"},
		"tenantWorkers":         map[string]any{"talos": map[string]any{"imageFactoryURL": "https://factory.platform.internal"}},
	}))
	r = catalogOf(t, exitOK, "--cluster", withRecord)
	assert.Equal(t, &report.Sourced{Value: "https://factory.platform.internal", Source: "the platform's release gives it to new pools in _cluster.talos.imageFactoryURL (its tenantWorkers.talos.imageFactoryURL), before the catalog's published defaults"}, r.TenantFactory)
	for _, g := range r.Goldens {
		assert.Contains(t, g.FactoryNote, "not from https://factory.platform.internal, the Image Factory new pools are given", g.Name)
	}
}

// The snippet the issue met, the Package's registries copied into platform
// values: a key the platform's kubernetesWorkerImage does not take, bad
// input (exit 2) like any typo, naming where it goes. Values the platform
// chart refuses (a factory URL that is none: exit 1) make a report that
// says the goldens were not previewed, never that cozy-public holds none.
func TestCatalogRefusedPlatformValuesPreviewNoGoldens(t *testing.T) {
	snippet := writeTemp(t, "snippet.yaml", "kubernetesWorkerImage:\n  registries: {mirrors: {docker.io: {endpoints: [https://registry.mirror.internal/v2/docker.io]}}}\n")
	requireProblem(t, cli(t, "catalog", "-f", snippet, "--cluster", stockState),
		`the values at kubernetesWorkerImage: "registries" is not a key of kubernetesWorkerImage in platform values`, "did you mean the top-level registries?")
	refused := writeTemp(t, "refused.yaml", "kubernetesWorkerImage:\n  imageFactoryURL: factory.mirror.internal\n")
	r := catalogOf(t, exitAttn, "-f", refused, "--cluster", stockState)
	assert.Equal(t, report.ValuesPlatform, r.ValuesShape)
	assert.Contains(t, r.Refusal, `the platform chart refuses these values: `)
	assert.Nil(t, r.Values)
	assert.Empty(t, r.ChangeShape)
	text := cli(t, "catalog", "-f", refused, "--cluster", stockState).stdout
	assert.Contains(t, text, "\ngoldens: not previewed (the platform chart refuses these values before they reach the catalog)\n")
	assert.NotContains(t, text, "holds none")
	// The neighbour: values that reach the catalog and resolve to no golden
	// on a cluster holding none.
	none := cli(t, "catalog", "-f", writeTemp(t, "none.yaml", "images: []\n"), "--cluster", td("state", "cluster.yaml")).stdout
	assert.Contains(t, none, "\ngoldens: none (the values resolve to no golden, and cozy-public holds none)\n")
}
