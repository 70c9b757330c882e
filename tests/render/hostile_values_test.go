package render

import (
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chart"
	"sigs.k8s.io/yaml"
)

// marker is in every hostile string, so a leak is found by looking for it.
const marker = "EVIL"

// hostilePayloads are what a tenant (or a careless operator) could write into a
// value: breaking out of a scalar, starting a document, quoting, template
// syntax, flow collections, floods, and every wrong type.
var hostilePayloads = []struct {
	name  string
	value interface{}
}{
	{"newline and key", marker + "\nkind: Secret"},
	{"document separator", marker + "\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: evil}\nroleRef: {kind: ClusterRole, name: cluster-admin}"},
	{"quotes", marker + `"'` + "`"},
	{"template", "{{ .Release.Name }}" + marker},
	{"flow map", "{" + marker + ": b}"},
	{"very long", strings.Repeat(marker, 100)},
	{"number", 42},
	{"boolean", true},
	{"list", []interface{}{marker}},
	{"map", map[string]interface{}{marker: "b"}},
	{"null", nil},
}

// hostileField sets one field of a values map to a payload.
type hostileField struct {
	name string
	set  func(values map[string]interface{}, payload interface{})
}

// at sets a dotted path, creating maps on the way; a segment "[]" makes the
// value the only element of a list, "{}" makes it a map key (with value then).
func setAt(path string, then ...interface{}) hostileField {
	return hostileField{name: path, set: func(values map[string]interface{}, payload interface{}) {
		// `\.` is a dot inside a key, as in docker\.io.
		segs := strings.Split(strings.ReplaceAll(path, `\.`, "\x00"), ".")
		for i := range segs {
			segs[i] = strings.ReplaceAll(segs[i], "\x00", ".")
		}
		cur := values
		for i, seg := range segs {
			last := i == len(segs)-1
			switch {
			case last && seg == "[]":
				panic("[] must be followed by nothing; write the list's parent as the last segment")
			case last && seg == "{}":
				key := fmt.Sprint(payload)
				if s, ok := payload.(string); ok {
					key = s
				}
				cur[key] = then[0]
			case last:
				cur[seg] = payload
			case segs[i+1] == "[]":
				cur[seg] = []interface{}{payload}
				return
			default:
				next, ok := cur[seg].(map[string]interface{})
				if !ok {
					next = map[string]interface{}{}
					cur[seg] = next
				}
				cur = next
			}
		}
	}}
}

type hostileChart struct {
	name    string
	chart   func(testing.TB) *chart.Chart
	release render.Release
	base    string
	cluster func(testing.TB) *support.Cluster
	fields  []hostileField
	// embedded are the string leaves that hold YAML of their own (a Talos
	// patch, a values file): a leak inside them counts as a leak.
	embedded []string
}

