package measure

import (
	"syscall"
	"time"
)

// CPUTime is the user plus system CPU time this process has used, all
// threads included. Per op, it is the work a benchmark did, and unlike wall
// time it does not grow while other processes hold the CPUs.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
