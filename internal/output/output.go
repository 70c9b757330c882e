// Package output writes the reports of internal/report: as text for a
// terminal, every string escaped on the way (TermSafe, the one text path),
// and as JSON or YAML exactly as the report holds it (YAML is the same
// report as JSON, field for field). It decides nothing a report does not
// already say.
package output

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/cozystack/golden-worker-images/internal/golden"
	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/report"
	yaml "go.yaml.in/yaml/v3"
)

// structured writes v as JSON or YAML when o asks for one, and says so.
func structured(out *bytes.Buffer, v any, o Options) bool {
	switch o.Format {
	case "json":
		writeJSON(out, v)
	case "yaml":
		writeYAML(out, v)
	default:
		return false
	}
	return true
}

// writeYAML writes v as its JSON does, in YAML: the same field names, in the
// same order, every string written by yamlString so it reads back exactly
// (escaped where it holds a control character, quoted where a YAML 1.1 or
// 1.2 reader would read another type).
func writeYAML(out *bytes.Buffer, v any) {
	raw, err := json.Marshal(v)
	var doc *yaml.Node
	if err == nil {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		doc, err = jsonNode(dec)
	}
	if err != nil {
		fmt.Fprintf(out, "# cannot write the report as YAML: %s\n", TermSafe(err.Error()))
		return
	}
	out.WriteString(yamlText(doc))
}

// Plan writes plan's report.
func Plan(out *bytes.Buffer, r *report.PlanReport, o Options) {
	if !structured(out, r, o) {
		writePlanText(out, r, o)
	}
}

// Manifests writes what a pool renders, as `helm template` prints it, or a
// refused pool's refusal as YAML comments.
func Manifests(out *bytes.Buffer, r *report.PlanReport, m *render.Manifest) {
	if r.Result != "renders" || m == nil {
		// Comments, not data: escaped like text, so no refusal starts a line.
		fmt.Fprintf(out, "# %s: refused\n# %s\n", TermSafe(r.Release), TermSafe(r.Refusal))
		return
	}
	out.WriteString(m.Text())
}

// Pins writes pins' report; tree draws its goldens, pools and disks as a tree.
func Pins(out *bytes.Buffer, r *report.PinsReport, o Options, tree bool) {
	switch {
	case structured(out, r, o):
	case tree:
		writePinsTree(out, r)
	default:
		writePinsText(out, r, o)
	}
}

// NotCreated writes pins GOLDEN's answer for a golden a catalog entry names
// and cozy-public does not hold yet.
func NotCreated(out *bytes.Buffer, r *report.NotCreated, o Options) {
	if structured(out, r, o) {
		return
	}
	tb := newTable(o)
	tb.wrap(fmt.Sprintf("%s  not created yet: %s holds no DataVolume or PersistentVolumeClaim of that name", r.Golden, golden.Namespace))
	tb.wrap("  catalog entry  " + r.Entry + ", in " + r.ValuesFrom)
	if r.InPackage {
		tb.wrap("  next: the catalog creates it once Flux has upgraded its release with that entry (HelmRelease " + golden.Namespace + "/kubernetes-worker-image; the import takes minutes); kubectl -n " + golden.Namespace + " get datavolume " + r.Golden + " shows it coming, kubectl -n " + golden.Namespace + " get helmrelease kubernetes-worker-image says why if it does not, and pins " + r.Golden + " then answers for it")
	} else {
		tb.wrap("  next: the cluster has no Package cozystack.kubernetes-worker-image, so the entry is one of the catalog's built-in values: the catalog creates the golden once it is installed with them (docs/cozystack.md, \"Installing the catalog\"; the import takes minutes), then pins " + r.Golden + " answers for it")
	}
	tb.write(out)
}

// Adopt writes adopt's report, with the catalog's values as YAML to paste
// (report.AdoptCatalog.Values) when the catalog changes.
func Adopt(out *bytes.Buffer, r *report.AdoptReport, o Options) {
	withValues := *r
	if r.Catalog.Changed {
		withValues.Catalog.Values = catalogValuesYAML(r.Catalog)
	}
	if !structured(out, &withValues, o) {
		writeAdoptText(out, &withValues, o)
	}
}

// Rollcheck writes rollcheck's report.
func Rollcheck(out *bytes.Buffer, r report.RollReport, o Options) {
	if !structured(out, r, o) {
		writeRollText(out, &r, o)
	}
}

// Catalog writes the catalog preview.
func Catalog(out *bytes.Buffer, r *report.CatalogReport, o Options) {
	if !structured(out, r, o) {
		writeCatalogPreviewText(out, r, o)
	}
}

// Version writes what the binary is and the charts it carries.
func Version(out *bytes.Buffer, r report.VersionReport, o Options) {
	if structured(out, r, o) {
		return
	}
	b := r.Binary
	line := "workerimage " + b.Version
	if b.Module != "" {
		line += " (" + b.Module + ")"
	}
	if b.Revision != "" {
		line += ", revision " + b.Revision
		if b.Modified {
			line += " with uncommitted changes"
		}
		if b.Time != "" {
			line += ", committed " + b.Time
		}
	}
	if b.GoVersion != "" {
		line += ", built with " + b.GoVersion
	}
	tb := newTable(o)
	tb.raw(line)
	for _, c := range r.Charts {
		tb.row("chart", c.Name, c.Version, c.Path)
	}
	tb.write(out)
}
