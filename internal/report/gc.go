package report

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// While a fleet is read to be planned and planned, each render allocates
// megabytes that are garbage at once, and every cycle of the collector
// scans what the report holds (the fleet as read, in a benchmark the
// generated cluster itself). The fewer cycles, the less CPU (at the 150%
// target used before, the collector took near a fifth of a 1,000-pool
// plan's CPU), but the heap grows to the live heap times (1 + target/100).
// So the target follows the live heap (retune): up to planGCPercent while
// the heap that gives stays within planHeapBudget, down to 100% as the
// fleet's report grows, and a soft memory limit (planMemoryLimit) above the
// budget is the net for a fleet whose report alone nears it. A memory limit
// alone does worse: bound all the time, it keeps returning memory to the
// system and taking it back (docs/testing.md).
const (
	planGCPercent    = 300
	planGCPercentMin = 100
	planHeapBudget   = 768 << 20
	planMemoryLimit  = 960 << 20
)

var planGC struct {
	sync.Mutex
	users     int
	setGC     bool
	percent   int
	prevGC    int
	setLimit  bool
	prevLimit int64
}

// WithPlanGC sets planGCPercent and planMemoryLimit until the returned func
// is called, except what the user set (GOGC, GOMEMLIMIT). Overlapping plans
// share them: the last to end restores what they found.
func WithPlanGC() (restore func()) {
	planGC.Lock()
	defer planGC.Unlock()
	if planGC.users == 0 {
		planGC.setGC, planGC.setLimit = os.Getenv("GOGC") == "", os.Getenv("GOMEMLIMIT") == ""
		if planGC.setGC {
			planGC.percent = planGCPercent
			planGC.prevGC = debug.SetGCPercent(planGCPercent)
		}
		if planGC.setLimit {
			planGC.prevLimit = debug.SetMemoryLimit(planMemoryLimit)
		}
	}
	planGC.users++
	return func() {
		planGC.Lock()
		defer planGC.Unlock()
		if planGC.users--; planGC.users == 0 {
			if planGC.setGC {
				debug.SetGCPercent(planGC.prevGC)
			}
			if planGC.setLimit {
				debug.SetMemoryLimit(planGC.prevLimit)
			}
		}
	}
}

// Retune sets the collector's target for the heap live now (at the last
// collection): the highest, up to planGCPercent, whose heap stays within
// planHeapBudget, at least planGCPercentMin. A plan's workers call it as
// they go; it changes nothing outside withPlanGC, or with GOGC set.
func Retune() {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	percent := gcPercentFor(sample[0].Value.Uint64())
	planGC.Lock()
	defer planGC.Unlock()
	if planGC.users == 0 || !planGC.setGC || percent == planGC.percent {
		return
	}
	planGC.percent = percent
	debug.SetGCPercent(percent)
}

// gcPercentFor is the target for a live heap: the heap grows to live times
// (1 + target/100) before the next collection. Rounded down to a multiple of
// 10, so a heap that moves a little does not move the target.
func gcPercentFor(live uint64) int {
	switch {
	case live == 0:
		return planGCPercent // nothing collected yet
	case live >= planHeapBudget:
		return planGCPercentMin
	}
	percent := int(planHeapBudget*100/live) - 100
	percent -= percent % 10
	return min(planGCPercent, max(planGCPercentMin, percent))
}
