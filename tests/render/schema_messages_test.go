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

// Helm prints schema errors before any template runs, so what
// values.schema.json keeps is what a tenant reads for it: the shapes (types,
// unknown keys) and the size bounds that keep the validator's cost bounded.
// Each such message in full, through Helm's own validation
// (chartutil.ToRenderValuesWithSchemaValidation), names the field and what is
// expected. Every other static rule (patterns, lengths, ranges, enums,
// required, builtin and factory excluding each other, the support matrix) is
// the form's (x-form): with the schema on, the values reach the templates,
// and the tenant reads their words, the same as with the schema off.
func TestPoolSchemaMessagesNameTheFieldAndTheExpectation(t *testing.T) {
	header := "values don't meet the specifications of the schema(s) in the following chart(s):\nkubernetes-nodes:\n"
	for _, tc := range []struct{ values, want string }{
		{"{cluster: acme, unknownKey: 1}", "- at '': additional properties 'unknownKey' not allowed"},
		{"{cluster: 7}", "- at '/cluster': got number, want string"},
		{"{cluster: acme, diskSize: true}", "- at '/diskSize': 'anyOf' failed\n  - at '/diskSize': got boolean, want string\n  - at '/diskSize': got boolean, want integer"},
		{"{cluster: acme, roles: [1]}", "- at '/roles/0': got number, want string"},
		{"{cluster: acme, roles: [" + strings.TrimSuffix(strings.Repeat("r,", 33), ",") + "]}", "- at '/roles': maxItems: got 33, want 32"},
		{"{cluster: acme, gpus: [{name: nvidia.com/L40S, count: 2}]}", "- at '/gpus/0': additional properties 'count' not allowed"},
		{"{cluster: acme, kubelet: {evictionHard: 5%}}", "- at '/kubelet': additional properties 'evictionHard' not allowed"},
		{"{cluster: acme, logSerialConsole: 'yes'}", "- at '/logSerialConsole': got string, want boolean"},
		{"{cluster: acme, talos: {registryMirrors: {docker.io: {endpoints: [1]}}}}", "- at '/talos/registryMirrors/docker.io/endpoints/0': got number, want string"},
		{"{cluster: acme, osImage: {builtin: {schematicId: x}}}", "- at '/osImage/builtin': additional properties 'schematicId' not allowed"},
		{"{cluster: acme, osImage: {builtin: false}}", "- at '/osImage/builtin': got boolean, want object"},
		{"{cluster: acme, maxUnhealthy: true}", "- at '/maxUnhealthy': 'anyOf' failed\n  - at '/maxUnhealthy': got boolean, want integer\n  - at '/maxUnhealthy': got boolean, want string\n  - at '/maxUnhealthy': got boolean, want string"},
	} {
		t.Run(tc.values, func(t *testing.T) {
			_, err := renderPool(t, vals(t, tc.values), nil)
			require.Error(t, err)
			require.Equal(t, header+tc.want+"\n", err.Error())
		})
	}
	// What the schema held before (issue 60) and is now the form's: the
	// template's words with the schema on, as with it off.
	for _, v := range []string{
		"{cluster: Acme}", "{}", "{cluster: acme, diskSize: 20GB}", "{cluster: acme, storageClass: 'a..b'}",
		"{cluster: acme, roles: [" + strings.Repeat("r", 64) + "]}", "{cluster: acme, roles: [a, a]}",
		"{cluster: acme, resources: {cpu: 0, memory: 4Gi}}", "{cluster: acme, readyUnknownTimeout: 0s}",
		"{cluster: acme, minReplicas: -1}", "{cluster: acme, talos: {registryMirrors: {docker.io: {endpoints: []}}}}",
		"{cluster: acme, osImage: {builtin: {}, factory: {}}}", "{cluster: acme, talos: {version: v1.13}}",
		"{cluster: acme, osImage: {factory: {imageFactoryURL: 'https://f.internal:99999'}}}",
		"{cluster: acme, talos: {schematicID: " + strings.Repeat("a", 65) + "}}", "{cluster: acme, version: v1.30}",
		"{cluster: acme, maxUnhealthy: 101%}",
	} {
		t.Run("template "+v, func(t *testing.T) {
			_, on := renderPool(t, vals(t, v), nil)
			_, off := renderPoolAs(t, schemaOff, vals(t, v), nil)
			require.Error(t, off)
			require.Error(t, on)
			require.NotContains(t, on.Error(), "values don't meet")
			require.Equal(t, off.Error(), on.Error())
		})
	}
}