func hostileCharts() []hostileChart {
	mirror := map[string]interface{}{"endpoints": []interface{}{"https://m.internal"}}
	registryCA, _ := os.ReadFile(support.Fixture("ca/registry-ca.pem"))
	return []hostileChart{
		{
			name:    "pool",
			chart:   poolChart,
			release: render.Release{Name: testRelease, Namespace: testNamespace},
			base:    "{cluster: acme, osImage: {builtin: {}}}",
			cluster: func(t testing.TB) *support.Cluster { return healthyCluster(t) },
			fields: []hostileField{
				setAt("cluster"), setAt("storageClass"), setAt("diskSize"), setAt("instanceType"),
				setAt("resources.cpu"), setAt("resources.memory"), setAt("roles.[]"),
				setAt("minReplicas"), setAt("maxReplicas"), setAt("maxSurge"), setAt("version"),
				setAt("maxUnhealthy"), setAt("nodeStartupTimeout"),
				setAt("talos.version"), setAt("talos.schematicID"), setAt("talos.imageFactoryURL"), setAt("talos.installerRepository"),
				setAt("talos.registryMirrors"), setAt("talos.registryMirrors.{}", mirror), setAt(`talos.registryMirrors.docker\.io.endpoints.[]`),
				setAt("osImage"), setAt("osImage.builtin"), setAt("osImage.builtin.schematicID"), setAt("osImage.builtin.version"),
				setAt("osImage.{}", map[string]interface{}{}),
				setAt("_cluster"), setAt("_cluster.osImage"), setAt("_cluster.osImage.builtin.version"),
				setAt("_cluster.talos.imageFactoryURL"), setAt("_cluster.talos.installerRepository"),
				setAt("_cluster.talos.registryMirrors.{}", mirror),
				setAt("_cluster.talos.registryConfig.{}", map[string]interface{}{}),
				setAt(`_cluster.talos.registryConfig.m\.internal.auth.password`),
				setAt("_kubernetesNodes.disk.golden"),
			},
			embedded: []string{"data[talosconfigtemplate.yaml]"},
		},
		{
			name:    "pool http",
			chart:   poolChart,
			release: render.Release{Name: testRelease, Namespace: testNamespace},
			base:    "{cluster: acme}",
			cluster: func(t testing.TB) *support.Cluster { return healthyCluster(t) },
			fields: []hostileField{
				setAt("storageClass"), setAt("instanceType"), setAt("diskSize"), setAt("nodeStartupTimeout"), setAt("maxUnhealthy"), setAt("roles.[]"),
				setAt("talos.imageFactoryCA"), setAt("_cluster.talos.imageFactoryCA"),
			},
			embedded: []string{"data[talosconfigtemplate.yaml]"},
		},
		{
			name:    "pool factory",
			chart:   poolChart,
			release: render.Release{Name: testRelease, Namespace: testNamespace},
			base:    "{cluster: acme, osImage: {factory: {}}}",
			cluster: func(t testing.TB) *support.Cluster { return healthyCluster(t) },
			fields: []hostileField{
				setAt("osImage.factory"), setAt("osImage.factory.schematicID"), setAt("osImage.factory.version"), setAt("osImage.factory.imageFactoryURL"),
			},
			embedded: []string{"data[talosconfigtemplate.yaml]"},
		},
		{
			name:    "catalog",
			chart:   catalogChart,
			release: render.Release{Name: "kubernetes-worker-image", Namespace: catalogNamespace},
			base:    "{}",
			cluster: func(t testing.TB) *support.Cluster { return clusterFromYAML(t, "") },
			fields: []hostileField{
				setAt("imageFactoryURL"), setAt("imageFactoryCA"), setAt("storageClass"), setAt("storage"), setAt("images"), setAt("images.[]"),
				setAt("cloneSubjects"), setAt("cloneSubjects.[]"),
				setAt("registries.config.{}", map[string]interface{}{"tls": map[string]interface{}{"ca": string(registryCA)}}), setAt(`registries.config.r\.internal.tls.ca`), setAt(`registries.config.r\.internal.auth.password`),
				setAt("tenantWorkers.talos.imageFactoryURL"), setAt("tenantWorkers.talos.imageFactoryCA"),
				setAt("_kubernetesWorkerImageEntries.[]"),
			},
		},
		{
			name:    "catalog entry",
			chart:   catalogChart,
			release: render.Release{Name: "kubernetes-worker-image", Namespace: catalogNamespace},
			base:    "{images: [{schematicID: abc, version: v1.13.6}], cloneSubjects: [{kind: Group, name: g}]}",
			cluster: func(t testing.TB) *support.Cluster { return clusterFromYAML(t, "") },
			fields: []hostileField{
				entryField("schematicID"), entryField("version"), entryField("imageFactoryURL"), entryField("storage"), entryField("storageClass"), entryField("additionalStorageClasses"), entryField("imageFactoryCA"), entryField("checksum"), entryField("{}"),
				subjectField("name"), subjectField("kind"), subjectField("namespace"),
			},
		},
		{
			name:    "platform",
			chart:   platformChart,
			release: render.Release{Name: "cozystack-platform", Namespace: "cozy-system"},
			base:    "{bundles: {enabledPackages: [cozystack.kubernetes-worker-image]}}",
			cluster: func(t testing.TB) *support.Cluster { return clusterFromYAML(t, "") },
			fields: []hostileField{
				setAt("bundles.enabledPackages.[]"), setAt("bundles.disabledPackages.[]"),
				setAt("kubernetesWorkerImage.imageFactoryURL"), setAt("kubernetesWorkerImage.imageFactoryCA"), setAt("kubernetesWorkerImage.storageClass"), setAt("kubernetesWorkerImage.storage"), setAt("kubernetesWorkerImage.images.[]"),
				setAt("registries.mirrors.{}", mirror), setAt(`registries.mirrors.docker\.io.endpoints.[]`),
				setAt("registries.config.{}", map[string]interface{}{}), setAt(`registries.config.m\.internal.auth.password`),
				setAt("tenantWorkers.talos.installerRepository"), setAt("tenantWorkers.talos.imageFactoryURL"), setAt("tenantWorkers.talos.imageFactoryCA"), setAt("tenantWorkers.osImage"),
			},
			embedded: []string{"stringData[values.yaml]"},
		},
	}
}

