package model

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A name's hit is dead once another name of the launch missed: the launch
// ends in a packing and cannot converge (docs/model.md, "Dead fields").
// Before the miss it is live: the launch may still hit everything. Here A
// committed w0 and w1, w1's source changed, and B, restarted on it, hits
// w0, then misses w1.
func TestCanonForgetsTheHitOfALaunchThatMissed(t *testing.T) {
	b := Bounds{Procs: 2, Names: 2, Programs: 1, Kernels: 1, Sources: 2}
	d := ref(t)
	c := NewCanon(d, b, b.Symmetries(), false)
	checker := NewChecker(b)
	text := coldP1 + "change-source name=w1\nrestart proc=B\ninit proc=B program=P1\nlookup proc=B name=w0\n"

	outs := run(t, d, b, text)
	s := outs[len(outs)-1].Next
	require.Equal(t, stepHit, s.Procs[1].Ents[0].Step)
	f := s
	c.Forget(&f)
	require.Equal(t, stepHit, f.Procs[1].Ents[0].Step, "w1 is not looked up yet: the launch may converge")

	outs = run(t, d, b, text+"lookup proc=B name=w1\n")
	s = outs[len(outs)-1].Next
	require.Equal(t, stepMissed, s.Procs[1].Ents[1].Step)
	f = s
	c.Forget(&f)
	require.Equal(t, stepDone, f.Procs[1].Ents[0].Step, "w1 missed: w0's hit is dead")
	require.Empty(t, sameFutures(&c, d, b, s, f, checker))
}

// A launch's Clean is dead once it runs an outdated source of a name its
// program packs, and only then: a change to a name it does not pack
// leaves its finalize able to settle the program. A starts P2's launch
// after a source change it has not restarted for; P2 packs w1 alone at two
// names.
func TestCanonForgetsCleanOfAnOutdatedSourceOnly(t *testing.T) {
	b := Bounds{Procs: 2, Names: 2, Programs: 2, Kernels: 1, Sources: 2}
	d := ref(t)
	c := NewCanon(d, b, b.Symmetries(), false)
	checker := NewChecker(b)
	for _, tc := range []struct {
		name string
		dead bool
	}{{"w1", true}, {"w0", false}} {
		outs := run(t, d, b, "change-source name="+tc.name+"\ninit proc=A program=P2\n")
		s := outs[len(outs)-1].Next
		require.True(t, s.Procs[0].Clean)
		f := s
		c.Forget(&f)
		require.Equal(t, !tc.dead, f.Procs[0].Clean, "source of %s changed", tc.name)
		require.Empty(t, sameFutures(&c, d, b, s, f, checker))
		if !tc.dead {
			// Clean is read: the launch's finalize settles P2 by it.
			unclean := s
			unclean.Procs[0].Clean = false
			require.NotEmpty(t, sameFutures(&c, d, b, s, unclean, checker))
		}
	}
}
