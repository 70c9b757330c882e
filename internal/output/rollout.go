package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/cozystack/golden-worker-images/internal/rollout"
	yaml "go.yaml.in/yaml/v3"
)

// Rollout writes rollout's plan, with the catalog's values to paste when a
// golden is missing (as adopt writes them).
func Rollout(out *bytes.Buffer, r *rollout.RolloutPlan, o Options) {
	withValues := *r
	if r.Catalog != nil && r.Catalog.Changed {
		c := *r.Catalog
		c.Values = catalogValuesYAML(c)
		withValues.Catalog = &c
	}
	if !structured(out, &withValues, o) {
		writeRolloutText(out, &withValues, o)
	}
}

// RolloutEvent writes one event of a rollout under way: in JSON, one object
// on one line; in YAML, one document; in text, its line.
func RolloutEvent(out *bytes.Buffer, e rollout.RolloutEvent, o Options) {
	switch o.Format {
	case "json":
		raw, err := json.Marshal(e)
		if err != nil {
			fmt.Fprintf(out, `{"event":"error","message":%q}`+"\n", err.Error())
			return
		}
		out.Write(raw)
		out.WriteByte('\n')
	case "yaml":
		out.WriteString("---\n")
		writeYAML(out, e)
	default:
		tb := newTable(o)
		tb.wrap(e.Message)
		tb.write(out)
	}
}

func writeRolloutText(out *bytes.Buffer, r *rollout.RolloutPlan, o Options) {
	head := newTable(o)
	head.row("cluster", r.Cluster)
	head.row("pools", poolsRead(r.Chart, r.PoolChart))
	head.row("selected", fmt.Sprintf("%s: %s", report.Count(r.Selected, "pool"), selectionText(r.Selection)))
	head.row("target", targetText(r.Target))
	if r.TargetFrom != "" {
		head.row("", r.TargetFrom)
	}
	if k := r.TargetKnown; k != nil && len(k.Asked) > 0 {
		// Said only when a factory was asked: what a release no one else
		// names rests on.
		head.row("", fmt.Sprintf("Talos %s: named by no catalog entry, golden or chart default; asked %s", r.Target.TalosVersion, strings.Join(k.Asked, "; ")))
	}
	head.row("waves", fmt.Sprintf("%s of at most %s%s; with --apply each pool's HelmRelease spec.values is patched, then the wave waits for each HelmRelease Ready at its new generation and each MachineDeployment on its new template, every worker updated and ready, before the next", report.Count(len(r.Waves), "wave"), boundsText(r), boundsExceptText(r)))
	if r.Record != "" {
		head.row("record", "ConfigMap "+r.Record+": --apply adds each HelmRelease it patches (its UID, the generation written); a run waits only for the pools it holds as written")
	}
	if r.RecordIgnored != "" {
		head.row("", r.RecordIgnored)
	}
	head.write(out)

	body := newTable(o)
	for _, w := range r.Waves {
		body.raw("")
		body.raw(waveText(w))
		for _, g := range report.SortedKeys(w.ClonesPerGolden) {
			body.row("  golden", fmt.Sprintf("%s: %s in flight", g, report.Count(int(w.ClonesPerGolden[g]), "clone")))
		}
		if w.Alone != "" {
			body.row("  alone", w.Alone)
		}
		for _, p := range w.Pools {
			writeRolloutPool(&body, p, r.FactoryCommand)
		}
	}
	body.raw("")
	body.write(out)
	// Each list is a table of its own, so its columns align only with its own rows.
	for _, l := range []struct {
		title    string
		pools    []rollout.RolloutPool
		whenNone bool
	}{
		{"on the target already (skipped)", r.OnTarget, true},
		{"maxSurge put back after the last wave (an earlier run bounded their roll with it and stopped before putting it back)", r.Restore, false},
		{"blocked (the rollout will not start until each is fixed, or left out of the selection)", r.Blocked, true},
		{cannotMoveTitle(r.Strict), r.CannotMove, false},
		{"not known whether selected (not moved; fix them, then run again)", r.Unknown, false},
	} {
		if len(l.pools) == 0 && !l.whenNone {
			continue
		}
		list := newTable(o)
		writeRolloutList(&list, l.title, l.pools)
		list.write(out)
	}
	rest := newTable(o)
	if r.Catalog != nil && r.Catalog.Changed {
		rest.raw("")
		writeCatalogText(&rest, *r.Catalog)
	}
	writeUnread(&rest, r.UnreadNamespaces, "none of their pools is selected")
	writeIgnored(&rest, r.Ignored)
	rest.raw("")
	rest.write(out)

	if r.OtherFactoryPools > 0 {
		// A table of its own: the result line stays as scripts read it.
		factory := newTable(o)
		factory.row("factory", factorySummaryText(r))
		factory.write(out)
	}
	result := newTable(o)
	apart := ""
	if n := len(r.CannotMove); n == 1 {
		apart = "; 1 pool cannot move and is left where it is (above; --strict stops instead)"
	} else if n > 1 {
		apart = fmt.Sprintf("; %d pools cannot move and are left where they are (above; --strict stops instead)", n)
	}
	switch {
	case !r.CanStart && len(r.Blocked) > 0:
		result.row("result", fmt.Sprintf("will not start: %s blocked (above)", report.Count(len(r.Blocked), "pool")))
	case !r.CanStart:
		result.row("result", fmt.Sprintf("will not start: --strict, and %s cannot move (above)", report.Count(len(r.CannotMove), "pool")))
	case len(r.Waves) == 0:
		result.row("result", "nothing to do: every selected pool is on the target"+apart)
	default:
		result.row("result", fmt.Sprintf("can start: %s to move in %s; --apply runs it%s", report.Count(len(r.Pools()), "pool"), report.Count(len(r.Waves), "wave"), apart))
	}
	result.write(out)
}

