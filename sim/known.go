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

// KnownDivergences lists the analysed divergences.
func KnownDivergences() []Known {
	return []Known{
		{
			ID: "reader-waits-for-writer",
			Summary: "the cache's load takes a shared lock that excludes writers (docs/locking.md), so a process " +
				"initializing while another holds the writer lock finds the lock busy and packs to heap; the model " +
				"lets readers load a committed index at any time (v3 commit slots make that safe).",
			match: func(k knownCase) bool {
				return k.op.Kind == spec.OpInit && k.got.Load == loadLocked &&
					k.prev.Disk.Lock != 0 && k.prev.Disk.Lock != uint8(k.op.Proc)+1
			},
		},
		{
			ID: "insert-equal-to-merged-commit",
			Summary: "a writer that merges another process's newer commit when it takes the lock, and then inserts a " +
				"packing equal to one that commit holds, keeps the committed entry and writes nothing; the model " +
				"commits its own copy (one more garbage packing).",
			match: func(k knownCase) bool {
				if (k.op.Kind != spec.OpFinalize && k.op.Kind != spec.OpSave) || !k.out.Result.Wrote || k.got.Wrote {
					return false
				}
				pr := &k.prev.Procs[k.op.Proc]
				any := false
				for n := range pr.Ents {
					if pr.Ents[n].Status == spec.EntryAppended {
						any = true
						if k.prev.Disk.Idx[n].Identity() != pr.Ents[n].Rec.Identity() {
							return false
						}
					}
				}
				return any
			},
		},
		{
			ID: "commit-drops-dropped-entries",
			Summary: "the cache commits the removal of committed entries it dropped (stale after an upgrade or a " +
				"source change, corrupt, invalidated) at the next finalize or save, even with nothing new appended " +
				"(or reports the lock busy when another process writes), and replaces an unreadable file when it does; the model writes only with new packings (or an " +
				"invalidation of an entry its valid index lists), so its index keeps the dropped entries.",
			match: func(k knownCase) bool {
				switch k.op.Kind {
				case spec.OpFinalize, spec.OpSave, spec.OpInvalidate:
				default:
					return false
				}
				if k.out.Result.Wrote || k.out.Result.Reason != spec.ReasonNone {
					return false
				}
				// It wrote, or tried to and found the lock busy.
				return (k.got.Wrote && subsetDisk(k.cacheDisk, k.modelDisk)) ||
					(!k.got.Wrote && k.got.Reason == spec.ReasonLockBusy)
			},
		},
		{
			ID: "replace-keeps-committer-mapping-current",
			Summary: "when a commit replaces the file by rename, the model marks every mapping as one of the old " +
				"inode, including the committing process's own new entries, which live in the renamed file; a " +
				"later foreign write to the file therefore reaches them in the cache (handed out unchecked, as I2 " +
				"allows for bytes changed after this instance checked them) but not in the model.",
			match: func(k knownCase) bool {
				if k.op.Kind != spec.OpLookUp || !k.got.Hit || k.got.Bytes.Intact || !k.out.Result.Hit {
					return false
				}
				e := k.prev.Procs[k.op.Proc].Ents[k.op.Name]
				return k.out.Result.Bytes.Intact && e.Status == spec.EntryCommitted && !e.CurIno
			},
		},
	}
}

// subsetDisk reports whether the cache's file description lists a subset of
// the model's entries with nothing else different, or is a valid file
// where the model's is corrupt.
func subsetDisk(cache, model string) bool {
	if !strings.HasPrefix(cache, "valid ") {
		return false
	}
	if model == "corrupt" || model == "empty" {
		return true
	}
	cf, mf := strings.Fields(cache), strings.Fields(model)
	if len(cf) != len(mf) {
		return false
	}
	for i := range cf {
		if cf[i] != mf[i] && !strings.HasSuffix(cf[i], "=-") {
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

func matchKnown(k knownCase) (Known, bool) {
	for _, kd := range KnownDivergences() {
		if kd.match(k) {
			return kd, true
		}
	}
	return Known{}, false
}
