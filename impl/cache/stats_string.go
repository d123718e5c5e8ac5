package cache

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// String is the stats on one line, for a log: the load outcome, look-ups,
// re-packs and heap bytes by reason (omitted when none), where the packed
// bytes are, commits, and every recorded error. GarbageBytes is written
// reclaimable=, as simrun calls it: it counts the page padding before an
// appended index, which a rewrite frees and which is no dropped data, so a
// new file has some.
func (s Stats) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "load=%s format=%s hits=%d misses=%d", s.Load, s.Format, s.Hits, s.Misses)
	writeCounts(&b, "repacks", s.Repacks)
	writeCounts(&b, "heap-bytes", s.HeapBytes)
	fmt.Fprintf(&b, " file-bytes=%d file-size=%d reclaimable=%d padding=%d commits=%d verified=%d corrupt=%d",
		s.FileBytes, s.FileSize, s.GarbageBytes, s.PaddingBytes, s.Commits, s.Verified, s.Corrupt)
	for _, e := range []struct {
		name string
		err  error
	}{{"load-error", s.LoadErr}, {"commit-error", s.CommitErr}, {"fallback-error", s.FallbackErr}, {"release-error", s.ReleaseErr}} {
		if e.err != nil {
			fmt.Fprintf(&b, " %s=%q", e.name, e.err.Error())
		}
	}
	return b.String()
}

// writeCounts appends " name=k1:v1,k2:v2" in key order, nothing when every
// count is zero.
func writeCounts[K ~string](b *strings.Builder, name string, m map[K]uint64) {
	sep := " " + name + "="
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if m[k] != 0 {
			fmt.Fprintf(b, "%s%s:%d", sep, k, m[k])
			sep = ","
		}
	}
}
