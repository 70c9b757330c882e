package render

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Trusted imports for closed networks: the Image Factory mirror's CA on the
// pool's HTTP import and on the goldens, and a checksum on every golden.

const (
	poolCAConfigMap    = "kubernetes-acme-workers-image-factory-ca"
	catalogCAConfigMap = "kubernetes-worker-image-ca"
	// A sha256 digest written out here, not taken from any render.
	testChecksum = "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
)

// testCA and rotatedCA are two self-signed CA certificates (no key is kept).
func testCA(t testing.TB) string    { return readCA(t, "ca/factory-ca.pem") }
func rotatedCA(t testing.TB) string { return readCA(t, "ca/factory-ca-rotated.pem") }

func readCA(t testing.TB, name string) string {
	t.Helper()
	raw, err := os.ReadFile(support.Fixture(name))
	require.NoError(t, err)
	return string(raw)
}

// withTalos sets keys under talos (and creates it) in parsed values.
func withTalos(v map[string]interface{}, kv ...string) map[string]interface{} {
	talos, _ := v["talos"].(map[string]interface{})
	if talos == nil {
		talos = map[string]interface{}{}
		v["talos"] = talos
	}
	for i := 0; i+1 < len(kv); i += 2 {
		talos[kv[i]] = kv[i+1]
	}
	return v
}

// platformCA is the _cluster channel of a platform that sets the factory URL
// and its CA for tenant workers.
func platformCA(t testing.TB, ca string) map[string]interface{} {
	t.Helper()
	v := vals(t, "tenantWorkers: {talos: {imageFactoryURL: 'https://factory.mirror.internal'}}")
	v["tenantWorkers"].(map[string]interface{})["talos"].(map[string]interface{})["imageFactoryCA"] = ca
	c, err := support.LoadChart(render.PlatformChart)
	require.NoError(t, err)
	m, err := render.Render(c, render.Options{Release: render.Release{Name: "platform", Namespace: "cozy-system"}, Values: v})
	require.NoError(t, err)
	secret, ok := m.Find("Secret", "cozystack-values")
	require.True(t, ok)
	out := vals(t, render.Get(secret.Object, "stringData[values.yaml]").(string))
	return out["_cluster"].(map[string]interface{})
}

func caConfigMapData(t testing.TB, m *render.Manifest, name string) string {
	t.Helper()
	d, ok := m.Find("ConfigMap", name)
	require.True(t, ok, "the render has the ConfigMap %s:\n%s", name, m.Text())
	data, ok := render.Get(d.Object, "data").(map[string]interface{})
	require.True(t, ok)
	require.Len(t, data, 1, "only ca.pem")
	return str(data["ca.pem"])
}

func TestPoolWithoutACAKeepsItsBytes(t *testing.T) {
	for _, c := range baselineCorners(t) {
		t.Run(c.Name, func(t *testing.T) {
			values, err := render.ReadValues(c.ValuesFile)
			require.NoError(t, err)
			plain, err := c.Render(render.Render, true)
			require.NoError(t, err)
			withTalos(values, "imageFactoryCA", "")
			m, err := render.Render(poolChart(t), render.Options{Release: c.ReleaseOf(), Values: values, Cluster: loadCluster(t, c.Cluster...)})
			require.NoError(t, err)
			assert.Equal(t, plain.Text(), m.Text(), "imageFactoryCA: \"\" is no CA")
			assert.Empty(t, poolConfigMaps(m))
			assert.NotContains(t, m.Text(), "certConfigMap")
		})
	}
}

