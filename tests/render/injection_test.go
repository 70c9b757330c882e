package render

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"
)

// imageValues builds pool values that set one image field at one place.
func imageValues(place, field, value string) map[string]interface{} {
	values := map[string]interface{}{"cluster": testCluster}
	fields := map[string]interface{}{field: value}
	switch place {
	case "talos":
		values["talos"] = fields
	case "builtin", "factory":
		values["osImage"] = map[string]interface{}{place: fields}
	}
	return values
}

// Tenant-set strings that would break out of a name, a URL or the machine config.
func TestMalformedImageFieldsAreRefusedOnEveryPath(t *testing.T) {
	// "\x7f" once broke a YAML round trip inside the chart, which dropped the
	// tenant's osImage silently and rendered the defaults: it must be refused.
	hostile := []string{"\x7f", "a\tb", "abc\ndef", "abc\nkind: Secret", "abc: def", "abc#x", `abc"x`, "abc'x", "abc`x", "$(reboot)", "abc def", "ABC", "a/b", "{a}", "-abc", ""}
	cases := map[string][]string{
		"schematicID":     hostile,
		"version":         append(hostile, "v1.13", "1.13.6", "v1.13.6-", "v1.13.6-ALPHA", "v1.13.6+build", "v1.13.6-a.", "v1.13.6-a..1", "v1.13.6-.1"),
		"imageFactoryURL": {"https://factory.talos.dev\nx: y", "https://factory.talos.dev: 8080", "https://x/#frag", `https://x/"a"`, "https://x/`id`", "https://x/$(id)", "https://x y", "ftp://x", "factory.talos.dev", "https://", "https://x/?q=1", "https://x/a b", ""},
	}
	// talos.* feeds every path; osImage.factory has all three fields, builtin two.
	places := map[string][]string{"schematicID": {"talos", "builtin", "factory"}, "version": {"talos", "builtin", "factory"}, "imageFactoryURL": {"talos", "factory"}}
	refusals := 0
	for field, values := range cases {
		for _, place := range places[field] {
			for _, bad := range values {
				if bad == "" {
					continue // empty falls back: osImage fields to talos.*, talos.* to what the pool runs or the chart's default, talos.imageFactoryURL to the platform or built-in default
				}
				values := imageValues(place, field, bad)
				if place == "talos" {
					values["osImage"] = map[string]interface{}{"builtin": map[string]interface{}{}}
				}
				// The chart's own words with the schema off; the schema refuses it first.
				_, err := renderPoolAs(t, schemaOff, values, healthyCluster(t))
				_, withSchema := renderPool(t, values, healthyCluster(t))
				require.Error(t, withSchema, "the schema refuses %q at %s.%s", bad, place, field)
				source := field
				if place != "talos" {
					source = "osImage." + place + "." + field
				} else {
					source = "talos." + field
				}
				requireRefusal(t, err, fmt.Sprintf("pool kubernetes-acme-workers: %s %q (from %s) is malformed", field, bad, source))
				refusals++
			}
		}
	}
	t.Logf("%d hostile values refused", refusals)
	assert.Greater(t, refusals, 100)
}

func TestPlainImageFieldsRender(t *testing.T) {
	const hex = "613e1592b2da41ae5e265e8789429f22e121aab91cb4deb6bc3c0b6262961245"
	for _, values := range []string{
		"{cluster: acme, osImage: {factory: {schematicID: " + hex + ", version: v1.13.0-alpha.1}}}",
		"{cluster: acme, osImage: {factory: {version: v1.14.0-beta.0.rc2, imageFactoryURL: 'http://10.0.0.5:8080/talos/'}}}",
		"{cluster: acme, talos: {schematicID: my-schematic-1, imageFactoryURL: 'https://factory.example.internal/prefix%20x/~a_b.c-d/'}}",
	} {
		m := mustRenderPool(t, vals(t, values), nil)
		assert.Contains(t, render.Get(diskOf(m), "spec.source.http.url"), "/openstack-amd64.raw.xz")
	}
	cluster := healthyCluster(t, golden{name: "talos-worker-" + hex + "-v1.13.0-alpha.1", class: "replicated", size: "6Gi", phase: "Succeeded"}.yaml())
	m := mustRenderPool(t, vals(t, "{cluster: acme, osImage: {builtin: {schematicID: "+hex+", version: v1.13.0-alpha.1}}}"), cluster)
	assert.Equal(t, "talos-worker-"+hex+"-v1.13.0-alpha.1", render.Get(diskOf(m), "spec.source.pvc.name"))
}

