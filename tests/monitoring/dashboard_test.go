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

// What kube-state-metrics exports from a cluster with seven goldens in
// cozy-public (imported, importing at 45.20%, 7.05%, 0.00%, 99.99% and
// 100.00%: every form CDI writes, docs/monitoring.md; pending with N/A), a
// Failed look-alike in a tenant's namespace, four worker disks (one a
// host-assisted copy), four disks a tenant annotated in shapes no chart
// writes (a 64-character pool, an upper-case golden, a pool with a space, a
// golden ending in a dot: the panels count none, as the alert rules do), and
// what VMAlert writes for two pools behind and one pending.
var dashboardSeries = `
- series: 'kubernetes_worker_image_golden_status_info{job="kube-state-metrics", exported_namespace="cozy-public", name="talos-a", part_of="kubernetes-worker-image", phase="Succeeded", progress="100.0%"}'
  values: '1x10'
- series: 'kubernetes_worker_image_golden_status_info{job="kube-state-metrics", exported_namespace="cozy-public", name="talos-b", part_of="kubernetes-worker-image", phase="ImportInProgress", progress="45.20%"}'
  values: '1x10'
- series: 'kubernetes_worker_image_golden_status_info{job="kube-state-metrics", exported_namespace="cozy-public", name="talos-c", part_of="kubernetes-worker-image", phase="Pending", progress="N/A"}'
  values: '1x10'
- series: 'kubernetes_worker_image_golden_status_info{job="kube-state-metrics", exported_namespace="cozy-public", name="talos-d", part_of="kubernetes-worker-image", phase="ImportInProgress", progress="7.05%"}'
  values: '1x10'
- series: 'kubernetes_worker_image_golden_status_info{job="kube-state-metrics", exported_namespace="cozy-public", name="talos-e", part_of="kubernetes-worker-image", phase="ImportInProgress", progress="0.00%"}'
  values: '1x10'
- series: 'kubernetes_worker_image_golden_status_info{job="kube-state-metrics", exported_namespace="cozy-public", name="talos-f", part_of="kubernetes-worker-image", phase="ImportInProgress", progress="99.99%"}'
  values: '1x10'
- series: 'kubernetes_worker_image_golden_status_info{job="kube-state-metrics", exported_namespace="cozy-public", name="talos-g", part_of="kubernetes-worker-image", phase="ImportInProgress", progress="100.00%"}'
  values: '1x10'
- series: 'kubernetes_worker_image_golden_status_info{job="kube-state-metrics", exported_namespace="tenant-x", name="talos-a", part_of="kubernetes-worker-image", phase="Failed", progress="99.99%"}'
  values: '1x10'
- series: 'kubernetes_worker_image_worker_disk_info{job="kube-state-metrics", exported_namespace="tenant-a", name="kubernetes-c-p1-md-0-aaaaa", golden="talos-a", pool="kubernetes-c-p1", clone_type="csi-clone"}'
  values: '1x10'
- series: 'kubernetes_worker_image_worker_disk_info{job="kube-state-metrics", exported_namespace="tenant-a", name="kubernetes-c-p1-md-0-bbbbb", golden="talos-a", pool="kubernetes-c-p1", clone_type="copy"}'
  values: '1x10'
- series: 'kubernetes_worker_image_worker_disk_info{job="kube-state-metrics", exported_namespace="tenant-b", name="kubernetes-d-p2-md-0-ccccc", golden="talos-a", pool="kubernetes-d-p2"}'
  values: '1x10'
- series: 'kubernetes_worker_image_worker_disk_info{job="kube-state-metrics", exported_namespace="tenant-b", name="kubernetes-d-p3-md-0-ddddd", golden="talos-b", pool="kubernetes-d-p3", clone_type="snapshot"}'
  values: '1x10'
- series: 'kubernetes_worker_image_worker_disk_info{job="kube-state-metrics", exported_namespace="tenant-c", name="look-alike-1", golden="talos-a", pool="` + strings.Repeat("p", 64) + `", clone_type="copy"}'
  values: '1x10'
- series: 'kubernetes_worker_image_worker_disk_info{job="kube-state-metrics", exported_namespace="tenant-c", name="look-alike-2", golden="Talos-A", pool="kubernetes-e-p1", clone_type="copy"}'
  values: '1x10'
- series: 'kubernetes_worker_image_worker_disk_info{job="kube-state-metrics", exported_namespace="tenant-c", name="look-alike-3", golden="talos-b", pool="kubernetes-e-p1 x"}'
  values: '1x10'
- series: 'kubernetes_worker_image_worker_disk_info{job="kube-state-metrics", exported_namespace="tenant-c", name="look-alike-4", golden="talos-b.", pool="kubernetes-e-p1"}'
  values: '1x10'
- series: 'ALERTS{alertname="KubernetesWorkerImagePoolBehind", alertstate="firing", exported_namespace="tenant-a", pool="kubernetes-c-p1"}'
  values: '1x10'
- series: 'ALERTS{alertname="KubernetesWorkerImagePoolBehind", alertstate="firing", exported_namespace="tenant-b", pool="kubernetes-d-p2"}'
  values: '1x10'
- series: 'ALERTS{alertname="KubernetesWorkerImagePoolBehind", alertstate="pending", exported_namespace="tenant-b", pool="kubernetes-d-p3"}'
  values: '1x10'
`