func TestPoolCAIsAConfigMapTheWorkerDiskNames(t *testing.T) {
	plain := mustRenderPool(t, vals(t, "{cluster: acme, talos: {imageFactoryURL: 'https://factory.mirror.internal'}}"), nil)
	m := mustRenderPool(t, withTalos(vals(t, "{cluster: acme, talos: {imageFactoryURL: 'https://factory.mirror.internal'}}"), "imageFactoryCA", testCA(t)), nil)

	assert.Equal(t, testCA(t), caConfigMapData(t, m, poolCAConfigMap), "ca.pem reads back as the PEM written")
	cm, _ := m.Find("ConfigMap", poolCAConfigMap)
	assert.Equal(t, testNamespace, cm.Namespace(), "in the pool's namespace, beside the disk CDI imports")
	assert.Equal(t, poolCAConfigMap, render.Get(diskOf(m), "spec.source.http.certConfigMap"))
	assert.Equal(t, render.Get(diskOf(plain), "spec.source.http.url"), render.Get(diskOf(m), "spec.source.http.url"))
	assert.NotEqual(t, machineTemplateName(t, plain), machineTemplateName(t, m), "adding a CA changes the disk: one roll, by the pool's own values")
	assert.Len(t, m.Docs, len(plain.Docs)+1)

	// A new certificate: same names, same template, only the ConfigMap's data.
	rotated := mustRenderPool(t, withTalos(vals(t, "{cluster: acme, talos: {imageFactoryURL: 'https://factory.mirror.internal'}}"), "imageFactoryCA", rotatedCA(t)), nil)
	assert.Equal(t, machineTemplateName(t, m), machineTemplateName(t, rotated), "rotating the CA rolls no worker")
	assert.Equal(t, rotatedCA(t), caConfigMapData(t, rotated, poolCAConfigMap))
	// Two certificates (a bundle) are one CA value.
	bundle := mustRenderPool(t, withTalos(vals(t, "cluster: acme"), "imageFactoryCA", testCA(t)+"\n"+rotatedCA(t)), nil)
	assert.Equal(t, testCA(t)+"\n"+rotatedCA(t), caConfigMapData(t, bundle, poolCAConfigMap))
	assert.Equal(t, poolCAConfigMap, render.Get(diskOf(bundle), "spec.source.http.certConfigMap"), "a bundle names the same ConfigMap")
}

func TestPoolCloneIgnoresTheCA(t *testing.T) {
	plain := mustRenderPool(t, vals(t, "{cluster: acme, osImage: {builtin: {}}}"), healthyCluster(t))
	m := mustRenderPool(t, withTalos(vals(t, "{cluster: acme, osImage: {builtin: {}}}"), "imageFactoryCA", testCA(t)), healthyCluster(t))
	assert.Equal(t, plain.Text(), m.Text(), "the clone path imports nothing: no ConfigMap, no certConfigMap")
}

// The platform's CA belongs to the platform's factory URL, and whether it
// applies is fixed when the pool is created, like the URL.
func TestPlatformCAIsTakenAtCreation(t *testing.T) {
	f := newFleet(t)
	none := map[string]interface{}{}
	withCA := platformCA(t, testCA(t))

	existing := f.release("existing", "cluster: acme", none, false)
	existingAfter := f.release("existing", "cluster: acme", withCA, true)
	assert.Equal(t, existing.Text(), existingAfter.Text(), "setting the platform CA changes nothing in a pool that exists")

	fresh := f.release("fresh", "cluster: acme", withCA, false)
	cm := "kubernetes-acme-fresh-image-factory-ca"
	assert.Equal(t, testCA(t), caConfigMapData(t, fresh, cm))
	assert.Equal(t, cm, render.Get(diskOf(fresh), "spec.source.http.certConfigMap"))
	assert.True(t, strings.HasPrefix(urlOfPool(t, fresh), "https://factory.mirror.internal/image/"))
	assert.Equal(t, `{"imageFactoryCA":true,"imageFactoryURL":"https://factory.mirror.internal"}`,
		render.Get(doc(t, fresh, "MachineDeployment").Object, "metadata.annotations[kubernetes-worker-image.cozystack.io/created-with]"), "the record notes the CA, never the PEM")
	assert.NotContains(t, doc(t, fresh, "MachineDeployment").Text, "BEGIN CERTIFICATE")

	// Rotated platform-wide: same template, new data.
	rotated := f.release("fresh", "cluster: acme", platformCA(t, rotatedCA(t)), true)
	assert.Equal(t, machineTemplateName(t, fresh), machineTemplateName(t, rotated))
	assert.Equal(t, rotatedCA(t), caConfigMapData(t, rotated, cm))

	// Removed platform-wide: the disk would name a ConfigMap with no CA. Refused, naming the fix.
	_, err := renderPoolAs(t, render.Release{Name: "kubernetes-nodes-acme-fresh", Namespace: testNamespace, Upgrade: true}, vals(t, "cluster: acme"), f.cluster)
	requireRefusal(t, err, "pool kubernetes-acme-fresh: it was created while the platform set _cluster.talos.imageFactoryCA",
		"names the ConfigMap tenant-acme/kubernetes-acme-fresh-image-factory-ca", "the platform sets no imageFactoryCA any more",
		"set the platform's tenantWorkers.talos.imageFactoryCA again", "set the pool's own talos.imageFactoryCA")
}