// The catalog's and the platform's schemas keep the shapes (types, unknown
// keys, required-ness where the templates do not check it): each message in
// full through Helm's validation. Patterns, lengths, enums and required keys
// the templates check are the schema's x-form: with the schema on, the
// operator reads the template's words in helm-controller's condition, as with
// it off. The platform keeps its catalog entries' rules (kubernetesWorkerImage
// .images and the definitions they share): only the catalog's templates check
// those, when the catalog renders.
func TestCatalogAndPlatformSchemaMessagesNameTheFieldAndTheExpectation(t *testing.T) {
	entry := "{schematicID: abc, version: v1.13.6"
	for _, tc := range []struct{ values, want string }{
		{"{imagess: []}", "- at '': additional properties 'imagess' not allowed"},
		{"{images: {schematicID: abc}}", "- at '/images': got object, want array"},
		{"{images: [" + entry + ", storageclass: x}]}", "- at '/images/0': additional properties 'storageclass' not allowed"},
		{"{images: [" + entry + ", retire: 'yes'}]}", "- at '/images/0/retire': got string, want boolean"},
		{"{storageClass: 1}", "- at '/storageClass': got number, want string"},
	} {
		t.Run("catalog "+tc.values, func(t *testing.T) {
			_, err := renderCatalog(t, vals(t, tc.values), nil)
			require.Error(t, err)
			require.Equal(t, "values don't meet the specifications of the schema(s) in the following chart(s):\nkubernetes-worker-image:\n"+tc.want+"\n", err.Error())
		})
	}
	catalogOff := render.Release{Name: catalogRelease, Namespace: catalogNamespace, SkipSchemaValidation: true}
	for _, tc := range []struct{ values, want string }{
		{"{images: [{schematicID: abc}]}", `images[0] (schematicID "abc", version "") has no version`},
		{"{images: [{schematicID: ABC, version: v1.13.6}]}", `"ABC"`},
		{"{images: [{schematicID: abc, version: v1.13}]}", `"v1.13"`},
		{"{images: [" + entry + ", storage: 6 GB}]}", `"6 GB"`},
		{"{images: [" + entry + ", additionalStorageClasses: [ceph, ceph]}]}", "ceph"},
		{"{images: [" + entry + ", additionalStorageClasses: [Ceph]}]}", `"Ceph"`},
		{"{storageClass: 'a..b'}", `"a..b"`},
		{"{imageFactoryURL: factory.talos.dev}", `imageFactoryURL "factory.talos.dev"`},
		{"{cloneSubjects: [{kind: Role, name: x}]}", "cloneSubjects[0]"},
		{"{cloneSubjects: [{kind: Group}]}", "cloneSubjects[0]"},
		{"{cloneSubjects: [{kind: ServiceAccount, name: default}]}", "cloneSubjects[0] (ServiceAccount default): a ServiceAccount subject needs its namespace"},
		{"{cloneSubjects: [{kind: Group, name: g, namespace: other}]}", "cloneSubjects[0] (Group g): a ServiceAccount subject needs its namespace, and a Group or User has none"},
		{"{cloneSubjects: [{kind: Group, name: g, apiGroup: ''}, {kind: User, name: u, apiGroup: v1}]}", `cloneSubjects[1] (User u): apiGroup "v1" does not belong to the kind`},
	} {
		t.Run("catalog template "+tc.values, func(t *testing.T) {
			_, err := renderCatalog(t, vals(t, tc.values), nil)
			requireRefusal(t, err, tc.want)
			require.NotContains(t, err.Error(), "values don't meet")
			_, off := renderCatalogAs(t, catalogOff, vals(t, tc.values), nil)
			require.Equal(t, off.Error(), err.Error())
		})
	}

	platformAt := func(path ...string) string { return schemaAt(t, render.PlatformChart, path...) }
	for _, tc := range []struct{ values, want string }{
		{"{kubernetesWorkerImage: {images: [{schematicID: abc}]}}", "- at '/kubernetesWorkerImage/images/0': missing property 'version'"},
		{"{kubernetesWorkerImage: {images: [{schematicID: abc, version: v1.13.6, imageFactoryURL: 'ftp://x'}]}}", fmt.Sprintf("- at '/kubernetesWorkerImage/images/0/imageFactoryURL': 'ftp://x' does not match pattern '%s'", quoted(platformAt("definitions", "factoryURL", "pattern")))},
		{"{registries: {config: {m.internal: {tls: {insecureSkipVerify: 'true'}}}}}", "- at '/registries/config/m.internal/tls/insecureSkipVerify': got string, want boolean"},
		{"{bundles: {enabledPackages: [a, a]}}", "- at '/bundles/enabledPackages': items at 0 and 1 are equal"},
	} {
		t.Run("platform "+tc.values, func(t *testing.T) {
			_, err := renderPlatform(t, vals(t, tc.values))
			require.Error(t, err)
			require.Equal(t, "values don't meet the specifications of the schema(s) in the following chart(s):\nplatform:\n"+tc.want+"\n", err.Error())
		})
	}
	platformOff := render.Release{Name: "cozystack-platform", Namespace: "cozy-system", SkipSchemaValidation: true}
	for _, tc := range []struct{ values, want string }{
		{"{tenantWorkers: {talos: {imageFactoryURL: 'ftp://f.internal'}}}", `tenantWorkers.talos.imageFactoryURL "ftp://f.internal"`},
		{"{kubernetesWorkerImage: {storageClass: 'a..b'}}", `kubernetesWorkerImage.storageClass "a..b"`},
		{"{registries: {mirrors: {docker.io: {endpoints: []}}}}", "registries.mirrors"},
	} {
		t.Run("platform template "+tc.values, func(t *testing.T) {
			_, err := renderPlatform(t, vals(t, tc.values))
			requireRefusal(t, err, tc.want)
			require.NotContains(t, err.Error(), "values don't meet")
			_, off := renderChartAs(t, platformChart(t), platformOff, vals(t, tc.values), nil)
			require.Equal(t, off.Error(), err.Error())
		})
	}
	// The empty default is still accepted.
	_, err := renderPlatform(t, vals(t, "{tenantWorkers: {talos: {imageFactoryURL: ''}}}"))
	require.NoError(t, err)
}