// entryField and subjectField set a field of the base's first images[] entry
// or cloneSubjects[] subject ("{}": the payload as an extra key).
func entryField(field string) hostileField {
	return firstOf("images", field, map[string]interface{}{"schematicID": "abc", "version": "v1.13.6"})
}

func subjectField(field string) hostileField {
	return firstOf("cloneSubjects", field, map[string]interface{}{"kind": "Group", "name": "g"})
}

func firstOf(list, field string, base map[string]interface{}) hostileField {
	return hostileField{name: list + "[0]." + field, set: func(values map[string]interface{}, payload interface{}) {
		item := map[string]interface{}{}
		for k, v := range base {
			item[k] = v
		}
		if field == "{}" {
			item[fmt.Sprint(payload)] = "x"
		} else {
			item[field] = payload
		}
		values[list] = []interface{}{item}
	}}
}

func platformChart(t testing.TB) *chart.Chart {
	c, err := support.LoadChart(render.PlatformChart)
	require.NoError(t, err)
	return c
}

// rawTemplateErrors are Go template failures that are not the chart's own words.
var rawTemplateErrors = []string{"nil pointer", "error calling", "wrong type for value", "can't evaluate", "incompatible types", "invalid value; expected", "cannot index"}

// TestHostileValuesAreRefusedOrContained: for every settable field and every
// hostile payload, with schema validation on and off, a render either refuses
// with the chart's own message (or the schema's), or yields only documents the
// values without the payload yield, in the same namespaces under the same names,
// with the payload nowhere but inside a string.
func TestHostileValuesAreRefusedOrContained(t *testing.T) {
	outcomes := map[string]map[string]string{}
	var rows []string
	for _, hc := range hostileCharts() {
		chrt := hc.chart(t)
		baseline, err := renderChartAs(t, chrt, hc.release, vals(t, hc.base), hc.cluster(t))
		require.NoError(t, err, "%s: the base values render", hc.name)
		for _, field := range hc.fields {
			row := hc.name + " " + field.name
			rows = append(rows, row)
			outcomes[row] = map[string]string{}
			for _, p := range hostilePayloads {
				var cells []string
				for _, skip := range []bool{false, true} {
					values := vals(t, hc.base)
					field.set(values, p.value)
					rel := hc.release
					rel.SkipSchemaValidation = skip
					m, err := renderChartAs(t, chrt, rel, values, hc.cluster(t))
					outcome := judgeHostile(t, hc, baseline, m, err, fmt.Sprintf("%s = %s (schema off: %v)", row, p.name, skip))
					cells = append(cells, outcome)
				}
				outcomes[row][p.name] = strings.Join(cells, "/")
			}
		}
	}
	// The table for the closing note: schema on / schema off.
	var b strings.Builder
	b.WriteString("field")
	for _, p := range hostilePayloads {
		b.WriteString(" | " + p.name)
	}
	b.WriteString("\n")
	for _, row := range rows {
		b.WriteString(row)
		for _, p := range hostilePayloads {
			b.WriteString(" | " + outcomes[row][p.name])
		}
		b.WriteString("\n")
	}
	t.Log("outcome per field and payload (schema on/off): S refused by the schema, T refused by the template, C contained\n" + b.String())
}

