//go:build linux

package spec_test

import "syscall"

// processCPUNanos is the user+system CPU time of the test process. The
// parse benchmarks report it per entry next to wall time because the
// machines they run on are shared: wall time there measures the scheduler
// as much as the parser.
func processCPUNanos() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
