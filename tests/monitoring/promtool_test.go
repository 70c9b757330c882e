// Package monitoring checks the catalog's alert rules with Prometheus's own
// promtool (built from tools/promtool by `make promtool`): every rendered rule
// object passes `promtool check rules`, and `promtool test rules` runs the unit
// tests in testdata/ over synthetic series, each alert firing and its
// neighbours staying quiet.
package monitoring

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// The alerts the catalog ships (docs/runbooks.md), and the section of the
// runbook each links.
var alerts = map[string]string{
	"KubernetesWorkerImageGoldenFailed":       "golden-failed",
	"KubernetesWorkerImageGoldenNotSucceeded": "golden-not-succeeded",
	"KubernetesWorkerImageHostAssistedClone":  "host-assisted-clone",
	"KubernetesWorkerImagePoolBehind":         "pool-behind",
}

func promtool(t *testing.T) string {
	t.Helper()
	path, ok, why := support.Tool("promtool", "PROMTOOL")
	if !ok {
		if os.Getenv("CI") != "" {
			t.Fatal(why)
		}
		t.Skip(why)
	}
	return path
}

// ruleCase is one rendering of the rules: the catalog's values, or the
// platform's (whose catalog Package values the catalog then renders with).
type ruleCase struct {
	name     string
	catalog  string
	platform string
	kind     string
	// unitTests are the promtool test files (testdata/) this rendering must pass.
	unitTests []string
}

var ruleCases = []ruleCase{
	{name: "defaults", catalog: "monitoring: {enabled: true}", kind: "VMRule", unitTests: []string{"defaults.test.yaml", "pool-behind.test.yaml"}},
	{name: "prometheus-rule", catalog: "monitoring: {enabled: true, ruleKind: PrometheusRule, labels: {release: kube-prometheus-stack}}", kind: "PrometheusRule", unitTests: []string{"defaults.test.yaml", "pool-behind.test.yaml"}},
	{name: "thresholds", catalog: "monitoring: {enabled: true, goldenFailedFor: 0s, goldenNotSucceededFor: 3h, poolBehindFor: 2h, runbookURL: 'https://docs.mirror.internal/runbooks.md'}", kind: "VMRule", unitTests: []string{"thresholds.test.yaml"}},
	{name: "forwarded-by-platform", platform: "bundles: {enabledPackages: [cozystack.kubernetes-worker-image]}\nkubernetesWorkerImage: {monitoring: {enabled: true, goldenFailedFor: 0s, goldenNotSucceededFor: 3h, poolBehindFor: 2h, runbookURL: 'https://docs.mirror.internal/runbooks.md'}}", kind: "VMRule", unitTests: []string{"thresholds.test.yaml"}},
}

func values(t *testing.T, snippet string) map[string]any {
	t.Helper()
	v := map[string]any{}
	require.NoError(t, yaml.Unmarshal([]byte(snippet), &v))
	return v
}

// renderRules renders c and returns its rule object.
func renderRules(t *testing.T, c ruleCase) render.Doc {
	t.Helper()
	catalogValues := values(t, c.catalog)
	if c.platform != "" {
		m, err := support.RenderPlatform(values(t, c.platform))
		require.NoError(t, err)
		catalogValues, err = support.PackageComponentValues(m, "cozystack.kubernetes-worker-image", "kubernetes-worker-image")
		require.NoError(t, err)
	}
	m, err := support.RenderCatalog(catalogValues)
	require.NoError(t, err)
	d, err := support.RuleObject(m)
	require.NoError(t, err)
	require.Equal(t, c.kind, d.Kind())
	require.Equal(t, support.RuleObjectName, d.Name())
	return d
}

