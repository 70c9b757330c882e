package schema

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

func testCA(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(support.RepoRoot(), "tests/render/testdata/ca/factory-ca.pem"))
	require.NoError(t, err)
	return string(raw)
}

// caValues is a values document with the CA put at path (dotted; "[0]" is
// the first images entry).
func caValues(t *testing.T, base, path, value string) interface{} {
	t.Helper()
	var doc map[string]interface{}
	require.NoError(t, yaml.Unmarshal([]byte(base), &doc))
	cur := doc
	segs := strings.Split(path, ".")
	for _, seg := range segs[:len(segs)-1] {
		if seg == "[0]" {
			cur = cur["images"].([]interface{})[0].(map[string]interface{})
			continue
		}
		next, ok := cur[seg].(map[string]interface{})
		if !ok {
			next = map[string]interface{}{}
			cur[seg] = next
		}
		cur = next
	}
	cur[segs[len(segs)-1]] = value
	return doc
}

// The schemas take the CA and the checksum the templates take, by the
// library's own patterns, as a first filter.
func TestTrustedImportSchemas(t *testing.T) {
	ca := testCA(t)
	bad := []string{"my-ca.crt", "-----BEGIN PRIVATE KEY-----\nMIGH\n-----END PRIVATE KEY-----\n", ca + "text\n", strings.Repeat(ca, 65536/len(ca)+1)}
	good := []string{"", ca, ca + ca, strings.Repeat(ca, 65536/len(ca)), strings.ReplaceAll(ca, "\n", "\r\n")}
	for _, tc := range []struct {
		chart, base, path string
	}{
		{poolChart, "{cluster: acme}", "talos.imageFactoryCA"},
		{catalogChart, "{}", "imageFactoryCA"},
		{catalogChart, "{images: [{schematicID: abc, version: v1.13.6}]}", "[0].imageFactoryCA"},
		{platformChart, "{}", "kubernetesWorkerImage.imageFactoryCA"},
		{platformChart, "{}", "tenantWorkers.talos.imageFactoryCA"},
		{platformChart, "{kubernetesWorkerImage: {images: [{schematicID: abc, version: v1.13.6}]}}", "kubernetesWorkerImage.[0].imageFactoryCA"},
	} {
		s := compile(t, tc.chart)
		base := tc.base
		path := tc.path
		if strings.HasPrefix(path, "kubernetesWorkerImage.[0].") {
			// images sits under kubernetesWorkerImage there.
			var doc map[string]interface{}
			require.NoError(t, yaml.Unmarshal([]byte(base), &doc))
			entry := doc["kubernetesWorkerImage"].(map[string]interface{})["images"].([]interface{})[0].(map[string]interface{})
			for _, v := range good {
				entry["imageFactoryCA"] = v
				require.NoError(t, s.Validate(doc), "%s %s", tc.chart, path)
			}
			for _, v := range bad {
				entry["imageFactoryCA"] = v
				require.Error(t, s.Validate(doc), "%s %s %.40q", tc.chart, path, v)
			}
			continue
		}
		for _, v := range good {
			require.NoError(t, s.Validate(caValues(t, base, path, v)), "%s %s %.40q", tc.chart, path, v)
		}
		for _, v := range bad {
			require.Error(t, s.Validate(caValues(t, base, path, v)), "%s %s %.40q", tc.chart, path, v)
		}
	}

	for _, chart := range []string{catalogChart, platformChart} {
		s := compile(t, chart)
		entry := func(checksum string) interface{} {
			images := []interface{}{map[string]interface{}{"schematicID": "abc", "version": "v1.13.6", "checksum": checksum}}
			if chart == platformChart {
				return map[string]interface{}{"kubernetesWorkerImage": map[string]interface{}{"images": images}}
			}
			return map[string]interface{}{"images": images}
		}
		for _, v := range []string{"", "sha256:" + strings.Repeat("0a", 32), "sha512:" + strings.Repeat("F0", 64)} {
			require.NoError(t, s.Validate(entry(v)), "%s %s", chart, v)
		}
		// md5 and sha1 are well formed for CDI, and refused: their collisions can be made.
		for _, v := range []string{"md5:5d41402abc4b2a76b9719d911017c592", "sha1:2fd4e1c67a2d28fced849ee1bb76e7391b93eb12",
			"sha256", "sha256:" + strings.Repeat("0a", 31), "sha384:" + strings.Repeat("0a", 48), "SHA256:" + strings.Repeat("0a", 32), "sha256:" + strings.Repeat("0g", 32), "md5:" + strings.Repeat("0a", 32)} {
			require.Error(t, s.Validate(entry(v)), "%s %s", chart, v)
		}
	}
}

func TestTrustedImportPatternsAreTheLibrarys(t *testing.T) {
	lib := libraryPatterns(t)
	require.NotEmpty(t, lib["imageFactoryCA"])
	require.NotEmpty(t, lib["checksum"])
	for _, chart := range []string{poolChart, catalogChart, platformChart} {
		schema := document(t, chartFile(t, chart+"/values.schema.json"))
		require.Equal(t, "^$|"+lib["imageFactoryCA"], jsonAt(t, schema, "definitions", "imageFactoryCA", "pattern"), chart)
		require.Equal(t, float64(65536), jsonAt(t, schema, "definitions", "imageFactoryCA", "maxLength"), chart)
		if chart != poolChart {
			require.Equal(t, "^$|"+lib["checksum"], jsonAt(t, schema, "definitions", "checksum", "pattern"), chart)
		}
	}
	platform := document(t, chartFile(t, platformChart+"/values.schema.json"))
	catalog := document(t, chartFile(t, catalogChart+"/values.schema.json"))
	require.Equal(t, jsonAt(t, catalog, "properties", "imageFactoryCA"), jsonAt(t, platform, "properties", "kubernetesWorkerImage", "properties", "imageFactoryCA"))
	for _, def := range []string{"imageFactoryCA", "checksum"} {
		require.Equal(t, jsonAt(t, catalog, "definitions", def), jsonAt(t, platform, "definitions", def), def)
	}
}
