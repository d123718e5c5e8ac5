package model

import "github.com/xpwc/xpwc/spec"

// Convergence (G3, I4) is a liveness property: once the environment stops
// changing things, the cache settles. The explorer checks it over the whole
// state graph (model/explore, docs/model.md "Liveness") with the two
// predicates below: which steps the settled world still takes, and which
// step is the launch convergence promises.

// Quiet reports whether op is a step of the processes themselves, not of the
// environment: no kernel upgrade, source change, foreign write, clobbered
// options, crash or restart, and no explicit invalidation (a caller that
// keeps dropping a name keeps it from converging, as the guarantee allows).
// Under the fairness the liveness check assumes, every behaviour ends in
// quiet steps only.
func Quiet(op spec.Op) bool {
	switch op.Kind {
	case spec.OpInit, spec.OpLookUp, spec.OpReserve, spec.OpInsert, spec.OpFinalize,
		spec.OpSave, spec.OpUnload, spec.OpDestroy, spec.OpCompute:
		return true
	}
	return false
}

// Launched reports whether t ends a launch (a finalize): the progress the
// fairness assumption asks of every process.
func Launched(t Transition) bool { return t.Out.Op.Kind == spec.OpFinalize }

// ConvergedLaunch reports whether t ends a launch that hit every name of its
// program from the file and writes nothing: a launch that found the file as
// it wants it. A hit on a heap packing (a fall-back, or a re-pack a design
// kept off the file) is not in the file and does not count, and neither is a
// launch whose finalize commits.
func ConvergedLaunch(b Bounds, t Transition) bool {
	op := t.Out.Op
	if op.Kind != spec.OpFinalize || t.Out.Result.Wrote {
		return false
	}
	pr := &t.Prev.Procs[op.Proc]
	if pr.Blocked || pr.NoFile {
		return false
	}
	names := b.ProgramNames(pr.Prog)
	for n := 0; n < b.Names; n++ {
		e := &pr.Ents[n]
		if names&(1<<n) == 0 {
			continue
		}
		if e.Step != stepHit || (e.Status != spec.EntryLoaded && e.Status != spec.EntryCommitted) {
			return false
		}
	}
	return true
}

// Current reports whether every process runs the kernel and sources
// installed now. A process still running an older one is the environment's
// change not finished yet: with one packing per name, it and an up-to-date
// process re-pack over each other for as long as both run, which G3 does
// not promise to end (I4 owes a hit only to a launch that runs the
// installed versions). Fairness has every such process restart eventually,
// so the liveness check follows only quiet steps between current states.
func Current(b Bounds, s *State) bool {
	for p := 0; p < b.Procs; p++ {
		pr := &s.Procs[p]
		if pr.Kernel != s.Env.Kernel {
			return false
		}
		for n := 0; n < b.Names; n++ {
			if pr.Src[n] != s.Env.Src[n] {
				return false
			}
		}
	}
	return true
}
