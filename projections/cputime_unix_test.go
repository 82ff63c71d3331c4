//go:build unix

package projections_test

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user and system) the process has used so
// far, GC workers included.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
