package sim

import (
	"errors"
	"fmt"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/spec"
)

// handleCommit is finalize or save. Wrote is observed on the file itself
// (existence, size, mtime and bytes), which is what G4 promises.
func (w *world) handleCommit(pr *proc, op spec.Op) spec.Result {
	var r spec.Result
	before := w.snap()
	var err error
	if op.Kind == spec.OpFinalize {
		err = pr.c.Finalize()
		if fin, ferr := pr.c.IsFinalized(); err == nil && (ferr != nil || !fin) {
			// XNNPACK asks is_finalized before it runs: a finalize that
			// leaves the program unfinalized failed, whatever it said.
			err = fmt.Errorf("finalize returned but is_finalized says %v (%v)", fin, ferr)
			w.note = err.Error()
		}
	} else {
		err = pr.c.Save()
	}
	// An explicit save may report that it could not commit now, with the
	// reason (I12); finalize never fails.
	r.Failed = err != nil
	if errors.Is(err, cache.ErrLockBusy) {
		r.Reason = spec.ReasonLockBusy
	}
	w.recorded = err != nil && op.Kind == spec.OpSave && pr.c.Stats().CommitErr != nil
	r.Wrote = w.snap() != before
	return r
}