// judgeHostile classifies one render, failing the test on a leak.
func judgeHostile(t *testing.T, hc hostileChart, baseline, m *render.Manifest, err error, what string) string {
	t.Helper()
	if err != nil {
		msg := err.Error()
		for _, raw := range rawTemplateErrors {
			require.NotContains(t, msg, raw, "%s: refused with a raw template error instead of the chart's message", what)
		}
		if strings.Contains(msg, "values don't meet the specifications of the schema") {
			return "S"
		}
		require.Contains(t, msg, "execution error at (", "%s: refused by the chart's own fail", what)
		return "T"
	}
	// No document the values without the payload would not render (a null may
	// drop one: Helm reads null as "remove the chart's default").
	require.Subset(t, identities(baseline), identities(m), "%s: only documents the values without the payload render\n%s", what, m.Text())
	require.NotContains(t, m.Text(), "<nil>", "%s: a missing value rendered as <nil>", what)
	for _, d := range m.Docs {
		requireNoLeakedKey(t, d.Object, what)
		for _, path := range hc.embedded {
			if s, ok := render.Get(d.Object, path).(string); ok {
				var inner interface{}
				require.NoError(t, yaml.Unmarshal([]byte(s), &inner), "%s: %s still parses", what, path)
				requireNoLeakedKey(t, inner, what+" in "+path)
				// The TalosConfigTemplate's own embedded YAML: the worker's machine config.
				if config, ok := render.Get(inner, "spec.template.spec.data").(string); ok {
					var machine interface{}
					require.NoError(t, yaml.Unmarshal([]byte(config), &machine), "%s: the machine config still parses", what)
					requireNoLeakedKey(t, machine, what+" in the machine config")
				}
			}
		}
	}
	return "C"
}

// identities are the documents' kinds, namespaces and names; the machine
// template's name is its pool's name plus a hash, so its hash is left out.
func identities(m *render.Manifest) []string {
	var out []string
	for _, d := range m.Docs {
		name := d.Name()
		if d.Kind() == "KubevirtMachineTemplate" || d.Kind() == "Job" {
			name = name[:strings.LastIndex(name, "-")]
		}
		out = append(out, d.Kind()+" "+d.Namespace()+"/"+name)
	}
	sort.Strings(out)
	return out
}

// requireNoLeakedKey fails when a map key anywhere carries the marker: the
// payload became structure instead of staying inside a string.
func requireNoLeakedKey(t *testing.T, node interface{}, what string) {
	t.Helper()
	switch n := node.(type) {
	case map[string]interface{}:
		for k, v := range n {
			require.NotContains(t, k, marker, "%s: the payload became a key", what)
			requireNoLeakedKey(t, v, what)
		}
	case []interface{}:
		for _, v := range n {
			requireNoLeakedKey(t, v, what)
		}
	}
}

// mapKeys collects every map key under node, with embedded YAML strings at
// the given paths parsed and walked too.
func mapKeys(node interface{}, into map[string]bool) {
	switch n := node.(type) {
	case map[string]interface{}:
		for k, v := range n {
			into[k] = true
			mapKeys(v, into)
		}
	case []interface{}:
		for _, v := range n {
			mapKeys(v, into)
		}
	}
}

func renderKeys(t *testing.T, m *render.Manifest) map[string]bool {
	t.Helper()
	keys := map[string]bool{}
	for _, d := range m.Docs {
		mapKeys(d.Object, keys)
		if s, ok := render.Get(d.Object, "data[talosconfigtemplate.yaml]").(string); ok {
			var tct interface{}
			if err := yaml.Unmarshal([]byte(s), &tct); err != nil {
				t.Fatalf("the TalosConfigTemplate does not parse: %v\n%s", err, s)
			}
			mapKeys(tct, keys)
			var machine interface{}
			if err := yaml.Unmarshal([]byte(render.Get(tct, "spec.template.spec.data").(string)), &machine); err != nil {
				t.Fatalf("the machine config does not parse: %v", err)
			}
			mapKeys(machine, keys)
		}
	}
	return keys
}

