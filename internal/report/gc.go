package report

import (
	"os"
	"runtime/debug"
	"sync"
)

// planGCPercent is the garbage collector's target while a fleet is read to
// be planned and planned: each render allocates megabytes that are garbage
// at once, so collecting at 150% of the live heap instead of Go's 100%
// saves about a tenth of the CPU over 1,000 pools (docs/testing.md) for a
// peak heap of about 320 MB instead of 230.
const planGCPercent = 150

var planGC struct {
	sync.Mutex
	users int
	prev  int
}

// withPlanGC sets planGCPercent until the returned func is called, unless
// GOGC says what the user wants. Overlapping plans share it: the last to end
// restores the target they found.
func withPlanGC() (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	planGC.Lock()
	defer planGC.Unlock()
	if planGC.users == 0 {
		planGC.prev = debug.SetGCPercent(planGCPercent)
	}
	planGC.users++
	return func() {
		planGC.Lock()
		defer planGC.Unlock()
		if planGC.users--; planGC.users == 0 {
			debug.SetGCPercent(planGC.prev)
		}
	}
}
