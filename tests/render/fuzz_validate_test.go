package render

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"k8s.io/apimachinery/pkg/api/validate/content"
	"sigs.k8s.io/yaml"
)

// validatingChart is the pool chart reduced to its named templates (and the
// library's) plus one template that runs the value guards and the image
// resolution: Helm parses far less per render, so a fuzzer reaches depth.
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

// helperRenderer executes the validating chart's templates the way Helm's
// engine does, but parses them once: Helm parses every template on every
// render, which is most of a render's time, so a fuzzer through Helm itself
// stays shallow. TestHelperRendererAgreesWithHelm keeps it honest: for every
// seed and every hostile payload both give the same output or the same error.
type helperRenderer struct {
	chart *chart.Chart
	tmpl  *template.Template
	// depth counts nested includes per template name, as Helm's include does.
	depth map[string]int
}

// helmErrDelims are the markers Helm's fail puts around a message so its error
// cleanup can find the chart's own words.
const helmErrStart, helmErrEnd = "HELM_ERR_START", "HELM_ERR_END"

var helmErrMessage = regexp.MustCompile(helmErrStart + `((?s).*)` + helmErrEnd)

// regexCache: sprig's regexMatch compiles its pattern on every call; the
// answer does not depend on compiling it again.
var regexCache sync.Map

func cachedRegexMatch(pattern, s string) bool {
	re, ok := regexCache.Load(pattern)
	if !ok {
		compiled, err := regexp.Compile(pattern)
		if err != nil {
			return false
		}
		re, _ = regexCache.LoadOrStore(pattern, compiled)
	}
	return re.(*regexp.Regexp).MatchString(s)
}

func newHelperRenderer(t testing.TB, c *chart.Chart) *helperRenderer {
	t.Helper()
	h := &helperRenderer{chart: c, depth: map[string]int{}}
	funcs := sprig.TxtFuncMap()
	delete(funcs, "env")
	delete(funcs, "expandenv")
	helm := template.FuncMap{
		"regexMatch": cachedRegexMatch,
		"toYaml": func(v interface{}) string {
			data, err := yaml.Marshal(v)
			if err != nil {
				return ""
			}
			return strings.TrimSuffix(string(data), "\n")
		},
		"fromYaml": func(s string) map[string]interface{} {
			m := map[string]interface{}{}
			if err := yaml.Unmarshal([]byte(s), &m); err != nil {
				m["Error"] = err.Error()
			}
			return m
		},
		"toJson": func(v interface{}) string {
			data, err := json.Marshal(v)
			if err != nil {
				return ""
			}
			return string(data)
		},
		"fromJsonArray": func(s string) []interface{} {
			a := []interface{}{}
			if err := json.Unmarshal([]byte(s), &a); err != nil {
				a = []interface{}{err.Error()}
			}
			return a
		},
		"fail": func(msg string) (string, error) {
			return "", errors.New(helmErrStart + msg + helmErrEnd)
		},
		// No cluster: Helm's lookup answers an empty map.
		"lookup": func(string, string, string, string) (map[string]interface{}, error) {
			return map[string]interface{}{}, nil
		},
		"include": func(name string, data interface{}) (string, error) {
			if h.depth[name] > 1000 {
				return "", fmt.Errorf("rendering template has a nested reference name: %s", name)
			}
			h.depth[name]++
			defer func() { h.depth[name]-- }()
			var buf strings.Builder
			err := h.tmpl.ExecuteTemplate(&buf, name, data)
			return buf.String(), err
		},
	}
	for name, fn := range helm {
		funcs[name] = fn
	}
	h.tmpl = template.New("gotpl").Option("missingkey=zero").Funcs(funcs)
	var parse func(c *chart.Chart)
	parse = func(c *chart.Chart) {
		for _, dep := range c.Dependencies() {
			parse(dep)
		}
		for _, f := range c.Templates {
			if _, err := h.tmpl.New(path.Join(c.ChartFullPath(), f.Name)).Parse(string(f.Data)); err != nil {
				t.Fatal(err)
			}
		}
	}
	parse(c)
	return h
}

