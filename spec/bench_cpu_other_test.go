//go:build !linux

package spec_test

// processCPUNanos is unavailable here; the cpu-ns/entry metric reads 0.
func processCPUNanos() int64 { return 0 }
