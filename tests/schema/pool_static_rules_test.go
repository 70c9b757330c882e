package schema

import (
	"fmt"
	"github.com/cozystack/golden-worker-images/tests/support"
	"math"
	"math/rand"
	"regexp"
	"sigs.k8s.io/yaml"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The form's schema (the ApplicationDefinition's openAPISchema, as generated)
// states every static rule the pool's templates check and a JSON schema can
// state (cozystack-api validates nothing; the dashboard's form validates
// against it), so the form refuses them before a HelmRelease exists: cluster
// required and a DNS label, the image fields by the library's patterns and
// lengths (or "", the fallback), osImage with at most one of builtin and
// factory, the Kubernetes minors the chart ships with their releases, the
// Talos x Kubernetes support matrix when both are set, resources both or
// neither, podCpu* only beside them (a zero limit with a request, a zero
// request only beside a zero limit), whole numbers within int32 where a
// string of digits is one, images.kubectl as an image reference,
// nodeStartupTimeout within Go's durations, kubelet percentages in (0%,
// 100%], no zero reservation, and eviction thresholds both percentages or
// both quantities, each alone below (hard) or above (soft) the other's
// default. Each refusal beside its valid neighbour; tests/render holds the
// chart to each refusal, in its own words, with the schema on
// (TestFormRulesAreTheCharts).
func TestPoolSchemaStatesTheTemplatesStaticRules(t *testing.T) {
	s := compileForm(t)
	checkCases(t, s, support.PoolStaticRuleCases.Accepted, support.PoolStaticRuleCases.Refused)
}

// libraryMaxLength is the library's longest for an image field.
func libraryMaxLength(t *testing.T, field string) float64 {
	t.Helper()
	n, err := strconv.Atoi(definedPatterns(t, "packages/library/worker-image-lib/templates/_patterns.tpl", "worker-image-lib.maxLengths")[field])
	require.NoError(t, err, field)
	return float64(n)
}

