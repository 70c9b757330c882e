package output

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/cozystack/golden-worker-images/internal/report"
)

func writeRollText(out *bytes.Buffer, r *report.RollReport) {
	var head table
	head.raw("base     " + r.Base)
	head.raw("head     " + r.Head)
	head.raw("cluster  " + r.Cluster)
	head.raw("")
	head.write(out)
	var tb table
	tb.row("VALUES", "MACHINE TEMPLATE AT BASE", "AT HEAD", "ROLL")
	for _, p := range r.Pools {
		tb.row(p.Values, sideName(p.Base), sideName(p.Head), p.Status)
		switch {
		case p.Base.Refusal != "" && p.Base.Refusal == p.Head.Refusal:
			tb.raw("    refused at base and head: " + p.Base.Refusal)
		default:
			if p.Base.Refusal != "" {
				tb.raw("    refused at base: " + p.Base.Refusal)
			}
			if p.Head.Refusal != "" {
				tb.raw("    refused at head: " + p.Head.Refusal)
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
			tb.raw("    not checked: " + p.Unresolved)
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
	fmt.Fprintf(out, "\n%s: %d roll, %d refused at head, %d refused at base only, %d no roll", report.Count(s.Pools, "pool"), s.Rolls, s.RefusedAtHead, s.RefusedAtBase, s.NoRoll)
	if s.Unresolved > 0 {
		fmt.Fprintf(out, ", %d not resolved (not checked)", s.Unresolved)
	}
	out.WriteString("\n")
}

func sideName(s report.RollSide) string {
	if s.Refusal != "" {
		return "(refused)"
	}
	return s.MachineTemplate
}
