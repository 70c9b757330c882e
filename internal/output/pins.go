package output

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/cozystack/golden-worker-images/internal/golden"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/xlab/treeprint"
	"k8s.io/apimachinery/pkg/util/validation"
)

// writeGoldenPins writes one golden: its state and verdict, its pools and disks.
// ns is the namespace the report is narrowed to (pins -n), "" for none.
func writeGoldenPins(tb *table, g report.GoldenPins, ns string) {
	state := g.FoundAs
	if g.Phase != "" {
		state += ", phase " + g.Phase
	}
	if g.FoundAs == "absent" {
		state = "absent from " + golden.Namespace
	}
	if g.Class != "" {
		state += ", per-class golden for class " + g.Class
	}
	if g.Retiring {
		state += ", retiring"
	}
	for _, what := range g.ImportedWithout {
		state += ", imported without " + map[string]string{"CA": "the CA the catalog now holds", "checksum": "a checksum"}[what]
	}
	verdict := fmt.Sprintf("in use: %s, %s", report.Count(len(g.Pools), "pool"), report.Count(len(g.Disks), "disk"))
	if len(g.NoPoolDisks) > 0 {
		verdict += fmt.Sprintf(", %s of no pool", report.Count(len(g.NoPoolDisks), "disk"))
	}
	if len(g.Templates) > 0 {
		verdict += ", " + report.Count(len(g.Templates), "KubevirtMachineTemplate")
	}
	// Needed though nothing uses it yet (the report sets these only then): never "safe to delete".
	var needed []string
	if g.NewPoolsDefault != "" {
		needed = append(needed, "new pools' default ("+g.NewPoolsDefault+")")
	}
	for _, r := range g.RolloutTargets {
		needed = append(needed, "a rollout's target (ConfigMap "+r+")")
	}
	if g.NewerThanEveryPool {
		needed = append(needed, "newer than every pool on its schematic and minor (a rollout's next target)")
	}
	if len(needed) > 0 {
		verdict = "in use: " + strings.Join(needed, "; ")
	}
	switch {
	case g.SafeToDelete:
		verdict = "safe to delete: no pool declares it, no disk or template uses it"
	case g.NotConcluded:
		verdict = "not concluded: nothing read uses it, but some namespaces' pools could not be read (below)"
	}
	if ns != "" && !g.SafeToDelete && !g.NotConcluded {
		verdict += " in namespace " + ns
		if len(g.Pools)+len(g.Disks)+len(g.NoPoolDisks)+len(g.Templates) == 0 {
			verdict += "; in use by other namespaces (workerimage pins without -n lists by what)"
		}
	}
	tb.wrap(fmt.Sprintf("%s  (%s)  %s", printable(g.Name), state, verdict))
	if g.FoundAs != "absent" {
		// Raw, so the pool and disk rows keep their columns.
		tb.raw("  imported from " + orNotRecorded(g.SourceURL))
	}
	for _, p := range g.Pools {
		note := report.Count(p.Disks, "disk")
		if p.Disks == 0 {
			note = "no disk cloned from it yet"
		}
		if p.Refusal != "" {
			note += "; its render is refused, see workerimage plan"
		}
		tb.row("  pool", p.HelmRelease, p.Pool, note)
	}
	for _, d := range g.Disks {
		tb.row("  disk", d.Namespace+"/"+d.Name, report.OrNone(d.Pool), d.Clone)
	}
	for _, d := range g.NoPoolDisks {
		tb.row("  disk", d.Namespace+"/"+d.Name, "(no pool)", noPoolReason(d)+"; "+d.Clone)
	}
	for _, tpl := range g.Templates {
		ns, rest, _ := strings.Cut(tpl, "/")
		_, name, _ := strings.Cut(rest, "/")
		tb.row("  template", ns+"/"+name, "KubevirtMachineTemplate cloning it")
	}
	// Raw lines, so the pool and disk rows keep their columns.
	for i, step := range g.DeleteSteps {
		label := "             "
		if i == 0 {
			label = "  to delete: "
		}
		tb.wrap(fmt.Sprintf("%s%d. %s", label, i+1, step))
	}
	if g.RetireValues != nil {
		// Raw YAML to apply as it is.
		for _, l := range strings.Split(strings.TrimSuffix(yamlText(valuesNode(g.RetireValues)), "\n"), "\n") {
			tb.raw(l)
		}
	}
	if g.Retiring {
		if len(g.Blockers) == 0 {
			tb.raw("  retiring: nothing blocks its deletion; drop its entry from the catalog's images and Helm deletes it")
		} else {
			tb.raw(fmt.Sprintf("  retiring: its entry cannot be dropped yet (the catalog refuses), still used by %s:", report.Count(len(g.Blockers), "object")))
			noPool := map[string]bool{}
			for _, b := range g.BlockersWithoutPool {
				noPool[b] = true
			}
			for _, b := range g.Blockers {
				if noPool[b] {
					tb.row("  blocks", b, "belongs to no pool using the golden: delete it once nothing needs it")
				} else {
					tb.row("  blocks", b)
				}
			}
		}
	}
}