// The pool schema's rules are the templates' own, read from them: the image
// fields refer to definitions holding the library's pattern (with "" for the
// fallback) and length; cluster's pattern is the one kubernetes-nodes.pool
// checks; version's enum is every minor of kubernetes-nodes.kubernetesReleases
// and every release of it up to the chart's patch, newest first.
func TestPoolSchemaRulesAreTheTemplates(t *testing.T) {
	lib := libraryPatterns(t)
	schema := document(t, chartFile(t, poolChart+"/values.schema.json"))
	for def, field := range map[string]string{"schematicID": "schematicID", "talosVersion": "version", "imageFactoryURL": "imageFactoryURL"} {
		require.Equal(t, "^$|"+lib[field], jsonAt(t, schema, "definitions", def, "pattern"), def)
		require.Equal(t, libraryMaxLength(t, field), jsonAt(t, schema, "definitions", def, "maxLength"), def)
	}
	for path, def := range map[string]string{
		"talos/version": "talosVersion", "talos/schematicID": "schematicID", "talos/imageFactoryURL": "imageFactoryURL",
		"osImage/builtin/schematicID": "schematicID", "osImage/builtin/version": "talosVersion",
		"osImage/factory/schematicID": "schematicID", "osImage/factory/version": "talosVersion", "osImage/factory/imageFactoryURL": "imageFactoryURL",
	} {
		at := []string{"properties"}
		for i, p := range strings.Split(path, "/") {
			if i > 0 {
				at = append(at, "properties")
			}
			at = append(at, p)
		}
		require.Equal(t, "#/definitions/"+def, jsonAt(t, schema, append(at, "$ref")...), path)
	}
	require.Equal(t, float64(1), jsonAt(t, schema, "properties", "osImage", "maxProperties"))
	require.Equal(t, []interface{}{"cluster"}, jsonAt(t, schema, "required"))

	helpers := chartFile(t, "packages/library/kubernetes-nodes-lib/templates/_helpers.tpl")
	checked := regexp.MustCompile(`regexMatch "([^"]+)" \$cluster`).FindStringSubmatch(helpers)
	require.NotNil(t, checked, "kubernetes-nodes.pool checks cluster with a pattern")
	require.Equal(t, strings.ReplaceAll(checked[1], `\\`, `\`), jsonAt(t, schema, "properties", "cluster", "pattern"))

	releases := definedPatterns(t, "packages/library/kubernetes-nodes-lib/templates/_versions.tpl", "kubernetes-nodes.kubernetesReleases")
	require.NotEmpty(t, releases)
	minor := func(m string) int { n, _ := strconv.Atoi(strings.TrimPrefix(m, "v1.")); return n }
	var minors []string
	for m := range releases {
		minors = append(minors, m)
	}
	sort.Slice(minors, func(i, j int) bool { return minor(minors[i]) > minor(minors[j]) })
	want := []interface{}{}
	for _, m := range minors {
		want = append(want, m)
	}
	for _, m := range minors {
		patch, err := strconv.Atoi(strings.TrimPrefix(releases[m], m+"."))
		require.NoError(t, err, releases[m])
		for p := patch; p >= 0; p-- {
			want = append(want, fmt.Sprintf("%s.%d", m, p))
		}
	}
	require.Equal(t, want, jsonAt(t, schema, "properties", "version", "enum"), "regenerate the enum from kubernetes-nodes.kubernetesReleases")
}

// defineBody is a define of a chart template file as written, the
// worker-image-lib.portPattern it includes expanded.
func defineBody(t *testing.T, file, define string) string {
	t.Helper()
	body := regexp.MustCompile(`(?s)\{\{- define "` + regexp.QuoteMeta(define) + `" -\}\}\n(.*?)\n\{\{- end -\}\}`).FindStringSubmatch(chartFile(t, file))
	require.NotNil(t, body, "%s defines %s", file, define)
	port := regexp.MustCompile(`(?s)\{\{- define "worker-image-lib.portPattern" -\}\}\n(.*?)\n\{\{- end -\}\}`).FindStringSubmatch(chartFile(t, "packages/library/worker-image-lib/templates/_patterns.tpl"))
	require.NotNil(t, port)
	return strings.ReplaceAll(body[1], `{{ include "worker-image-lib.portPattern" . }}`, port[1])
}

// The form's rules that are not the library's patterns are read from the
// templates too: the Talos x Kubernetes matrix is
// kubernetes-nodes.talosSupportMatrix (for talos.version and each osImage
// version, a Talos minor the matrix lists takes only its Kubernetes minors;
// where the chart's own version, values.yaml, is outside them, version must
// be set), and images.kubectl is the image reference _vm.tpl checks.
func TestPoolFormRulesAreTheTemplates(t *testing.T) {
	form := document(t, chartFile(t, poolChart+"/values.schema.json"))

	var matrix map[string]struct{ Min, Max int }
	require.NoError(t, yaml.Unmarshal([]byte(defineBody(t, "packages/library/kubernetes-nodes-lib/templates/_versions.tpl", "kubernetes-nodes.talosSupportMatrix")), &matrix))
	require.NotEmpty(t, matrix)
	var defaults struct{ Version string }
	require.NoError(t, yaml.Unmarshal([]byte(chartFile(t, poolChart+"/values.yaml")), &defaults))
	chartMinor, err := strconv.Atoi(strings.TrimPrefix(defaults.Version, "v1."))
	require.NoError(t, err, defaults.Version)
	talosMinors := make([]string, 0, len(matrix))
	for m := range matrix {
		talosMinors = append(talosMinors, m)
	}
	sort.Strings(talosMinors)
	want := []interface{}{}
	for _, m := range talosMinors {
		r := matrix[m]
		var k8s []string
		for i := r.Min; i <= r.Max; i++ {
			k8s = append(k8s, strconv.Itoa(i))
		}
		then := map[string]interface{}{"properties": map[string]interface{}{"version": map[string]interface{}{
			"pattern": `^v1\.(` + strings.Join(k8s, "|") + `)(\.[0-9]+)?$`}}}
		if chartMinor < r.Min || chartMinor > r.Max {
			then["required"] = []interface{}{"version"}
		}
		for _, path := range [][]string{{"talos"}, {"osImage", "builtin"}, {"osImage", "factory"}} {
			cond := map[string]interface{}{"required": []interface{}{"version"}, "properties": map[string]interface{}{
				"version": map[string]interface{}{"pattern": "^" + strings.ReplaceAll(m, ".", `\.`) + `\.`}}}
			for i := len(path) - 1; i >= 0; i-- {
				cond = map[string]interface{}{"required": []interface{}{path[i]}, "properties": map[string]interface{}{path[i]: cond}}
			}
			want = append(want, map[string]interface{}{"anyOf": []interface{}{map[string]interface{}{"not": cond}, then}})
		}
	}
	allOf, ok := jsonAt(t, form, "allOf").([]interface{})
	require.True(t, ok, "the form's root allOf")
	require.GreaterOrEqual(t, len(allOf), len(want))
	require.Equal(t, want, allOf[len(allOf)-len(want):], "the form's matrix (the root's last rules) is kubernetes-nodes.talosSupportMatrix")

	vm := chartFile(t, "packages/library/kubernetes-nodes-lib/templates/_vm.tpl")
	format := regexp.MustCompile(`regexMatch \(printf "([^"]+)" \(include "worker-image-lib.registryHostPattern" \.\)\) \.`).FindStringSubmatch(vm)
	require.NotNil(t, format, "_vm.tpl checks images.kubectl against the registry host pattern")
	host := defineBody(t, "packages/library/worker-image-lib/templates/_values.tpl", "worker-image-lib.registryHostPattern")
	require.Equal(t, "^$|"+fmt.Sprintf(format[1], host), jsonAt(t, form, "properties", "images", "properties", "kubectl", "pattern"))
	require.Contains(t, vm, "(le (len .) 512)")
	require.Equal(t, float64(512), jsonAt(t, form, "properties", "images", "properties", "kubectl", "maxLength"))
}

// The form's bounds on values the chart reads as numbers are the chart's,
// held over every boundary and a sample of values: a string of digits is a
// whole number from 0 (1 for cpu) to 2147483647, as parseCount reads it (atoi,
// leading zeros too); a kubelet percentage is in (0%, 100%]; a duration the
// form takes is one Go reads within 2562047h, the bound parseDuration checks.
func TestPoolFormBoundsAreTheCharts(t *testing.T) {
	form := document(t, chartFile(t, poolChart+"/values.schema.json"))
	rng := rand.New(rand.NewSource(60))
	int32Pattern := regexp.MustCompile(jsonAt(t, form, "properties", "maxSurge", "anyOf").([]interface{})[1].(map[string]interface{})["pattern"].(string))
	for _, at := range [][]interface{}{
		jsonAt(t, form, "properties", "resources", "properties", "cpu", "anyOf").([]interface{}),
		jsonAt(t, form, "properties", "maxUnhealthy", "anyOf").([]interface{}),
	} {
		found := false
		for _, b := range at {
			if p, ok := b.(map[string]interface{})["pattern"]; ok && p == int32Pattern.String() {
				found = true
			}
		}
		require.True(t, found, "one int32 pattern for every string of digits")
	}
	digits := []string{"0", "2147483647", "2147483648", "02147483647", "0999999999", "1999999999", "2099999999", "2147483639", "2147483650", "3000000000", "9999999999", "2147483700", "2147480000"}
	for i := 0; i < 20000; i++ {
		n := 1 + rng.Intn(10)
		b := make([]byte, n)
		for j := range b {
			b[j] = byte('0' + rng.Intn(10))
		}
		digits = append(digits, string(b))
	}
	for _, d := range digits {
		v, err := strconv.ParseInt(d, 10, 64)
		require.NoError(t, err)
		chart := len(d) <= 10 && v <= 2147483647
		require.Equal(t, chart, int32Pattern.MatchString(d), d)
	}

	eviction := regexp.MustCompile(jsonAt(t, form, "properties", "kubelet", "properties", "evictionHardMemory", "pattern").(string))
	zero := regexp.MustCompile(jsonAt(t, form, "properties", "kubelet", "properties", "evictionHardMemory", "not", "pattern").(string))
	chartPercent := regexp.MustCompile(`^[0-9]{1,3}(\.[0-9]{1,6})?%$`)
	percents := []string{"100%", "100.0%", "100.000001%", "101%", "0%", "000%", "0.000001%", "099.5%", "7%", "1000%", "50.1234567%"}
	for i := 0; i < 20000; i++ {
		p := strconv.Itoa(rng.Intn(1000))
		if rng.Intn(2) == 0 {
			p += "." + strconv.Itoa(rng.Intn(1000000))
		}
		percents = append(percents, p+"%")
	}
	for _, p := range percents {
		f, _ := strconv.ParseFloat(strings.TrimSuffix(p, "%"), 64)
		chart := chartPercent.MatchString(p) && f > 0 && f <= 100
		require.Equal(t, chart, eviction.MatchString(p) && !zero.MatchString(p), p)
	}

	duration := regexp.MustCompile(jsonAt(t, form, "properties", "nodeStartupTimeout", "pattern").(string))
	units := []string{"ns", "us", "ms", "s", "m", "h"}
	samples := []string{"2562047h", "2562047h1ns", "2562048h", "2562046.99h", "99999h99999h99999h99999h99999h", "0"}
	for i := 0; i < 20000; i++ {
		var b strings.Builder
		for parts := 1 + rng.Intn(4); parts > 0; parts-- {
			b.WriteString(strconv.FormatInt(rng.Int63n(int64(math.Pow10(1+rng.Intn(10)))), 10))
			if rng.Intn(4) == 0 {
				b.WriteString("." + strconv.Itoa(rng.Intn(1000)))
			}
			b.WriteString(units[rng.Intn(len(units))])
		}
		samples = append(samples, b.String())
	}
	accepted := 0
	for _, s := range samples {
		if len(s) > 32 || !duration.MatchString(s) {
			continue
		}
		accepted++
		d, err := time.ParseDuration(s)
		require.NoError(t, err, s)
		require.LessOrEqual(t, d, 2562047*time.Hour, s)
	}
	require.Greater(t, accepted, 10000, "the sample reaches the pattern")
	for _, s := range []string{"2562047h", "2562046.5h", "99999h59m59.5s", "1h30m", "10m", "90s", "0"} {
		require.True(t, duration.MatchString(s), s)
	}
}