// boundsText says what bounds a wave: pools, workers, clones per golden.
func boundsText(r *rollout.RolloutPlan) string {
	text := report.Count(r.WaveSize, "pool")
	if r.MaxWorkers > 0 {
		text += fmt.Sprintf(", %s replaced at once", report.Count(r.MaxWorkers, "worker"))
	}
	if r.MaxClones > 0 {
		text += fmt.Sprintf(", %s of one golden in flight", report.Count(r.MaxClones, "clone"))
	}
	return text
}

// boundsExceptText names the waves a pool has to itself because it alone is
// above a bound: those waves do not keep it, and the header says so.
func boundsExceptText(r *rollout.RolloutPlan) string {
	var alone []string
	for _, w := range r.Waves {
		if w.Alone != "" {
			alone = append(alone, fmt.Sprint(w.Wave))
		}
	}
	switch len(alone) {
	case 0:
		return ""
	case 1:
		return ", except wave " + alone[0] + ", whose one pool is above a bound on its own (below)"
	}
	return fmt.Sprintf(", except waves %s and %s, each a pool above a bound on its own (below)", strings.Join(alone[:len(alone)-1], ", "), alone[len(alone)-1])
}

// factoryText says that a pool will import from another factory than new
// pools get, and what that does where its workers cannot reach it.
func factoryText(o *rollout.OtherFactory, withCommand bool) string {
	text := fmt.Sprintf("imports from %s once moved, not from %s, where new pools import from (%s): if its workers cannot reach %s, they never boot and the wave waits out --timeout", o.ImageFactoryURL, o.Published, o.PublishedFrom, o.ImageFactoryURL)
	if !withCommand {
		return text + "; the factory line below moves both in one re-image"
	}
	return text + "; flavor and factory in one re-image: " + o.Command + factoryCAText(o)
}

// factoryCAText says what the command's --factory-ca file holds.
func factoryCAText(o *rollout.OtherFactory) string { return rollout.FactoryCAFileText(o) }

