package output

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/cozystack/golden-worker-images/internal/golden"
	"github.com/cozystack/golden-worker-images/internal/report"
)

// outcomeWords is how the text report names what the catalog does to a golden.
var outcomeWords = map[string]string{
	report.GoldenCreates:       "creates",
	report.GoldenKeeps:         "keeps",
	report.GoldenRefusesEdit:   "refuses to edit",
	report.GoldenRetires:       "retires",
	report.GoldenRetireRefused: "refuses to retire",
	report.GoldenDeletes:       "deletes",
	report.GoldenDropped:       "drops",
}

func writeCatalogPreviewText(out *bytes.Buffer, r *report.CatalogReport, o Options) {
	tb := newTable(o)
	tb.row("cluster", r.Cluster)
	tb.row("values", r.ValuesFrom)
	if r.Enabled != nil && !*r.Enabled {
		tb.row("enabled", "no: these platform values do not list cozystack.kubernetes-worker-image in bundles.enabledPackages, so the platform installs no catalog; previewed as if they did")
	}
	switch {
	case r.Result == "renders":
		tb.row("result", "renders")
	default:
		tb.row("result", "refused: "+r.Refusal)
	}
	writeRefusalNotes(&tb, r.SchemaRefusal, r.SchemaOnly, r.Suggestions)
	if r.Result == "renders" {
		tb.row("clone Role", cloneRoleText(r.CloneRole))
		if r.TenantDefaults != "" {
			tb.row("tenant defaults", r.TenantDefaults+"  (published for new pools in ConfigMap "+golden.Namespace+"/"+report.TenantDefaultsConfigMap+")")
		}
		if len(r.CAConfigMaps) > 0 {
			tb.row("CA", "ConfigMaps "+strings.Join(r.CAConfigMaps, ", ")+" in "+golden.Namespace)
		}
	}
	tb.write(out)

	gt := newTable(o)
	gt.raw("")
	if len(r.Goldens) == 0 {
		gt.raw("goldens: none (the values resolve to no golden, and " + golden.Namespace + " holds none)")
	}
	for _, g := range r.Goldens {
		what := outcomeWords[g.Outcome]
		if what == "" {
			what = g.Outcome
		}
		gt.raw(fmt.Sprintf("%s  %s", what, printable(g.Name)))
		if g.Entry != "" {
			gt.row("  entry", g.Entry)
		}
		src := g.SourceURL
		if g.Storage != "" {
			src += ", storage " + g.Storage
		}
		src += ", class " + report.OrNone(g.StorageClass)
		gt.row("  golden", src)
		if g.CAConfigMap != "" || g.Checksum != "" {
			gt.row("  imports", goldenImport(g.CAConfigMap, g.Checksum))
		}
		if g.Live != "" {
			gt.row("  now", g.Live+" in "+golden.Namespace)
		}
		detail := g.Detail
		if detail != "" && detail == r.Refusal {
			detail = "the refusal in result"
		}
		if detail != "" {
			gt.row("  "+map[bool]string{true: "refusal", false: "means"}[g.Outcome == report.GoldenRefusesEdit], detail)
		}
	}
	gt.write(out)
	if r.Platform != nil {
		pt := newTable(o)
		pt.raw("")
		pt.raw("platform values: " + r.PlatformFrom + ". The whole values to apply (helm upgrade cozystack -n cozy-system -f FILE):")
		pt.write(out)
		out.WriteString(yamlText(valuesNode(r.Platform)))
	}
}

func cloneRoleText(names []string) string {
	if len(names) == 0 {
		return "none rendered (no golden left to clone; a Role without resourceNames would grant every PVC)"
	}
	return fmt.Sprintf("lets workers clone %s: %s", report.Count(len(names), "golden"), strings.Join(names, ", "))
}
