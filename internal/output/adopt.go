package output

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/cozystack/golden-worker-images/internal/report"
)

// outcomeText is how the text report names an outcome, with what to do.
func outcomeText(p report.AdoptPool) string {
	d := p.Switched
	schematicID, version, _ := p.Boots()
	switch p.Outcome {
	case report.OutcomeReady:
		return "ready: the switched pool renders and clones " + p.Golden
	case report.OutcomeImporting:
		return fmt.Sprintf("golden importing: the switched pool renders; CDI holds its disks until %s (phase %s) has imported", p.Golden, report.OrNone(d.GoldenPhase))
	case report.OutcomeNeedsEntry:
		return fmt.Sprintf("needs a catalog entry: add {schematicID: %s, version: %s} to the catalog's images (below), wait for its golden to import", schematicID, version)
	case report.OutcomeNeedsPerClass:
		return fmt.Sprintf("needs a per-class golden: add %q to the additionalStorageClasses of the catalog entry {schematicID: %s, version: %s} (golden %s, below)", p.Class(), schematicID, version, d.GoldenChoice.PerClassGolden)
	}
	return "refused: the chart refuses the switched pool"
}

// valuesText writes a values change on one line, as YAML from the YAML
// library, every string reading back as itself (yamlString).
func valuesText(change map[string]any) string {
	builtin := change["osImage"].(map[string]any)["builtin"].(map[string]any)
	fields := yamlMap(true)
	for _, k := range report.SortedKeys(builtin) {
		fields.Content = append(fields.Content, yamlString(k), yamlString(fmt.Sprint(builtin[k])))
	}
	return strings.TrimSuffix(yamlText(yamlMap(false, "osImage", yamlMap(true, "builtin", fields))), "\n")
}

func writeAdoptText(out *bytes.Buffer, r *report.AdoptReport, o Options) {
	head := newTable(o)
	head.raw("cluster  " + r.Cluster)
	head.raw("pools    " + poolsRead(r.Chart, r.PoolChart))
	head.raw("switch   each pool that imports over HTTP, rendered by the chart against this cluster with osImage.builtin booting the flavor it boots now;")
	head.raw("         a switch re-images (rolls) that pool once, and every other pool keeps its KubevirtMachineTemplate")
	head.raw("catalog  a new entry imports from " + r.Catalog.URL.Value + "  (" + r.Catalog.URL.Source + "), never from a URL a pool chose")
	if f := r.Catalog.TenantFactory; f != nil {
		head.raw("tenants  new pools are given the Image Factory " + f.Value + "  (" + f.Source + "); an entry importing from another says so")
	}
	head.write(out)
	// Each section is a table of its own, so its columns align only with its own rows.
	flavors := newTable(o)
	if len(r.Flavors) == 0 {
		flavors.raw("")
		flavors.raw("no pool imports over HTTP")
	}
	for _, f := range r.Flavors {
		flavors.raw("")
		flavors.raw(fmt.Sprintf("flavor schematicID %s, version %s, image factory %s  (golden %s)", f.SchematicID, f.Version, f.ImageFactoryURL, f.Golden))
		for _, c := range f.Classes {
			workers := int64(0)
			for _, p := range c.Pools {
				workers += p.Workers
			}
			name := "class " + c.Class
			if c.Class == "" {
				name = "class not known (storageClass \"\" and no cluster default)"
			}
			flavors.raw(fmt.Sprintf("%s: %s, %s", name, report.Count(len(c.Pools), "pool"), report.Count(int(workers), "worker")))
			for _, p := range c.Pools {
				writeAdoptPool(&flavors, p)
			}
		}
	}
	flavors.raw("")
	writeCatalogText(&flavors, r.Catalog)
	flavors.raw("")
	flavors.write(out)

	s := r.Savings
	savings := newTable(o)
	savings.row("savings", fmt.Sprintf("%s import over HTTP: %d %s today, %d %s refused today (fix %s first; workerimage plan shows why)",
		report.Count(s.HTTPPools, "pool"), s.RenderToday, verb(s.RenderToday, "renders", "render"), s.RefusedToday, verb(s.RefusedToday, "is", "are"), verb(s.RefusedToday, "it", "them")))
	savings.row("", "each worker that switches is one HTTP download of its Talos image not made; bytes are counted at the golden's storage, the size CDI writes per import (the download itself is the compressed image, smaller)")
	savings.row("", fmt.Sprintf("now: %s ready, %s not made (their workers), %s%s",
		report.Count(s.ReadyPools, "pool"), report.Count(int(s.ImportsAvoidedNow), "download"), bytesText(s.BytesAvoidedNow), unknownNote(s.ImportsOfUnknownSize)))
	savings.row("", fmt.Sprintf("later: %s waiting for a golden, %s not made once their goldens exist, minus %s to add (one download each, %s%s)",
		report.Count(s.WaitingPools, "pool"), report.Count(int(s.ImportsAvoidedLater), "download"), report.Count(s.GoldensToAdd, "golden"), bytesText(s.GoldenBytesToAdd), unknownGoldens(s.GoldensOfUnknownSize)))
	savings.row("", fmt.Sprintf("net: %s not made once every pool above has switched (%d now + %d later - %d goldens), then one more per worker that joins a switched pool",
		report.Count(int(s.NetImportsAvoided), "download"), s.ImportsAvoidedNow, s.ImportsAvoidedLater, s.GoldensToAdd))
	savings.raw("")
	savings.write(out)

	lists := newTable(o)
	writePoolList(&lists, "pools already cloning a golden", r.Cloning, func(p report.PoolPin) []string {
		note := "golden " + p.Golden
		if p.Refusal != "" {
			note += "; its render is refused, see workerimage plan"
		}
		return []string{"  pool", p.HelmRelease, p.Pool, note}
	})
	writePoolList(&lists, "pools that import over HTTP and are refused today (fix them first; workerimage plan shows why)", r.RefusedToday, func(p report.PoolPin) []string {
		return []string{"  pool", p.HelmRelease, p.Pool, "refused: " + p.Refusal}
	})
	writePoolList(&lists, "pools not resolved (their values are refused before a disk source resolves)", r.Unresolved, func(p report.PoolPin) []string {
		if p.Unresolved != "" {
			return []string{"  pool", p.HelmRelease, "values not resolved: " + p.Unresolved}
		}
		return []string{"  pool", p.HelmRelease, "refused: " + p.Refusal}
	})
	writeUnread(&lists, r.UnreadNamespaces, "adopt says nothing of their pools")
	writeIgnored(&lists, r.Ignored)
	lists.write(out)
}