func writePinsText(out *bytes.Buffer, r *report.PinsReport, o Options) {
	tb := newTable(o)
	tb.raw("cluster  " + r.Cluster)
	in := ""
	if r.Namespace != "" {
		in = " in namespace " + r.Namespace
	}
	tb.raw("pools    " + report.Count(r.PoolsRead, "pool") + in + " " + poolsRead(r.Chart, r.PoolChart))
	if r.Golden != "" {
		tb.raw("golden   " + r.Golden + " only (the pools not resolved are listed too: any of them may use it)")
	}
	tb.raw("")
	if len(r.Goldens) == 0 {
		tb.raw("no golden in " + golden.Namespace)
	}
	byName := map[string]report.GoldenPins{}
	for _, g := range r.Goldens {
		byName[g.Name] = g
	}
	for i, f := range r.Flavors {
		if i > 0 {
			tb.raw("")
		}
		if f.SchematicID != "" {
			tb.raw(fmt.Sprintf("flavor schematicID %s, version %s", f.SchematicID, f.Version))
		} else {
			tb.raw("flavor " + printable(f.Flavor) + " (not a name the catalog builds)")
		}
		for _, n := range f.Goldens {
			writeGoldenPins(&tb, byName[n], r.Namespace)
		}
		// The fix depends on whether the flavor has a catalog entry at all,
		// which its plain golden shows.
		entry := byName[f.Flavor].FoundAs != "absent" && byName[f.Flavor].Name != ""
		for _, c := range f.ClassesWithoutGolden {
			switch {
			case c.Class == "":
				tb.raw("pools whose class is not known (storageClass \"\" and no cluster default) have no golden of this flavor; their renders are refused:")
			case entry:
				tb.raw(fmt.Sprintf("class %s has no golden of this flavor: its pools' renders are refused until the catalog entry lists %q in additionalStorageClasses (golden %s):", c.Class, c.Class, c.Golden))
			default:
				tb.raw(fmt.Sprintf("class %s has no golden of this flavor, which has no plain golden either: its pools' renders are refused until the catalog holds an entry for the flavor on %s:", c.Class, c.Class))
			}
			for _, p := range c.Pools {
				tb.row("  pool", p)
			}
		}
	}
	tb.raw("")
	switch {
	case !r.Concludes():
		tb.raw(fmt.Sprintf("unused goldens (safe to delete): not concluded while the pools of %s could not be read (below)", report.Count(len(r.UnreadNamespaces), "namespace")))
	case len(r.Unused) == 0:
		tb.raw("unused goldens (safe to delete): none")
	default:
		tb.raw("unused goldens (safe to delete):")
		for _, n := range r.Unused {
			tb.raw("  " + n)
		}
	}
	if len(r.HostAssisted) == 0 {
		tb.raw("disks that fell back to a host-assisted copy: none")
	} else {
		tb.raw("disks that fell back to a host-assisted copy:")
		for _, d := range r.HostAssisted {
			pool := report.OrNone(d.Pool)
			if d.NoPool {
				pool = "(no pool)"
			}
			tb.row("  disk", d.Namespace+"/"+d.Name, pool, d.Clone)
		}
	}
	if len(r.NoPoolDisks) > 0 {
		tb.raw("disks that belong to no pool (they still keep their golden from being deleted; delete them once nothing needs them):")
		for _, d := range r.NoPoolDisks {
			tb.row("  disk", d.Namespace+"/"+d.Name, "(no pool)", "names golden "+printable(d.Golden)+"; "+noPoolReason(d))
		}
	}
	if len(r.HTTPPools) > 0 {
		tb.raw("pools that import over HTTP (no golden):")
		for _, p := range r.HTTPPools {
			tb.row("  pool", p.HelmRelease, p.Pool, "")
		}
	}
	if len(r.PoolsBehind) > 0 {
		tb.raw("pools behind what a new pool gets (a chart release moves none of them; workerimage rollout does):")
		for _, p := range r.PoolsBehind {
			for i, b := range p.Behind {
				label, id := "", ""
				if i == 0 {
					label, id = "  pool", p.HelmRelease
				}
				tb.row(label, id, BehindText(b))
			}
		}
	}
	if len(r.Unresolved) > 0 {
		tb.raw("pools not resolved (their values are missing or refused before a disk source resolves; check them before deleting):")
		for _, p := range r.Unresolved {
			if p.Unresolved != "" {
				tb.row("  pool", p.HelmRelease, "values not resolved: "+p.Unresolved)
			} else {
				tb.row("  pool", p.HelmRelease, "refused: "+p.Refusal)
			}
		}
	}
	if len(r.CAProblems) > 0 {
		tb.raw("catalog CAs with certificates CDI's importer cannot use as a CA (goldens imported with them from now on may fail TLS; fix the catalog's imageFactoryCA):")
		for _, c := range r.CAProblems {
			for _, p := range c.Problems {
				tb.raw("  ConfigMap " + c.ConfigMap + ": " + p)
			}
		}
	}
	writeUnread(&tb, r.UnreadNamespaces, "what their pools use is not known, so no golden is called safe to delete and pins exits 2")
	writeIgnored(&tb, r.Ignored)
	tb.write(out)
}

