package monitoring

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// The Grafana dashboard, as Cozystack ships its dashboards: JSON under dashboards/<folder>/.
var dashboardPath = filepath.Join("dashboards", "kubernetes-worker-image", "goldens.json")

type dashboard struct {
	Panels []struct {
		ID      int    `json:"id"`
		Title   string `json:"title"`
		Targets []struct {
			RefID string `json:"refId"`
			Expr  string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

// What kube-state-metrics exports from a cluster with four goldens in
// cozy-public (imported, importing at 45.20% and 7.05%, pending with N/A), a
// Failed look-alike in a tenant's namespace, four worker disks (one a
// host-assisted copy), and what VMAlert writes for two pools behind and one
// pending.
const dashboardSeries = `
- series: 'kubernetes_worker_image_golden_status_info{job="kube-state-metrics", exported_namespace="cozy-public", name="talos-a", part_of="kubernetes-worker-image", phase="Succeeded", progress="100.0%"}'
  values: '1x10'
- series: 'kubernetes_worker_image_golden_status_info{job="kube-state-metrics", exported_namespace="cozy-public", name="talos-b", part_of="kubernetes-worker-image", phase="ImportInProgress", progress="45.20%"}'
  values: '1x10'
- series: 'kubernetes_worker_image_golden_status_info{job="kube-state-metrics", exported_namespace="cozy-public", name="talos-c", part_of="kubernetes-worker-image", phase="Pending", progress="N/A"}'
  values: '1x10'
- series: 'kubernetes_worker_image_golden_status_info{job="kube-state-metrics", exported_namespace="cozy-public", name="talos-d", part_of="kubernetes-worker-image", phase="ImportInProgress", progress="7.05%"}'
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
	"Goldens per phase": {`{phase="Succeeded"}`: 1, `{phase="ImportInProgress"}`: 2, `{phase="Pending"}`: 1},
	// Whole percent: 45.20% is 45, 7.05% is 7, 100.0% is 100, N/A is 0; the look-alike is not read.
	"Golden import progress": {
		`{exported_namespace="cozy-public", name="talos-a"}`: 100,
		`{exported_namespace="cozy-public", name="talos-b"}`: 45,
		`{exported_namespace="cozy-public", name="talos-c"}`: 0,
		`{exported_namespace="cozy-public", name="talos-d"}`: 7,
	},
	"Clones per golden":    {`{golden="talos-a"}`: 3, `{golden="talos-b"}`: 1},
	"Pools behind":         {`{}`: 2},
	"Host-assisted copies": {`{exported_namespace="tenant-a", pool="kubernetes-c-p1", golden="talos-a"}`: 1},
}

func readDashboard(t *testing.T) dashboard {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(support.RepoRoot(), dashboardPath))
	require.NoError(t, err)
	var d dashboard
	require.NoError(t, json.Unmarshal(raw, &d))
	return d
}

// dashboardTest writes every panel query as a recording rule and a promtool
// unit test that expects, from each, the samples dashboardExpected gives its
// panel: a query that does not parse fails `promtool check rules`, and one
// that selects nothing (or the wrong thing) fails `promtool test rules`.
func dashboardTest(t *testing.T, dir string, d dashboard) string {
	t.Helper()
	var rules, tests []any
	titles := map[string]bool{}
	for _, p := range d.Panels {
		require.NotEmpty(t, p.Targets, "panel %q has a query", p.Title)
		want, ok := dashboardExpected[p.Title]
		require.True(t, ok, "panel %q: the test says what it must show", p.Title)
		titles[p.Title] = true
		for _, target := range p.Targets {
			require.NotEmpty(t, strings.TrimSpace(target.Expr), "panel %q target %s has an expression", p.Title, target.RefID)
			record := fmt.Sprintf("dashboard_panel_%d_%s", p.ID, target.RefID)
			rules = append(rules, map[string]any{"record": record, "expr": target.Expr})
			var samples []any
			keys := make([]string, 0, len(want))
			for k := range want {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, labels := range keys {
				samples = append(samples, map[string]any{"labels": record + labels, "value": want[labels]})
			}
			tests = append(tests, map[string]any{"expr": record, "eval_time": "5m", "exp_samples": samples})
		}
	}
	for title := range dashboardExpected {
		require.True(t, titles[title], "the dashboard has the panel %q", title)
	}
	writeYAML(t, filepath.Join(dir, "dashboard-rules.yaml"), map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": rules}}})
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
