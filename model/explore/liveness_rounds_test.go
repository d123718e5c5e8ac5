package explore

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/model"
)

// Rounds need not repeat at the state the walk left: the start differs
// from where a round ends only in a dead field (garbage before the first
// commit), which each round changes until it saturates. The cycle is the
// round from the first state that repeats; the rounds before it join the
// prefix.
func TestCloseRoundsRepeatAwayFromTheStart(t *testing.T) {
	b := model.Bounds{Procs: 2, Names: 2, Programs: 1, Kernels: 1, Sources: 1}
	// B's crashed packing is garbage of a file with no commit; each round
	// A does the same.
	r := replayRound(t, b,
		"init proc=B program=P1\nlookup proc=B name=w0\nreserve proc=B name=w0\ninsert proc=B name=w0\ncrash kind=process proc=B branch=idle",
		"init proc=A program=P1\nlookup proc=A name=w0\nreserve proc=A name=w0\ninsert proc=A name=w0\ncrash kind=process proc=A branch=idle")
	d, canon, prefix, round, start, end := *r.d, r.canon, r.prefix, r.round, r.start, r.end
	require.Equal(t, model.DiskEmpty, end.Disk.State)
	require.Less(t, start.Disk.Garbage, end.Disk.Garbage)
	require.True(t, canon.Same(start, end), "the round ends at the start up to dead fields")

	p, cycle, ok := closeRounds(&d, b, &canon, start, end, slices.Clone(prefix), slices.Clone(round))
	require.True(t, ok)
	require.Equal(t, round, cycle, "one round from where the states repeat")
	require.Greater(t, len(p), len(prefix)+len(round), "the rounds before the repeat join the prefix")
	assert.Equal(t, prefix, p[:len(prefix)])
	for k := len(prefix); k < len(p); k += len(round) {
		assert.Equal(t, round, p[k:k+len(round)])
	}
	outs, err := model.Replay(&d, b, p)
	require.NoError(t, err)
	at := outs[len(outs)-1].Next
	require.NotEqual(t, start, at, "the cycle does not start at the walk's start")
	outs, err = model.Replay(&d, b, append(slices.Clone(p), cycle...))
	require.NoError(t, err)
	assert.Equal(t, at, outs[len(outs)-1].Next, "the cycle returns to the state it left")
}
