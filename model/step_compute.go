package model

import "github.com/xpwc/xpwc/spec"

// compute is an inference after finalize reading name n's packed bytes
// through the handle a loaded program holds. Under the on-compute policy
// this is the entry's first use: an entry the instance has not checked is
// checked here, and one that fails is re-packed before the output is
// computed, from the new bytes (I13). Otherwise the read changes nothing:
// the look-up checked the entry already (or the design cannot check).
// Result.Bytes is the packing the output is computed from.
func (m machine) compute(o *Outcome, p spec.Proc, n spec.Name) bool {
	pr := &o.Next.Procs[p]
	e := &pr.Ents[n]
	if pr.Phase != spec.PhaseIdle || e.Hold == 0 || !e.Rec.Present() {
		return false
	}
	if m.d.CheckAtCompute && !e.Verified && m.d.verifies() && !m.d.ComputeUnchecked {
		o.Result.Checked = true
		if e.Rec&recCorrupt == 0 {
			e.Verified = true
		} else {
			o.Events |= EvtCorruptCaught | EvtComputeRepack
			m.repack(o, p, n)
		}
	}
	o.Result.Bytes = pr.Ents[n].Rec.Packing()
	return true
}

// repack replaces entry n, found corrupt at a compute after finalize, by a
// fresh packing, as the runtime does (impl/runtime Backend.packedBytes):
// the look-up misses (the entry left the index), the reservation takes the
// writer lock (re-reading the newest commit) or falls back to the heap with
// a reason (G8), the insert keeps an equal packing another process
// committed meanwhile, and a save commits it and gives the lock back. The
// programs that held the corrupt entry hold the new one.
func (m machine) repack(o *Outcome, p spec.Proc, n spec.Name) {
	s := &o.Next
	pr := &s.Procs[p]
	e := &pr.Ents[n]
	hold := e.Hold
	tombstone(pr, int(n))
	*e = Entry{}
	r := &o.Result
	switch {
	case !pr.FileOn:
		r.Place, r.Reason = spec.PlaceHeap, spec.ReasonNoPath
	case m.d.LoadedRepacksToHeap && pr.LoadFlag:
		r.Place, r.Reason = spec.PlaceHeap, spec.ReasonDesign
	default:
		r.Place, r.Reason = m.takeWriter(o, p)
	}
	e.Place = r.Place
	e.Fallback = r.Reason == spec.ReasonLockBusy || r.Reason == spec.ReasonNoPath
	m.put(o, p, n, hold)
	e.Step = stepNone
	// A save: commits what is new when the lock allows (otherwise the
	// commit stays pending, as Finalize's does), and gives the lock back,
	// since no program is being packed.
	m.commitIfDirty(o, p)
	if s.Disk.Lock == uint8(p)+1 {
		s.Disk.Lock = 0
		pr.Replacing = false
	}
}
