package sim

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/spec"
)

// describeFile renders the live file as a new process would load it, in
// the terms of DescribeDisk: each listed entry's kernel and source versions
// from its key, "!" when its data fails its checksum.
func (w *world) describeFile(b model.Bounds) string {
	if w.v2 {
		return w.describeV2(b)
	}
	data, err := w.readFile()
	if isNotExist(err) {
		return "empty"
	}
	if err != nil {
		return "unreadable: " + err.Error()
	}
	f, err := spec.ParseV3(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return "corrupt"
	}
	return describeEntries(b, f.Entries, func(e spec.Entry) (int, string) {
		n, kv, sv, ok := versions(e.Key)
		if !ok {
			return -1, e.Key.Name()
		}
		s := fmt.Sprintf("k%ds%d", kv, sv)
		if spec.VerifyEntryData(bytes.NewReader(data), e) != nil {
			s += "!"
		}
		return n, s
	})
}

// describeEntries renders a parsed file's entries: each name's packing as
// pack says it ("-" for none), and the names of the entries pack does not
// know (n < 0, s the stored name).
func describeEntries(b model.Bounds, entries []spec.Entry, pack func(spec.Entry) (n int, s string)) string {
	idx := make([]string, b.Names)
	for n := range idx {
		idx[n] = "-"
	}
	var extra []string
	for _, e := range entries {
		n, s := pack(e)
		if n < 0 || n >= b.Names {
			extra = append(extra, fmt.Sprintf("%q", s))
			continue
		}
		idx[n] = s
	}
	var parts []string
	for n, s := range idx {
		parts = append(parts, fmt.Sprintf("%s=%s", spec.Name(n), s))
	}
	out := "valid " + strings.Join(parts, " ")
	if len(extra) > 0 {
		out += " unknown=" + strings.Join(extra, ",")
	}
	return out
}

// describeProc renders one process's instance as the runtime sees it.
func (w *world) describeProc(p int) string {
	pr := &w.procs[p]
	if pr.c == nil {
		return fmt.Sprintf("%s: no instance", spec.Proc(p))
	}
	place := "file"
	if pr.c.Path() == "" {
		place = "heap-only"
	}
	var names []string
	for _, s := range pr.c.Names() {
		names = append(names, nameOf(s))
	}
	return fmt.Sprintf("%s: %s instance, indexed [%s]", spec.Proc(p), place, strings.Join(names, " "))
}

// describeStats renders the counters of one process's instance.
func (w *world) describeStats(p int) string {
	pr := &w.procs[p]
	if pr.c == nil {
		return fmt.Sprintf("%s: no instance", spec.Proc(p))
	}
	st := pr.c.Stats()
	var b strings.Builder
	fmt.Fprintf(&b, "load=%s hits=%d misses=%d verified=%d corrupt=%d commits=%d compactions=%d",
		st.Load, st.Hits, st.Misses, st.Verified, st.Corrupt, st.Commits, st.Compactions)
	b.WriteString("\nrepacks:")
	b.WriteString(sortedCounts(st.Repacks))
	b.WriteString("\nheap bytes:")
	b.WriteString(sortedCounts(st.HeapBytes))
	fmt.Fprintf(&b, "\nfile bytes=%d size=%d garbage=%d", st.FileBytes, st.FileSize, st.GarbageBytes)
	return b.String()
}

func sortedCounts[K ~string](m map[K]uint64) string {
	keys := make([]string, 0, len(m))
	for k, v := range m {
		if v != 0 {
			keys = append(keys, string(k))
		}
	}
	if len(keys) == 0 {
		return " none"
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%d", k, m[K(k)])
	}
	return b.String()
}