// writeRuleFile writes the rule object's spec (its groups) as a Prometheus
// rule file, which is what VMAlert and the prometheus-operator load from it.
func writeRuleFile(t *testing.T, dir string, d render.Doc, keep func(annotation string) bool) string {
	t.Helper()
	spec, ok := d.Object["spec"].(map[string]any)
	require.True(t, ok, "the rule object has a spec")
	groups, ok := spec["groups"].([]any)
	require.True(t, ok, "the rule object's spec has groups")
	if keep != nil {
		for _, g := range groups {
			for _, r := range g.(map[string]any)["rules"].([]any) {
				annotations, _ := r.(map[string]any)["annotations"].(map[string]any)
				for k := range annotations {
					if !keep(k) {
						delete(annotations, k)
					}
				}
			}
		}
	}
	raw, err := yaml.Marshal(map[string]any{"groups": groups})
	require.NoError(t, err)
	path := filepath.Join(dir, "rules.yaml")
	require.NoError(t, os.WriteFile(path, raw, 0o644))
	return path
}

func run(t *testing.T, bin string, args ...string) string {
	t.Helper()
	out, err := exec.Command(bin, args...).CombinedOutput()
	require.NoError(t, err, "promtool %s:\n%s", strings.Join(args, " "), out)
	return string(out)
}

// Every rendered rule object passes `promtool check rules`, holding exactly
// the shipped alerts, each linking its runbook section.
func TestPromtoolCheckRules(t *testing.T) {
	bin := promtool(t)
	for _, c := range ruleCases {
		t.Run(c.name, func(t *testing.T) {
			d := renderRules(t, c)
			out := run(t, bin, "check", "rules", writeRuleFile(t, t.TempDir(), d, nil))
			require.Contains(t, out, "SUCCESS: 4 rules found", "promtool read every rule")
			seen := map[string]bool{}
			for _, g := range render.Get(d.Object, "spec.groups").([]any) {
				for _, r := range g.(map[string]any)["rules"].([]any) {
					rule := r.(map[string]any)
					name, _ := rule["alert"].(string)
					section, known := alerts[name]
					require.True(t, known, "alert %q is one the runbooks describe", name)
					seen[name] = true
					url := render.Get(rule, "annotations.runbook_url")
					base := "https://github.com/cozystack/golden-worker-images/blob/main/docs/runbooks.md"
					if strings.Contains(c.catalog+c.platform, "docs.mirror.internal") {
						base = "https://docs.mirror.internal/runbooks.md"
					}
					require.Equal(t, base+"#"+section, url, "alert %s links its runbook section", name)
				}
			}
			require.Len(t, seen, len(alerts), "every alert is shipped")
		})
	}
}

// `promtool check rules` is no rubber stamp: a rule object the chart could
// not have rendered (a broken expression, a broken annotation template, a
// duplicated alert in a group) is refused.
func TestPromtoolCheckRulesRefuses(t *testing.T) {
	bin := promtool(t)
	d := renderRules(t, ruleCases[0])
	for name, spoil := range map[string]func(rule map[string]any){
		"expression": func(rule map[string]any) { rule["expr"] = "max by (name (up)" },
		"template":   func(rule map[string]any) { rule["annotations"].(map[string]any)["summary"] = "{{ $labels.name " },
		"for":        func(rule map[string]any) { rule["for"] = "5 minutes" },
	} {
		t.Run(name, func(t *testing.T) {
			copied := map[string]any{}
			raw, err := yaml.Marshal(d.Object)
			require.NoError(t, err)
			require.NoError(t, yaml.Unmarshal(raw, &copied))
			rule := render.Get(copied, "spec.groups").([]any)[0].(map[string]any)["rules"].([]any)[0].(map[string]any)
			spoil(rule)
			path := writeRuleFile(t, t.TempDir(), render.Doc{Object: copied}, nil)
			out, err := exec.Command(bin, "check", "rules", path).CombinedOutput()
			require.Error(t, err, "promtool refuses a spoiled %s:\n%s", name, out)
		})
	}
}

