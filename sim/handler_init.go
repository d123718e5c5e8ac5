package sim

import (
	"errors"

	"github.com/xpwc/xpwc/spec"
)

// handleInit opens the process's instance on first use, with the cache
// path from the module's own copy of its load options (G6, PR 19673), and
// initializes the program, which loads or refreshes the committed index.
func (w *world) handleInit(pr *proc, op spec.Op) spec.Result {
	var r spec.Result
	if pr.c == nil {
		path := ""
		if v, ok := pr.module.Lookup(optBackend, "packed_cache_path"); ok {
			path, _ = v.AsString()
		}
		c, err := w.open(path, w.fsys)
		if err != nil {
			// An implementation that cannot be started or breaks the
			// protocol is the run's verdict, not a failed init.
			if errors.Is(err, ErrImplementation) {
				w.fault = err
			}
			r.Failed = true
			return r
		}
		pr.c = c
	}
	r.Place = spec.PlaceHeap
	if pr.c.Path() != "" {
		r.Place = spec.PlaceFile
	}
	if err := pr.c.InitializeForProgram(progName(op.Program)); err != nil {
		r.Failed = true
	}
	if k, ok := pr.c.(ViewKeeper); ok && k.KeptView() {
		w.keptLoad = true
	}
	st := pr.c.Stats()
	r.Load = loadOutcome(st.Load)
	if st.LoadErr != nil {
		w.note = "load: " + st.LoadErr.Error()
	}
	return r
}
