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
	}{
		"commit":                     {"reference", coldLaunch},
		"warm-hit":                   {"reference", coldLaunch + relaunch},
		"converged-launch":           {"reference", coldLaunch + relaunch + "finalize proc=A\n"},
		"warm-launch-writes-nothing": {"reference", coldLaunch + relaunch + "finalize proc=A\n"},
		"refresh":                    {"reference", "init proc=B program=P1\nlookup proc=B name=w0\nreserve proc=B name=w0\ninsert proc=B name=w0\nfinalize proc=B\nunload proc=B program=P1\nchange-source name=w0\n" + relaunch + repack + "finalize proc=A\ninit proc=B program=P1\n"},
		"compaction":                 {"reference", coldLaunch + "change-source name=w0\n" + relaunch + repack + "finalize proc=A branch=compact\n"},
		"replace-unreadable":         {"reference", coldLaunch + "foreign kind=index\n" + relaunch + repack + "finalize proc=A\n"},
		"load-corrupt":               {"reference", coldLaunch + "foreign kind=index\nrestart proc=A\ninit proc=A program=P1\n"},
		"lock-busy-fallback":         {"reference", "init proc=A program=P1\ninit proc=B program=P1\nlookup proc=A name=w0\nreserve proc=A name=w0\nlookup proc=B name=w0\nreserve proc=B name=w0\n"},
		"corrupt-caught":             {"reference", coldLaunch + "foreign kind=data name=w0\n" + relaunch},
		"stale-miss":                 {"reference", coldLaunch + "change-source name=w0\n" + relaunch},
		"crash-mid-save":             {"reference", "init proc=A program=P1\nlookup proc=A name=w0\n" + repack + "crash kind=process proc=A branch=mid-save\n"},
		"invalidation-committed":     {"reference", coldLaunch + "unload proc=A program=P1\ninvalidate proc=A name=w0\n"},
		"idle-save-writes-nothing":   {"reference", coldLaunch + "save proc=A\n"},
		"repack-at-compute":          {"on-compute", coldLaunch + "foreign kind=data name=w0\nrestart proc=A\ninit proc=A program=P1\nlookup proc=A name=w0\nfinalize proc=A\ncompute proc=A name=w0\n"},
		"power-loss":                 {"reference", "init proc=A program=P1\ncrash kind=power branch=idle\n"},
	}
	covers := Covers()
	require.Len(t, covers, len(cases), "a case for every cover")
	for _, c := range covers {
		tc, ok := cases[c.Name]
		require.True(t, ok, "no case for cover %s", c.Name)
		assert.NotEmpty(t, c.Description, c.Name)
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
// compute; every other cover is every design's.
func TestCoversFor(t *testing.T) {
	names := func(d *Design) []string {
		var out []string
		for _, c := range CoversFor(d) {
			out = append(out, c.Name)
		}
		return out
	}
	all := names(design(t, "on-compute"))
	assert.Len(t, all, len(Covers()))
	assert.Contains(t, all, "repack-at-compute")
	refNames := names(ref(t))
	assert.Len(t, refNames, len(Covers())-1)
	assert.NotContains(t, refNames, "repack-at-compute")
	assert.Equal(t, all[:len(refNames)-1], refNames[:len(refNames)-1], "in Covers' order")
}
