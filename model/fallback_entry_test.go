package model

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/spec"
)

// A heap fall-back entry a look-up can reach (one not stepped in the
// launch) is present, not retired, and the packing of its own process's
// kernel and sources: put made it, a process keeps its kernel and sources
// for life, the heap takes no foreign write, and the launch whose look-up
// retires it re-packs the name over it. So lookUp's fall-back rule finds
// the same whether or not it asks that the look-up matched
// (docs/mutation.md, the `match &&` mutant). Searched breadth first from
// the start and from B holding a fall-back packing of w0 for P1.
func TestFallbackEntriesAreTheirProcessPacking(t *testing.T) {
	b := DefaultBounds()
	b.Depth = 0
	max := 30000
	if testing.Short() {
		max = 8000
	}
	ops, err := spec.ParseTrace(lockBusy + "insert proc=B name=w0\nfinalize proc=B\n")
	require.NoError(t, err)
	for _, d := range Designs() {
		starts := []State{Init(b)}
		if outs, err := Replay(&d, b, ops); err == nil {
			starts = append(starts, outs[len(outs)-1].Next)
		}
		fallbacks := 0
		for _, start := range starts {
			for _, s := range breadthFirst(&d, b, start, max) {
				for p := range b.Procs {
					pr := &s.Procs[p]
					for n := range b.Names {
						e := &pr.Ents[n]
						if !e.Fallback || e.Step != stepNone {
							continue
						}
						fallbacks++
						if !e.Rec.Present() || e.Retired || e.Rec.Key() != mkRec(pr.Kernel, pr.Src[n]) {
							t.Fatalf("%s: process %d name %d: fall-back entry %+v of a process at kernel %d sources %v\n%v",
								d.Name, p, n, *e, pr.Kernel, pr.Src, s)
						}
					}
				}
			}
		}
		if d.Name == "reference" {
			require.NotZero(t, fallbacks, "no fall-back entry reached: the check asks nothing")
		}
	}
}
