package cache

import (
	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/internal/rawmem"
)

// populate enters the pages of s, a new allocation about to be filled,
// with one call instead of a page fault each (vfs.PopulateHeap). A warm
// load allocates a few such tables in a fresh process, where those faults
// were a third of its CPU time (BenchmarkWarmLoadCore1184 does not see
// them: its process's heap is warm; the fresh-process figure is in
// docs/benchmarks.md).
func populate[T any](s []T) { vfs.PopulateHeap(rawmem.Region(s)) }
