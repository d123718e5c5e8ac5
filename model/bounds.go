package model

import (
	"fmt"

	"github.com/xpwc/xpwc/spec"
)

// Array sizes of State. Bounds may use fewer; every bound above these is
// rejected by Bounds.Validate.
const (
	maxProcs    = 2
	maxNames    = 3
	maxPrograms = 2
	maxVersions = 2 // kernel and source versions are 0 … maxVersions-1
)

// MaxNames is the most names a State holds (the size of its arrays).
const MaxNames = maxNames

// Bounds limits what the model ranges over: how many processes, tensor
// names and programs, how many kernel and source versions the environment
// may go through, and (for the explorer) how deep.
type Bounds struct {
	Procs    int // 1 … 2
	Names    int // 1 … 3
	Programs int // 1 … 2
	Kernels  int // kernel layout versions, 1 … 2 (2 allows one upgrade)
	Sources  int // source versions per name, 1 … 2
	// Foreign enables foreign writers (EvForeign) and clobbered options.
	Foreign bool
	// Depth is the explorer's bound on trace length; Step ignores it.
	Depth int
}

// DefaultBounds finishes a full exploration of one design in a few seconds on
// one core while reaching every variant's bug and every Cover of the
// reference (asserted by model/explore's tests).
func DefaultBounds() Bounds {
	return Bounds{Procs: 2, Names: 1, Programs: 2, Kernels: 2, Sources: 2, Foreign: true, Depth: 14}
}

// ExhaustiveBounds are the bounds the explorer proves at: no depth bound,
// and a reachable state space small enough to explore to the end (about
// 200,000 states for the reference, dead fields forgotten) with the
// liveness check on. One source version: a source change invalidates as
// an upgrade does, so the second adds states but no cover or variant's bug
// the explorer does not reach here (model/explore's tests). One program:
// the second is not nothing new (a heap fall-back packing one program
// held kept the reference from converging for the other, docs/bugs.md),
// but it multiplies the states by about 16, and `--names 2` with it
// would not end in minutes; model/explore's TestLivenessTwoPrograms
// checks liveness with two programs at one kernel version instead.
func ExhaustiveBounds() Bounds {
	b := DefaultBounds()
	b.Programs, b.Sources, b.Depth = 1, 1, 0
	return b
}

// ErrBounds is returned (wrapped) when a Bounds field is out of range.
var ErrBounds = fmt.Errorf("model: bounds out of range")

// Validate reports the first field out of range.
func (b Bounds) Validate() error {
	check := func(name string, v, lo, hi int) error {
		if v < lo || v > hi {
			return fmt.Errorf("%w: %s=%d, want %d…%d", ErrBounds, name, v, lo, hi)
		}
		return nil
	}
	for _, c := range []struct {
		name      string
		v, lo, hi int
	}{
		{"procs", b.Procs, 1, maxProcs},
		{"names", b.Names, 1, maxNames},
		{"programs", b.Programs, 1, maxPrograms},
		{"kernels", b.Kernels, 1, maxVersions},
		{"sources", b.Sources, 1, maxVersions},
		{"depth", b.Depth, 0, 1 << 10},
	} {
		if err := check(c.name, c.v, c.lo, c.hi); err != nil {
			return err
		}
	}
	return nil
}

// ProgramNames is the set of names (a bitmask over spec.Name) program p
// packs. P1 packs w0 and w1, P2 packs w1 and w2, cut to b.Names, so two
// programs share a tensor whenever there are at least two names; with one
// name both programs pack w0.
func (b Bounds) ProgramNames(p spec.Program) uint8 {
	var m uint8
	switch p {
	case 0:
		m = 0b011
	default:
		m = 0b110
	}
	m &= 1<<b.Names - 1
	if m == 0 {
		m = 1
	}
	return m
}

// programsWith is the set of programs (bitmask) that pack name n.
func (b Bounds) programsWith(n int) uint8 {
	var m uint8
	for p := 0; p < b.Programs; p++ {
		if b.ProgramNames(spec.Program(p))&(1<<n) != 0 {
			m |= 1 << p
		}
	}
	return m
}

// Alphabet is every op the explorer tries in every state, in a fixed order
// (so exploration and its traces are deterministic). Step rejects the ones a
// state does not enable. Crash ops carry BranchNone: Step expands them.
func Alphabet(b Bounds) []spec.Op {
	var ops []spec.Op
	for p := 0; p < b.Procs; p++ {
		pr := spec.Proc(p)
		for q := 0; q < b.Programs; q++ {
			ops = append(ops, spec.Op{Kind: spec.OpInit, Proc: pr, Program: spec.Program(q)})
		}
		for n := 0; n < b.Names; n++ {
			nm := spec.Name(n)
			ops = append(ops,
				spec.Op{Kind: spec.OpLookUp, Proc: pr, Name: nm},
				spec.Op{Kind: spec.OpReserve, Proc: pr, Name: nm},
				spec.Op{Kind: spec.OpInsert, Proc: pr, Name: nm},
				spec.Op{Kind: spec.OpInvalidate, Proc: pr, Name: nm},
				spec.Op{Kind: spec.OpCompute, Proc: pr, Name: nm})
		}
		ops = append(ops,
			spec.Op{Kind: spec.OpFinalize, Proc: pr},
			spec.Op{Kind: spec.OpSave, Proc: pr})
		for q := 0; q < b.Programs; q++ {
			ops = append(ops, spec.Op{Kind: spec.OpUnload, Proc: pr, Program: spec.Program(q)})
		}
		ops = append(ops,
			spec.Op{Kind: spec.OpDestroy, Proc: pr},
			spec.Op{Kind: spec.EvCrash, Crash: spec.CrashProcess, Proc: pr},
			spec.Op{Kind: spec.EvRestart, Proc: pr})
		if b.Foreign {
			ops = append(ops, spec.Op{Kind: spec.EvClobberOptions, Proc: pr})
		}
	}
	ops = append(ops, spec.Op{Kind: spec.EvCrash, Crash: spec.CrashPower})
	ops = append(ops, spec.Op{Kind: spec.EvKernelUpgrade})
	for n := 0; n < b.Names; n++ {
		ops = append(ops, spec.Op{Kind: spec.EvSourceChange, Name: spec.Name(n)})
	}
	if b.Foreign {
		for n := 0; n < b.Names; n++ {
			ops = append(ops, spec.Op{Kind: spec.EvForeign, Foreign: spec.ForeignData, Name: spec.Name(n)})
		}
		ops = append(ops, spec.Op{Kind: spec.EvForeign, Foreign: spec.ForeignIndex})
	}
	return ops
}