// expectedDisk is the worker disk a render must produce for these inputs,
// built here from the contract rather than from any render.
func expectedDisk(builtin bool, schematicID, version, factoryURL string) map[string]interface{} {
	storage := map[string]interface{}{"resources": map[string]interface{}{"requests": map[string]interface{}{"storage": "20Gi"}}, "storageClassName": "replicated"}
	if builtin {
		golden := "talos-worker-" + schematicID + "-" + version
		return map[string]interface{}{
			"metadata": map[string]interface{}{"name": "disk-system", "annotations": map[string]interface{}{
				"kubernetes-worker-image.cozystack.io/golden": golden,
				"kubernetes-worker-image.cozystack.io/pool":   testPoolName,
			}},
			"spec": map[string]interface{}{"source": map[string]interface{}{"pvc": map[string]interface{}{"namespace": "cozy-public", "name": golden}}, "storage": storage},
		}
	}
	url := strings.TrimSuffix(factoryURL, "/") + "/image/" + schematicID + "/" + version + "/openstack-amd64.raw.xz"
	return map[string]interface{}{
		"metadata": map[string]interface{}{"name": "disk-system", "annotations": map[string]interface{}{"cdi.kubevirt.io/storage.usePopulator": "false"}},
		"spec":     map[string]interface{}{"source": map[string]interface{}{"http": map[string]interface{}{"url": url}}, "storage": storage},
	}
}

// imageFieldsSeeds are FuzzImageFields' seeds (each on the factory path and
// the builtin path): valid image fields, and payloads in each.
var imageFieldsSeeds = [][3]string{
	{defaultSchematic, "v1.13.6", "https://factory.talos.dev"},
	{"abc", "v1.13.0-alpha.1", "http://mirror.internal:8080/"},
	{"abc\nkind: Secret", "v1.13.6", "https://x"},
	{"abc", "v1.13.6\n  evil: true", "https://x"},
	{"abc", "v1.13.6", "https://x/\"}\n---\nkind: Secret"},
	{"a b", "v1.13.6 #", "https://x/$(id)"},
	{"abc", "v1.13.6", "https://x/`id`"},
}

// imageFieldsRelease is the release FuzzImageFields renders as.
var imageFieldsRelease = render.Release{Name: testRelease, Namespace: testNamespace}

// imageFieldsValues places FuzzImageFields' strings in a pool's osImage
// (factory or builtin) and its talos.imageFactoryURL.
func imageFieldsValues(schematicID, version, factoryURL string, builtin bool) map[string]interface{} {
	path := "factory"
	if builtin {
		path = "builtin"
	}
	fields := map[string]interface{}{"schematicID": schematicID, "version": version}
	if !builtin {
		fields["imageFactoryURL"] = factoryURL
	}
	return map[string]interface{}{
		"cluster": testCluster,
		"talos":   map[string]interface{}{"imageFactoryURL": factoryURL},
		"osImage": map[string]interface{}{path: fields},
	}
}

// FuzzImageFields: whatever a tenant writes into the image fields, the render
// either refuses, or yields exactly the four objects with a disk whose source
// is exactly the intended string and no extra key, and the matching installer.
func FuzzImageFields(f *testing.F) {
	for _, seed := range imageFieldsSeeds {
		f.Add(seed[0], seed[1], seed[2], false)
		f.Add(seed[0], seed[1], seed[2], true)
	}
	c := poolChart(f)
	f.Fuzz(func(t *testing.T, schematicID, version, factoryURL string, builtin bool) {
		values := imageFieldsValues(schematicID, version, factoryURL, builtin)
		m, err := render.Render(c, render.Options{Release: imageFieldsRelease, Values: values})
		if err != nil {
			return // refused: always acceptable
		}
		// An empty osImage field falls back to the chart's talos.* default.
		if schematicID == "" {
			schematicID = defaultSchematic
		}
		if version == "" {
			version = defaultTalos
		}
		// An empty factory URL falls back to the platform default, then the built-in.
		if factoryURL == "" {
			factoryURL = builtinFactory
		}
		kinds := make([]string, 0, len(m.Docs))
		for _, d := range m.Docs {
			kinds = append(kinds, d.Kind())
		}
		if !reflect.DeepEqual(kinds, poolKinds) {
			t.Fatalf("render yields %v, want %v\n%s", kinds, poolKinds, m.Text())
		}
		if got, want := diskOf(m), interface{}(expectedDisk(builtin, schematicID, version, factoryURL)); !reflect.DeepEqual(got, want) {
			t.Fatalf("disk differs from the intended one\n got: %#v\nwant: %#v", got, want)
		}
		config := workerConfig(t, m)
		if got, want := render.Get(config, "machine.install"), map[string]interface{}{"disk": "/dev/vda", "image": "factory.talos.dev/installer/" + schematicID + ":" + version, "wipe": false}; !reflect.DeepEqual(got, want) {
			t.Fatalf("machine.install differs: %#v", got)
		}
		if got := render.Get(talosConfigTemplate(t, m), "spec.template.spec.talosVersion"); got != version {
			t.Fatalf("talosVersion %v, want the disk's %s", got, version)
		}
	})
}