// What each panel must show over those series, by title: label set -> value.
// Every panel of the dashboard has an entry, and every entry a panel.
var dashboardExpected = map[string]map[string]float64{
	"Goldens per phase": {`{phase="Succeeded"}`: 1, `{phase="ImportInProgress"}`: 5, `{phase="Pending"}`: 1},
	// Whole percent, truncated: 45.20% is 45, 7.05% is 7, 99.99% is 99,
	// 100.0% and 100.00% are 100, 0.00% and N/A are 0; the look-alike is not read.
	"Golden import progress": {
		`{exported_namespace="cozy-public", name="talos-a"}`: 100,
		`{exported_namespace="cozy-public", name="talos-b"}`: 45,
		`{exported_namespace="cozy-public", name="talos-c"}`: 0,
		`{exported_namespace="cozy-public", name="talos-d"}`: 7,
		`{exported_namespace="cozy-public", name="talos-e"}`: 0,
		`{exported_namespace="cozy-public", name="talos-f"}`: 99,
		`{exported_namespace="cozy-public", name="talos-g"}`: 100,
	},
	"Clones per golden":    {`{golden="talos-a"}`: 3, `{golden="talos-b"}`: 1},
	"Pools behind":         {`{}`: 2},
	"Host-assisted copies": {`{exported_namespace="tenant-a", pool="kubernetes-c-p1", golden="talos-a"}`: 1},
}

func readDashboard(t *testing.T) support.Dashboard {
	t.Helper()
	d, err := support.ReadDashboard()
	require.NoError(t, err)
	return d
}

// dashboardTest writes every panel query as a recording rule and a promtool
// unit test that expects, from each, the samples dashboardExpected gives its
// panel: a query that does not parse fails `promtool check rules`, and one
// that selects nothing (or the wrong thing) fails `promtool test rules`.
func dashboardTest(t *testing.T, dir string, d support.Dashboard) string {
	t.Helper()
	group, tests, err := support.DashboardPromtool(d, dashboardExpected, "5m")
	require.NoError(t, err)
	writeYAML(t, filepath.Join(dir, "dashboard-rules.yaml"), map[string]any{"groups": []any{group}})
	var series []any
	require.NoError(t, yaml.Unmarshal([]byte(dashboardSeries), &series))
	test := filepath.Join(dir, "dashboard.test.yaml")
	writeYAML(t, test, map[string]any{
		"rule_files":          []string{"dashboard-rules.yaml"},
		"evaluation_interval": "1m",
		"tests":               []any{map[string]any{"interval": "1m", "input_series": series, "promql_expr_test": tests}},
	})
	return test
}

func writeYAML(t *testing.T, path string, v any) {
	t.Helper()
	raw, err := yaml.Marshal(v)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, raw, 0o644))
}

// Every panel query of the dashboard parses (promtool check rules) and shows,
// over synthetic series of what kube-state-metrics and VMAlert write, what the
// panel says it shows (promtool test rules).
func TestDashboardQueries(t *testing.T) {
	bin := promtool(t)
	dir := t.TempDir()
	test := dashboardTest(t, dir, readDashboard(t))
	run(t, bin, "check", "rules", filepath.Join(dir, "dashboard-rules.yaml"))
	require.Contains(t, run(t, bin, "test", "rules", test), "SUCCESS")
}

// The same check fails on a panel whose query selects nothing (a misspelt
// metric) and on one that does not parse: the test above can fail.
func TestDashboardQueriesCanFail(t *testing.T) {
	bin := promtool(t)
	for name, expr := range map[string]string{
		"selects nothing": `count by (golden) (kubernetes_worker_image_worker_disks_info)`,
		"does not parse":  `count by (golden) (kubernetes_worker_image_worker_disk_info`,
	} {
		t.Run(name, func(t *testing.T) {
			d := readDashboard(t)
			for i := range d.Panels {
				if d.Panels[i].Title == "Clones per golden" {
					d.Panels[i].Targets[0].Expr = expr
				}
			}
			dir := t.TempDir()
			test := dashboardTest(t, dir, d)
			out, err := exec.Command(bin, "test", "rules", test).CombinedOutput()
			require.Error(t, err, "promtool test rules fails:\n%s", out)
			require.Contains(t, string(out), "dashboard_panel_3_A")
		})
	}
}