// tenantValuesSeeds are FuzzTenantValuesSchemaOff's seeds: a valid pool, a
// pool valid in other ways, and payloads in every fuzzed string.
var tenantValuesSeeds = [][7]string{
	{defaultSchematic, "v1.13.6", "https://factory.talos.dev", "replicated", "ingress", "factory.talos.dev/installer", "https://m.internal/v2"},
	{"abc", "v1.13.0-alpha.1", "http://mirror.internal:8080/", "", "a.b_c-d", "r.internal:5000/i", "http://m.internal:5000"},
	{"abc\nkind: Secret", "v1.13.6", "https://x", "null", "x: y\n---\nkind: ClusterRoleBinding", "r/i\n  x: y", "https://m\n  x: y"},
	{"abc", "v1.13.6", "https://x/\"}\n---\nkind: Secret", "0123", "{{ .Release.Name }}", "{a: b}", "{a: b}"},
	{"a b", "v1.13.6 #", "https://x/$(id)", "on", "", "", ""},
}

// tenantValuesRelease is the release FuzzTenantValuesSchemaOff renders as:
// schema validation off.
var tenantValuesRelease = render.Release{Name: testRelease, Namespace: testNamespace, SkipSchemaValidation: true}

// tenantValues places FuzzTenantValuesSchemaOff's strings where a tenant writes them.
func tenantValues(schematicID, version, factoryURL, storageClass, role, installerRepository, endpoint string) map[string]interface{} {
	return map[string]interface{}{
		"cluster":      testCluster,
		"storageClass": storageClass,
		"roles":        []interface{}{role},
		"talos": map[string]interface{}{
			"installerRepository": installerRepository,
			"registryMirrors":     map[string]interface{}{"docker.io": map[string]interface{}{"endpoints": []interface{}{endpoint}}},
		},
		"osImage": map[string]interface{}{"factory": map[string]interface{}{"schematicID": schematicID, "version": version, "imageFactoryURL": factoryURL}},
	}
}

// FuzzTenantValuesSchemaOff: with schema validation off, whatever a tenant
// writes into the strings the pool chart interpolates (image fields, class,
// role, installer repository, mirror endpoint), the render either refuses with
// the chart's own message, or yields exactly the pool's documents in its
// namespace, with no key the same values without the payload would not have.
func FuzzTenantValuesSchemaOff(f *testing.F) {
	for _, seed := range tenantValuesSeeds {
		f.Add(seed[0], seed[1], seed[2], seed[3], seed[4], seed[5], seed[6])
	}
	c := poolChart(f)
	rel := tenantValuesRelease
	neutral, err := render.Render(c, render.Options{Release: rel, Values: vals(f, `
cluster: acme
roles: [r]
talos: {installerRepository: r.internal/i, registryMirrors: {docker.io: {endpoints: ["https://m.internal"]}}}
osImage: {factory: {}}
`)})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, schematicID, version, factoryURL, storageClass, role, installerRepository, endpoint string) {
		values := tenantValues(schematicID, version, factoryURL, storageClass, role, installerRepository, endpoint)
		var m *render.Manifest
		var err error
		requireWithinCostBound(t, "tenant values", func() {
			m, err = render.Render(c, render.Options{Release: rel, Values: values})
		})
		if requireChartRefusal(t, err) {
			return
		}
		if got, want := identities(m), identities(neutral); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("documents %v, want %v\n%s", got, want, m.Text())
		}
		allowed := renderKeys(t, neutral)
		allowed["node-role.kubernetes.io/"+role] = true
		for k := range renderKeys(t, m) {
			if !allowed[k] {
				t.Fatalf("the render has the key %q, which the values without the payload do not make\n%s", k, m.Text())
			}
		}
		if storageClass != "" {
			if got := render.Get(diskOf(m), "spec.storage.storageClassName"); got != storageClass {
				t.Fatalf("storageClassName %#v, want the string %q", got, storageClass)
			}
		}
	})
}

