package model

import "github.com/xpwc/xpwc/spec"

// Transition is one step the explorer (or a replay) took: the state before,
// the op with its branch, and the outcome.
type Transition struct {
	Prev *State
	Out  *Outcome
}

// invariantCheck reports whether one invariant holds for a transition.
type invariantCheck func(b *Bounds, t Transition) bool

// checks maps each invariant of spec.Invariants to its predicate. Every ID
// has one (TestEveryInvariantHasACheck).
func checks() map[spec.InvariantID]invariantCheck {
	return map[spec.InvariantID]invariantCheck{
		spec.InvNoStaleHit:      noStaleHit,
		spec.InvNoCorruptHit:    noCorruptHit,
		spec.InvCommitSurvives:  commitSurvives,
		spec.InvConverge:        converge,
		spec.InvNoIdleWrite:     noIdleWrite,
		spec.InvGarbageBounded:  garbageBounded,
		spec.InvMapOnce:         mapOnce,
		spec.InvNoSIGBUS:        noSIGBUS,
		spec.InvOptionsOwned:    optionsOwned,
		spec.InvSingleWriter:    singleWriter,
		spec.InvLoadTotal:       loadTotal,
		spec.InvFallbackNoError: fallbackNoError,
		spec.InvNoUncheckedUse:  noUncheckedUse,
	}
}

// stateOnly lists the invariants that read only the new state: checking
// them once per distinct state is enough.
var stateOnly = map[spec.InvariantID]bool{
	spec.InvCommitSurvives: true,
	spec.InvMapOnce:        true,
	spec.InvNoSIGBUS:       true,
	spec.InvSingleWriter:   true,
}

// Checker evaluates every invariant, in the order of spec.Invariants.
type Checker struct {
	b         Bounds
	ids, sids []spec.InvariantID
	fns, sfns []invariantCheck
}

// NewChecker builds a checker for bounds b.
func NewChecker(b Bounds) *Checker {
	c := &Checker{b: b}
	all := checks()
	for _, inv := range spec.Invariants() {
		if stateOnly[inv.ID] {
			c.sids = append(c.sids, inv.ID)
			c.sfns = append(c.sfns, all[inv.ID])
		} else {
			c.ids = append(c.ids, inv.ID)
			c.fns = append(c.fns, all[inv.ID])
		}
	}
	return c
}

// Violated appends to dst the invariants t breaks.
func (c *Checker) Violated(dst []spec.InvariantID, t Transition) []spec.InvariantID {
	dst = c.ViolatedByStep(dst, t)
	return c.ViolatedByState(dst, t)
}

// ViolatedByStep appends the invariants about the step itself (its op and
// result) that t breaks.
func (c *Checker) ViolatedByStep(dst []spec.InvariantID, t Transition) []spec.InvariantID {
	for i, f := range c.fns {
		if !f(&c.b, t) {
			dst = append(dst, c.ids[i])
		}
	}
	return dst
}

// ViolatedByState appends the invariants about t's new state that it
// breaks; the explorer calls it once per distinct state.
func (c *Checker) ViolatedByState(dst []spec.InvariantID, t Transition) []spec.InvariantID {
	for i, f := range c.sfns {
		if !f(&c.b, t) {
			dst = append(dst, c.sids[i])
		}
	}
	return dst
}

// Check returns the invariants t breaks under bounds b.
func Check(b Bounds, t Transition) []spec.InvariantID {
	return NewChecker(b).Violated(nil, t)
}

// handsBytes reports whether t hands packed bytes to a compute: a look-up's
// hit (XNNPACK's operator reads the pointer it returns), unless the design
// checks at the compute and the hit's check is still to come, or a compute.
func handsBytes(t Transition) bool {
	switch t.Out.Op.Kind {
	case spec.OpLookUp:
		return t.Out.Result.Hit && t.Out.Events&EvtUncheckedHandle == 0
	case spec.OpCompute:
		return true
	}
	return false
}

// I1: a hit, and a compute, carry the kernel and source versions the
// process runs.
func noStaleHit(_ *Bounds, t Transition) bool {
	op, r := t.Out.Op, t.Out.Result
	if op.Kind != spec.OpCompute && (op.Kind != spec.OpLookUp || !r.Hit) {
		return true
	}
	pr := &t.Prev.Procs[op.Proc]
	return r.Bytes.Kernel == pr.Kernel && r.Bytes.Source == pr.Src[op.Name]
}

// I2: bytes handed to a compute are intact, unless they were checked and
// changed after.
func noCorruptHit(_ *Bounds, t Transition) bool {
	if !handsBytes(t) {
		return true
	}
	r := t.Out.Result
	return r.Bytes.Intact || r.Bytes.LateCorrupt
}