// A panel the test gives no expectation, and an expectation for a panel the
// dashboard lacks, are refused: every panel says what it must show.
func TestDashboardPromtoolNeedsEveryPanel(t *testing.T) {
	d := readDashboard(t)
	_, _, err := support.DashboardPromtool(d, dashboardExpected, "5m")
	require.NoError(t, err, "the dashboard with an expectation for each panel")

	missing := map[string]map[string]float64{}
	for title, want := range dashboardExpected {
		if title != "Pools behind" {
			missing[title] = want
		}
	}
	_, _, err = support.DashboardPromtool(d, missing, "5m")
	require.EqualError(t, err, `panel "Pools behind": the test does not say what it must show`)

	extra := map[string]map[string]float64{"Goldens per flavor": {`{}`: 1}}
	for title, want := range dashboardExpected {
		extra[title] = want
	}
	_, _, err = support.DashboardPromtool(d, extra, "5m")
	require.EqualError(t, err, `the dashboard has no panel "Goldens per flavor"`)
}

// On a stock Cozystack the operator applies what `make grafana-dashboard`
// prints (docs/monitoring.md): one GrafanaDashboard per committed dashboard,
// named and foldered as Cozystack's monitoring chart names its own, for the
// Grafana in tenant-root, and its JSON the committed file byte for byte, so
// the object and the file never drift.
func TestGrafanaDashboardTargetPrintsTheCommittedJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("runs make")
	}
	root := support.RepoRoot()
	printed, err := support.MakePrints("grafana-dashboard")
	require.NoError(t, err)

	files, err := filepath.Glob(filepath.Join(root, "dashboards", "*", "*.json"))
	require.NoError(t, err)
	require.Contains(t, files, filepath.Join(root, support.DashboardPath))
	docs := strings.Split(strings.TrimPrefix(string(printed), "---\n"), "\n---\n")
	require.Len(t, docs, len(files), "one GrafanaDashboard per dashboard:\n%s", printed)
	for i, file := range files {
		raw, err := os.ReadFile(file)
		require.NoError(t, err)
		folder, name := filepath.Base(filepath.Dir(file)), strings.TrimSuffix(filepath.Base(file), ".json")
		var obj map[string]any
		require.NoError(t, yaml.Unmarshal([]byte(docs[i]), &obj), "%s", docs[i])
		require.Equal(t, map[string]any{
			"apiVersion": "grafana.integreatly.org/v1beta1",
			"kind":       "GrafanaDashboard",
			"metadata":   map[string]any{"name": folder + "-" + name, "namespace": "tenant-root"},
			"spec": map[string]any{
				"folder":           folder,
				"instanceSelector": map[string]any{"matchLabels": map[string]any{"dashboards": "grafana"}},
				"json":             string(raw),
			},
		}, obj)
	}
}

// The panels over worker disks select them as the host-assisted-copy alert
// does (its series selector, read from the rendered rules): only golden and
// pool annotations in the shape the charts write, so a tenant's look-alike
// counts on no panel, as it raises no alert. "Clones per golden" takes the
// same selector without the clone type.
func TestDashboardSelectsWorkerDisksAsTheAlertDoes(t *testing.T) {
	// The metric and its label matchers, quoted values read whole (a pattern holds braces).
	selector := regexp.MustCompile(support.WorkerDiskMetric + `(\{([^"}]|"([^"\\]|\\.)*")*\})?`)
	var alertSelector string
	for _, g := range render.Get(renderRules(t, ruleCases[0]).Object, "spec.groups").([]any) {
		for _, r := range g.(map[string]any)["rules"].([]any) {
			rule := r.(map[string]any)
			if rule["alert"] == "KubernetesWorkerImageHostAssistedClone" {
				alertSelector = selector.FindString(rule["expr"].(string))
			}
		}
	}
	require.Contains(t, alertSelector, `clone_type="copy"`, "the alert's selector is read")
	require.Contains(t, alertSelector, `golden=~"`, "the alert reads only well-formed goldens")
	clones := strings.Replace(alertSelector, `, clone_type="copy"`, "", 1)
	require.NotEqual(t, alertSelector, clones)
	selects := map[string]string{"Clones per golden": clones, "Host-assisted copies": alertSelector}
	d := readDashboard(t)
	for _, p := range d.Panels {
		want, ok := selects[p.Title]
		if !ok {
			require.NotContains(t, p.Targets[0].Expr, support.WorkerDiskMetric, "panel %q reads worker disks: it must select them as the alert does", p.Title)
			continue
		}
		got := selector.FindAllString(p.Targets[0].Expr, -1)
		require.Equal(t, []string{want}, got, "panel %q", p.Title)
		delete(selects, p.Title)
	}
	require.Empty(t, selects, "panels not found")
}