// requireChartRefusal reports whether err is a refusal, failing the test unless
// it is the chart's own fail (never a raw template error).
func requireChartRefusal(t *testing.T, err error) bool {
	t.Helper()
	if err == nil {
		return false
	}
	msg := err.Error()
	for _, raw := range rawTemplateErrors {
		if strings.Contains(msg, raw) {
			t.Fatalf("refused with a raw template error: %s", msg)
		}
	}
	if !strings.Contains(msg, "execution error at (") {
		t.Fatalf("refused by something else than the chart's fail: %s", msg)
	}
	return true
}

// trustedImportsSeeds are FuzzTrustedImportsSchemaOff's seeds (a CA and a
// checksum each), around the CA ca.
func trustedImportsSeeds(ca string) [][2]string {
	return [][2]string{
		{ca, testChecksum},
		{ca + ca, "md5:5d41402abc4b2a76b9719d911017c592"},
		{ca + "kind: Secret\n", "sha256:x\nkind: Secret"},
		{"-----BEGIN CERTIFICATE-----\nMI\"}\n---\nkind: Secret\n-----END CERTIFICATE-----\n", "sha1:{{ .Release.Name }}"},
		{strings.ReplaceAll(ca, "\n", "\r\n"), "sha512:" + strings.Repeat("0", 128)},
		{"", ""},
	}
}

// trustedImportsPoolRelease is the pool release FuzzTrustedImportsSchemaOff
// renders as: schema validation off.
var trustedImportsPoolRelease = render.Release{Name: testRelease, Namespace: testNamespace, SkipSchemaValidation: true}

// trustedImportsPoolValues are the pool values FuzzTrustedImportsSchemaOff
// writes a CA into: the pool's own talos.imageFactoryCA, or with key
// "_cluster" the platform's default for it.
func trustedImportsPoolValues(key string, v interface{}) map[string]interface{} {
	values := map[string]interface{}{"cluster": testCluster, "talos": map[string]interface{}{"imageFactoryURL": "https://factory.mirror.internal"}}
	if key == "_cluster" {
		values["_cluster"] = map[string]interface{}{"talos": map[string]interface{}{"imageFactoryCA": v}}
	} else {
		values["talos"].(map[string]interface{})["imageFactoryCA"] = v
	}
	return values
}

