package sim

import (
	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/spec"
)

// commits reports whether an op of kind k may commit (and so compact).
func commits(k spec.OpKind) bool {
	return k == spec.OpFinalize || k == spec.OpSave || k == spec.OpInvalidate || k == spec.OpCompute
}

// matchCompaction holds the model's compaction decision for a commit to
// the cache's. The model counts garbage in packings and compacts when they
// outnumber the live ones; the cache counts bytes, dead index blocks and
// page padding included, and compacts at half the live bytes, so it may
// compact earlier (never later: G4 bounds both). Which file a committer's
// packings live in is observable (a later foreign write reaches them or
// not), so the model follows the cache: branch=compact is the model's
// early compaction. A generated sequence adopts the cache's decision (the
// op it records names the branch, so its scenario replays); a scenario
// file must name it, and a difference is a divergence. With faults a
// failed compaction is no evidence either way; the model keeps its rule
// unless the cache did compact.
func (r *Runner) matchCompaction(prev model.State, out model.Outcome, cache bool) (model.Outcome, error) {
	modelDid := out.Events&model.EvtCompact != 0
	if modelDid == cache {
		return out, nil
	}
	if r.adopt || r.inj != nil {
		op := out.Op
		op.Branch = spec.BranchNone
		if cache {
			op.Branch = spec.BranchCompact
		}
		if outs := model.Step(&r.design, r.bounds, prev, op); len(outs) == 1 &&
			outs[0].Events&model.EvtCompact != 0 == cache {
			r.diverted = true
			return outs[0], nil
		}
		if r.inj != nil {
			return out, nil
		}
	}
	say := map[bool]string{false: "append", true: "compact"}
	return out, &DivergenceError{Step: r.steps, Op: out.Op.String(), What: "compaction",
		Model: say[modelDid], Cache: say[cache]}
}
