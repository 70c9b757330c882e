package report

import (
	"os"
	"runtime/debug"
	"testing"
)

// Overlapping plans keep the plan's target until the last ends, then the
// target found before is back.
func TestWithPlanGCRestoresAfterTheLast(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set: withPlanGC leaves the target alone")
	}
	before := debug.SetGCPercent(90)
	defer debug.SetGCPercent(before)
	endA := withPlanGC()
	endB := withPlanGC()
	if got := debug.SetGCPercent(planGCPercent); got != planGCPercent {
		t.Fatalf("during two plans the target is %d, want %d", got, planGCPercent)
	}
	endA()
	if got := debug.SetGCPercent(planGCPercent); got != planGCPercent {
		t.Fatalf("with one plan still going the target is %d, want %d", got, planGCPercent)
	}
	endB()
	if got := debug.SetGCPercent(90); got != 90 {
		t.Fatalf("after both plans the target is %d, want the 90 found before", got)
	}
}