func TestPlatformCARefusalNeighbourIsThePoolsOwnCA(t *testing.T) {
	record := createdWith(`{"imageFactoryCA":true,"imageFactoryURL":"https://factory.mirror.internal"}`)
	cluster := func() *support.Cluster { return clusterFromYAML(t, record, "cluster/instancetypes.yaml") }
	_, err := renderPool(t, vals(t, "cluster: acme"), cluster())
	requireRefusal(t, err, "pool kubernetes-acme-workers: it was created while the platform set _cluster.talos.imageFactoryCA (annotation kubernetes-worker-image.cozystack.io/created-with of MachineDeployment tenant-acme/kubernetes-acme-workers)")
	platform := mustRenderPool(t, withChannel(t, "cluster: acme", platformCA(t, testCA(t))), cluster())
	own := mustRenderPool(t, withTalos(vals(t, "cluster: acme"), "imageFactoryCA", rotatedCA(t)), cluster())
	assert.Equal(t, machineTemplateName(t, platform), machineTemplateName(t, own), "the pool's own CA serves the same ConfigMap: nothing rolls")
	assert.Equal(t, rotatedCA(t), caConfigMapData(t, own, poolCAConfigMap))
	// A pool's own URL leaves the platform's CA behind (and re-images once).
	ownURL := mustRenderPool(t, vals(t, "{cluster: acme, talos: {imageFactoryURL: 'https://factory.own.internal'}}"), cluster())
	assert.Empty(t, poolConfigMaps(ownURL))
	assert.Nil(t, render.Get(diskOf(ownURL), "spec.source.http.certConfigMap"))
	// The clone path does not need it.
	_, err = renderPool(t, vals(t, "{cluster: acme, osImage: {builtin: {}}}"), healthyCluster(t, record))
	require.NoError(t, err)
}

func TestPlatformCANeverReachesAPoolWithItsOwnURL(t *testing.T) {
	m := mustRenderPool(t, withChannel(t, "{cluster: acme, talos: {imageFactoryURL: 'https://factory.own.internal'}}", platformCA(t, testCA(t))), nil)
	assert.Empty(t, poolConfigMaps(m), "the platform's CA is for the platform's URL")
	assert.Nil(t, render.Get(diskOf(m), "spec.source.http.certConfigMap"))
	m = mustRenderPool(t, withChannel(t, "{cluster: acme, osImage: {factory: {imageFactoryURL: 'https://factory.own.internal'}}}", platformCA(t, testCA(t))), nil)
	assert.Empty(t, poolConfigMaps(m), "osImage.factory.imageFactoryURL is the pool's own URL too")
	// The pool's own CA wins over the platform's.
	m = mustRenderPool(t, withTalos(withChannel(t, "cluster: acme", platformCA(t, testCA(t))), "imageFactoryCA", rotatedCA(t)), nil)
	assert.Equal(t, rotatedCA(t), caConfigMapData(t, m, poolCAConfigMap))
}

func TestRecordedCAMustBeTrue(t *testing.T) {
	_, err := renderPool(t, vals(t, "cluster: acme"), clusterFromYAML(t, createdWith(`{"imageFactoryCA":"-----BEGIN CERTIFICATE-----"}`), "cluster/instancetypes.yaml"))
	requireRefusal(t, err, `imageFactoryCA in the annotation kubernetes-worker-image.cozystack.io/created-with of MachineDeployment tenant-acme/kubernetes-acme-workers is "-----BEGIN CERTIFICATE-----"`, "the chart writes only true there")
	_, err = renderPool(t, vals(t, "cluster: acme"), clusterFromYAML(t, createdWith(`{"imageFactoryCA":false}`), "cluster/instancetypes.yaml"))
	requireRefusal(t, err, "is false (a boolean), but the chart writes only true there")
}

// badCAs are values no CA may be, each with the part of the refusal that says why.
func badCAs(t testing.TB) []struct{ name, value, why string } {
	ca := testCA(t)
	key := "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\n-----END PRIVATE KEY-----\n"
	body := strings.TrimSuffix(strings.TrimPrefix(ca, "-----BEGIN CERTIFICATE-----\n"), "-----END CERTIFICATE-----\n")
	return []struct{ name, value, why string }{
		{"not PEM", "my-ca.crt", "is not PEM certificates"},
		{"a private key", key, "is not PEM certificates"},
		{"a key beside the certificate", ca + key, "is not PEM certificates"},
		{"text between certificates", ca + "Issuer: acme\n" + ca, "is not PEM certificates"},
		// Go's PEM reader, as CDI's importer uses it, reads no block whose END line ends in a lone carriage return.
		{"a lone carriage return after END", strings.TrimSuffix(ca, "\n") + "\r", "is not PEM certificates"},
		{"not base64 DER", "-----BEGIN CERTIFICATE-----\nhello\n-----END CERTIFICATE-----\n", "is not PEM certificates"},
		{"cut base64", "-----BEGIN CERTIFICATE-----\n" + body[:len(body)-4] + "\n-----END CERTIFICATE-----\n", "certificate block 1 of 1's base64 is cut or padded wrongly"},
		{"over 64 KiB", strings.Repeat(ca, 65536/len(ca)+1), "more than the 65536 (64 KiB) the chart takes"},
	}
}

