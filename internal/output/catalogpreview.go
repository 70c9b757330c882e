package output

import (
	"bytes"
	"encoding/json"
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
	if r.ValuesShapeWhy != "" {
		tb.row("read as", shapeWords[r.ValuesShape]+": "+r.ValuesShapeWhy)
	}
	if r.MergedOver != "" {
		tb.row("merged", r.MergedOver)
	}
	if r.Enabled != nil && !*r.Enabled {
		if r.ValuesShape == report.ValuesPackage {
			tb.row("enabled", "no: the Package sets spec.components.kubernetes-worker-image.enabled: false, so the operator installs no catalog; previewed as if it did")
		} else {
			tb.row("enabled", "no: these platform values do not list cozystack.kubernetes-worker-image in bundles.enabledPackages, so the platform installs no catalog; previewed as if they did")
		}
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
		if len(r.CAConfigMaps) > 0 {
			tb.row("CA", "ConfigMaps "+strings.Join(r.CAConfigMaps, ", ")+" in "+golden.Namespace)
		}
		writePublished(&tb, r.Publishes)
		if f := r.TenantFactory; f != nil {
			tb.row("tenant factory", f.Value+"  ("+f.Source+")")
		}
	}
	tb.write(out)

	gt := newTable(o)
	gt.raw("")
	switch {
	case r.Values == nil:
		// The platform chart refused the values: nothing reached the catalog.
		gt.raw("goldens: not previewed (the platform chart refuses these values before they reach the catalog)")
	case len(r.Goldens) == 0:
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
		if g.FactoryNote != "" {
			gt.row("  factory", g.FactoryNote)
		}
	}
	gt.write(out)
	if len(r.Removes) > 0 {
		rt := newTable(o)
		rt.raw("")
		rt.wrap("removes: compared with " + r.RemovesFrom + ", the result removes what each line below names (a warning, not a refusal: removing one may be the change meant; to keep one, leave it out of the files, or write it in them):")
		for _, x := range r.Removes {
			switch x.Kind {
			case report.RemovesImage:
				rt.wrap("removes  " + x.Key + ": its " + x.Was + " is no longer managed by the catalog (Helm keeps it while it lives)")
			default:
				rt.wrap("removes  " + x.Key + " (" + x.Was + "): no longer published for new pools")
			}
		}
		rt.write(out)
	}
	pt := newTable(o)
	switch {
	case r.ChangeShape == report.ShapePlatform && r.Platform != nil:
		pt.raw("")
		pt.raw("platform values: " + r.PlatformFrom + ". The whole values to apply (helm upgrade cozystack -n cozy-system -f FILE):")
		pt.write(out)
		out.WriteString(yamlText(valuesNode(r.Platform)))
	case r.ChangeShape == report.ShapePackage && r.Package != nil:
		pt.raw("")
		pt.raw("Package: " + r.PackageFrom + ". The whole Package to apply (kubectl apply -f FILE):")
		pt.write(out)
		out.WriteString(yamlText(valuesNode(r.Package)))
	}
	if r.ChangeNote != "" {
		nt := newTable(o)
		nt.raw("")
		nt.wrap("next: " + r.ChangeNote)
		nt.write(out)
	}
}

// shapeWords name the shapes catalog -f reads.
var shapeWords = map[string]string{
	report.ValuesPlatform: "platform values",
	report.ValuesCatalog:  "the catalog's own values",
	report.ValuesPackage:  "the catalog's Package",
}

// publishedLabels name the published defaults the text report lists.
var publishedLabels = map[string]string{
	"talos.imageFactoryURL":         "factory",
	"talos.imageFactoryCA":          "factory CA",
	"talos.installerRepository":     "installer",
	"talos.registryMirrors":         "mirrors",
	"talos.registryConfig":          "registry CAs",
	"osImage":                       "osImage",
	"kubernetesWorkerImage.metrics": "metrics",
}

// writePublished writes the tenant defaults the values publish, field by
// field, each beside what is published now.
func writePublished(tb *table, p *report.PublishedDefaults) {
	if p == nil {
		return
	}
	tb.row("tenant defaults", "what the catalog publishes for new pools in ConfigMap "+golden.Namespace+"/"+report.TenantDefaultsConfigMap+" (a pool's own values and _cluster come first); now: "+p.NowFrom)
	for _, f := range p.Fields {
		label := publishedLabels[f.Field]
		if label == "" {
			label = f.Field
		}
		text := publishedText(f.Field, f.Publishes)
		switch {
		case p.Now == nil:
		case f.Changes:
			text += "  (now: " + publishedText(f.Field, f.Now) + ")"
		default:
			text += "  (unchanged)"
		}
		tb.row("  "+label, text)
	}
}

// publishedText is a published default as the text report shows it: a CA
// by whether there is one, registry CAs by host, mirrors by host and
// endpoints, a string as it is, anything else as compact JSON (its size when
// long).
func publishedText(field string, v any) string {
	if v == nil {
		return "none"
	}
	switch field {
	case "talos.imageFactoryCA":
		return "set (PEM certificates)"
	case "talos.registryConfig":
		// The hosts whose CA is published, as plan names them: never the PEM.
		if m, ok := v.(map[string]any); ok {
			if len(m) == 0 {
				return "none"
			}
			var hosts []string
			for _, h := range report.SortedKeys(m) {
				cfg, _ := m[h].(map[string]any)
				tls, _ := cfg["tls"].(map[string]any)
				if ca, _ := tls["ca"].(string); ca == "" {
					h += " (no tls.ca)"
				}
				hosts = append(hosts, h)
			}
			return strings.Join(hosts, ", ")
		}
		return "set (not a map of hosts)"
	case "talos.registryMirrors":
		if m, ok := v.(map[string]any); ok {
			if len(m) == 0 {
				return "none"
			}
			var hosts []string
			for _, h := range report.SortedKeys(m) {
				cfg, _ := m[h].(map[string]any)
				var endpoints []string
				for _, e := range asAnyList(cfg["endpoints"]) {
					if s, ok := e.(string); ok {
						endpoints = append(endpoints, s)
					}
				}
				entry := h + " -> " + strings.Join(endpoints, ", ")
				if len(cfg) > 1 || len(endpoints) == 0 {
					entry = h + " " + compactJSON(cfg)
				}
				hosts = append(hosts, entry)
			}
			return strings.Join(hosts, "; ")
		}
	}
	if s, ok := v.(string); ok {
		return s
	}
	return compactJSON(v)
}

func asAnyList(v any) []any {
	l, _ := v.([]any)
	return l
}

// compactJSON is v as one line of JSON; past 200 bytes, only its size.
func compactJSON(v any) string {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	if len(raw) > 200 {
		return fmt.Sprintf("set (%d bytes of JSON)", len(raw))
	}
	return string(raw)
}

func cloneRoleText(names []string) string {
	if len(names) == 0 {
		return "none rendered (no golden left to clone; a Role without resourceNames would grant every PVC)"
	}
	return fmt.Sprintf("lets workers clone %s: %s", report.Count(len(names), "golden"), strings.Join(names, ", "))
}

// CatalogToApply writes what the catalog report ends with, alone: the
// Package whole, or the platform's values whole; false when the report
// holds neither (no cluster values to write them over).
func CatalogToApply(out *bytes.Buffer, r *report.CatalogReport) bool {
	switch {
	case r.ChangeShape == report.ShapePlatform && r.Platform != nil:
		out.WriteString(yamlText(valuesNode(r.Platform)))
	case r.ChangeShape == report.ShapePackage && r.Package != nil:
		out.WriteString(yamlText(valuesNode(r.Package)))
	default:
		return false
	}
	return true
}