// bytesText spells a quantity of bytes; 0 has no unit to say so.
func bytesText(q string) string {
	if q == "0" {
		return "0 bytes"
	}
	return q
}

// verb picks the singular or plural word for n.
func verb(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func unknownGoldens(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", plus %s of unknown size", report.Count(n, "golden"))
}

func unknownNote(n int64) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", plus %s of unknown size", report.Count(int(n), "import"))
}

func writePoolList(tb *table, title string, pools []report.PoolPin, row func(report.PoolPin) []string) {
	if len(pools) == 0 {
		tb.raw(title + ": none")
		return
	}
	tb.raw(title + ":")
	for _, p := range pools {
		tb.row(row(p)...)
	}
}

func writeAdoptPool(tb *table, p report.AdoptPool) {
	workers := report.Count(int(p.Workers), "worker")
	if !p.MachineDeployment {
		workers = "no MachineDeployment yet"
	}
	tb.raw(fmt.Sprintf("  pool %s (%s): %s, autoscaler %s to %s", p.HelmRelease, p.Pool, workers, p.MinReplicas, p.MaxReplicas))
	tb.row("    outcome", outcomeText(p))
	if p.Refusal != "" {
		tb.row("    refusal", p.Refusal)
	}
	// A pool waiting for its golden has no golden to check against yet.
	if d := p.Switched; d != nil && p.Outcome != report.OutcomeNeedsEntry && p.Outcome != report.OutcomeNeedsPerClass {
		for _, c := range d.FallbackChecks {
			if c.Outcome != "refused" && c.Outcome != "skipped" {
				continue
			}
			detail := c.Detail
			if c.Outcome == "refused" && detail == p.Refusal {
				detail = "the refusal above"
			}
			tb.row("    check", fmt.Sprintf("%d %s", c.Refusal, c.Check), c.Outcome, detail)
		}
	}
	change := valuesText(p.ValuesChange)
	if p.Replaces != "" {
		change += "  (replaces its " + p.Replaces + ")"
	}
	if p.OtherImageFactoryURL {
		_, _, bootsFrom := p.Boots()
		tb.row("    source", fmt.Sprintf("its golden imports from %s; the pool boots from %s today (%s): the switch changes where its image comes from, decide before switching", p.GoldenImageFactoryURL, bootsFrom, p.ImageSources.ImageFactoryURL))
	}
	tb.row("    values", change)
	next := p.MachineTemplate.New
	if next == "" {
		next = "(renamed once the switched pool renders)"
	}
	tb.row("    template", p.MachineTemplate.Current+" -> "+next+"  (the switch rolls this pool once)")
	size := p.BytesPerImport
	if size != report.UnknownBytes {
		size += " each (the golden's size)"
	} else {
		size = "bytes per import unknown (no golden to read a size from yet)"
	}
	when := "once it can switch"
	switch p.Outcome {
	case report.OutcomeReady:
		when = "now"
	case report.OutcomeImporting:
		when = "once its golden has imported"
	}
	tb.row("    saves", fmt.Sprintf("%s %s (its workers), then 1 per worker that joins; %s", report.Count(int(p.Workers), "HTTP import"), when, size))
}
