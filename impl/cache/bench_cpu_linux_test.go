//go:build linux

package cache_test

import "syscall"

// processCPUNanos is the user+system CPU time of the test process: the
// warm-load benchmark reports it next to wall time because the machines it
// runs on are shared, where wall time measures the scheduler as much as
// the load.
func processCPUNanos() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
