package sim

import (
	"errors"
	"fmt"
	"strings"

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

// KnownDivergences lists the analysed divergences that are open. Four
// found by the first random conformance runs (readers blocked by the writer
// lock, an insert equal to a merged commit, commits of dropped entries, the
// committer's mappings after a replace) were resolved in the model and
// replay as the conformance-* scenarios; docs/scenarios.md keeps their
// analysis.
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
		{
			ID: "heap-repack-freed-with-its-program",
			Summary: "a program that re-packs to the heap a name another loaded program of the same instance " +
				"still holds (as a retired file entry) gets a new heap entry in the cache, freed when that " +
				"program is unloaded, so the next look-up misses and re-packs; the model keeps one entry per " +
				"name, whose holders are both programs, and predicts a hit.",
			match: func(k knownCase) bool {
				if k.op.Kind != spec.OpLookUp || k.got.Hit || !k.out.Result.Hit {
					return false
				}
				e := k.prev.Procs[k.op.Proc].Ents[k.op.Name]
				return e.Status == spec.EntryHeap
			},
		},
		{
			ID: "replace-relists-known-entries",
			Summary: "a commit that replaces an unreadable file by rename lists, in the new file, the entries " +
				"the committing instance still holds from the old one (loaded or committed earlier), copying " +
				"their bytes, checked or not (a reader's data check catches a corrupt one, G1); the model's " +
				"replacement index holds only the committer's new packings.",
			match: func(k knownCase) bool {
				return k.out.Events&model.EvtReplace != 0 && supersetDisk(k.cacheDisk, k.modelDisk)
			},
		},
	}
}

// supersetDisk reports whether the cache's file description lists every
// entry the model's lists, equal, and more.
func supersetDisk(cache, model string) bool {
	cf, mf := strings.Fields(cache), strings.Fields(model)
	if len(cf) != len(mf) || cf[0] != "valid" || mf[0] != "valid" || cache == model {
		return false
	}
	for i := range cf {
		if cf[i] != mf[i] && !strings.HasSuffix(mf[i], "=-") {
			return false
		}
	}
	return true
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
