//go:build !linux

package cache_test

// processCPUNanos is not measured here: the benchmark reports 0.
func processCPUNanos() int64 { return 0 }