// render executes every non-partial template of the chart for values, with
// schema validation off, and returns the output by template name, or the
// error as Helm words it ("execution error at (...): <the fail message>").
func (h *helperRenderer) render(rel render.Release, values map[string]interface{}) (map[string]string, error) {
	vals, err := chartutil.ToRenderValuesWithSchemaValidation(h.chart, values, chartutil.ReleaseOptions{
		Name: rel.Name, Namespace: rel.Namespace, Revision: rel.Revision(), IsInstall: !rel.Upgrade, IsUpgrade: rel.Upgrade,
	}, chartutil.DefaultCapabilities, true)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, f := range h.chart.Templates {
		if !strings.HasPrefix(path.Base(f.Name), "_") {
			names = append(names, path.Join(h.chart.ChartFullPath(), f.Name))
		}
	}
	sort.Strings(names)
	out := map[string]string{}
	// One root context for every file of the chart, as Helm shares it: what a
	// template memoizes there, the next file reads.
	top := map[string]interface{}{
		"Chart":        h.chart.Metadata,
		"Release":      vals["Release"],
		"Capabilities": vals["Capabilities"],
		"Values":       vals["Values"],
	}
	for _, name := range names {
		top["Template"] = map[string]interface{}{"Name": name, "BasePath": path.Join(h.chart.ChartFullPath(), "templates")}
		var buf strings.Builder
		if err := h.tmpl.ExecuteTemplate(&buf, name, top); err != nil {
			return nil, helmExecError(err)
		}
		out[name] = strings.ReplaceAll(buf.String(), "<no value>", "")
	}
	return out, nil
}

// helmExecError words a template error as Helm's engine does: the chart's fail
// message with its location; any other error as is.
func helmExecError(err error) error {
	var exec template.ExecError
	if !errors.As(err, &exec) {
		return err
	}
	parts := strings.SplitN(err.Error(), ": ", 3)
	if len(parts) != 3 {
		return err
	}
	if m := helmErrMessage.FindStringSubmatch(parts[2]); m != nil {
		return fmt.Errorf("execution error at (%s): %s", parts[1], m[1])
	}
	return err
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

// TestHelperRendererAgreesWithHelm: the fuzzer's parse-once renderer and
// Helm's engine give the same bytes or the same error for every seed, and for
// every hostile payload in each fuzzed field of the valid seed.
func TestHelperRendererAgreesWithHelm(t *testing.T) {
	c := validatingChart(t)
	h := newHelperRenderer(t, c)
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
	for i, row := range cases {
		values := validatingValues(row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7])
		want, wantErr := render.Render(c, render.Options{Release: validatingRelease, Values: values})
		files, gotErr := h.render(validatingRelease, validatingValues(row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7]))
		if wantErr != nil {
			refused++
			require.Error(t, gotErr, "case %d: Helm refuses, the fast renderer renders", i)
			require.Equal(t, wantErr.Error(), gotErr.Error(), "case %d", i)
			continue
		}
		require.NoError(t, gotErr, "case %d: Helm renders, the fast renderer refuses", i)
		got, err := render.NewManifest(files)
		require.NoError(t, err)
		require.Equal(t, want.Text(), got.Text(), "case %d", i)
	}
	// Both outcomes are compared, not only one.
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
	h := newHelperRenderer(f, validatingChart(f))
	f.Fuzz(func(t *testing.T, storageClass, instanceType, role, installer, endpoint, schematicID, version, factoryURL string) {
		var err error
		requireWithinCostBound(t, "validating helpers", func() {
			_, err = h.render(validatingRelease, validatingValues(storageClass, instanceType, role, installer, endpoint, schematicID, version, factoryURL))
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