func TestMalformedCAsAreRefusedSchemaOnAndOff(t *testing.T) {
	ca := testCA(t)
	atLimit := strings.Repeat(ca, 65536/len(ca))
	require.LessOrEqual(t, len(atLimit), 65536)
	for _, skip := range []bool{false, true} {
		poolRel := render.Release{Name: testRelease, Namespace: testNamespace, SkipSchemaValidation: skip}
		catalogRel := render.Release{Name: catalogRelease, Namespace: catalogNamespace, SkipSchemaValidation: skip}
		for _, bad := range badCAs(t) {
			_, err := renderPoolAs(t, poolRel, withTalos(vals(t, "cluster: acme"), "imageFactoryCA", bad.value), nil)
			requireCARefusal(t, err, skip, bad.why, "pool kubernetes-acme-workers: talos.imageFactoryCA", bad.name)
			_, err = renderPoolAs(t, poolRel, withChannel(t, "cluster: acme", map[string]interface{}{"talos": map[string]interface{}{"imageFactoryCA": bad.value}}), nil)
			requireChartsOwnRefusal(t, err, bad.why, "pool kubernetes-acme-workers: _cluster.talos.imageFactoryCA", bad.name)
			_, err = renderCatalogAs(t, catalogRel, map[string]interface{}{"imageFactoryCA": bad.value}, nil)
			requireCARefusal(t, err, skip, bad.why, "imageFactoryCA", bad.name)
			entry := vals(t, "{images: [{schematicID: abc, version: v1.13.6}]}")
			entry["images"].([]interface{})[0].(map[string]interface{})["imageFactoryCA"] = bad.value
			_, err = renderCatalogAs(t, catalogRel, entry, nil)
			requireCARefusal(t, err, skip, bad.why, `images[0] (schematicID "abc", version "v1.13.6"): imageFactoryCA`, bad.name)
		}
		_, err := renderPoolAs(t, poolRel, withTalos(vals(t, "cluster: acme"), "imageFactoryCA", atLimit), nil)
		require.NoError(t, err, "64 KiB of certificates is a CA")
		_, err = renderCatalogAs(t, catalogRel, map[string]interface{}{"imageFactoryCA": atLimit}, nil)
		require.NoError(t, err)
	}
}

// requireCARefusal: with the schema off the chart's message; with it on, the
// schema may refuse first (its own message names the field).
func requireCARefusal(t testing.TB, err error, schemaOff bool, why, subject, name string) {
	t.Helper()
	require.Error(t, err, name)
	if !schemaOff && strings.Contains(err.Error(), "values don't meet the specifications of the schema") {
		assert.Contains(t, err.Error(), "imageFactoryCA", name)
		return
	}
	requireChartsOwnRefusal(t, err, why, subject, name)
}

func requireChartsOwnRefusal(t testing.TB, err error, why, subject, name string) {
	t.Helper()
	require.Error(t, err, name)
	assert.Contains(t, err.Error(), subject, name)
	assert.Contains(t, err.Error(), why, name)
	assert.Contains(t, err.Error(), "set it to the PEM of the CA that signs the Image Factory mirror's certificate", name)
}

// Catalog.

func TestCatalogCAReachesEveryGoldenImportedFromThen(t *testing.T) {
	v := vals(t, `
images:
  - {schematicID: abc, version: v1.13.6, additionalStorageClasses: [fast]}
  - {schematicID: def, version: v1.13.6}
  - {schematicID: ghi, version: v1.13.6, imageFactoryCA: ""}
`)
	v["imageFactoryCA"] = testCA(t)
	v["images"].([]interface{})[1].(map[string]interface{})["imageFactoryCA"] = rotatedCA(t)
	m := mustRenderCatalog(t, v, nil)
	assert.Equal(t, testCA(t), caConfigMapData(t, m, catalogCAConfigMap))
	assert.Equal(t, rotatedCA(t), caConfigMapData(t, m, catalogCAConfigMap+"-def-v1.13.6"), "an entry's own CA has its own ConfigMap")
	for _, cm := range m.OfKind("ConfigMap") {
		assert.Equal(t, catalogNamespace, cm.Namespace())
	}
	assert.Len(t, m.OfKind("ConfigMap"), 2)
	for name, want := range map[string]interface{}{
		"talos-worker-abc-v1.13.6":       catalogCAConfigMap,
		"talos-worker-abc-v1.13.6--fast": catalogCAConfigMap,
		"talos-worker-def-v1.13.6":       catalogCAConfigMap + "-def-v1.13.6",
		"talos-worker-ghi-v1.13.6":       nil,
	} {
		assert.Equal(t, want, render.Get(catalogGolden(t, m, name).Object, "spec.source.http.certConfigMap"), name)
	}
	// Rotating a certificate renames nothing.
	v["imageFactoryCA"] = rotatedCA(t)
	again := mustRenderCatalog(t, v, nil)
	for _, name := range []string{"talos-worker-abc-v1.13.6", "talos-worker-abc-v1.13.6--fast"} {
		assert.Equal(t, catalogGolden(t, m, name).Text, catalogGolden(t, again, name).Text)
	}
}