// The template's size comparison agrees with apimachinery's resource.ParseQuantity.
func TestQuantityComparisonAgreesWithParseQuantity(t *testing.T) {
	pairs := [][2]string{
		{"1Gi", "1024Mi"}, {"1Gi", "1073741824"}, {"1G", "1Gi"}, {"1Ti", "1024Gi"}, {"1Ti", "1099511627776"},
		{"1.5Gi", "1536Mi"}, {"1.5Gi", "1537Mi"}, {"2e9", "2G"}, {"2E9", "2000M"}, {"1e3", "1k"}, {"1000k", "1M"},
		{"1M", "1Mi"}, {"5Gi", "5.5Gi"}, {"20Gi", "21474836480"}, {"0.5Ti", "512Gi"}, {"1500M", "1.5G"},
		{"1Pi", "1024Ti"}, {"1E", "1000P"}, {"100Mi", "100M"}, {"1.1e1", "11"}, {"6Gi", "6144Mi"},
		{"7Gi", "6Gi"}, {"6Gi", "7Gi"}, {"1k", "1Ki"}, {"500m", "1"}, {"12e-1", "1.2"}, {"3Ki", "3072"},
		{"0.001Ti", "1.024Gi"}, {"25.6Gi", "26214.4Mi"}, {"1Ei", "1024Pi"}, {"2T", "2000G"}, {"10Gi", "10.0000001Gi"},
	}
	for _, p := range pairs {
		disk, golden := p[0], p[1]
		diskQ, goldenQ := resource.MustParse(disk), resource.MustParse(golden)
		want := diskQ.Cmp(goldenQ)
		cluster := clusterFromYAML(t, goldenOfSize(golden), "cluster/instancetypes.yaml", "cluster/storageclasses.yaml")
		_, err := renderPool(t, vals(t, fmt.Sprintf("{cluster: acme, storageClass: fixed, diskSize: '%s', osImage: {builtin: {}}}", disk)), cluster)
		switch want {
		case -1:
			requireRefusal(t, err, "is smaller than golden")
		case 0:
			require.NoError(t, err, "%s equals %s", disk, golden)
		case 1:
			requireRefusal(t, err, "for each worker disk, more than the capacity") // "fixed" cannot expand
		}
	}
	t.Logf("%d quantity pairs agree with resource.ParseQuantity", len(pairs))
}

// goldenOfSize is an imported golden of that size on the class that cannot expand.
func goldenOfSize(size string) string {
	return golden{class: "fixed", size: "'" + size + "'", phase: "Succeeded"}.yaml()
}

// A golden whose recorded size is not a quantity (the API would not store one,
// but a hand-made object might carry it) is refused by the shared parser, not
// compared as zero; a well-formed size compares.
func TestMalformedGoldenSizeIsRefused(t *testing.T) {
	values := vals(t, "{cluster: acme, storageClass: fixed, osImage: {builtin: {}}}")
	_, err := renderPool(t, values, clusterFromYAML(t, goldenOfSize("6 GB"), "cluster/instancetypes.yaml", "cluster/storageclasses.yaml"))
	requireRefusal(t, err, `"6 GB" is not a Kubernetes quantity`)
	_, err = renderPool(t, vals(t, "{cluster: acme, storageClass: fixed, diskSize: 6G, osImage: {builtin: {}}}"), clusterFromYAML(t, goldenOfSize("6G"), "cluster/instancetypes.yaml", "cluster/storageclasses.yaml"))
	require.NoError(t, err)
}