// `promtool test rules` over synthetic series (testdata/*.test.yaml): each
// alert fires, and its neighbours (a healthy golden, a look-alike outside
// cozy-public, a shorter wait than the threshold, a CSI clone, a pool on the
// newest patch or moved before the threshold) stay quiet. The
// summary and description are human text and left out of the comparison;
// `check rules` above expands their templates.
func TestPromtoolTestRules(t *testing.T) {
	bin := promtool(t)
	for _, c := range ruleCases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writeRuleFile(t, dir, renderRules(t, c), func(a string) bool { return a == "runbook_url" })
			for _, test := range c.unitTests {
				raw, err := os.ReadFile(filepath.Join("testdata", test))
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(filepath.Join(dir, test), raw, 0o644))
				out := run(t, bin, "test", "rules", filepath.Join(dir, test))
				require.Contains(t, out, "SUCCESS", "%s passes", test)
			}
		})
	}
}

// A unit test that expects what the rules do not do fails: the tests above
// can fail.
func TestPromtoolTestRulesCanFail(t *testing.T) {
	bin := promtool(t)
	dir := t.TempDir()
	writeRuleFile(t, dir, renderRules(t, ruleCases[0]), func(a string) bool { return a == "runbook_url" })
	raw, err := os.ReadFile(filepath.Join("testdata", "defaults.test.yaml"))
	require.NoError(t, err)
	// The failed golden's alert, expected a minute before goldenFailedFor (5m) has passed.
	wrong := strings.Replace(string(raw), "eval_time: 6m # failed-fires", "eval_time: 4m # failed-fires", 1)
	require.NotEqual(t, string(raw), wrong, "the marker is in the test file")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "wrong.test.yaml"), []byte(wrong), 0o644))
	out, err := exec.Command(bin, "test", "rules", filepath.Join(dir, "wrong.test.yaml")).CombinedOutput()
	require.Error(t, err, "promtool fails a wrong expectation:\n%s", out)
	require.Contains(t, string(out), "KubernetesWorkerImageGoldenFailed")

	// The pool behind, expected before poolBehindFor (7d) has passed.
	raw, err = os.ReadFile(filepath.Join("testdata", "pool-behind.test.yaml"))
	require.NoError(t, err)
	early := strings.Replace(string(raw), "eval_time: 169h # pool-behind-fires", "eval_time: 160h # pool-behind-fires", 1)
	require.NotEqual(t, string(raw), early, "the marker is in the test file")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "early.test.yaml"), []byte(early), 0o644))
	out, err = exec.Command(bin, "test", "rules", filepath.Join(dir, "early.test.yaml")).CombinedOutput()
	require.Error(t, err, "promtool fails a wrong expectation:\n%s", out)
	require.Contains(t, string(out), "KubernetesWorkerImagePoolBehind")
}

// What a tenant can write into the series the rules read
// (testdata/tenant-written.test.yaml, docs/monitoring.md "What a tenant can
// write"): a pool's patch that is no whole number from 0 to 999 (+Inf, NaN,
// -1, 1e9, 3.5) raises the pools-behind alert rather than hiding it, a
// golden's such patch counts for nothing, and a worker disk's pool annotation
// is named with the namespace the disk is in. Every annotation is compared:
// the summaries are what Alertmanager receives.
func TestPromtoolTenantWrittenSeries(t *testing.T) {
	bin := promtool(t)
	for _, c := range ruleCases[:2] {
		t.Run(c.name, func(t *testing.T) {
			out := runTenantWritten(t, bin, renderRules(t, c).Object)
			require.Contains(t, out, "SUCCESS")
		})
	}
}

