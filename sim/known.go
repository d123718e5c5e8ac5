package sim

import (
	"errors"
	"fmt"

	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/spec"
)

// A known divergence is a difference between the model and the real cache
// that has been analysed and attributed (to a modelling choice or to the
// cache's protocol) but not resolved in either. Each is recognized by a
// narrow predicate over the step; a run that reaches one stops there with a
// *KnownDivergenceError instead of a *DivergenceError (the states differ
// from then on, so comparing further would only cascade). Each has a
// scenario in testdata/known that TestKnownDivergences requires to still
// diverge: when the model or the cache is changed to agree, that test
// fails and the scenario moves to testdata/scenarios.
type Known struct {
	ID      string
	Summary string
	match   func(k knownCase) bool
}

// knownCase is what a predicate sees: the step, the model's states around
// it, and what the cache returned and committed.
type knownCase struct {
	op        spec.Op
	prev      *model.State
	out       *model.Outcome
	got       spec.Result
	modelDisk string
	cacheDisk string
}

// KnownDivergences lists the analysed divergences that are open. The ones
// resolved since (in the model or the cache) replay as the conformance-*
// scenarios; docs/scenarios.md keeps their analysis.
func KnownDivergences() []Known {
	return []Known{
		{
			ID: "refresh-remaps-compacted-entries",
			Summary: "after a compaction rewrote the file, the committing instance's next program init " +
				"refreshes its view and maps its entries from the new file, keeping them as checked; a " +
				"later foreign write to the new file then reaches them, and the cache hands the changed " +
				"bytes out unchecked (which I2 allows for bytes changed after this instance checked them). " +
				"The model keeps those entries as mappings of the old file, so it predicts intact bytes.",
			match: func(k knownCase) bool {
				if k.op.Kind != spec.OpLookUp || !k.got.Hit || k.got.Bytes.Intact ||
					!k.out.Result.Hit || !k.out.Result.Bytes.Intact {
					return false
				}
				e := k.prev.Procs[k.op.Proc].Ents[k.op.Name]
				return (e.Status == spec.EntryCommitted || e.Status == spec.EntryLoaded) && !e.CurIno && e.Verified
			},
		},
		{
			ID: "compaction-threshold-differs",
			Summary: "the cache compacts when garbage exceeds half the live bytes (DefaultCompactGarbageRatio), " +
				"the model when stale packings outnumber live ones, so the cache may rewrite the file by rename " +
				"where the model appends. A foreign write to the file then misses the committing instance's " +
				"mapping of the old file in the cache (intact bytes handed out) while the model predicts the " +
				"changed bytes (allowed by I2 as changed after this instance checked them).",
			match: func(k knownCase) bool {
				return k.op.Kind == spec.OpLookUp && k.got.Hit && k.got.Bytes.Intact &&
					k.out.Result.Hit && k.out.Result.Bytes.LateCorrupt &&
					k.got.Bytes.Kernel == k.out.Result.Bytes.Kernel && k.got.Bytes.Source == k.out.Result.Bytes.Source
			},
		},
	}
}

// ErrKnownDivergence is matched by every *KnownDivergenceError.
var ErrKnownDivergence = errors.New("sim: known divergence")

// KnownDivergenceError is a run stopped at a known divergence.
type KnownDivergenceError struct {
	ID   string
	Step int
	Op   string
	Diff *DivergenceError
}

func (e *KnownDivergenceError) Error() string {
	return fmt.Sprintf("step %d %q: known divergence %s", e.Step, e.Op, e.ID)
}

func (e *KnownDivergenceError) Unwrap() error { return ErrKnownDivergence }

func matchKnown(known []Known, k knownCase) (Known, bool) {
	for _, kd := range known {
		if kd.match(k) {
			return kd, true
		}
	}
	return Known{}, false
}