// I13: the bytes an output is computed from were checked by this instance
// or packed by it. Under on-first-use the check is at the look-up, whose hit
// XNNPACK's operator computes from, so it is checked there; under on-compute
// (Design.CheckAtCompute) the look-up hands out an unchecked handle and the
// check is at the compute, where a failure is re-packed first.
func noUncheckedUse(_ *Bounds, t Transition) bool {
	if !handsBytes(t) {
		return true
	}
	op := t.Out.Op
	return t.Out.Next.Procs[op.Proc].Ents[op.Name].Verified
}

// I3: the loadable index is the last visible commit.
func commitSurvives(_ *Bounds, t Transition) bool {
	s := &t.Out.Next
	if !s.GhostValid {
		return true
	}
	if s.Disk.State != DiskValid {
		return false
	}
	for n := range s.Ghost {
		if s.Disk.Idx[n].Key() != s.Ghost[n] {
			return false
		}
	}
	return true
}

// I4: a launch owed convergence never misses.
func converge(_ *Bounds, t Transition) bool {
	op := t.Out.Op
	if op.Kind != spec.OpLookUp || t.Out.Result.Hit {
		return true
	}
	return !t.Prev.Procs[op.Proc].Expect
}

// I5: finalize and save write only when the instance has something to
// commit (appended packings, dropped ones); an invalidation also when it
// drops a packing the instance knew as committed; a compute only to save
// the re-pack of bytes its check rejected.
func noIdleWrite(_ *Bounds, t Transition) bool {
	op := t.Out.Op
	if !t.Out.Result.Wrote {
		return true
	}
	switch op.Kind {
	case spec.OpFinalize, spec.OpSave:
		return dirty(&t.Prev.Procs[op.Proc])
	case spec.OpInvalidate:
		pr := &t.Prev.Procs[op.Proc]
		e := &pr.Ents[op.Name]
		listed := (e.Status == spec.EntryLoaded || e.Status == spec.EntryCommitted) && !e.Retired
		return dirty(pr) || listed
	case spec.OpCompute:
		// Only the save after a re-pack of corrupt bytes.
		return t.Out.Events&EvtComputeRepack != 0
	}
	return false // nothing else writes
}

// I6: after a commit, garbage ≤ max(live, 1).
func garbageBounded(_ *Bounds, t Transition) bool {
	if !t.Out.Result.Wrote {
		return true
	}
	d := &t.Out.Next.Disk
	return int(d.Garbage) <= max(d.Live(), 1)
}

// I7: no file range mapped twice in one process.
func mapOnce(_ *Bounds, t Transition) bool {
	for p := range t.Out.Next.Procs {
		for _, e := range t.Out.Next.Procs[p].Ents {
			if e.Maps > 1 {
				return false
			}
		}
	}
	return true
}

// I8: no mapping cut by a truncation.
func noSIGBUS(_ *Bounds, t Transition) bool {
	for p := range t.Out.Next.Procs {
		if t.Out.Next.Procs[p].Broken {
			return false
		}
	}
	return true
}

// I9: an init uses the module's own copy of its load options.
func optionsOwned(_ *Bounds, t Transition) bool {
	op := t.Out.Op
	if op.Kind != spec.OpInit {
		return true
	}
	want := spec.PlaceHeap
	if t.Prev.Procs[op.Proc].OptModule {
		want = spec.PlaceFile
	}
	return t.Out.Result.Place == want
}

// I10: only the lock holder has appended, uncommitted data.
func singleWriter(_ *Bounds, t Transition) bool {
	s := &t.Out.Next
	for p := range s.Procs {
		if hasAppended(&s.Procs[p]) && s.Disk.Lock != uint8(p)+1 {
			return false
		}
	}
	return true
}

// I11: init never fails.
func loadTotal(_ *Bounds, t Transition) bool {
	return t.Out.Op.Kind != spec.OpInit || !t.Out.Result.Failed
}

// I12: the packing path never fails; an explicit save may, with a reason.
func fallbackNoError(_ *Bounds, t Transition) bool {
	switch t.Out.Op.Kind {
	case spec.OpReserve, spec.OpInsert, spec.OpFinalize, spec.OpCompute:
		return !t.Out.Result.Failed
	case spec.OpSave, spec.OpInvalidate:
		// An explicit save may report that it could not commit now, but
		// only for a recorded reason.
		return !t.Out.Result.Failed || t.Out.Result.Reason != spec.ReasonNone
	}
	return true
}
