package model

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/spec"
)

// sampleStates returns states design d reaches at bounds b: the first
// breadth-first ones, then the states along random walks past them.
func sampleStates(d *Design, b Bounds, bfs, walks, length int, seed uint64) []State {
	alphabet := Alphabet(b)
	start := Init(b)
	out := breadthFirst(d, b, start, bfs)
	rng := rand.New(rand.NewPCG(seed, 7))
	for range walks {
		s := start
		for range length {
			var next []Outcome
			for _, op := range alphabet {
				next = append(next, Step(d, b, s, op)...)
			}
			if len(next) == 0 {
				break
			}
			s = next[rng.IntN(len(next))].Next
			out = append(out, s)
		}
	}
	return out
}

// breadthFirst returns the first states (at least max, when there are as
// many) design d reaches from start at bounds b, breadth first.
func breadthFirst(d *Design, b Bounds, start State, max int) []State {
	seen := map[State]bool{start: true}
	out := []State{start}
	for i := 0; i < len(out) && len(out) < max; i++ {
		for _, op := range Alphabet(b) {
			for _, o := range Step(d, b, out[i], op) {
				if !seen[o.Next] {
					seen[o.Next] = true
					out = append(out, o.Next)
				}
			}
		}
	}
	return out
}

// equivariant reports the first way in which renaming r is not a symmetry
// of design d at state s: the renamed state's steps must be the renamed
// steps, with the same results and events, the same invariant verdicts,
// covers (of the names) and liveness predicates ("" when it is one).
func equivariant(d *Design, b Bounds, s State, r Renaming, checker *Checker) string {
	rs := s.Renamed(r)
	if Current(b, &s) != Current(b, &rs) {
		return "Current differs"
	}
	covers := CoversFor(d)
	for _, op := range Alphabet(b) {
		a, c := Step(d, b, s, op), Step(d, b, rs, r.Op(op))
		if len(a) != len(c) {
			return fmt.Sprintf("%v: %d outcomes, renamed %d", op, len(a), len(c))
		}
		for k := range a {
			ta, tc := Transition{Prev: &s, Out: &a[k]}, Transition{Prev: &rs, Out: &c[k]}
			switch {
			case a[k].Next.Renamed(r) != c[k].Next:
				return fmt.Sprintf("%v: next states differ\n%v\nrenamed\n%v", op, a[k].Next, c[k].Next)
			case r.Op(a[k].Op) != c[k].Op:
				return fmt.Sprintf("%v: ops %v and %v", op, a[k].Op, c[k].Op)
			}
			// power-loss asks for process A's instance: of the processes,
			// covers are asked of the canonical state only.
			if why := sameVerdicts(b, checker, covers, ta, tc, r&SwapProcs == 0); why != "" {
				return fmt.Sprintf("%v: %s", op, why)
			}
		}
	}
	return ""
}

// sameVerdicts reports the first way in which two transitions judged alike
// are judged differently: results and events, invariant verdicts, the
// liveness predicates and, if askCovers, the covers ("" when they agree).
func sameVerdicts(b Bounds, checker *Checker, covers []Cover, ta, tc Transition, askCovers bool) string {
	a, c := ta.Out, tc.Out
	switch {
	case a.Result != c.Result || a.Events != c.Events:
		return fmt.Sprintf("results %+v %v and %+v %v", a.Result, a.Events, c.Result, c.Events)
	case !slices.Equal(checker.Violated(nil, ta), checker.Violated(nil, tc)):
		return fmt.Sprintf("violations %v and %v", checker.Violated(nil, ta), checker.Violated(nil, tc))
	case Quiet(a.Op) != Quiet(c.Op) || Launched(ta) != Launched(tc) || ConvergedLaunch(b, ta) != ConvergedLaunch(b, tc):
		return "liveness predicates differ"
	}
	for _, cv := range covers {
		if askCovers && cv.Reached(ta) != cv.Reached(tc) {
			return fmt.Sprintf("cover %s differs", cv.Name)
		}
	}
	return ""
}

