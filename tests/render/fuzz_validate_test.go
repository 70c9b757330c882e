package render

import (
	"net/url"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chart"
	"k8s.io/apimachinery/pkg/api/validate/content"
)

// validatingChart is the pool chart reduced to its named templates (and the
// library's) plus one template that runs the value guards and the image
// resolution: Helm's engine, which parses every template on every render,
// parses far less per render, so a fuzzer reaches depth.
func validatingChart(t testing.TB) *chart.Chart {
	t.Helper()
	keep := func(c *chart.Chart, files ...string) *chart.Chart {
		cp := *c
		cp.Templates = nil
		for _, f := range c.Templates {
			for _, name := range files {
				if f.Name == "templates/"+name {
					cp.Templates = append(cp.Templates, f)
				}
			}
		}
		return &cp
	}
	pool := poolChart(t)
	reduced := keep(pool)
	var libs []*chart.Chart
	for _, dep := range pool.Dependencies() {
		libs = append(libs, keep(dep, "_values.tpl", "_patterns.tpl", "_golden.tpl", "_quantity.tpl",
			"_validate.tpl", "_vm.tpl", "_state.tpl", "_helpers.tpl", "_osimage.tpl", "_platformdefaults.tpl", "_running.tpl", "_tenantdefaults.tpl"))
	}
	reduced.SetDependencies(libs...)
	return render.WithTemplate(reduced, "templates/validate.yaml",
		[]byte(`{{- include "kubernetes-nodes.validate" . }}{{- include "kubernetes-nodes.ensureImage" . }}`))
}

// validatingSeeds: a valid pool, and pools wrong in every fuzzed field.
var validatingSeeds = [][8]string{
	{"replicated", "u1.medium", "ingress-nginx", "factory.talos.dev/installer", "https://m.internal/v2", defaultSchematic, "v1.13.6", "https://factory.talos.dev"},
	{"a..b", "U1", "x: y\n---", "R/I", "ftp://m", "ABC", "v1.13", "factory.talos.dev"},
	{"null", "0123", strings.Repeat("r", 64), "r.internal:5000/a__b", "http://m:5000", "abc", "v1.13.6-rc.1", "http://f.internal:8080/"},
	{"", "", "", "", "https://m/\n x", "a-", "v1.13.6-.1", "https://x/$(id)"},
}

var validatingRelease = render.Release{Name: testRelease, Namespace: testNamespace, SkipSchemaValidation: true}

// validatingValues places the fuzzed strings where a tenant writes them.
func validatingValues(storageClass, instanceType, role, installer, endpoint, schematicID, version, factoryURL interface{}) map[string]interface{} {
	return map[string]interface{}{
		"cluster":      testCluster,
		"storageClass": storageClass,
		"instanceType": instanceType,
		"roles":        []interface{}{role},
		"talos": map[string]interface{}{
			"installerRepository": installer,
			"registryMirrors":     map[string]interface{}{"docker.io": map[string]interface{}{"endpoints": []interface{}{endpoint}}},
		},
		"osImage": map[string]interface{}{"factory": map[string]interface{}{"schematicID": schematicID, "version": version, "imageFactoryURL": factoryURL}},
	}
}

// TestValidatingChartRefusesAsTheChart: every seed, and every hostile
// payload in each fuzzed field of the valid seed, renders through Helm's
// engine or is refused by the chart's own fail; both outcomes are reached.
func TestValidatingChartRefusesAsTheChart(t *testing.T) {
	c := validatingChart(t)
	var cases [][8]interface{}
	for _, seed := range validatingSeeds {
		var row [8]interface{}
		for i, s := range seed {
			row[i] = s
		}
		cases = append(cases, row)
	}
	for field := 0; field < 8; field++ {
		for _, p := range hostilePayloads {
			row := cases[0]
			row[field] = p.value
			cases = append(cases, row)
		}
	}
	refused := 0
	for _, row := range cases {
		_, err := render.Render(c, render.Options{Release: validatingRelease, Values: validatingValues(row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7])})
		if requireChartRefusal(t, err) {
			refused++
		}
	}
	require.Greater(t, refused, 10)
	require.Less(t, refused, len(cases))
}

// FuzzValidatingHelpers: the tenant strings the pool interpolates, the class
// name among them, through the chart's own guards with schema validation off.
// What the guards accept, the API server and Talos must accept too: a class and
// an instancetype are DNS subdomains, a role makes a valid label key, a mirror
// endpoint is an http(s) URL with a host, and the image fields match what a
// golden name and a URL need. What they refuse, they refuse with the chart's
// own message, never a raw template error.
func FuzzValidatingHelpers(f *testing.F) {
	for _, seed := range validatingSeeds {
		f.Add(seed[0], seed[1], seed[2], seed[3], seed[4], seed[5], seed[6], seed[7])
	}
	c := validatingChart(f)
	f.Fuzz(func(t *testing.T, storageClass, instanceType, role, installer, endpoint, schematicID, version, factoryURL string) {
		var err error
		requireWithinCostBound(t, "validating helpers", func() {
			_, err = render.Render(c, render.Options{Release: validatingRelease, Values: validatingValues(storageClass, instanceType, role, installer, endpoint, schematicID, version, factoryURL)})
		})
		if requireChartRefusal(t, err) {
			return
		}
		for field, name := range map[string]string{"storageClass": storageClass, "instanceType": instanceType} {
			if name != "" && len(content.IsDNS1123Subdomain(name)) > 0 {
				t.Fatalf("%s %q accepted, but the API server refuses it: %v", field, name, content.IsDNS1123Subdomain(name))
			}
		}
		if problems := content.IsLabelKey("node-role.kubernetes.io/" + role); len(problems) > 0 {
			t.Fatalf("role %q accepted, but the label key is invalid: %v", role, problems)
		}
		if u, err := url.Parse(endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.ContainsAny(endpoint, " \t\n\"'`{}") {
			t.Fatalf("mirror endpoint %q accepted, but it is not a plain http(s) URL", endpoint)
		}
		if installer != "" && (strings.ContainsAny(installer, " \t\n:\"'`{}") && !strings.Contains(installer, ":")) {
			t.Fatalf("installer repository %q accepted with whitespace or quotes", installer)
		}
		for _, s := range []string{schematicID, version} {
			if strings.ContainsAny(s, " \t\n/:\"'`{}$#") {
				t.Fatalf("image field %q accepted, but it goes into a DataVolume name", s)
			}
		}
		if factoryURL != "" {
			if u, err := url.Parse(factoryURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				t.Fatalf("factory URL %q accepted, but it is not an http(s) URL", factoryURL)
			}
		}
	})
}
