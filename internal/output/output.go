// Package output writes the reports of internal/report: as text for a
// terminal, every string escaped on the way (TermSafe, the one text path),
// as JSON exactly as the report holds it, and for plan as YAML (the rendered
// manifest). It decides nothing a report does not already say.
package output

import (
	"bytes"
	"fmt"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/report"
)

// Plan writes plan's report as text, json, or yaml: the manifest the pool
// renders (m), or a refused pool's refusal as YAML comments.
func Plan(out *bytes.Buffer, r *report.PlanReport, m *render.Manifest, format string) {
	switch format {
	case "yaml":
		if r.Result != "renders" {
			// Comments, not data: escaped like text, so no refusal starts a line.
			fmt.Fprintf(out, "# %s: refused\n# %s\n", TermSafe(r.Release), TermSafe(r.Refusal))
		} else {
			out.WriteString(m.Text())
		}
	case "json":
		writeJSON(out, r)
	default:
		writePlanText(out, r)
	}
}

// Pins writes pins' report as text or json.
func Pins(out *bytes.Buffer, r *report.PinsReport, format string) {
	if format == "json" {
		writeJSON(out, r)
		return
	}
	writePinsText(out, r)
}

// Adopt writes adopt's report as text or json, with the catalog's values as
// YAML to paste (report.AdoptCatalog.Values) when the catalog changes.
func Adopt(out *bytes.Buffer, r *report.AdoptReport, format string) {
	withValues := *r
	if r.Catalog.Changed {
		withValues.Catalog.Values = catalogValuesYAML(r.Catalog.Images)
	}
	if format == "json" {
		writeJSON(out, &withValues)
		return
	}
	writeAdoptText(out, &withValues)
}

// Rollcheck writes rollcheck's report as text or json.
func Rollcheck(out *bytes.Buffer, r report.RollReport, format string) {
	if format == "json" {
		writeJSON(out, r)
		return
	}
	writeRollText(out, &r)
}