// Every renaming in Bounds.Symmetries is a symmetry of every design: on
// reached states of two and three names, a renamed state steps to the
// renamed outcomes with the same verdicts. That is what lets the explorer
// visit one state of each orbit (docs/model.md, "Symmetry").
func TestRenamingsAreSymmetriesOfEveryDesign(t *testing.T) {
	bounds := []Bounds{
		{Procs: 2, Names: 2, Programs: 1, Kernels: 2, Sources: 2, Foreign: true},
		{Procs: 2, Names: 3, Programs: 1, Kernels: 2, Sources: 1, Foreign: true},
		{Procs: 1, Names: 2, Programs: 1, Kernels: 2, Sources: 1, Foreign: true},
	}
	for _, b := range bounds {
		g := b.Symmetries()
		require.NotZero(t, g&SwapNames, "%+v", b)
		for _, d := range Designs() {
			checker := NewChecker(b)
			states := sampleStates(&d, b, 600, 12, 60, 1)
			for _, s := range states {
				for r := Renaming(1); r <= SwapProcs|SwapNames; r++ {
					if r&^g != 0 {
						continue
					}
					if msg := equivariant(&d, b, s, r, checker); msg != "" {
						t.Fatalf("%s %+v, renaming %d at\n%v\n%s", d.Name, b, r, s, msg)
					}
				}
			}
		}
	}
}

// The names are not interchangeable when a program packs one and not the
// other: Symmetries leaves SwapNames out, and the check above would fail.
func TestNamesTellApartByProgramsAreNotSymmetric(t *testing.T) {
	b := Bounds{Procs: 2, Names: 2, Programs: 2, Kernels: 1, Sources: 1}
	require.Zero(t, b.Symmetries()&SwapNames, "P2 packs w1 alone")
	d := ref(t)
	checker := NewChecker(b)
	broken := false
	for _, s := range sampleStates(d, b, 300, 0, 0, 1) {
		if equivariant(d, b, s, SwapNames, checker) != "" {
			broken = true
			break
		}
	}
	require.True(t, broken, "exchanging the names of programs that tell them apart is no symmetry")
}

// The canonical encoding is one per orbit, and is the encoding of the state
// renamed by the renaming it returns.
func TestCanonicalEncodingUnderIsOnePerOrbit(t *testing.T) {
	b := Bounds{Procs: 2, Names: 2, Programs: 1, Kernels: 2, Sources: 2, Foreign: true}
	g := b.Symmetries()
	require.Equal(t, SwapProcs|SwapNames, g)
	renamed := 0
	for _, s := range sampleStates(ref(t), b, 2000, 20, 60, 2) {
		var want Encoding
		r := s.CanonicalEncodingUnder(&want, g)
		require.Equal(t, s.Renamed(r), want.Decode())
		if r&SwapNames != 0 {
			renamed++
		}
		for x := Renaming(1); x <= g; x++ {
			var got Encoding
			rs := s.Renamed(x)
			rx := rs.CanonicalEncodingUnder(&got, g)
			require.Equal(t, want, got, "renaming %d of\n%v", x, s)
			require.Equal(t, s.Renamed(r), rs.Renamed(rx))
		}
		ambiguous := s.Renamed(SwapProcs) == s || s.Renamed(SwapProcs|SwapNames) == s
		require.Equal(t, ambiguous, s.ProcsAmbiguous(g))
		require.Equal(t, s.SelfMirror(), s.ProcsAmbiguous(SwapProcs))
	}
	require.Positive(t, renamed, "some states are represented with their names exchanged")
	var p, q Encoding
	one := Bounds{Procs: 2, Names: 1, Programs: 1, Kernels: 1, Sources: 1}
	require.Equal(t, SwapProcs, one.Symmetries())
	s := sampleStates(ref(t), one, 50, 0, 0, 1)[40]
	swapped := s.CanonicalEncoding(&p)
	require.Equal(t, swapped, s.CanonicalEncodingUnder(&q, SwapProcs) == SwapProcs)
	require.Equal(t, p, q, "with the processes alone it is CanonicalEncoding")
}

func TestRenamingOps(t *testing.T) {
	look := spec.Op{Kind: spec.OpLookUp, Proc: 0, Name: 1}
	require.Equal(t, spec.Op{Kind: spec.OpLookUp, Proc: 1, Name: 0}, (SwapProcs | SwapNames).Op(look))
	require.Equal(t, spec.Op{Kind: spec.OpLookUp, Proc: 0, Name: 0}, SwapNames.Op(look))
	w2 := spec.Op{Kind: spec.OpInsert, Name: 2}
	require.Equal(t, w2, SwapNames.Op(w2), "w2 is not exchanged")
	for _, op := range []spec.Op{
		{Kind: spec.OpInit, Program: 0},
		{Kind: spec.OpFinalize},
		{Kind: spec.EvForeign, Foreign: spec.ForeignIndex},
		{Kind: spec.EvKernelUpgrade},
	} {
		require.Equal(t, op, SwapNames.Op(op), "%v takes no name", op)
	}
	require.Equal(t, spec.Name(1), SwapNames.Op(spec.Op{Kind: spec.EvForeign, Foreign: spec.ForeignData}).Name)
	require.Equal(t, spec.Name(1), SwapNames.Op(spec.Op{Kind: spec.EvSourceChange}).Name)
}
