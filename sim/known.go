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
	return []Known{}
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
