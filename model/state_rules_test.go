package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/spec"
)

// Small rules of the model's state, pinned on the model alone:
// docs/mutation.md lists the mutants of state.go, symmetry.go, design.go,
// step.go and replay.go these tests were shown failing on.

// A reservation in the file is a v2 file's growth until its insert; one on
// the heap, or an inserted one, is not.
func TestReservedInFile(t *testing.T) {
	outs := run(t, ref(t), DefaultBounds(), lockBusy+"insert proc=A name=w0\n")
	a, b := &outs[2].Next.Procs[0].Ents[0], &outs[5].Next.Procs[1].Ents[0]
	require.Equal(t, spec.PlaceFile, a.Place)
	assert.True(t, a.ReservedInFile())
	require.Equal(t, spec.PlaceHeap, b.Place, "the lock is A's")
	assert.False(t, b.ReservedInFile())
	assert.False(t, outs[1].Next.Procs[0].Ents[0].ReservedInFile(), "looked up, not reserved")
	assert.False(t, outs[6].Next.Procs[0].Ents[0].ReservedInFile(), "inserted")
}

func TestRecString(t *testing.T) {
	assert.Equal(t, "-", Rec(0).String())
	assert.Equal(t, "k0s0", mkRec(0, 0).String())
	assert.Equal(t, "k1s0", mkRec(1, 0).String())
	assert.Equal(t, "k0s1#2", mkRec(0, 1).withLabel(2).String())
	assert.Equal(t, "k1s1!", (mkRec(1, 1) | recCorrupt).String())
}

func TestSelfMirror(t *testing.T) {
	s := Init(DefaultBounds())
	assert.True(t, s.SelfMirror(), "two idle processes")
	o := last(t, ref(t), DefaultBounds(), "init proc=A program=P1\n")
	assert.False(t, o.Next.SelfMirror())
	o = last(t, ref(t), DefaultBounds(), "init proc=A program=P1\ninit proc=B program=P1\n")
	assert.True(t, o.Next.SelfMirror(), "both loaded the same program")
}

// A v3 index names each copy, so a tombstone drops only the copy it was
// taken of; a trailer index (no commit point) has no room for copy
// identity, so a tombstone drops whatever copy of the key is listed.
func TestSameTombCopy(t *testing.T) {
	r := mkRec(1, 0).withLabel(1)
	same, other, otherKey := r, r.withLabel(2), mkRec(0, 0).withLabel(1)
	v3, trailer := ref(t), design(t, "no-commit-point")
	require.True(t, trailer.NoCommitPoint)
	assert.True(t, v3.sameTombCopy(r, same.Copy()))
	assert.False(t, v3.sameTombCopy(r, other.Copy()))
	assert.True(t, trailer.sameTombCopy(r, other.Copy()))
	assert.False(t, trailer.sameTombCopy(r, otherKey.Copy()))
	assert.True(t, trailer.sameTombCopy(r|recCorrupt, same.Copy()), "corruption does not change the key")
}

// StepAppend into a buffer with room builds the outcome in place: the same
// outcomes as Step, after what the buffer held.
func TestStepAppendReusesTheBuffer(t *testing.T) {
	b := DefaultBounds()
	s := Init(b)
	op := spec.Op{Kind: spec.OpInit, Proc: 0, Program: 0}
	want := Step(ref(t), b, s, op)
	require.Len(t, want, 1)
	keep := Outcome{Events: EvtConverged}
	buf := make([]Outcome, 1, 4)
	buf[0] = keep
	got := StepAppend(buf, ref(t), b, &s, op)
	require.Len(t, got, 2)
	assert.Equal(t, &buf[0], &got[0], "no new array")
	assert.Equal(t, keep, got[0])
	assert.Equal(t, want[0], got[1])

	// A disabled op leaves the buffer as it was.
	got = StepAppend(buf, ref(t), b, &s, spec.Op{Kind: spec.OpFinalize, Proc: 0})
	assert.Equal(t, []Outcome{keep}, got)
}

// A replay error names the op by its 1-based place in the trace, and says
// whether it was disabled or needs a branch.
func TestReplayErrorText(t *testing.T) {
	op := spec.Op{Kind: spec.OpLookUp, Proc: 1, Name: 2}
	assert.Equal(t, `model: op 3 "lookup proc=B name=w2" not enabled`,
		(&ReplayError{Index: 2, Op: op}).Error())
	assert.Equal(t, `model: op 1 "lookup proc=B name=w2" has 2 outcomes; name a branch`,
		(&ReplayError{Index: 0, Op: op, Outcomes: 2}).Error())
}

// I5 lets an invalidation write when it drops a packing the instance knew
// as listed in the file, loaded or committed by itself, and not retired;
// the same write of a heap or retired entry is an idle write.
func TestInvalidationOfAListedPackingMayWrite(t *testing.T) {
	b := DefaultBounds()
	for _, c := range []struct {
		text   string
		status spec.EntryStatus
	}{
		{coldLaunch + "unload proc=A program=P1\ninvalidate proc=A name=w0\n", spec.EntryCommitted},
		{coldLaunch + warmLaunch("B", "P1", "w0") + "unload proc=B program=P1\ninvalidate proc=B name=w0\n", spec.EntryLoaded},
	} {
		ts := transitions(t, ref(t), b, c.text)
		inv := ts[len(ts)-1]
		pr := &inv.Prev.Procs[inv.Out.Op.Proc]
		require.Equal(t, c.status, pr.Ents[0].Status)
		require.False(t, dirty(pr), "nothing else to commit")
		require.True(t, inv.Out.Result.Wrote)
		assert.Empty(t, Check(b, inv), "%s", c.status)

		heap := *pr
		heap.Ents[0].Status = spec.EntryHeap
		assert.Equal(t, []spec.InvariantID{spec.InvNoIdleWrite},
			Check(b, Transition{Prev: withProc(inv.Prev, inv.Out.Op.Proc, heap), Out: inv.Out}), "%s made heap", c.status)
		retired := *pr
		retired.Ents[0].Retired = true
		assert.Equal(t, []spec.InvariantID{spec.InvNoIdleWrite},
			Check(b, Transition{Prev: withProc(inv.Prev, inv.Out.Op.Proc, retired), Out: inv.Out}), "%s retired", c.status)
	}
}

// withProc is s with process p replaced by pr.
func withProc(s *State, p spec.Proc, pr Proc) *State {
	c := *s
	c.Procs[p] = pr
	return &c
}

// The representative of a mirror pair is the one whose processes' bytes
// come first, and Canonical says it swapped only when it did: a state that
// is its own mirror image is never reported swapped.
func TestCanonicalIsTheLesserOfThePair(t *testing.T) {
	b := DefaultBounds()
	s := Init(b)
	_, swapped := s.Canonical()
	assert.False(t, swapped, "the start state is its own mirror image")
	outs := run(t, ref(t), b, "init proc=A program=P1\ninit proc=B program=P1\nlookup proc=B name=w0\n")
	for _, o := range outs {
		var raw, mir, c Encoding
		o.Next.Encode(&raw)
		m := mirror(o.Next)
		m.Encode(&mir)
		swapped := o.Next.CanonicalEncoding(&c)
		if o.Next.SelfMirror() {
			assert.False(t, swapped, o.Op.String())
			continue
		}
		lesser := raw
		if mir.less(&raw) {
			lesser = mir
		}
		assert.Equal(t, lesser, c, o.Op.String())
		assert.Equal(t, lesser != raw, swapped, o.Op.String())
	}
}
