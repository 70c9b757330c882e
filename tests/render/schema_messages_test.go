package render

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/require"
)

// poolSchemaAt reads a keyword of the pool chart's values.schema.json, so the
// expected messages below follow the schema rather than a copied output.
func poolSchemaAt(t *testing.T, path ...string) string {
	t.Helper()
	return schemaAt(t, render.PoolChart, path...)
}

// schemaAt reads a keyword of a chart's values.schema.json.
func schemaAt(t *testing.T, chartDir string, path ...string) string {
	t.Helper()
	raw, err := os.ReadFile(support.Path(chartDir, "values.schema.json"))
	require.NoError(t, err)
	var node interface{}
	require.NoError(t, json.Unmarshal(raw, &node))
	for _, p := range path {
		if list, ok := node.([]interface{}); ok {
			i, err := strconv.Atoi(p)
			require.NoError(t, err, "%v: %s indexes a list", path, p)
			node = list[i]
			continue
		}
		m, ok := node.(map[string]interface{})
		require.True(t, ok, "%v: %s is not under an object", path, p)
		node = m[p]
	}
	return fmt.Sprint(node)
}

// quoted is a pattern as the schema library prints it: backslashes escaped.
func quoted(pattern string) string { return strings.ReplaceAll(pattern, `\`, `\\`) }

// Helm prints schema errors before any template runs, so the schema's wording
// is what a tenant reads. Each rule's full message, through Helm's own
// validation (chartutil.ToRenderValuesWithSchemaValidation), names the field
// and what is expected (builtin and factory excluding each other as osImage's
// maxProperties, which words it better than a 'not' rule); the template's own
// words follow with the schema off.
func TestPoolSchemaMessagesNameTheFieldAndTheExpectation(t *testing.T) {
	header := "values don't meet the specifications of the schema(s) in the following chart(s):\nkubernetes-nodes:\n"
	quantity := quoted(poolSchemaAt(t, "definitions", "quantity", "pattern"))
	for _, tc := range []struct{ values, want string }{
		{"{cluster: acme, unknownKey: 1}", "- at '': additional properties 'unknownKey' not allowed"},
		{"{cluster: 7}", "- at '/cluster': got number, want string"},
		{"{cluster: Acme}", fmt.Sprintf("- at '/cluster': 'Acme' does not match pattern '%s'", poolSchemaAt(t, "properties", "cluster", "pattern"))},
		{"{cluster: acme, diskSize: 20GB}", fmt.Sprintf("- at '/diskSize': 'anyOf' failed\n  - at '/diskSize': '20GB' does not match pattern '%s'\n  - at '/diskSize': got string, want integer", quantity)},
		{"{cluster: acme, storageClass: 'a..b'}", fmt.Sprintf("- at '/storageClass': 'a..b' does not match pattern '%s'", quoted(poolSchemaAt(t, "properties", "storageClass", "pattern")))},
		{"{cluster: acme, roles: [" + strings.Repeat("r", 64) + "]}", "- at '/roles/0': maxLength: got 64, want 63"},
		{"{cluster: acme, roles: [a, a]}", "- at '/roles': items at 0 and 1 are equal"},
		{"{cluster: acme, resources: {cpu: 0}}", "- at '/resources/cpu': 'anyOf' failed\n  - at '/resources/cpu': minimum: got 0, want 1\n  - at '/resources/cpu': got number, want string"},
		{"{cluster: acme, gpus: [{name: nvidia.com/L40S, count: 2}]}", "- at '/gpus/0': additional properties 'count' not allowed"},
		{"{cluster: acme, kubelet: {evictionHard: 5%}}", "- at '/kubelet': additional properties 'evictionHard' not allowed"},
		{"{cluster: acme, logSerialConsole: 'yes'}", "- at '/logSerialConsole': got string, want boolean"},
		{"{cluster: acme, readyUnknownTimeout: 0s}", fmt.Sprintf("- at '/readyUnknownTimeout': '0s' does not match pattern '%s'", poolSchemaAt(t, "properties", "readyUnknownTimeout", "pattern"))},
		{"{cluster: acme, minReplicas: -1}", "- at '/minReplicas': minimum: got -1, want 0"},
		{"{cluster: acme, talos: {registryMirrors: {docker.io: {endpoints: []}}}}", "- at '/talos/registryMirrors/docker.io/endpoints': minItems: got 0, want 1"},
		{"{cluster: acme, osImage: {builtin: {schematicId: x}}}", "- at '/osImage/builtin': additional properties 'schematicId' not allowed"},
		{"{cluster: acme, osImage: {builtin: {}, factory: {}}}", "- at '/osImage': maxProperties: got 2, want 1"},
		{"{}", fmt.Sprintf("- at '/cluster': '' does not match pattern '%s'", poolSchemaAt(t, "properties", "cluster", "pattern"))},
		{"{cluster: acme, talos: {version: v1.13}}", fmt.Sprintf("- at '/talos/version': 'v1.13' does not match pattern '%s'", quoted(poolSchemaAt(t, "definitions", "talosVersion", "pattern")))},
		{"{cluster: acme, osImage: {factory: {imageFactoryURL: 'https://f.internal:99999'}}}", fmt.Sprintf("- at '/osImage/factory/imageFactoryURL': 'https://f.internal:99999' does not match pattern '%s'", quoted(poolSchemaAt(t, "definitions", "imageFactoryURL", "pattern")))},
		{"{cluster: acme, talos: {schematicID: " + strings.Repeat("a", 65) + "}}", "- at '/talos/schematicID': maxLength: got 65, want 64"},
		{"{cluster: acme, version: v1.30}", "- at '/version': value must be one of " + poolVersionEnum(t)},
		{"{cluster: acme, maxUnhealthy: 101%}", fmt.Sprintf("- at '/maxUnhealthy': 'oneOf' failed, none matched\n  - at '/maxUnhealthy': got string, want integer\n  - at '/maxUnhealthy': '101%%' does not match pattern '%s'", poolSchemaAt(t, "properties", "maxUnhealthy", "oneOf", "1", "pattern")) + fmt.Sprintf("\n  - at '/maxUnhealthy': '101%%' does not match pattern '%s'", poolSchemaAt(t, "properties", "maxUnhealthy", "oneOf", "2", "pattern"))},
	} {
		t.Run(tc.values, func(t *testing.T) {
			_, err := renderPool(t, vals(t, tc.values), nil)
			require.Error(t, err)
			require.Equal(t, header+tc.want+"\n", err.Error())
		})
	}
	// builtin and factory together: the schema's maxProperties (no "'not'
	// failed"), the template's words with the schema off.
	_, err := renderPoolAs(t, schemaOff, vals(t, "{cluster: acme, osImage: {builtin: {}, factory: {}}}"), nil)
	requireRefusal(t, err, "pool kubernetes-acme-workers: osImage sets both builtin and factory; set osImage.builtin to clone the golden from cozy-public, or osImage.factory to import over HTTP, not both")
}

// The catalog's and the platform's schema rules, each message in full through
// Helm's validation; the subject rules that depend on the kind are the
// template's, worded there, with the schema on too.
func TestCatalogAndPlatformSchemaMessagesNameTheFieldAndTheExpectation(t *testing.T) {
	catalogAt := func(path ...string) string { return schemaAt(t, render.CatalogChart, path...) }
	className := quoted(catalogAt("properties", "storageClass", "pattern"))
	entry := "{schematicID: abc, version: v1.13.6"
	for _, tc := range []struct{ values, want string }{
		{"{imagess: []}", "- at '': additional properties 'imagess' not allowed"},
		{"{images: {schematicID: abc}}", "- at '/images': got object, want array"},
		{"{images: [{schematicID: abc}]}", "- at '/images/0': missing property 'version'"},
		{"{images: [" + entry + ", storageclass: x}]}", "- at '/images/0': additional properties 'storageclass' not allowed"},
		{"{images: [{schematicID: ABC, version: v1.13.6}]}", fmt.Sprintf("- at '/images/0/schematicID': 'ABC' does not match pattern '%s'", catalogAt("properties", "images", "then", "items", "properties", "schematicID", "pattern"))},
		{"{images: [{schematicID: abc, version: v1.13}]}", fmt.Sprintf("- at '/images/0/version': 'v1.13' does not match pattern '%s'", quoted(catalogAt("properties", "images", "then", "items", "properties", "version", "pattern")))},
		{"{images: [" + entry + ", storage: 6 GB}]}", fmt.Sprintf("- at '/images/0/storage': '6 GB' does not match pattern '%s'", quoted(catalogAt("definitions", "quantity", "pattern")))},
		{"{images: [" + entry + ", retire: 'yes'}]}", "- at '/images/0/retire': got string, want boolean"},
		{"{images: [" + entry + ", additionalStorageClasses: [ceph, ceph]}]}", "- at '/images/0/additionalStorageClasses': items at 0 and 1 are equal"},
		{"{images: [" + entry + ", additionalStorageClasses: [Ceph]}]}", fmt.Sprintf("- at '/images/0/additionalStorageClasses/0': 'Ceph' does not match pattern '%s'", quoted(catalogAt("properties", "images", "then", "items", "properties", "additionalStorageClasses", "then", "items", "pattern")))},
		{"{storageClass: 'a..b'}", fmt.Sprintf("- at '/storageClass': 'a..b' does not match pattern '%s'", className)},
		{"{imageFactoryURL: factory.talos.dev}", fmt.Sprintf("- at '/imageFactoryURL': 'factory.talos.dev' does not match pattern '%s'", quoted(catalogAt("properties", "imageFactoryURL", "pattern")))},
		{"{cloneSubjects: [{kind: Role, name: x}]}", "- at '/cloneSubjects/0/kind': value must be one of 'Group', 'User', 'ServiceAccount'"},
		{"{cloneSubjects: [{kind: Group}]}", "- at '/cloneSubjects/0': missing property 'name'"},
	} {
		t.Run("catalog "+tc.values, func(t *testing.T) {
			_, err := renderCatalog(t, vals(t, tc.values), nil)
			require.Error(t, err)
			require.Equal(t, "values don't meet the specifications of the schema(s) in the following chart(s):\nkubernetes-worker-image:\n"+tc.want+"\n", err.Error())
		})
	}
	for _, tc := range []struct{ values, want string }{
		{"{cloneSubjects: [{kind: ServiceAccount, name: default}]}", "cloneSubjects[0] (ServiceAccount default): a ServiceAccount subject needs its namespace"},
		{"{cloneSubjects: [{kind: Group, name: g, namespace: other}]}", "cloneSubjects[0] (Group g): a ServiceAccount subject needs its namespace, and a Group or User has none"},
		{"{cloneSubjects: [{kind: Group, name: g, apiGroup: ''}, {kind: User, name: u, apiGroup: v1}]}", `cloneSubjects[1] (User u): apiGroup "v1" does not belong to the kind`},
	} {
		t.Run("catalog template "+tc.values, func(t *testing.T) {
			_, err := renderCatalog(t, vals(t, tc.values), nil)
			requireRefusal(t, err, tc.want)
			require.NotContains(t, err.Error(), "schema")
		})
	}

	platformAt := func(path ...string) string { return schemaAt(t, render.PlatformChart, path...) }
	for _, tc := range []struct{ values, want string }{
		{"{tenantWorkers: {talos: {imageFactoryURL: 'ftp://f.internal'}}}", fmt.Sprintf("- at '/tenantWorkers/talos/imageFactoryURL': 'ftp://f.internal' does not match pattern '%s'", quoted(platformAt("properties", "tenantWorkers", "properties", "talos", "properties", "imageFactoryURL", "pattern")))},
		{"{kubernetesWorkerImage: {images: [{schematicID: abc}]}}", "- at '/kubernetesWorkerImage/images/0': missing property 'version'"},
		{"{kubernetesWorkerImage: {storageClass: 'a..b'}}", fmt.Sprintf("- at '/kubernetesWorkerImage/storageClass': 'a..b' does not match pattern '%s'", className)},
		{"{registries: {mirrors: {docker.io: {endpoints: []}}}}", "- at '/registries/mirrors/docker.io/endpoints': minItems: got 0, want 1"},
		{"{registries: {config: {m.internal: {tls: {insecureSkipVerify: 'true'}}}}}", "- at '/registries/config/m.internal/tls/insecureSkipVerify': got string, want boolean"},
	} {
		t.Run("platform "+tc.values, func(t *testing.T) {
			_, err := renderPlatform(t, vals(t, tc.values))
			require.Error(t, err)
			require.Equal(t, "values don't meet the specifications of the schema(s) in the following chart(s):\nplatform:\n"+tc.want+"\n", err.Error())
		})
	}
	// The empty default is still accepted.
	_, err := renderPlatform(t, vals(t, "{tenantWorkers: {talos: {imageFactoryURL: ''}}}"))
	require.NoError(t, err)
}

// poolVersionEnum is the schema's version enum as the schema library lists it.
func poolVersionEnum(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile(support.Path(render.PoolChart, "values.schema.json"))
	require.NoError(t, err)
	var schema struct {
		Properties struct {
			Version struct {
				Enum []string `json:"enum"`
			} `json:"version"`
		} `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(raw, &schema))
	require.NotEmpty(t, schema.Properties.Version.Enum)
	quotedValues := make([]string, len(schema.Properties.Version.Enum))
	for i, v := range schema.Properties.Version.Enum {
		quotedValues[i] = "'" + v + "'"
	}
	return strings.Join(quotedValues, ", ")
}