// FuzzTrustedImportsSchemaOff: with schema validation off, whatever is written
// into a CA (the pool's, the platform's default for it, the catalog's) or a
// catalog entry's checksum is refused with the chart's own message, or reaches
// the ConfigMap and the golden exactly as written, in the same documents a
// valid value gives, with no key the valid value does not make.
func FuzzTrustedImportsSchemaOff(f *testing.F) {
	ca, err := os.ReadFile(support.Fixture("ca/factory-ca.pem"))
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range trustedImportsSeeds(string(ca)) {
		f.Add(seed[0], seed[1])
	}
	pc, cc := poolChart(f), catalogChart(f)
	poolRel := trustedImportsPoolRelease
	catalogRel := render.Release{Name: catalogRelease, Namespace: catalogNamespace, SkipSchemaValidation: true}
	poolValues := trustedImportsPoolValues
	catalogValues := func(ca, checksum interface{}) map[string]interface{} {
		return map[string]interface{}{"imageFactoryCA": ca, "images": []interface{}{map[string]interface{}{"schematicID": "abc", "version": "v1.13.6", "checksum": checksum}}}
	}
	neutralPool, err := render.Render(pc, render.Options{Release: poolRel, Values: poolValues("talos", string(ca))})
	if err != nil {
		f.Fatal(err)
	}
	neutralCatalog, err := render.Render(cc, render.Options{Release: catalogRel, Values: catalogValues(string(ca), testChecksum)})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, caText, checksum string) {
		var m *render.Manifest
		var err error
		requireWithinCostBound(t, "pool CA", func() {
			m, err = render.Render(pc, render.Options{Release: poolRel, Values: poolValues("talos", caText)})
		})
		if !requireChartRefusal(t, err) && caText != "" {
			requirePEMCertificates(t, caText)
			requireSameShape(t, m, neutralPool)
			if got := render.Get(mustFind(t, m, "ConfigMap", "kubernetes-acme-workers-image-factory-ca").Object, "data[ca.pem]"); got != caText {
				t.Fatalf("ca.pem is %q, want %q", got, caText)
			}
		}
		requireWithinCostBound(t, "platform CA", func() {
			_, err = render.Render(pc, render.Options{Release: poolRel, Values: poolValues("_cluster", caText)})
		})
		requireChartRefusal(t, err)
		requireWithinCostBound(t, "catalog CA and checksum", func() {
			m, err = render.Render(cc, render.Options{Release: catalogRel, Values: catalogValues(caText, checksum)})
		})
		if !requireChartRefusal(t, err) && caText != "" && checksum != "" {
			requireSameShape(t, m, neutralCatalog)
			if got := render.Get(mustFind(t, m, "ConfigMap", "kubernetes-worker-image-ca").Object, "data[ca.pem]"); got != caText {
				t.Fatalf("ca.pem is %q, want %q", got, caText)
			}
			requireCDIChecksum(t, checksum)
			if got := render.Get(mustFind(t, m, "DataVolume", "talos-worker-abc-v1.13.6").Object, "spec.source.http.checksum"); got != checksum {
				t.Fatalf("checksum is %q, want %q", got, checksum)
			}
		}
	})
}

// requireSameShape: the same documents as the neutral render, and no key it does not have.
func requireSameShape(t *testing.T, m, neutral *render.Manifest) {
	t.Helper()
	if got, want := identities(m), identities(neutral); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("documents %v, want %v\n%s", got, want, m.Text())
	}
	allowed := renderKeys(t, neutral)
	for k := range renderKeys(t, m) {
		if !allowed[k] {
			t.Fatalf("the render has the key %q, which a valid value does not make\n%s", k, m.Text())
		}
	}
}

func mustFind(t *testing.T, m *render.Manifest, kind, name string) render.Doc {
	t.Helper()
	d, ok := m.Find(kind, name)
	if !ok {
		t.Fatalf("no %s %s in\n%s", kind, name, m.Text())
	}
	return d
}

// requirePEMCertificates: what the chart takes as a CA, Go's PEM reader (as
// CDI's importer uses it) reads as CERTIFICATE blocks only, nothing else left.
func requirePEMCertificates(t *testing.T, text string) {
	t.Helper()
	rest := []byte(text)
	for {
		block, more := pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" || len(block.Headers) > 0 || len(block.Bytes) < 2 || block.Bytes[0] != 0x30 {
			t.Fatalf("the CA %q was taken, but it holds a %s block that is not a DER certificate", text, block.Type)
		}
		rest = more
	}
	if strings.TrimSpace(string(rest)) != "" || len(rest) == len(text) {
		t.Fatalf("the CA %q was taken, but Go's PEM reader leaves %q unread", text, rest)
	}
}

// requireCDIChecksum: what the chart takes as a checksum, CDI's rule
// (pkg/util/checksum ParseAndValidate) takes too.
func requireCDIChecksum(t *testing.T, checksum string) {
	t.Helper()
	algorithm, digest, ok := strings.Cut(checksum, ":")
	want := map[string]int{"md5": 32, "sha1": 40, "sha256": 64, "sha512": 128}[strings.ToLower(strings.TrimSpace(algorithm))]
	if _, err := hex.DecodeString(strings.TrimSpace(digest)); !ok || want == 0 || len(strings.TrimSpace(digest)) != want || err != nil {
		t.Fatalf("the checksum %q was taken, but CDI refuses it", checksum)
	}
}