// noPoolReason says why a disk belongs to no pool. The annotation is anyone's
// text, so it is quoted.
func noPoolReason(d report.DiskPin) string {
	if d.Pool == "" {
		return "no pool annotation"
	}
	return fmt.Sprintf("its pool annotation names %q, which is no MachineDeployment in %s", d.Pool, d.Namespace)
}

// printable writes a name read from an annotation as it is when it is a plain
// object name, quoted otherwise, so no text can start a line of the report.
func printable(s string) string {
	if s != "" && len(validation.IsDNS1123Subdomain(s)) == 0 {
		return s
	}
	return strconv.Quote(s)
}

// writePinsTree draws the goldens of cozy-public, each with the pools whose
// values resolve to it, their disks and the templates cloning it (kubectl's
// plugins draw trees with the same library, github.com/xlab/treeprint).
func writePinsTree(out *bytes.Buffer, r *report.PinsReport) {
	root := treeprint.NewWithRoot(TermSafe(golden.Namespace + " (" + r.Cluster + ")"))
	for _, g := range r.Goldens {
		state := g.FoundAs
		if g.Phase != "" {
			state += ", phase " + g.Phase
		}
		if g.FoundAs == "absent" {
			state = "absent"
		}
		verdict := "in use"
		if g.SafeToDelete {
			verdict = "safe to delete"
		}
		gb := root.AddBranch(TermSafe(fmt.Sprintf("golden %s  (%s)  %s", g.Name, state, verdict)))
		owned := map[int]bool{}
		for _, p := range g.Pools {
			pb := gb.AddBranch(TermSafe(fmt.Sprintf("pool %s (%s)", p.HelmRelease, p.Pool)))
			for i, d := range g.Disks {
				if d.Namespace == p.Namespace && d.Pool == p.Pool {
					owned[i] = true
					pb.AddNode(TermSafe(fmt.Sprintf("disk %s/%s  %s", d.Namespace, d.Name, d.Clone)))
				}
			}
		}
		for i, d := range g.Disks {
			if !owned[i] {
				gb.AddNode(TermSafe(fmt.Sprintf("disk %s/%s  pool %s (its values resolve to another golden)  %s", d.Namespace, d.Name, report.OrNone(d.Pool), d.Clone)))
			}
		}
		for _, d := range g.NoPoolDisks {
			gb.AddNode(TermSafe(fmt.Sprintf("disk %s/%s  (no pool: %s)  %s", d.Namespace, d.Name, noPoolReason(d), d.Clone)))
		}
		for _, tpl := range g.Templates {
			ns, rest, _ := strings.Cut(tpl, "/")
			_, name, _ := strings.Cut(rest, "/")
			gb.AddNode(TermSafe("template " + ns + "/" + name))
		}
	}
	if len(r.HTTPPools) > 0 {
		hb := root.AddBranch("pools that import over HTTP (no golden)")
		for _, p := range r.HTTPPools {
			hb.AddNode(TermSafe(fmt.Sprintf("pool %s (%s)", p.HelmRelease, p.Pool)))
		}
	}
	if len(r.PoolsBehind) > 0 {
		bb := root.AddBranch("pools behind what a new pool gets (workerimage rollout moves them)")
		for _, p := range r.PoolsBehind {
			pb := bb.AddBranch(TermSafe("pool " + p.HelmRelease))
			for _, b := range p.Behind {
				pb.AddNode(TermSafe(BehindText(b)))
			}
		}
	}
	if len(r.Unresolved) > 0 {
		ub := root.AddBranch("pools not resolved (check them before deleting)")
		for _, p := range r.Unresolved {
			ub.AddNode(TermSafe("pool " + p.HelmRelease))
		}
	}
	out.WriteString(root.String())
}