func TestCatalogWithoutCAOrChecksumKeepsItsBytes(t *testing.T) {
	for _, values := range []string{"{}", "{imageFactoryCA: ''}", catalogLiveValues} {
		plain := mustRenderCatalog(t, vals(t, values), nil)
		assert.NotContains(t, plain.Text(), "certConfigMap")
		assert.NotContains(t, plain.Text(), "checksum")
		assert.Empty(t, poolConfigMaps(plain))
	}
	a := mustRenderCatalog(t, vals(t, "{}"), nil)
	b := mustRenderCatalog(t, vals(t, "{imageFactoryCA: ''}"), nil)
	assert.Equal(t, a.Text(), b.Text())
}

// cdiAt is the CDI resource CDI's operator writes, running version.
func cdiAt(name, version, phase string) string {
	status := ""
	if version != "" || phase != "" {
		status = "status: {"
		var parts []string
		if phase != "" {
			parts = append(parts, "phase: "+phase)
		}
		if version != "" {
			parts = append(parts, "observedVersion: "+version)
		}
		status += strings.Join(parts, ", ") + "}\n"
	}
	return fmt.Sprintf("---\napiVersion: cdi.kubevirt.io/v1beta1\nkind: CDI\nmetadata: {name: %s}\nspec: {}\n%s", name, status)
}

const checksumCatalog = `
images:
  - {schematicID: abc, version: v1.13.6, checksum: "` + testChecksum + `", additionalStorageClasses: [fast]}
  - {schematicID: def, version: v1.13.6}
`

func TestCatalogChecksumNeedsCDI165(t *testing.T) {
	for _, version := range []string{"v1.65.0", "v1.66.1", "v2.0.0", "v1.65.0-rc.1"} {
		m, err := renderCatalog(t, vals(t, checksumCatalog), clusterFromYAML(t, cdiAt("cdi", version, "Deployed")))
		require.NoError(t, err, version)
		for _, name := range []string{"talos-worker-abc-v1.13.6", "talos-worker-abc-v1.13.6--fast"} {
			assert.Equal(t, testChecksum, render.Get(catalogGolden(t, m, name).Object, "spec.source.http.checksum"), "%s: %s", version, name)
		}
		assert.Nil(t, render.Get(catalogGolden(t, m, "talos-worker-def-v1.13.6").Object, "spec.source.http.checksum"))
		assert.NotContains(t, m.Text(), "Not checked against CDI's version")
	}
	for _, version := range []string{"v1.64.0", "v1.62.3", "1.64.9"} {
		_, err := renderCatalog(t, vals(t, checksumCatalog), clusterFromYAML(t, cdiAt("cdi", version, "Deployed")))
		requireRefusal(t, err, "the goldens talos-worker-abc-v1.13.6, talos-worker-abc-v1.13.6--fast would be imported with a checksum, which CDI verifies from v1.65.0 on",
			"the CDI resource cdi runs CDI "+version+" (status.observedVersion), older than v1.65.0", "Upgrade CDI to v1.65.0 or later, or remove checksum from those entries")
	}
	_, err := renderCatalog(t, vals(t, checksumCatalog), clusterFromYAML(t, cdiAt("cdi", "", "Deploying")))
	requireRefusal(t, err, `the CDI resource cdi states no version it runs (status.observedVersion ""): CDI has not finished deploying`)
	_, err = renderCatalog(t, vals(t, checksumCatalog), clusterFromYAML(t, cdiAt("cdi", "v1.65.0", "Deployed")+cdiAt("cdi-2", "v1.64.0", "Deployed")))
	requireRefusal(t, err, "the cluster has 2 CDI resources and 2 of them not in phase Error (cdi, cdi-2), and CDI works only when exactly one is, so its version is not known")
	m, err := renderCatalog(t, vals(t, checksumCatalog), clusterFromYAML(t, cdiAt("cdi", "v1.65.0", "Deployed")+cdiAt("old", "v1.64.0", "Error")))
	require.NoError(t, err, "CDI reads the one resource not in phase Error")
	assert.Equal(t, testChecksum, render.Get(catalogGolden(t, m, "talos-worker-abc-v1.13.6").Object, "spec.source.http.checksum"))

	// No checksum: the CDI resource is not even read.
	cluster := clusterFromYAML(t, cdiAt("cdi", "v1.64.0", "Deployed"))
	_, err = renderCatalog(t, vals(t, catalogLiveValues), cluster)
	require.NoError(t, err, "a CDI older than v1.65.0 is fine without a checksum")
}

