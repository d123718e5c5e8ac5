package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each cover is reached by the step of a short scenario that does what it
// names, and by no step before it: a cover that held everywhere (or
// nowhere) would make the explorer's coverage check vacuous.
func TestCoversReachedWhereTheyShouldBe(t *testing.T) {
	b := DefaultBounds()
	relaunch := "restart proc=A\ninit proc=A program=P1\nlookup proc=A name=w0\n"
	repack := "reserve proc=A name=w0\ninsert proc=A name=w0\n"
	cases := map[string]struct {
		design, text string
		names        int // 0: the default bounds' names
	}{
		"commit":                     {"reference", coldLaunch, 0},
		"warm-hit":                   {"reference", coldLaunch + relaunch, 0},
		"converged-launch":           {"reference", coldLaunch + relaunch + "finalize proc=A\n", 0},
		"warm-launch-writes-nothing": {"reference", coldLaunch + relaunch + "finalize proc=A\n", 0},
		"refresh":                    {"reference", "init proc=B program=P1\nlookup proc=B name=w0\nreserve proc=B name=w0\ninsert proc=B name=w0\nfinalize proc=B\nunload proc=B program=P1\nchange-source name=w0\n" + relaunch + repack + "finalize proc=A\ninit proc=B program=P1\n", 0},
		"compaction":                 {"reference", coldLaunch + "change-source name=w0\n" + relaunch + repack + "finalize proc=A branch=compact\n", 0},
		"replace-unreadable":         {"reference", coldLaunch + "foreign kind=index\n" + relaunch + repack + "finalize proc=A\n", 0},
		"load-corrupt":               {"reference", coldLaunch + "foreign kind=index\nrestart proc=A\ninit proc=A program=P1\n", 0},
		"lock-busy-fallback":         {"reference", "init proc=A program=P1\ninit proc=B program=P1\nlookup proc=A name=w0\nreserve proc=A name=w0\nlookup proc=B name=w0\nreserve proc=B name=w0\n", 0},
		"corrupt-caught":             {"reference", coldLaunch + "foreign kind=data name=w0\n" + relaunch, 0},
		"stale-miss":                 {"reference", coldLaunch + "change-source name=w0\n" + relaunch, 0},
		"crash-mid-save":             {"reference", "init proc=A program=P1\nlookup proc=A name=w0\n" + repack + "crash kind=process proc=A branch=mid-save\n", 0},
		"invalidation-committed":     {"reference", coldLaunch + "unload proc=A program=P1\ninvalidate proc=A name=w0\n", 0},
		"idle-save-writes-nothing":   {"reference", coldLaunch + "save proc=A\n", 0},
		"repack-at-compute":          {"on-compute", coldLaunch + "foreign kind=data name=w0\nrestart proc=A\ninit proc=A program=P1\nlookup proc=A name=w0\nfinalize proc=A\ncompute proc=A name=w0\n", 0},
		"power-loss":                 {"reference", "init proc=A program=P1\ncrash kind=power branch=idle\n", 0},
		CoverReinitTruncates: {"executorch", "init proc=A program=P1\ninit proc=B program=P2\nlookup proc=A name=w0\n" + repack +
			"save proc=A\ncrash kind=process proc=A branch=idle\nlookup proc=B name=w1\nreserve proc=B name=w1\ninsert proc=B name=w1\nfinalize proc=B\n" +
			"init proc=B program=P1\nlookup proc=B name=w0\nreserve proc=B name=w0\n", 2},
	}
	covers := Covers()
	require.Len(t, covers, len(cases), "a case for every cover")
	for _, c := range covers {
		tc, ok := cases[c.Name]
		require.True(t, ok, "no case for cover %s", c.Name)
		assert.NotEmpty(t, c.Description, c.Name)
		b := b
		if tc.names != 0 {
			b.Names = tc.names
		}
		outs := run(t, design(t, tc.design), b, tc.text)
		prev := Init(b)
		for i, o := range outs {
			got := c.Reached(Transition{Prev: &prev, Out: &o})
			assert.Equal(t, i == len(outs)-1, got, "%s at step %d %s", c.Name, i+1, o.Op)
			prev = o.Next
		}
	}
}

// repack-at-compute is a cover only of the designs that check at the
// compute, reinit-truncates-commit only of ExecuTorch's; every other cover
// is every design's.
func TestCoversFor(t *testing.T) {
	names := func(d *Design) []string {
		var out []string
		for _, c := range CoversFor(d) {
			out = append(out, c.Name)
		}
		return out
	}
	all := names(design(t, "on-compute"))
	assert.Len(t, all, len(Covers())-1)
	assert.Contains(t, all, "repack-at-compute")
	assert.NotContains(t, all, CoverReinitTruncates)
	refNames := names(ref(t))
	assert.Len(t, refNames, len(Covers())-2)
	assert.NotContains(t, refNames, "repack-at-compute")
	assert.Equal(t, all[:len(refNames)-1], refNames[:len(refNames)-1], "in Covers' order")
	// The heap fall-back re-init is a cover only of the design that has it.
	et := names(design(t, "executorch"))
	assert.Contains(t, et, CoverReinitTruncates)
	assert.NotContains(t, et, "repack-at-compute")
}
