package report

import (
	"math"
	"os"
	"runtime/debug"
	"testing"
)

// Overlapping plans keep the plan's target and memory limit until the last
// ends, then the target and limit found before are back.
func TestWithPlanGCRestoresAfterTheLast(t *testing.T) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOGC or GOMEMLIMIT is set: withPlanGC leaves it alone")
	}
	before := debug.SetGCPercent(90)
	defer debug.SetGCPercent(before)
	beforeLimit := debug.SetMemoryLimit(3 << 30)
	defer debug.SetMemoryLimit(beforeLimit)
	during := func(when string) {
		t.Helper()
		if got := debug.SetGCPercent(planGCPercent); got != planGCPercent {
			t.Fatalf("%s the target is %d, want %d", when, got, planGCPercent)
		}
		if got := debug.SetMemoryLimit(-1); got != planMemoryLimit {
			t.Fatalf("%s the memory limit is %d, want %d", when, got, planMemoryLimit)
		}
	}
	endA := WithPlanGC()
	endB := WithPlanGC()
	during("during two plans")
	endA()
	during("with one plan still going")
	endB()
	if got := debug.SetGCPercent(90); got != 90 {
		t.Fatalf("after both plans the target is %d, want the 90 found before", got)
	}
	if got := debug.SetMemoryLimit(-1); got != 3<<30 {
		t.Fatalf("after both plans the memory limit is %d, want the 3 GiB found before", got)
	}
	Retune()
	if got := debug.SetGCPercent(90); got != 90 {
		t.Fatalf("retune outside a plan changed the target to %d", got)
	}
}

// What the user set is theirs: with GOGC and GOMEMLIMIT in the environment,
// a plan changes neither, and retune leaves the target alone.
func TestWithPlanGCLeavesTheUsersSettings(t *testing.T) {
	t.Setenv("GOGC", "100")
	t.Setenv("GOMEMLIMIT", "1GiB")
	before := debug.SetGCPercent(120)
	defer debug.SetGCPercent(before)
	beforeLimit := debug.SetMemoryLimit(math.MaxInt64)
	defer debug.SetMemoryLimit(beforeLimit)
	end := WithPlanGC()
	Retune()
	if got := debug.SetGCPercent(120); got != 120 {
		t.Fatalf("with GOGC set the target is %d during a plan, want the 120 found", got)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Fatalf("with GOMEMLIMIT set the limit is %d during a plan, want it untouched", got)
	}
	end()
}

// The target follows the live heap: the highest (up to planGCPercent) whose
// heap, live times (1 + target/100), stays within planHeapBudget, at least
// planGCPercentMin, in steps of 10.
func TestGCPercentFor(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, planGCPercent},
		{50 << 20, planGCPercent},
		{192 << 20, planGCPercent},
		{200 << 20, 280},
		{300 << 20, 150},
		{384 << 20, 100},
		{500 << 20, planGCPercentMin},
		{planHeapBudget, planGCPercentMin},
		{2 << 30, planGCPercentMin},
	} {
		got := gcPercentFor(c.live)
		if got != c.want {
			t.Errorf("live %d MiB: target %d, want %d", c.live>>20, got, c.want)
		}
		if c.live > 0 && got > planGCPercentMin && c.live*uint64(100+got)/100 > planHeapBudget {
			t.Errorf("live %d MiB: target %d lets the heap grow past the budget", c.live>>20, got)
		}
	}
}
