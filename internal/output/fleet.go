package output

import (
	"fmt"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/report"
)

// The lines are raw: they do not widen the columns of the report's rows.

// writeUnread lists the namespaces whose pools could not be read, and what
// that stops (consequence).
func writeUnread(tb *table, unread []fleet.UnreadNamespace, consequence string) {
	if len(unread) == 0 {
		return
	}
	tb.raw(fmt.Sprintf("namespaces that run pools none of which could be read (%s; make their HelmReleases or Helm release records readable):", consequence))
	for _, u := range unread {
		tb.raw(fmt.Sprintf("  namespace %s: %s: %s", u.Namespace, report.Count(len(u.Objects), "pool object"), report.FirstFive(u.Objects)))
	}
}

// writeIgnored lists the tenant objects not read as pools, and why.
func writeIgnored(tb *table, ignored []fleet.Ignored) {
	if len(ignored) == 0 {
		return
	}
	tb.raw("objects not read as pools (an object speaks only for its own namespace, and one that cannot be decoded is skipped):")
	for _, i := range ignored {
		tb.raw("  " + i.Object + ": " + i.Reason)
	}
}

// poolsRead says which objects a fleet report read as pools: HelmReleases
// by the chart source they name (never by a name a tenant can copy), and
// Helm releases of the chart installed without one.
func poolsRead(chartName, poolChart string) string {
	source := "the platform's pool chart"
	if poolChart != "" {
		source = poolChart
	}
	return fmt.Sprintf("of chart %s: Flux HelmReleases (%s) whose chart reference is %s, and Helm releases of %s without one", chartName, fleet.HelmReleaseAPI, source, chartName)
}
