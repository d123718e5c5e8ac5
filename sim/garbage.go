package sim

import (
	"fmt"

	"github.com/xpwc/xpwc/spec"
)

// checkGarbage holds the garbage process p's instance reports to the
// garbage of the file at the path, by the one definition both use (the
// file's byte map, spec.Garbage), after a step at which p committed or
// loaded, the steps after which its view is the file at the path. A
// mismatch is a divergence: the figure users read, and the compaction
// decision, would be of another file than the one on disk.
func (w *world) checkGarbage(p int) (model, cache string, ok bool) {
	pr := &w.procs[p]
	if pr.c == nil {
		return "", "", true
	}
	st := pr.c.Stats()
	if st.FileSize == 0 {
		return "", "", true // heap only: no file to hold the figure to
	}
	v, err := w.parse()
	if err != nil {
		return "", "", true // no valid commit at the path: nothing to compare
	}
	want := spec.Garbage(spec.MapV3(v))
	if want == st.GarbageBytes {
		return "", "", true
	}
	return fmt.Sprintf("file at the path: %d garbage bytes (size %d)", want, v.Size),
		fmt.Sprintf("%s reports %d garbage bytes (size %d)", spec.Proc(p), st.GarbageBytes, st.FileSize), false
}
