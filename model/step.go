package model

import "github.com/xpwc/xpwc/spec"

// Step returns every outcome of op in state s under design d: none when s
// does not enable op (or op is outside b), one for a deterministic
// operation, one per branch for a crash. An op that names a Branch returns
// only that branch's outcome, which is how a recorded trace replays.
//
// Step is pure: s is not changed, and equal arguments give equal outcomes.
func Step(d *Design, b Bounds, s State, op spec.Op) []Outcome {
	return StepAppend(nil, d, b, &s, op)
}

// StepAppend is Step appending to dst, so the explorer reuses one buffer.
func StepAppend(dst []Outcome, d *Design, b Bounds, s *State, op spec.Op) []Outcome {
	start := len(dst)
	dst = stepAppend(dst, d, b, s, op)
	for i := start; i < len(dst); i++ {
		canonicalCopies(&dst[i].Next)
	}
	return dst
}

func stepAppend(dst []Outcome, d *Design, b Bounds, s *State, op spec.Op) []Outcome {
	if !inBounds(b, op) {
		return dst
	}
	m := machine{d: d, b: b}
	switch op.Kind {
	case spec.EvCrash:
		return m.crash(dst, s, op)
	}
	// The outcome is built in place at the end of dst (no copy of it on
	// append) and dropped again if op is not enabled.
	n := len(dst)
	if n < cap(dst) {
		dst = dst[:n+1]
	} else {
		dst = append(dst, Outcome{})
	}
	out := &dst[n]
	out.Op = op
	out.Next = *s
	out.Result = spec.Result{}
	out.Events = 0
	var ok bool
	switch op.Kind {
	case spec.OpInit:
		ok = m.init(out, op.Proc, op.Program)
	case spec.OpLookUp:
		ok = m.lookUp(out, op.Proc, op.Name)
	case spec.OpReserve:
		ok = m.reserve(out, op.Proc, op.Name)
	case spec.OpInsert:
		ok = m.insert(out, op.Proc, op.Name)
	case spec.OpFinalize:
		ok = m.finalize(out, op.Proc)
	case spec.OpSave:
		ok = m.save(out, op.Proc)
	case spec.OpInvalidate:
		ok = m.invalidate(out, op.Proc, op.Name)
	case spec.OpUnload:
		ok = m.unload(out, op.Proc, op.Program)
	case spec.OpDestroy:
		ok = m.destroy(out, op.Proc)
	case spec.OpCompute:
		ok = m.compute(out, op.Proc, op.Name)
	case spec.EvRestart:
		ok = m.restart(out, op.Proc)
	case spec.EvKernelUpgrade:
		ok = m.upgrade(out)
	case spec.EvSourceChange:
		ok = m.changeSource(out, op.Name)
	case spec.EvForeign:
		ok = m.foreign(out, op)
	case spec.EvClobberOptions:
		ok = m.clobber(out, op.Proc)
	}
	if !ok {
		return dst[:n]
	}
	if op.Branch == spec.BranchCompact && out.Events&EvtCompact == 0 {
		// Named a compaction where none can happen (nothing to commit, a
		// new or replaced file, compaction off): not enabled.
		return dst[:n]
	}
	return dst
}

func inBounds(b Bounds, op spec.Op) bool {
	return int(op.Proc) < b.Procs && int(op.Program) < b.Programs && int(op.Name) < b.Names &&
		(b.Foreign || (op.Kind != spec.EvForeign && op.Kind != spec.EvClobberOptions))
}

// machine carries the design and bounds through one step.
type machine struct {
	d *Design
	b Bounds
}

func (m machine) names(q spec.Program) uint8 { return m.b.ProgramNames(q) }

// invalidateFor records that packings of the names in mask went stale:
// programs packing them owe no convergence until a clean launch (G3), and
// launches in progress that pack them are not clean.
func (m machine) invalidateFor(s *State, mask uint8) {
	for n := 0; n < m.b.Names; n++ {
		if mask&(1<<n) == 0 {
			continue
		}
		s.Env.Settled &^= m.b.programsWith(n)
		for p := 0; p < m.b.Procs; p++ {
			pr := &s.Procs[p]
			if pr.Phase == spec.PhasePacking && m.names(pr.Prog)&(1<<n) != 0 {
				pr.Clean = false
				pr.Expect = false
			}
		}
	}
}

// current reports whether r is the packing the environment wants now for n.
func current(e *Env, n int, r Rec) bool {
	return r.Key() == mkRec(e.Kernel, e.Src[n])
}
