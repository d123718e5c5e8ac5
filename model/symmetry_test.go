package model

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/spec"
)

func mirror(s State) State {
	s.Procs[0], s.Procs[1] = s.Procs[1], s.Procs[0]
	if s.Disk.Lock != 0 {
		s.Disk.Lock = 3 - s.Disk.Lock
	}
	return s
}

func TestCanonicalIsOnePerMirrorPair(t *testing.T) {
	b := DefaultBounds()
	outs := run(t, ref(t), b, `
init proc=B program=P1
lookup proc=B name=w0
reserve proc=B name=w0
`)
	s := outs[len(outs)-1].Next
	require := assert.New(t)
	c1, sw1 := s.Canonical()
	c2, sw2 := mirror(s).Canonical()
	require.Equal(c1, c2, "a state and its mirror have one representative")
	require.NotEqual(sw1, sw2)
	again, sw := c1.Canonical()
	require.Equal(c1, again)
	require.False(sw)
	// The lock holder is renamed with the processes.
	holder := c1.Disk.Lock - 1
	require.True(hasAppended(&c1.Procs[holder]) || c1.Procs[holder].Ents[0].Step == stepReserved)
	// Symmetric designs: a mirrored state steps to the mirrored outcome.
	d := ref(t)
	for _, op := range Alphabet(b) {
		m := op
		if TakesProc(op) {
			m.Proc = 1 - op.Proc
		}
		a, c := Step(d, b, s, op), Step(d, b, mirror(s), m)
		require.Len(c, len(a), op.String())
		for k := range a {
			require.Equal(mirror(a[k].Next), c[k].Next, op.String())
			require.Equal(a[k].Result, c[k].Result, op.String())
		}
	}
	require.False(TakesProc(spec.Op{Kind: spec.EvCrash, Crash: spec.CrashPower}))
	require.True(TakesProc(spec.Op{Kind: spec.EvCrash, Crash: spec.CrashProcess}))
}

// The canonical encoding, built by swapping and renumbering the bytes of
// an encoding, is the encoding of the state built by swapping and
// renumbering the state's fields: Encoding.canonicalCopies follows
// canonicalCopies record for record.
func TestCanonicalEncodingMatchesTheStates(t *testing.T) {
	b := DefaultBounds()
	// Two copies of w0 in four records: the file's index and A hold the
	// copy a foreign write changed, B its tombstone and a re-pack.
	outs := run(t, ref(t), b, repackAfterForeignWrite)
	var states []State
	for _, o := range outs {
		for _, op := range Alphabet(b) {
			for _, x := range Step(ref(t), b, o.Next, op) {
				states = append(states, x.Next)
			}
		}
	}
	// And labels in every record of two names, in random patterns.
	rng := rand.New(rand.NewPCG(1, 2))
	label := func() Rec {
		if rng.IntN(4) == 0 {
			return 0
		}
		return mkRec(uint8(rng.IntN(2)), 0).withLabel(uint8(rng.IntN(8)))
	}
	for range 500 {
		var s State
		for n := range 2 {
			s.Disk.Idx[n] = label()
			for q := range s.Procs {
				s.Procs[q].Ents[n].Rec, s.Procs[q].Tomb[n] = label(), label()
			}
		}
		states = append(states, s)
	}
	n := 0
	for _, s := range states {
		m := mirror(s)
		canonicalCopies(&m)
		var es, em, got Encoding
		s.Encode(&es)
		m.Encode(&em)
		want, swapped := es, false
		if em.less(&es) {
			want, swapped = em, true
		}
		sw := s.CanonicalEncoding(&got)
		require.Equal(t, want, got, "%v", s)
		require.Equal(t, swapped, sw)
		if swapped {
			n++
		}
	}
	require.Positive(t, n, "some states swap")
}

// TestCanonicalIsUniqueWhenTheProcessesTie: a state and its mirror image
// have one representative, also when the two processes' bytes tie and only
// the disk (who holds the lock) tells them apart.
func TestCanonicalIsUniqueWhenTheProcessesTie(t *testing.T) {
	b := DefaultBounds()
	states := sampleStates(ref(t), b, 1000, 400, 60, 3)
	for _, s := range states[:200] {
		s.Procs[1] = s.Procs[0] // the processes tie ...
		for _, lock := range []uint8{1, 2} {
			s.Disk.Lock = lock // ... and the lock tells them apart
			states = append(states, s)
		}
	}
	for _, s := range states {
		m := mirror(s)
		canonicalCopies(&m)
		var cs, cm Encoding
		s.CanonicalEncoding(&cs)
		m.CanonicalEncoding(&cm)
		require.Equal(t, cs, cm, "%v", s)
	}
}