// factorySummaryText counts the pools that will import from another factory
// than new pools get, with the command that moves them all when one does.
func factorySummaryText(r *rollout.RolloutPlan) string {
	says := "each says so above"
	if r.OtherFactoryPools == 1 {
		says = "it says so above"
	}
	text := fmt.Sprintf("%s will import from another Image Factory than new pools do (%s); --strict does not stop for it", report.Count(r.OtherFactoryPools, "pool"), says)
	if r.OtherFactoryBlocked > 0 {
		text = fmt.Sprintf("%s would import from another Image Factory than new pools do; %s blocked for it (above): the catalog publishes the factory new pools import from", report.Count(r.OtherFactoryPools, "pool"), report.Count(r.OtherFactoryBlocked, "pool"))
	}
	if r.FactoryCommand == "" {
		return text + "; they get different factories, so each pool's command is above"
	}
	var first *rollout.OtherFactory
	for _, p := range append(r.Pools(), r.Blocked...) {
		if p.OtherFactory != nil {
			first = p.OtherFactory
			break
		}
	}
	return text + "; to move flavor and factory in one re-image, plan " + r.FactoryCommand + factoryCAText(first) + ", then add --apply"
}

func cannotMoveTitle(strict bool) string {
	if strict {
		return "cannot move (--strict: the rollout will not start until each is fixed, or left out with --exclude)"
	}
	return "cannot move (left where they are, each with its fix; the rest moves)"
}

func selectionText(s rollout.RolloutSelection) string {
	var parts []string
	if s.Namespace != "" {
		parts = append(parts, "namespace "+s.Namespace)
	}
	if len(s.Pools) > 0 {
		parts = append(parts, "pools "+strings.Join(s.Pools, ", "))
	}
	if s.Flavor != "" {
		parts = append(parts, "booting "+s.Flavor)
		if _, version, _ := strings.Cut(s.Flavor, "/"); strings.Count(version, ".") == 1 {
			parts[len(parts)-1] += " (any patch)"
		}
	}
	if len(s.Exclude) > 0 {
		parts = append(parts, "except "+strings.Join(s.Exclude, ", "))
	}
	if s.Behind {
		parts = append(parts, "behind")
	}
	if len(parts) == 0 {
		return "every pool of the cluster"
	}
	return strings.Join(parts, ", ")
}

func targetText(t rollout.RolloutTarget) string {
	var parts []string
	if t.TalosVersion != "" {
		flavor := "Talos " + t.TalosVersion
		if t.SchematicID != "" {
			flavor += ", schematic " + t.SchematicID
		} else {
			flavor += ", each pool's own schematic"
		}
		parts = append(parts, flavor)
	}
	if t.Builtin {
		parts = append(parts, "clone a golden (osImage.builtin)")
	}
	if t.FactoryURL != "" {
		factory := "import over HTTP from " + t.FactoryURL
		if t.FactoryCAFrom != "" {
			factory += ", trusting the CA of " + t.FactoryCAFrom
		}
		parts = append(parts, factory)
	}
	return strings.Join(parts, "; ")
}

func waveText(w rollout.RolloutWave) string {
	line := fmt.Sprintf("wave %d: %s, %s to replace", w.Wave, report.Count(len(w.Pools), "pool"), report.Count(int(w.WorkersToReplace), "worker"))
	if w.WorkersAtOnce > 0 {
		line += fmt.Sprintf(", %d at once", w.WorkersAtOnce)
	}
	if w.ClonesInFlight > 0 {
		line += fmt.Sprintf(", %s in flight at once taking %s in cozy-public", report.Count(int(w.ClonesInFlight), "clone"), w.TransientStorage)
	} else {
		line += ", no clone"
	}
	if w.HTTPImports > 0 {
		line += fmt.Sprintf(", %s (one download of the image each)", report.Count(int(w.HTTPImports), "HTTP import"))
	}
	return line
}

