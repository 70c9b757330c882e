package render

import (
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goldenNameFromCatalog renders the catalog with one entry and returns its golden's name,
// or the refusal.
func goldenNameFromCatalog(t testing.TB, schematicID, version string) (string, error) {
	t.Helper()
	c, err := support.LoadChart(render.CatalogChart)
	require.NoError(t, err)
	values := map[string]interface{}{"images": []interface{}{map[string]interface{}{"schematicID": schematicID, "version": version}}}
	m, err := render.Render(c, render.Options{Release: render.Release{Name: "kubernetes-worker-image", Namespace: "cozy-public", SkipSchemaValidation: true}, Values: values})
	if err != nil {
		return "", err
	}
	dv, err := m.One("DataVolume")
	require.NoError(t, err)
	return dv.Name(), nil
}

// goldenNameFromPool renders a builtin pool (no cluster: a preview) and returns the golden its disk clones.
func goldenNameFromPool(t testing.TB, schematicID, version string) (string, error) {
	t.Helper()
	values := map[string]interface{}{"cluster": testCluster, "osImage": map[string]interface{}{"builtin": map[string]interface{}{"schematicID": schematicID, "version": version}}}
	m, err := renderPoolAs(t, render.Release{Name: testRelease, Namespace: testNamespace, SkipSchemaValidation: true}, values, nil)
	if err != nil {
		return "", err
	}
	name, _ := render.Get(diskOf(m), "spec.source.pvc.name").(string)
	return name, nil
}

// Both charts build the golden's name from the same (schematicID, version), and
// accept and refuse the same strings: a pool can clone exactly what the catalog imports.
func TestCatalogAndPoolAgreeOnGoldens(t *testing.T) {
	for _, pair := range [][2]string{
		{defaultSchematic, defaultTalos},
		{"613e1592b2da41ae5e265e8789429f22e121aab91cb4deb6bc3c0b6262961245", "v1.13.0-alpha.1"},
		{"my-schematic-7", "v2.0.10"},
		{"a", "v0.0.0-rc.1.2"},
	} {
		fromCatalog, err := goldenNameFromCatalog(t, pair[0], pair[1])
		require.NoError(t, err)
		fromPool, err := goldenNameFromPool(t, pair[0], pair[1])
		require.NoError(t, err)
		assert.Equal(t, fromCatalog, fromPool, "%v", pair)
		assert.Equal(t, "talos-worker-"+pair[0]+"-"+pair[1], fromPool, "the contract's name")
	}
	agreed := 0
	for _, bad := range []string{"ABC", "a b", "a\nb", "a:b", "a#b", "-a", "a-", `a"b`, "a`b", "$(x)", "a/b", "a.b", "a_b"} {
		_, catalogErr := goldenNameFromCatalog(t, bad, defaultTalos)
		_, poolErr := goldenNameFromPool(t, bad, defaultTalos)
		assert.Error(t, catalogErr, "catalog refuses schematicID %q", bad)
		assert.Error(t, poolErr, "pool refuses schematicID %q", bad)
		agreed++
	}
	for _, bad := range []string{"1.13.6", "v1.13", "v1.13.6-", "v1.13.6-RC1", "v1.13.6+b", "v1.13.6 ", "v1.13.6\nx: y", "v1.13.6-a#"} {
		_, catalogErr := goldenNameFromCatalog(t, defaultSchematic, bad)
		_, poolErr := goldenNameFromPool(t, defaultSchematic, bad)
		assert.Error(t, catalogErr, "catalog refuses version %q", bad)
		assert.Error(t, poolErr, "pool refuses version %q", bad)
		agreed++
	}
	t.Logf("%d malformed fields refused by both charts", agreed)
}
