package output

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/cozystack/golden-worker-images/internal/golden"
	"github.com/cozystack/golden-worker-images/internal/report"
)

func writePlanText(out *bytes.Buffer, r *report.PlanReport, o Options) {
	tb := newTable(o)
	tb.row("pool", fmt.Sprintf("%s in %s", r.Release, r.Namespace))
	tb.row("cluster", r.Cluster)
	if d := r.DiskSource; d != nil {
		if d.Path == "clone" {
			tb.row("disk source", "clone of golden "+d.Golden)
			switch {
			case d.Preview:
				tb.row("golden", "not checked (no cluster)")
			case d.GoldenFoundAs == "":
				tb.row("golden", "not read: the clone guards refused (see result)")
			case d.GoldenFoundAs == "absent" && !d.Checked:
				tb.row("golden", "absent from cozy-public")
			case d.GoldenFoundAs == "absent":
				tb.row("golden", "absent from cozy-public; the pool already runs from it (template "+d.RunningTemplate+")")
			default:
				g := "found as " + d.GoldenFoundAs
				if d.GoldenPhase != "" {
					g += ", phase " + d.GoldenPhase
				}
				if d.GoldenSize != "" {
					g += ", size " + d.GoldenSize
				}
				switch {
				case d.GoldenRetiring && !d.Checked:
					g += ", retiring (its catalog entry sets retire: true)"
				case d.GoldenRetiring:
					g += ", retiring (its catalog entry sets retire: true; this pool still renders because it already runs from it; move it to another flavor or to HTTP before the entry is dropped)"
				}
				tb.row("golden", g)
				tb.row("golden source", orNotRecorded(d.GoldenSourceURL))
				if d.GoldenCertConfigMap != "" || d.GoldenChecksum != "" {
					tb.row("golden import", goldenImport(d.GoldenCertConfigMap, d.GoldenChecksum))
				}
			}
		} else {
			tb.row("disk source", "HTTP import from "+report.OrNone(d.URL))
			tb.row("golden", "none (HTTP path)")
		}
		tb.row("schematicID", d.SchematicID.Value+"  ("+d.SchematicID.Source+")")
		tb.row("version", d.Version.Value+"  ("+d.Version.Source+")")
		if d.ImageFactoryURL != nil {
			tb.row("image factory", d.ImageFactoryURL.Value+"  ("+d.ImageFactoryURL.Source+")")
		}
		if d.ImageFactoryCA != nil {
			tb.row("factory CA", d.ImageFactoryCA.Value+"  ("+d.ImageFactoryCA.Source+")")
			for _, p := range d.ImageFactoryCAProblems {
				tb.row("", "X.509: "+p)
			}
		}
		if d.PoolClass != nil {
			tb.row("pool class", report.OrNone(d.PoolClass.Value)+"  ("+d.PoolClass.Source+")")
		}
		if d.GoldenClass != nil {
			tb.row("golden class", report.OrNone(d.GoldenClass.Value)+"  ("+d.GoldenClass.Source+")")
		}
		if c := d.GoldenChoice; c != nil {
			tb.row("golden choice", c.Choice+": "+c.Reason)
		}
		if s := d.CloneStrategy; s != nil {
			if s.Value == "" {
				tb.row("clone strategy", s.Source)
			} else {
				tb.row("clone strategy", s.Value+"  ("+s.Source+")")
			}
		}
		for i, c := range d.FallbackChecks {
			label := ""
			if i == 0 {
				label = "fallback checks"
			}
			detail := c.Detail
			if c.Outcome == "refused" && detail == r.Refusal {
				detail = "the refusal in result"
			}
			tb.row(label, fmt.Sprintf("%d %s", c.Refusal, c.Check), c.Outcome, detail)
		}
		if d.RunningTemplate != "" {
			tb.row("running from", "template "+d.RunningTemplate+", which clones this golden ("+d.ReadyWorkers+" ready workers)")
		}
		if d.Note != "" {
			tb.row("note", d.Note)
		}
	}
	if c := r.CreatedWith; c != nil {
		what := fmt.Sprintf("platform defaults imageFactoryURL %s, osImage %s", report.OrNone(c.ImageFactoryURL), report.OrNone(strings.Join(strings.Fields(c.OSImage), " ")))
		if c.ImageFactoryCA {
			what += ", imageFactoryCA (applies: the platform's CA is read at each render)"
		}
		if len(c.FromCatalog) > 0 {
			what += "; from " + report.CatalogChannel + ": " + strings.Join(c.FromCatalog, ", ")
		}
		if c.Origin == "builtin" {
			what = "the chart's built-in values"
		}
		tb.row("created with", what+"  ("+c.From+")")
	}
	if k := r.Kubernetes; k != nil {
		tb.row("kubernetes", k.Value+"  ("+k.Source+")")
	}
	writeMachineConfig(&tb, r.MachineConfig)
	if r.Behind != nil {
		if len(r.Behind) == 0 {
			tb.row("behind", "no: nothing newer in the catalog or the chart, and the platform's factory")
		}
		for i, b := range r.Behind {
			tb.row(map[bool]string{true: "behind", false: ""}[i == 0], BehindText(b))
		}
	}
	if r.MachineTemplate != "" {
		tb.row("machine template", r.MachineTemplate)
	}
	switch {
	case r.Result == "renders" && r.Preview:
		tb.row("result", "renders in a preview: no cluster was read, so the golden, class, clone and instancetype checks did not run; give --cluster or --kubeconfig to run them")
	case r.Result == "renders":
		tb.row("result", "renders")
	default:
		tb.row("result", "refused: "+r.Refusal)
	}
	writeRefusalNotes(&tb, r.SchemaRefusal, r.SchemaOnly, r.Suggestions)
	if r.ReleaseHint != "" {
		tb.row("release", r.ReleaseHint)
	}
	tb.write(out)
}

