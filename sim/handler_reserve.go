package sim

import (
	"errors"

	"github.com/xpwc/xpwc/faultinject/crashpoint"
	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/spec"
)

// handleReserve reserves space for name n's packing and runs the packer
// into it. The reservation is in the file when the instance says so or,
// for an instance that does not say, when the live file or a writer's
// temporary file grew (a writer that allocates a new file ahead of its
// reservations grows it less often); otherwise on the heap, with the
// reason the cache recorded (G8).
func (w *world) handleReserve(pr *proc, n int) spec.Result {
	var r spec.Result
	packed := crashpoint.Pack(pr.key(n))
	before := w.sizes()
	res, err := pr.c.ReserveSpace(len(packed))
	if err != nil {
		r.Failed = true
		return r
	}
	copy(res.Buf, packed) // the packer runs between reserve and insert
	pr.pending[n] = res
	r.Place = spec.PlaceHeap
	st := pr.c.Stats()
	switch {
	case res.InFile || grew(before, w.sizes()):
		r.Place = spec.PlaceFile
	case pr.c.Path() == "":
		r.Reason = spec.ReasonNoPath
	case errors.Is(st.FallbackErr, cache.ErrLockBusy),
		st.Load == spec.LoadLocked && errors.Is(st.LoadErr, cache.ErrLockBusy):
		// The lock was busy when this launch's program init loaded (the
		// whole launch packs to heap) or when the reservation tried to
		// take the writer lock.
		r.Reason = spec.ReasonLockBusy
	}
	if r.Place == spec.PlaceHeap && st.FallbackErr != nil {
		w.note = "fallback: " + st.FallbackErr.Error()
	}
	return r
}