func TestCatalogChecksumInAPreviewIsRenderedAndSaidUnchecked(t *testing.T) {
	for _, cluster := range []*support.Cluster{nil, clusterFromYAML(t, "")} {
		m := mustRenderCatalog(t, vals(t, checksumCatalog), cluster)
		g := catalogGolden(t, m, "talos-worker-abc-v1.13.6")
		assert.Equal(t, testChecksum, render.Get(g.Object, "spec.source.http.checksum"))
		assert.Contains(t, g.Text, "# Not checked against CDI's version: no CDI resource was readable (a\n      # preview). CDI verifies a checksum from v1.65.0 on; an install checks.\n      checksum: \""+testChecksum+"\"")
	}
}

func TestMalformedChecksumsAreRefusedSchemaOnAndOff(t *testing.T) {
	render1 := func(checksum string, skip bool) error {
		v := vals(t, "{images: [{schematicID: abc, version: v1.13.6}]}")
		v["images"].([]interface{})[0].(map[string]interface{})["checksum"] = checksum
		_, err := renderCatalogAs(t, render.Release{Name: catalogRelease, Namespace: catalogNamespace, SkipSchemaValidation: skip}, v, nil)
		return err
	}
	for _, bad := range []string{
		"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",          // no algorithm
		"sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a0",    // one digit short
		"sha384:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",   // an algorithm CDI does not take
		"sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a0g",   // not hex
		"sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\n", // a newline
		"SHA256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",   // the algorithm as CDI names it
	} {
		for _, skip := range []bool{false, true} {
			err := render1(bad, skip)
			require.Error(t, err, bad)
			if !skip && strings.Contains(err.Error(), "values don't meet the specifications of the schema") {
				assert.Contains(t, err.Error(), "checksum")
				continue
			}
			requireRefusal(t, err, `images[0] (schematicID "abc", version "v1.13.6"): checksum`, "is not a checksum the catalog takes", "sha256 (64 hex digits) or sha512 (128)")
		}
	}
	// md5 and sha1 are checksums CDI takes, and their collisions can be made:
	// refused by name, schema on and off, whatever their case or length.
	for _, weak := range []struct{ checksum, algorithm string }{
		{"md5:5d41402abc4b2a76b9719d911017c592", "md5"},
		{"sha1:2fd4e1c67a2d28fced849ee1bb76e7391b93eb12", "sha1"},
		{"MD5:5D41402ABC4B2A76B9719D911017C592", "md5"},
		{"md5:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "md5"}, // sha256's length
	} {
		for _, skip := range []bool{false, true} {
			err := render1(weak.checksum, skip)
			require.Error(t, err, weak.checksum)
			// The schema's pattern is the form's (x-form): schema on, the template's words.
			requireRefusal(t, err, `images[0] (schematicID "abc", version "v1.13.6"): checksum "`+weak.checksum+`" uses `+weak.algorithm+`, whose collisions can be made`, "a golden is the image every tenant's workers boot", "set it to the image's sha256")
		}
	}
	// The neighbours: sha256 and sha512, in either case of hex, render.
	for _, good := range []string{
		testChecksum,
		"sha512:" + strings.Repeat("ab", 64),
		"sha256:9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08",
	} {
		v := vals(t, "{images: [{schematicID: abc, version: v1.13.6}]}")
		v["images"].([]interface{})[0].(map[string]interface{})["checksum"] = good
		m := mustRenderCatalog(t, v, nil)
		assert.Equal(t, good, render.Get(catalogGolden(t, m, "talos-worker-abc-v1.13.6").Object, "spec.source.http.checksum"))
	}
}

// A golden that exists keeps its stored source: adding a CA or a checksum is
// no edit of it, and its document renders as stored.
func TestExistingGoldensKeepTheirStoredSource(t *testing.T) {
	before := mustRenderCatalog(t, vals(t, catalogLiveValues), loadCluster(t, "catalog/goldens.yaml"))
	v := vals(t, strings.Replace(catalogLiveValues, "version: v1.13.5}", `version: v1.13.5, checksum: "`+testChecksum+`"}`, 1))
	v["imageFactoryCA"] = testCA(t)
	// Even on a CDI that could not verify it: the stored golden is not imported again.
	m, err := renderCatalog(t, v, clusterFromYAML(t, cdiAt("cdi", "v1.64.0", "Deployed"), "catalog/goldens.yaml"))
	require.NoError(t, err, "adding a CA or a checksum is not an edit refusal")
	kept := 0
	for _, d := range before.OfKind("DataVolume") {
		live, ok := m.Find("DataVolume", d.Name())
		require.True(t, ok)
		if render.Get(d.Object, "spec.source.http.url") == nil {
			continue
		}
		stored := clusterGolden(t, d.Name())
		if stored == nil {
			continue // not imported yet
		}
		assert.Equal(t, render.Get(stored, "spec.source.http.certConfigMap"), render.Get(live.Object, "spec.source.http.certConfigMap"), d.Name())
		assert.Equal(t, render.Get(stored, "spec.source.http.checksum"), render.Get(live.Object, "spec.source.http.checksum"), d.Name())
		assert.Equal(t, d.Text, live.Text, "%s renders as before", d.Name())
		kept++
	}
	assert.Equal(t, 2, kept, "both live goldens were compared")
	// A golden not yet imported takes them: here the entry no golden holds.
	fresh := catalogGolden(t, m, "talos-worker-abc-v1.13.6")
	assert.Equal(t, catalogCAConfigMap, render.Get(fresh.Object, "spec.source.http.certConfigMap"))
}

// clusterGolden reads a DataVolume of cozy-public from a fixture cluster (nil when absent).
func clusterGolden(t testing.TB, name string) map[string]interface{} {
	t.Helper()
	objs, err := render.LoadObjects(support.Fixture("catalog/goldens.yaml"))
	require.NoError(t, err)
	for _, o := range objs {
		if o.GetKind() == "DataVolume" && o.GetName() == name {
			return o.Object
		}
	}
	return nil
}

func TestExistingGoldenWithAStoredCAKeepsIt(t *testing.T) {
	stored := func(phase string) string {
		return fmt.Sprintf(`---
apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata: {name: talos-worker-abc-v1.13.6, namespace: cozy-public}
spec:
  source: {http: {url: "https://factory.talos.dev/image/abc/v1.13.6/openstack-amd64.raw.xz", certConfigMap: %s, checksum: "%s"}}
  storage: {resources: {requests: {storage: 6Gi}}, storageClassName: replicated}
status: {phase: %s}
`, catalogCAConfigMap, testChecksum, phase)
	}
	values := "{images: [{schematicID: abc, version: v1.13.6}]}"
	withCA := vals(t, values)
	withCA["imageFactoryCA"] = testCA(t)
	m, err := renderCatalog(t, withCA, clusterFromYAML(t, stored("ImportInProgress")))
	require.NoError(t, err)
	g := catalogGolden(t, m, "talos-worker-abc-v1.13.6")
	assert.Equal(t, catalogCAConfigMap, render.Get(g.Object, "spec.source.http.certConfigMap"))
	assert.Equal(t, testChecksum, render.Get(g.Object, "spec.source.http.checksum"), "the stored checksum stays, though the entry no longer sets it")

	// The CA removed while the golden still imports: Helm would delete the ConfigMap it reads.
	_, err = renderCatalog(t, vals(t, values), clusterFromYAML(t, stored("ImportInProgress")))
	requireRefusal(t, err, `images[0] (schematicID "abc", version "v1.13.6"): its golden cozy-public/talos-worker-abc-v1.13.6 is still importing (phase "ImportInProgress") with the CA in ConfigMap cozy-public/kubernetes-worker-image-ca`,
		"set imageFactoryCA back until the golden's phase is Succeeded")
	// Once imported, the CA may go.
	m, err = renderCatalog(t, vals(t, values), clusterFromYAML(t, stored("Succeeded")))
	require.NoError(t, err)
	assert.Empty(t, poolConfigMaps(m))
	assert.Equal(t, catalogCAConfigMap, render.Get(catalogGolden(t, m, "talos-worker-abc-v1.13.6").Object, "spec.source.http.certConfigMap"), "its stored spec is rendered as stored")
}

func TestPlatformForwardsTheTrustedImportSettings(t *testing.T) {
	v := vals(t, `
bundles: {enabledPackages: [cozystack.kubernetes-worker-image]}
kubernetesWorkerImage:
  images:
    - {schematicID: abc, version: v1.13.6, checksum: "`+testChecksum+`"}
`)
	v["kubernetesWorkerImage"].(map[string]interface{})["imageFactoryCA"] = testCA(t)
	m := mustRenderPlatform(t, v)
	pkg := platformDoc(t, m, "Package", catalogPackage)
	values := render.Get(pkg.Object, "spec.components.kubernetes-worker-image.values").(map[string]interface{})
	assert.Equal(t, testCA(t), values["imageFactoryCA"])
	assert.Equal(t, testChecksum, render.Get(values, "images.0.checksum"))
	// And the forwarded values render the catalog.
	cat := mustRenderCatalog(t, values, nil)
	assert.Equal(t, testCA(t), caConfigMapData(t, cat, catalogCAConfigMap))

	assert.Equal(t, testCA(t), render.Get(platformCA(t, testCA(t)), "talos.imageFactoryCA"), "tenantWorkers.talos.imageFactoryCA reaches _cluster")
	for _, skip := range []bool{false, true} {
		for _, bad := range badCAs(t)[:2] {
			v := vals(t, "{}")
			v["kubernetesWorkerImage"] = map[string]interface{}{"imageFactoryCA": bad.value}
			_, err := renderChartAs(t, platformChart(t), render.Release{Name: "cozystack-platform", Namespace: "cozy-system", SkipSchemaValidation: skip}, v, nil)
			requireCARefusal(t, err, skip, bad.why, "kubernetesWorkerImage.imageFactoryCA", bad.name)
			v = vals(t, "{}")
			v["tenantWorkers"] = map[string]interface{}{"talos": map[string]interface{}{"imageFactoryCA": bad.value}}
			_, err = renderChartAs(t, platformChart(t), render.Release{Name: "cozystack-platform", Namespace: "cozy-system", SkipSchemaValidation: skip}, v, nil)
			requireCARefusal(t, err, skip, bad.why, "tenantWorkers.talos.imageFactoryCA", bad.name)
		}
		v := vals(t, "{kubernetesWorkerImage: {images: [{schematicID: abc, version: v1.13.6, checksum: 'sha256:abc'}]}}")
		_, err := renderChartAs(t, platformChart(t), render.Release{Name: "cozystack-platform", Namespace: "cozy-system", SkipSchemaValidation: skip}, v, nil)
		require.Error(t, err)
		if skip {
			requireRefusal(t, err, `kubernetesWorkerImage.images[0].checksum "sha256:abc" is not a checksum the catalog takes`)
		}
	}
}

// A golden whose DataVolume is gone and only its PVC remains keeps what CDI
// recorded on the PVC when it imported (its certConfigMap and checksum
// annotations), so Helm re-creating the DataVolume adopts the PVC as it is.
func TestPVCOnlyGoldenKeepsWhatItWasImportedWith(t *testing.T) {
	pvc := func(annotations string) string {
		return `---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: talos-worker-abc-v1.13.6
  namespace: cozy-public
  annotations: {cdi.kubevirt.io/storage.import.endpoint: "https://factory.talos.dev/image/abc/v1.13.6/openstack-amd64.raw.xz"` + annotations + `}
spec: {accessModes: [ReadWriteMany], storageClassName: replicated, resources: {requests: {storage: 6Gi}}}
status: {phase: Bound}
`
	}
	v := vals(t, `{images: [{schematicID: abc, version: v1.13.6, checksum: "`+testChecksum+`"}]}`)
	v["imageFactoryCA"] = testCA(t)
	// Imported before either: the DataVolume Helm re-creates has neither, and no CDI is asked about the checksum.
	m, err := renderCatalog(t, v, clusterFromYAML(t, pvc("")+cdiAt("cdi", "v1.64.0", "Deployed")))
	require.NoError(t, err)
	g := catalogGolden(t, m, "talos-worker-abc-v1.13.6")
	assert.Nil(t, render.Get(g.Object, "spec.source.http.certConfigMap"))
	assert.Nil(t, render.Get(g.Object, "spec.source.http.checksum"))
	assert.Equal(t, testCA(t), caConfigMapData(t, m, catalogCAConfigMap), "the catalog's CA is still there for goldens imported from now on")
	// Imported with them: CDI's annotations carry them back.
	m, err = renderCatalog(t, vals(t, "{images: [{schematicID: abc, version: v1.13.6}]}"), clusterFromYAML(t, pvc(`, cdi.kubevirt.io/storage.import.certConfigMap: kubernetes-worker-image-ca, cdi.kubevirt.io/storage.import.checksum: "`+testChecksum+`"`)))
	require.NoError(t, err, "a PVC that was imported counts as Succeeded: its CA may go")
	g = catalogGolden(t, m, "talos-worker-abc-v1.13.6")
	assert.Equal(t, catalogCAConfigMap, render.Get(g.Object, "spec.source.http.certConfigMap"))
	assert.Equal(t, testChecksum, render.Get(g.Object, "spec.source.http.checksum"))
}
