package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/spec"
)

func TestEveryInvariantHasACheck(t *testing.T) {
	all := checks()
	for _, inv := range spec.Invariants() {
		assert.NotNil(t, all[inv.ID], inv.ID)
	}
	assert.Len(t, all, len(spec.Invariants()), "a check for an invariant the table lacks")
}

// Each invariant's predicate must reject a transition that breaks it and
// accept the same transition with the breaking detail removed: a check that
// cannot fail would let the explorer pass vacuously.
func TestInvariantChecksCatchViolations(t *testing.T) {
	b := DefaultBounds()
	appended := Entry{Rec: mkRec(0, 0), Status: spec.EntryAppended, Maps: 1, CurIno: true}
	cases := []struct {
		id        spec.InvariantID
		op        spec.Op
		bad, good func(prev *State, o *Outcome)
	}{
		{spec.InvNoStaleHit, spec.Op{Kind: spec.OpLookUp},
			func(_ *State, o *Outcome) {
				o.Result = spec.Result{Hit: true, Bytes: spec.Packing{Kernel: 1, Intact: true}}
			},
			func(_ *State, o *Outcome) { o.Result = spec.Result{Hit: true, Bytes: spec.Packing{Intact: true}} }},
		{spec.InvNoCorruptHit, spec.Op{Kind: spec.OpLookUp},
			func(_ *State, o *Outcome) { o.Result = spec.Result{Hit: true} },
			func(_ *State, o *Outcome) { o.Result = spec.Result{Hit: true, Bytes: spec.Packing{LateCorrupt: true}} }},
		{spec.InvCommitSurvives, spec.Op{Kind: spec.EvKernelUpgrade},
			func(_ *State, o *Outcome) { o.Next.GhostValid, o.Next.Disk.State = true, DiskCorrupt },
			func(_ *State, o *Outcome) { o.Next.GhostValid, o.Next.Disk.State = true, DiskValid }},
		{spec.InvConverge, spec.Op{Kind: spec.OpLookUp},
			func(p *State, _ *Outcome) { p.Procs[0].Expect = true },
			func(p *State, o *Outcome) { p.Procs[0].Expect, o.Result.Hit = true, true; o.Result.Bytes.Intact = true }},
		{spec.InvNoIdleWrite, spec.Op{Kind: spec.OpFinalize},
			func(_ *State, o *Outcome) { o.Result.Wrote = true },
			func(p *State, o *Outcome) {
				o.Result.Wrote = true
				p.Procs[0].Ents[0] = appended
				o.Next.Disk.State = DiskValid
			}},
		{spec.InvGarbageBounded, spec.Op{Kind: spec.OpSave},
			func(p *State, o *Outcome) {
				p.Procs[0].Ents[0] = appended
				o.Result.Wrote, o.Next.Disk.Garbage, o.Next.Disk.Idx[0] = true, 2, mkRec(0, 0)
			},
			func(p *State, o *Outcome) {
				p.Procs[0].Ents[0] = appended
				o.Result.Wrote, o.Next.Disk.Garbage, o.Next.Disk.Idx[0] = true, 1, mkRec(0, 0)
			}},
		{spec.InvMapOnce, spec.Op{Kind: spec.OpInit},
			func(_ *State, o *Outcome) { o.Next.Procs[1].Ents[0].Maps = 2; o.Result.Place = spec.PlaceFile },
			func(_ *State, o *Outcome) { o.Next.Procs[1].Ents[0].Maps = 1; o.Result.Place = spec.PlaceFile }},
		{spec.InvNoSIGBUS, spec.Op{Kind: spec.EvKernelUpgrade},
			func(_ *State, o *Outcome) { o.Next.Procs[1].Broken = true },
			func(_ *State, o *Outcome) {}},
		{spec.InvOptionsOwned, spec.Op{Kind: spec.OpInit},
			func(_ *State, o *Outcome) { o.Result.Place = spec.PlaceHeap },
			func(_ *State, o *Outcome) { o.Result.Place = spec.PlaceFile }},
		{spec.InvSingleWriter, spec.Op{Kind: spec.EvKernelUpgrade},
			func(_ *State, o *Outcome) { o.Next.Procs[1].Ents[0] = appended },
			func(_ *State, o *Outcome) { o.Next.Procs[1].Ents[0] = appended; o.Next.Disk.Lock = 2 }},
		{spec.InvLoadTotal, spec.Op{Kind: spec.OpInit},
			func(_ *State, o *Outcome) { o.Result = spec.Result{Place: spec.PlaceFile, Failed: true} },
			func(_ *State, o *Outcome) { o.Result = spec.Result{Place: spec.PlaceFile} }},
		{spec.InvNoUncheckedUse, spec.Op{Kind: spec.OpLookUp},
			func(_ *State, o *Outcome) {
				o.Result = spec.Result{Hit: true, Bytes: spec.Packing{Intact: true}}
				o.Next.Procs[0].Ents[0].Verified = false
			},
			func(_ *State, o *Outcome) { o.Result = spec.Result{Hit: true, Bytes: spec.Packing{Intact: true}} }},
		// At a compute after finalize (on-compute): the bytes the output is
		// computed from were checked, intact, and only a re-pack's save
		// writes.
		{spec.InvNoUncheckedUse, spec.Op{Kind: spec.OpCompute},
			func(_ *State, o *Outcome) {
				o.Result = spec.Result{Bytes: spec.Packing{Intact: true}}
				o.Next.Procs[0].Ents[0].Verified = false
			},
			func(_ *State, o *Outcome) { o.Result = spec.Result{Checked: true, Bytes: spec.Packing{Intact: true}} }},
		{spec.InvNoCorruptHit, spec.Op{Kind: spec.OpCompute},
			func(_ *State, o *Outcome) { o.Result = spec.Result{Checked: true} },
			func(_ *State, o *Outcome) { o.Result = spec.Result{Checked: true, Bytes: spec.Packing{Intact: true}} }},
		{spec.InvNoIdleWrite, spec.Op{Kind: spec.OpCompute},
			func(_ *State, o *Outcome) { o.Result = spec.Result{Wrote: true, Bytes: spec.Packing{Intact: true}} },
			func(_ *State, o *Outcome) {
				o.Result = spec.Result{Wrote: true, Checked: true, Place: spec.PlaceFile, Bytes: spec.Packing{Intact: true}}
				o.Events = EvtCorruptCaught | EvtComputeRepack
			}},
		// A look-up that hands out an unchecked handle for its compute to
		// check (on-compute) hands no bytes over: I2 and I13 wait for the
		// compute.
		{spec.InvNoUncheckedUse, spec.Op{Kind: spec.OpLookUp},
			func(_ *State, o *Outcome) {
				o.Result = spec.Result{Hit: true, Bytes: spec.Packing{Intact: true}}
				o.Next.Procs[0].Ents[0].Verified = false
			},
			func(_ *State, o *Outcome) {
				o.Result = spec.Result{Hit: true}
				o.Next.Procs[0].Ents[0].Verified = false
				o.Events = EvtUncheckedHandle
			}},
		{spec.InvFallbackNoError, spec.Op{Kind: spec.OpCompute},
			func(_ *State, o *Outcome) { o.Result = spec.Result{Failed: true, Bytes: spec.Packing{Intact: true}} },
			func(_ *State, o *Outcome) {
				o.Result = spec.Result{Place: spec.PlaceHeap, Reason: spec.ReasonLockBusy, Bytes: spec.Packing{Intact: true}}
			}},
		{spec.InvFallbackNoError, spec.Op{Kind: spec.OpReserve},
			func(_ *State, o *Outcome) { o.Result.Failed = true },
			func(_ *State, o *Outcome) { o.Result.Place = spec.PlaceHeap }},
	}
	covered := map[spec.InvariantID]bool{}
	for _, c := range cases {
		covered[c.id] = true
		for _, bad := range []bool{true, false} {
			prev := Init(b)
			prev.Procs[0].OptModule = true
			o := Outcome{Op: c.op, Next: prev}
			// The entry a hit hands out was checked (I13), unless a case
			// says otherwise.
			o.Next.Procs[0].Ents[0].Verified = true
			if bad {
				c.bad(&prev, &o)
			} else {
				c.good(&prev, &o)
			}
			got := Check(b, Transition{Prev: &prev, Out: &o})
			if bad {
				assert.Equal(t, []spec.InvariantID{c.id}, got, "%s: the breaking transition", c.id)
			} else {
				assert.Empty(t, got, "%s: the holding transition", c.id)
			}
		}
	}
	for _, inv := range spec.Invariants() {
		require.True(t, covered[inv.ID], "no case for %s", inv.ID)
	}
}
