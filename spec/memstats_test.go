package spec

import "runtime"

// AllocatedBytes returns the bytes allocated while f runs. Tests using it
// must not run in parallel with others. It is exported (in a test file only)
// so that the external tests share it.
func AllocatedBytes(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
