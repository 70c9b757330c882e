package render

import (
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// hostileFinding is one way a tenant's (or a careless operator's) values once
// cost the shared renderer, reached the API as another value, or chose a path
// they did not spell: with the schema on and off, it is refused with the
// chart's own message (or the schema's), or it renders what check says.
type hostileFinding struct {
	name   string
	chart  string // "pool" (default), "catalog" or "platform"
	values func() map[string]interface{}
	// refusal: the chart's words when the templates refuse it (schema off,
	// and schema on when the schema lets it through); "" when it renders.
	refusal string
	// schemaRefuses: with the schema on, the schema refuses it first (a
	// shape or a size bound values.schema.json keeps; its patterns and ranges
	// are the form's, and the template's words reach the tenant).
	schemaRefuses bool
	// check runs on the render when it renders.
	check func(t *testing.T, m *render.Manifest)
}

func yamlValues(snippet string) func() map[string]interface{} {
	return func() map[string]interface{} {
		out := map[string]interface{}{}
		if err := yaml.Unmarshal([]byte(snippet), &out); err != nil {
			panic(fmt.Sprintf("%s: %v", snippet, err))
		}
		return out
	}
}

func hostileFindings() []hostileFinding {
	builtin := func(extra string) func() map[string]interface{} {
		return yamlValues("{cluster: acme, osImage: {builtin: {}}, " + extra + "}")
	}
	many := func(key string, n int, item func(int) interface{}) func() map[string]interface{} {
		return func() map[string]interface{} {
			v := yamlValues("cluster: acme")()
			parts := strings.Split(key, ".")
			cur := v
			for _, p := range parts[:len(parts)-1] {
				next := map[string]interface{}{}
				cur[p] = next
				cur = next
			}
			last := parts[len(parts)-1]
			if strings.HasSuffix(last, "{}") {
				m := map[string]interface{}{}
				for i := 0; i < n; i++ {
					m[fmt.Sprintf("h%05d.internal", i)] = item(i)
				}
				cur[strings.TrimSuffix(last, "{}")] = m
			} else {
				var l []interface{}
				for i := 0; i < n; i++ {
					l = append(l, item(i))
				}
				cur[last] = l
			}
			return v
		}
	}
	mirror := func(int) interface{} {
		return map[string]interface{}{"endpoints": []interface{}{"https://m.internal"}}
	}
	auth := func(int) interface{} { return map[string]interface{}{"auth": map[string]interface{}{"username": "u"}} }
	return []hostileFinding{
		// Out of memory from one string: the exponent is refused before any arithmetic.
		{name: "diskSize with an exponent of a billion", values: builtin("diskSize: '1e1000000000'"),
			refusal: `diskSize "1e1000000000" is not a plain value: it is written with an exponent of more than 2 digits (e1000000000)`},
		{name: "diskSize with an exponent of a hundred million", values: builtin("diskSize: '1e100000000'"),
			refusal: `diskSize "1e100000000" is not a plain value`},
		// Raw Go errors: no exponent or fraction reaches a float.
		{name: "diskSize with an exponent of 309", values: builtin("diskSize: '1e309'"),
			refusal: `diskSize "1e309" is not a plain value: it is written with an exponent of more than 2 digits (e309)`},
		{name: "diskSize with 309 fraction digits", values: builtin("diskSize: '1." + strings.Repeat("1", 309) + "'"),
			refusal: `characters long, more than the 32 a quantity may have here`},
		{name: "diskSize of 8Ei", values: builtin("diskSize: 8Ei"),
			refusal: `diskSize "8Ei" is not a plain value: it is 2^63 (8Ei) or more, more than the API server stores`},
		{name: "diskSize finer than 1n", values: yamlValues("{cluster: acme, diskSize: '1e-10'}"),
			refusal: `diskSize "1e-10" is not a plain value: it is finer than 1n`},
		{name: "diskSize just under 8Ei renders", values: yamlValues("{cluster: acme, diskSize: 7Ei}"), check: func(t *testing.T, m *render.Manifest) {
			requireAPIReads(t, m, "spec.template.spec.virtualMachineTemplate.spec.dataVolumeTemplates.0.spec.storage.resources.requests.storage", "7Ei")
		}},
		// Cost from long lists: refused on their length, before any item is read.
		{name: "20,000 registry mirrors", values: many("talos.registryMirrors{}", 20000, mirror), schemaRefuses: true,
			refusal: "talos.registryMirrors has 20000 registry hosts, more than the 64 the chart takes"},
		{name: "21,000 platform registry-config hosts", values: many("_cluster.talos.registryConfig{}", 21000, auth),
			refusal: "_cluster.talos.registryConfig has 21000 registry hosts, more than the 64 the chart takes"},
		{name: "50,000 roles", values: many("roles", 50000, func(i int) interface{} { return fmt.Sprintf("r%d", i) }), schemaRefuses: true,
			refusal: "roles has 50000 roles, more than the 32 the chart takes"},
		// Octal: a leading zero is quoted, so the API reads the number written.
		{name: "diskSize with a leading zero", values: builtin("diskSize: '020000000000'"), check: func(t *testing.T, m *render.Manifest) {
			require.Contains(t, m.Text(), `storage: "020000000000"`)
			requireAPIReads(t, m, "spec.template.spec.virtualMachineTemplate.spec.dataVolumeTemplates.0.spec.storage.resources.requests.storage", "20000000000")
		}},
		{name: "diskSize with a leading zero on the HTTP path", values: yamlValues("{cluster: acme, diskSize: '020000000000'}"), check: func(t *testing.T, m *render.Manifest) {
			requireAPIReads(t, m, "spec.template.spec.virtualMachineTemplate.spec.dataVolumeTemplates.0.spec.storage.resources.requests.storage", "20000000000")
		}},
		{name: "memory with a leading zero", values: yamlValues("{cluster: acme, resources: {cpu: 2, memory: '04000000000'}}"), check: func(t *testing.T, m *render.Manifest) {
			require.Contains(t, m.Text(), `guest: "04000000000"`)
			requireAPIReads(t, m, "spec.template.spec.virtualMachineTemplate.spec.template.spec.domain.memory.guest", "4000000000")
		}},
		{name: "a plain byte count is quoted, as Cozystack's chart writes every disk size", values: yamlValues("{cluster: acme, diskSize: '21474836480'}"), check: func(t *testing.T, m *render.Manifest) {
			require.Contains(t, m.Text(), "storage: \"21474836480\"\n")
			requireAPIReads(t, m, "spec.template.spec.virtualMachineTemplate.spec.dataVolumeTemplates.0.spec.storage.resources.requests.storage", "20Gi")
		}},
		// Durations the API cannot read.
		{name: "nodeStartupTimeout past Go's range", values: yamlValues("{cluster: acme, nodeStartupTimeout: 9999999999999h}"),
			refusal: `nodeStartupTimeout "9999999999999h" is not a duration Cluster API reads (it is longer than 2562047h`},
		{name: "nodeStartupTimeout of 2562048h", values: yamlValues("{cluster: acme, nodeStartupTimeout: 2562048h}"),
			refusal: `nodeStartupTimeout "2562048h" is not a duration Cluster API reads`},
		{name: "nodeStartupTimeout of 2562047h renders", values: yamlValues("{cluster: acme, nodeStartupTimeout: 2562047h}"), check: func(t *testing.T, m *render.Manifest) {
			require.Equal(t, "2562047h", render.Get(doc(t, m, "MachineHealthCheck").Object, "spec.nodeStartupTimeout"))
		}},
		// Wrong types must not pick the clone path.
		{name: "builtin false", values: yamlValues("{cluster: acme, osImage: {builtin: false}}"), schemaRefuses: true, refusal: "osImage.builtin is false (a boolean), not a map"},
		{name: "builtin empty string", values: yamlValues("{cluster: acme, osImage: {builtin: ''}}"), schemaRefuses: true, refusal: `osImage.builtin is "", not a map`},
		{name: "builtin empty list", values: yamlValues("{cluster: acme, osImage: {builtin: []}}"), schemaRefuses: true, refusal: "osImage.builtin is a list, not a map"},
		{name: "builtin zero", values: yamlValues("{cluster: acme, osImage: {builtin: 0}}"), schemaRefuses: true, refusal: "osImage.builtin is 0 (a number), not a map"},
		{name: "builtin null", values: yamlValues("{cluster: acme, osImage: {builtin: null}}"), schemaRefuses: true, refusal: "osImage.builtin is null, not a map"},
		{name: "factory false", values: yamlValues("{cluster: acme, osImage: {factory: false}}"), schemaRefuses: true, refusal: "osImage.factory is false (a boolean), not a map"},
		{name: "osImage false", values: yamlValues("{cluster: acme, osImage: false}"), schemaRefuses: true, refusal: "osImage is false (a boolean), not a map"},
		{name: "osImage null", values: yamlValues("{cluster: acme, osImage: null}"), schemaRefuses: true, refusal: "osImage is null, not a map"},
		{name: "platform builtin false, schema on too", values: yamlValues("{cluster: acme, _cluster: {osImage: {builtin: false}}}"), refusal: "_cluster.osImage.builtin is false (a boolean), not a map"},
		{name: "platform osImage a string", values: yamlValues("{cluster: acme, _cluster: {osImage: builtin}}"), refusal: `_cluster.osImage is "builtin", not a map`},
		{name: "platform forwards builtin false", chart: "platform", values: yamlValues("{tenantWorkers: {osImage: {builtin: false}}}"), schemaRefuses: true,
			refusal: "tenantWorkers.osImage.builtin is false (a boolean), not a map"},
		{name: "a top-level typo", values: yamlValues("{cluster: acme, osimage: {builtin: {}}}"), schemaRefuses: true,
			refusal: `the values have the key "osimage", which the chart does not take`},
		// Counts of a million are counts.
		{name: "maxReplicas of a million", values: yamlValues("{cluster: acme, maxReplicas: 1000000}"), check: func(t *testing.T, m *render.Manifest) {
			require.Equal(t, "1000000", render.Get(doc(t, m, "MachineDeployment").Object, "metadata.annotations[cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size]"))
		}},
		{name: "maxReplicas past int32", values: yamlValues("{cluster: acme, maxReplicas: 2147483648}"),
			refusal: "maxReplicas 2.147483648e+09 (a number) is not a whole number of workers from 0 to 2147483647"},
	}
}

// requireAPIReads: the field, read from the manifest as Helm hands it to the
// API server, is the quantity want.
func requireAPIReads(t *testing.T, m *render.Manifest, path, want string) {
	t.Helper()
	got, ok := apiReadsScalar(t, scalarAt(t, m, path))
	require.True(t, ok, "%s reads as a quantity", path)
	exact, ok := exactQuantity(want)
	require.True(t, ok)
	require.Zero(t, got.Cmp(exact), "%s: the API server reads %s, want %s", path, got.FloatString(0), new(big.Rat).Set(exact).FloatString(0))
}

// scalarAt finds the line of the machine template that holds the field's last
// key and returns its scalar exactly as written.
func scalarAt(t *testing.T, m *render.Manifest, path string) string {
	t.Helper()
	keys := strings.Split(path, ".")
	key := keys[len(keys)-1] + ": "
	d := doc(t, m, "KubevirtMachineTemplate")
	for _, line := range strings.Split(d.Text, "\n") {
		if s := strings.TrimSpace(line); strings.HasPrefix(s, key) {
			return strings.TrimPrefix(s, key)
		}
	}
	t.Fatalf("no %s in\n%s", key, d.Text)
	return ""
}

// TestHostileFindingsAreRefusedOrWrittenExactly: every finding of the review
// that crossed tenants (issue "One tenant's values cannot cost anyone else"),
// with the schema on and off, under Helm's engine and within the cost bound.
func TestHostileFindingsAreRefusedOrWrittenExactly(t *testing.T) {
	for _, f := range hostileFindings() {
		t.Run(f.name, func(t *testing.T) {
			c, rel, cluster := costChart(t, f.chart)
			for _, skip := range []bool{false, true} {
				rel.SkipSchemaValidation = skip
				var m *render.Manifest
				var err error
				requireWithinCostBound(t, f.name, func() {
					m, err = render.Render(c, render.Options{Release: rel, Values: f.values(), Cluster: cluster})
				})
				switch {
				case f.refusal == "":
					require.NoError(t, err, "schema off: %v", skip)
					f.check(t, m)
				case f.schemaRefuses && !skip:
					require.Error(t, err)
					require.Contains(t, err.Error(), "values don't meet the specifications of the schema", "the schema refuses it first")
				default:
					requireOwnRefusal(t, err, f.name)
					require.Contains(t, err.Error(), f.refusal, "schema off: %v", skip)
				}
			}
		})
	}
}
