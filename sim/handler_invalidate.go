package sim

import (
	"errors"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/spec"
)

// handleInvalidate drops name n and saves: the model commits an
// invalidation at once, the cache at the next save.
func (w *world) handleInvalidate(pr *proc, n int) spec.Result {
	var r spec.Result
	before := w.snap()
	pr.checked[n] = false
	if err := pr.c.Invalidate(weightName(n)); err != nil {
		r.Failed = true
		return r
	}
	if err := pr.c.Save(); err != nil {
		r.Failed = true
		if errors.Is(err, cache.ErrLockBusy) {
			r.Reason = spec.ReasonLockBusy
		}
		w.recorded = pr.c.Stats().CommitErr != nil
	}
	r.Wrote = w.snap() != before
	return r
}