// Bounds on what the text report prints of a pool's registries: a pool may
// merge up to 64 hosts from each of three channels, each with up to 16
// endpoints of up to 2048 characters. -o json lists them all, exactly.
const (
	textRegistryHosts = 10
	textEndpoints     = 3
	textEndpointChars = 120
)

// writeMachineConfig writes what the worker's machine config gets: the
// installer, the mirrors (host -> endpoints) and the hosts whose registry
// config trusts a CA, each with its channel; never a CA's PEM.
func writeMachineConfig(tb *table, mc *report.MachineConfigReport) {
	if mc == nil {
		return
	}
	tb.row("installer", mc.Installer.Image+"  ("+mc.Installer.Source+")")
	if len(mc.RegistryMirrors) == 0 {
		tb.row("mirrors", "none: the workers pull from each registry directly")
	}
	for i, m := range mc.RegistryMirrors {
		label := map[bool]string{true: "mirrors", false: ""}[i == 0]
		if i == textRegistryHosts {
			tb.row(label, moreHosts(len(mc.RegistryMirrors)-i))
			break
		}
		tb.row(label, mirrorText(m)+"  ("+m.Source+")")
	}
	if len(mc.RegistryConfig) == 0 {
		tb.row("registry CAs", "none: the workers verify registries against Talos's system CAs")
	}
	for i, c := range mc.RegistryConfig {
		label := map[bool]string{true: "registry CAs", false: ""}[i == 0]
		if i == textRegistryHosts {
			tb.row(label, moreHosts(len(mc.RegistryConfig)-i))
			break
		}
		if c.CA {
			tb.row(label, c.Host+"  ("+c.Source+")")
		} else {
			tb.row(label, c.Host+": none, its entry sets no tls.ca  ("+c.Source+")")
		}
	}
}

// mirrorText is one host's mirror: host -> endpoints, the first few, each
// shortened, and the flags set.
func mirrorText(m report.RegistryMirror) string {
	var endpoints []string
	for i, e := range m.Endpoints {
		if i == textEndpoints {
			endpoints = append(endpoints, fmt.Sprintf("and %d more", len(m.Endpoints)-i))
			break
		}
		endpoints = append(endpoints, shorten(e, textEndpointChars))
	}
	text := m.Host + " -> " + strings.Join(endpoints, ", ")
	for _, f := range []struct {
		name string
		v    *bool
	}{{"overridePath", m.OverridePath}, {"skipFallback", m.SkipFallback}} {
		if f.v != nil {
			text += fmt.Sprintf("; %s: %t", f.name, *f.v)
		}
	}
	return text
}

// moreHosts is the row that stands for the hosts the text report leaves out.
func moreHosts(n int) string {
	return "and " + report.Count(n, "more host") + " (-o json lists every one)"
}

// shorten cuts s after n characters, saying how long it was, as the
// chart's messages cut a long value.
func shorten(s string, n int) string {
	count := utf8.RuneCountInString(s)
	if count <= n {
		return s
	}
	return fmt.Sprintf("%s...(%d characters)", string([]rune(s)[:n]), count)
}

// goldenImport says what a golden's import was verified with.
func goldenImport(certConfigMap, checksum string) string {
	var parts []string
	if certConfigMap != "" {
		parts = append(parts, "trusting the CA in ConfigMap "+golden.Namespace+"/"+certConfigMap)
	}
	if checksum != "" {
		parts = append(parts, "checksum "+checksum+" (CDI verifies it on import from v1.65.0 on; the catalog refuses it on an older CDI, but a catalog rendered where no CDI resource was readable left that unchecked)")
	}
	return strings.Join(parts, ", ")
}

// writeRefusalNotes writes, under a refusal in the chart's words, the
// schema's rule and the known key nearest to each unknown one.
func writeRefusalNotes(tb *table, schemaRefusal string, schemaOnly bool, suggestions []report.KeySuggestion) {
	switch {
	case schemaOnly:
		tb.row("chart says", "nothing: only values.schema.json refuses these values, the chart's own checks accept them")
	case schemaRefusal != "":
		tb.row("schema says", schemaRefusal+"  (values.schema.json, which refuses the same values first)")
	}
	for _, s := range suggestions {
		tb.row("did you mean", fmt.Sprintf("%s instead of %s?", withPath(s.Path, s.Nearest), s.Path))
	}
}

// withPath is the path of a key with its last step replaced by key.
func withPath(path, key string) string {
	if i := strings.LastIndexAny(path, ".]"); i >= 0 {
		if path[i] == ']' {
			return path[:i+1] + "." + key
		}
		return path[:i+1] + key
	}
	return key
}

// BehindText is one way a pool is behind, as the text reports write it:
// what moves, from what it runs to what is offered, and what offers it.
func BehindText(b report.BehindReason) string {
	what := map[string]string{
		report.BehindCatalogPatch:    "Talos",
		report.BehindChartDefault:    "Talos",
		report.BehindKubernetesPatch: "Kubernetes",
		report.BehindFactory:         "factory",
	}[b.Kind]
	if what == "" {
		what = b.Kind
	}
	return fmt.Sprintf("%s %s -> %s: %s (%s)", what, b.From, b.To, b.Detail, b.Kind)
}