func writeRolloutPool(tb *table, p rollout.RolloutPool, factoryCommand string) {
	workers := report.Count(int(p.Workers), "worker")
	if !p.MachineDeployment {
		workers = "no MachineDeployment yet"
	}
	if p.MachineDeployment && p.ToReplace != p.Workers {
		workers += fmt.Sprintf(" (%d left to replace)", p.ToReplace)
	}
	tb.raw(fmt.Sprintf("  pool %s (%s): %s, %s", p.HelmRelease, p.Pool, workers, p.State))
	if p.State == rollout.StateRolling {
		tb.row("    now", p.Reason)
	}
	for _, b := range p.Behind {
		tb.row("    behind", fmt.Sprintf("%s %s -> %s (%s)", b.Kind, b.From, b.To, b.Detail))
	}
	if p.From != nil && p.To != nil {
		tb.row("    disk", diskText(p.From)+" -> "+diskText(p.To))
	}
	for _, c := range p.Changes {
		tb.row("    change", changeText(c))
	}
	if p.ValuesChange != nil {
		tb.row("    values", patchText(p.ValuesChange))
	}
	running := ""
	if r := p.MachineTemplate.Running; r != "" && r != p.MachineTemplate.Current {
		running = "  (its MachineDeployment runs " + r + ")"
	}
	tb.row("    template", report.OrNone(p.MachineTemplate.Current)+" -> "+report.OrNone(p.MachineTemplate.Target)+running)
	if r := p.RollingUpdate; r != nil && p.WorkersAtOnce > 0 {
		tb.row("    rolls", fmt.Sprintf("%s at a time: its rolling update's maxSurge %d and maxUnavailable %d", report.Count(int(p.WorkersAtOnce), "worker"), r.MaxSurge, r.MaxUnavailable))
	}
	if p.ClonesInFlight > 0 {
		strategy := ""
		if p.CloneStrategy != "" {
			strategy = ", clone strategy " + p.CloneStrategy
		}
		tb.row("    clones", fmt.Sprintf("%d at a time, each a %s claim in cozy-public while CDI clones it%s", p.ClonesInFlight, report.OrNone(p.DiskSize), strategy))
	}
	if p.Note != "" {
		tb.row("    note", p.Note)
	}
	if s := p.SurgeRestore; s != nil && p.State == rollout.StateMoves {
		tb.row("    surge", s.Text())
	} else if s != nil {
		tb.row("    surge", s.ResumedText())
	}
	if o := p.OtherFactory; o != nil {
		tb.row("    factory", factoryText(o, o.Command != "" && o.Command != factoryCommand))
	}
}

func diskText(f *rollout.RolloutFlavor) string {
	if f.Path == "clone" {
		return "clone of " + f.Golden
	}
	url := ""
	if f.ImageFactoryURL != nil {
		url = " from " + f.ImageFactoryURL.Value
	}
	return fmt.Sprintf("HTTP import of %s/%s%s", f.SchematicID.Value, f.Version.Value, url)
}

func changeText(c rollout.ValueChange) string {
	if c.Removed {
		return fmt.Sprintf("%s removed (%s)", c.Field, c.Source)
	}
	return fmt.Sprintf("%s: %s -> %s  (it came from %s)", c.Field, report.OrNone(c.From), c.To, c.Source)
}

func writeRolloutList(tb *table, title string, pools []rollout.RolloutPool) {
	if len(pools) == 0 {
		tb.raw(title + ": none")
		return
	}
	tb.raw(title + ":")
	for _, p := range pools {
		tb.row("  pool", p.HelmRelease, p.State+": "+p.Reason)
		if p.ValuesChange != nil {
			tb.row("", "", "its values change: "+patchText(p.ValuesChange))
		}
		if s := p.SurgeRestore; s != nil {
			tb.row("", "", "its maxSurge: "+s.ResumedText())
		}
	}
}

// patchText writes a merge patch on one line, as flow YAML from the YAML
// library: every string reads back as itself (yamlString), null removes.
func patchText(patch map[string]any) string {
	return strings.TrimSuffix(yamlText(patchNode(patch)), "\n")
}

func patchNode(v any) *yaml.Node {
	switch v := v.(type) {
	case map[string]any:
		m := yamlMap(true)
		for _, k := range report.SortedKeys(v) {
			m.Content = append(m.Content, yamlString(k), patchNode(v[k]))
		}
		return m
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
	case string:
		return yamlString(v)
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Value: fmt.Sprint(v)}
}
