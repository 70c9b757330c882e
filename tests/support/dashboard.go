package support

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// DashboardPath is the Grafana dashboard of the goldens, where Cozystack keeps
// its own: dashboards/<folder>/<name>.json (docs/monitoring.md).
var DashboardPath = filepath.Join("dashboards", "kubernetes-worker-image", "goldens.json")

// Dashboard is what the tests read of a Grafana dashboard: its panels' queries.
type Dashboard struct {
	Panels []struct {
		ID      int    `json:"id"`
		Title   string `json:"title"`
		Targets []struct {
			RefID string `json:"refId"`
			Expr  string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

// ReadDashboard reads the committed dashboard.
func ReadDashboard() (Dashboard, error) {
	var d Dashboard
	raw, err := os.ReadFile(Path(DashboardPath))
	if err != nil {
		return d, err
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		return d, fmt.Errorf("%s: %w", DashboardPath, err)
	}
	return d, nil
}

// DashboardPromtool turns every panel query of d into a recording rule named
// dashboard_panel_<id>_<refId> (one rule group, "dashboard") and a promtool
// promql_expr_test entry expecting, at evalTime, the samples want gives the
// panel: by title, label set ({phase="Succeeded"}) to value. The queries are
// taken from the dashboard, never restated, so `promtool check rules` parses
// what Grafana runs and `promtool test rules` evaluates it. A panel without an
// entry in want, a query-less panel or target, and an entry naming no panel
// are errors: every panel says what it must show.
func DashboardPromtool(d Dashboard, want map[string]map[string]float64, evalTime string) (group map[string]any, tests []any, err error) {
	var rules []any
	titles := map[string]bool{}
	for _, p := range d.Panels {
		samples, ok := want[p.Title]
		if !ok {
			return nil, nil, fmt.Errorf("panel %q: the test does not say what it must show", p.Title)
		}
		if len(p.Targets) == 0 {
			return nil, nil, fmt.Errorf("panel %q has no query", p.Title)
		}
		titles[p.Title] = true
		keys := make([]string, 0, len(samples))
		for k := range samples {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, target := range p.Targets {
			if strings.TrimSpace(target.Expr) == "" {
				return nil, nil, fmt.Errorf("panel %q target %s has no expression", p.Title, target.RefID)
			}
			record := fmt.Sprintf("dashboard_panel_%d_%s", p.ID, target.RefID)
			rules = append(rules, map[string]any{"record": record, "expr": target.Expr})
			exp := []any{}
			for _, labels := range keys {
				exp = append(exp, map[string]any{"labels": record + labels, "value": samples[labels]})
			}
			tests = append(tests, map[string]any{"expr": record, "eval_time": evalTime, "exp_samples": exp})
		}
	}
	for title := range want {
		if !titles[title] {
			return nil, nil, fmt.Errorf("the dashboard has no panel %q", title)
		}
	}
	return map[string]any{"name": "dashboard", "rules": rules}, tests, nil
}