// The same file fails against the rules without each guard: the guards are
// what the tests above see.
func TestPromtoolTenantWrittenSeriesNeedTheGuards(t *testing.T) {
	bin := promtool(t)
	d := renderRules(t, ruleCases[0])
	for name, c := range map[string]struct {
		alert  string
		unseen string // what promtool names as missing or unexpected
		spoil  func(t *testing.T, rule map[string]any)
	}{
		"pool patch read as written": {"KubernetesWorkerImagePoolBehind", "kubernetes-acme-inf", func(t *testing.T, rule map[string]any) {
			rule["expr"] = unguard(t, rule["expr"].(string), support.PoolPatchMetric, true)
		}},
		"golden patch read as written": {"KubernetesWorkerImagePoolBehind", "kubernetes-gamma-ccc", func(t *testing.T, rule map[string]any) {
			rule["expr"] = unguard(t, rule["expr"].(string), support.GoldenPatchMetric, false)
		}},
		"disk annotations read as written": {"KubernetesWorkerImageHostAssistedClone", "tenant-victim/kubernetes-victim-workers", func(t *testing.T, rule map[string]any) {
			expr := rule["expr"].(string)
			guarded := regexp.MustCompile(`golden=~"[^"]*", pool=~"[^"]*"`)
			require.Len(t, guarded.FindAllString(expr, -1), 1, "the disk selector checks golden and pool: %s", expr)
			rule["expr"] = guarded.ReplaceAllLiteralString(expr, `golden!=""`)
		}},
		"summary without the namespace": {"KubernetesWorkerImageHostAssistedClone", "Pool kubernetes-victim-workers has", func(t *testing.T, rule map[string]any) {
			annotations := rule["annotations"].(map[string]any)
			annotations["summary"] = strings.Replace(annotations["summary"].(string), "{{ $labels.exported_namespace }}/", "", 1)
		}},
	} {
		t.Run(name, func(t *testing.T) {
			copied := map[string]any{}
			raw, err := yaml.Marshal(d.Object)
			require.NoError(t, err)
			require.NoError(t, yaml.Unmarshal(raw, &copied))
			spoiled := 0
			for _, r := range render.Get(copied, "spec.groups").([]any)[0].(map[string]any)["rules"].([]any) {
				if rule := r.(map[string]any); rule["alert"] == c.alert {
					c.spoil(t, rule)
					spoiled++
				}
			}
			require.Equal(t, 1, spoiled)
			out := runTenantWritten(t, bin, copied)
			require.NotContains(t, out, "SUCCESS", "promtool fails the rules without the guard")
			require.Contains(t, out, c.alert)
			require.Contains(t, out, c.unseen)
		})
	}
}

// runTenantWritten runs testdata/tenant-written.test.yaml against the rule
// object, every annotation kept; it returns promtool's output, failed or not.
func runTenantWritten(t *testing.T, bin string, rules map[string]any) string {
	t.Helper()
	dir := t.TempDir()
	writeRuleFile(t, dir, render.Doc{Object: rules}, nil)
	raw, err := os.ReadFile(filepath.Join("testdata", "tenant-written.test.yaml"))
	require.NoError(t, err)
	test := filepath.Join(dir, "tenant-written.test.yaml")
	require.NoError(t, os.WriteFile(test, raw, 0o644))
	out, _ := exec.Command(bin, "test", "rules", test).CombinedOutput()
	return string(out)
}

// unguard gives back expr with metric's patch read as kube-state-metrics
// exports it, as the rules did before they checked it: each guarded read
// "(S >= 0 <= 999 == floor(S))" becomes S, and for pools the aggregation's
// argument "((S >= 0 <= 999 == floor(S)) or (S > bool S) - 1)" becomes (S).
func unguard(t *testing.T, expr, metric string, pool bool) string {
	t.Helper()
	found := 0
	for from := 0; ; {
		at := strings.Index(expr[from:], "("+metric+"{")
		if at < 0 {
			break
		}
		start := from + at
		end := strings.Index(expr[start:], " >= 0 <= 999 == floor(")
		require.Positive(t, end, "a guarded read of %s in %s", metric, expr)
		s := expr[start+1 : start+end]
		guarded, plain := "("+s+" >= 0 <= 999 == floor("+s+"))", s
		if pool {
			guarded, plain = "("+guarded+" or ("+s+" > bool "+s+") - 1)", "("+s+")"
			start--
		}
		require.Equal(t, guarded, expr[start:min(len(expr), start+len(guarded))], "the guarded read of %s", metric)
		expr = expr[:start] + plain + expr[start+len(guarded):]
		from = start + len(plain)
		found++
	}
	require.Equal(t, 3, found, "one guarded read of %s per arm", metric)
	return expr
}
