package support

import (
	"syscall"
	"time"
)

// CPUTime is the CPU time the process has used, every thread's: the
// benchmarks report it beside the wall time, as renders spread over cores.
func CPUTime() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
