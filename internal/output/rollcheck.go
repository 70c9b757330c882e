package output

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/cozystack/golden-worker-images/internal/report"
)

func writeRollText(out *bytes.Buffer, r *report.RollReport, o Options) {
	head := newTable(o)
	head.raw("base     " + r.Base)
	head.raw("head     " + r.Head)
	head.raw("cluster  " + r.Cluster)
	head.raw("")
	head.write(out)
	tb := newTable(o)
	baseColumn := "MACHINE TEMPLATE AT BASE"
	if r.Deployed {
		baseColumn = "RUNNING TEMPLATE"
	}
	tb.row("VALUES", baseColumn, "AT HEAD", "ROLL")
	for _, p := range r.Pools {
		tb.row(p.Values, sideName(p.Base), sideName(p.Head), p.Status)
		switch {
		case p.Base.Refusal != "" && p.Base.Refusal == p.Head.Refusal:
			tb.wrap("    refused at base and head (refused today too, so the upgrade changes nothing for it): " + p.Base.Refusal)
		default:
			if p.Base.Refusal != "" {
				tb.wrap("    refused at base: " + p.Base.Refusal)
			}
			if p.Head.Refusal != "" {
				tb.wrap("    refused at head: " + p.Head.Refusal)
			}
		}
		if len(p.Diff) > 0 {
			tb.raw(fmt.Sprintf("    template body, first change at line %d:", p.FirstDiffLine))
			for _, l := range p.Diff {
				tb.raw("      " + l)
			}
		}
		if len(p.OtherChanges) > 0 {
			tb.raw("    also changes (never rolls): " + strings.Join(p.OtherChanges, ", "))
		}
		if p.Unresolved != "" {
			tb.wrap("    not checked: " + p.Unresolved)
		}
		for _, b := range p.Behind {
			tb.wrap("    behind at head: " + BehindText(b))
		}
		for _, u := range p.UpstreamDefaults {
			tb.wrap("    upstream's default: " + UpstreamDefaultText(u))
		}
	}
	tb.write(out)
	if len(r.Ignored) > 0 {
		var ignored table
		ignored.raw("")
		writeIgnored(&ignored, r.Ignored)
		ignored.write(out)
	}
	s := r.Summary
	fmt.Fprintf(out, "\n%s: %d roll, %d refused at head, %d refused at base only, %d refused at both (not counted against the upgrade), %d no roll", report.Count(s.Pools, "pool"), s.Rolls, s.RefusedAtHead, s.RefusedAtBase, s.RefusedAtBoth, s.NoRoll)
	if s.NotDeployed > 0 {
		fmt.Fprintf(out, ", %d not deployed (created by the upgrade)", s.NotDeployed)
	}
	if s.Unresolved > 0 {
		fmt.Fprintf(out, ", %d not resolved (not checked)", s.Unresolved)
	}
	if s.Behind > 0 {
		fmt.Fprintf(out, "; %d behind what the head chart gives a new pool (the upgrade moves none of them; workerimage rollout does)", s.Behind)
	}
	if s.UpstreamDefaults > 0 {
		fmt.Fprintf(out, "; %d take upstream's defaults at head over what this chart gives them (each says so, with the fix)", s.UpstreamDefaults)
	}
	out.WriteString("\n")
}

func sideName(s report.RollSide) string {
	switch {
	case s.Refusal != "":
		return "(refused)"
	case s.MachineTemplate == "":
		return "(not deployed)"
	}
	return s.MachineTemplate
}

// UpstreamDefaultText says what a pool takes from upstream's defaults at
// head, instead of what, and the fix.
func UpstreamDefaultText(u report.UpstreamDefault) string {
	how := "upstream's ApplicationDefinition's default, in its values"
	if !u.Written {
		how = "upstream's chart's default, its values leaving it unset"
	}
	return fmt.Sprintf("%s %s (%s) instead of %s (%s); %s", u.Field, u.Value, how, u.Instead, u.InsteadFrom, u.Fix)
}
