package report

import (
	"os"
	"runtime/debug"
	"sync"
)

// planGCPercent and planMemoryLimit are the garbage collector's target and
// the soft memory limit while a fleet is read to be planned and planned.
// Each render allocates megabytes that are garbage at once, and every cycle
// of the collector scans what the report holds (the fleet as read, and in a
// benchmark the generated cluster itself): at Go's 100%, or the 150% used
// before, the collector took a fifth of the CPU of a 1,000-pool plan and
// more as the fleet grew. At 400% it takes about a twentieth (docs/testing.md);
// the limit keeps a provider's fleet, whose report holds more, under a
// gigabyte: near it the collector runs as often as it must.
const (
	planGCPercent   = 400
	planMemoryLimit = 768 << 20
)

var planGC struct {
	sync.Mutex
	users     int
	prevGC    int
	prevLimit int64
}

// withPlanGC sets planGCPercent and planMemoryLimit until the returned func
// is called, except what the user set (GOGC, GOMEMLIMIT). Overlapping plans
// share them: the last to end restores what they found.
func withPlanGC() (restore func()) {
	setGC, setLimit := os.Getenv("GOGC") == "", os.Getenv("GOMEMLIMIT") == ""
	planGC.Lock()
	defer planGC.Unlock()
	if planGC.users == 0 {
		if setGC {
			planGC.prevGC = debug.SetGCPercent(planGCPercent)
		}
		if setLimit {
			planGC.prevLimit = debug.SetMemoryLimit(planMemoryLimit)
		}
	}
	planGC.users++
	return func() {
		planGC.Lock()
		defer planGC.Unlock()
		if planGC.users--; planGC.users == 0 {
			if setGC {
				debug.SetGCPercent(planGC.prevGC)
			}
			if setLimit {
				debug.SetMemoryLimit(planGC.prevLimit)
			}
		}
	}
}
