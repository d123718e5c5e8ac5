package model

import (
	"errors"
	"fmt"

	"github.com/xpwc/xpwc/spec"
)

// ErrNotEnabled is returned (wrapped in *ReplayError) when a trace's op is
// not enabled in the state the trace reached, or is ambiguous (a crash
// without its branch while several branches exist).
var ErrNotEnabled = errors.New("model: op not enabled")

// ReplayError says which op of a trace could not be replayed.
type ReplayError struct {
	Index    int // 0-based position in the trace
	Op       spec.Op
	Outcomes int // how many outcomes the op had (0: disabled, >1: ambiguous)
}

func (e *ReplayError) Error() string {
	if e.Outcomes == 0 {
		return fmt.Sprintf("model: op %d %q not enabled", e.Index+1, e.Op)
	}
	return fmt.Sprintf("model: op %d %q has %d outcomes; name a branch", e.Index+1, e.Op, e.Outcomes)
}

func (e *ReplayError) Unwrap() error { return ErrNotEnabled }

// Replay runs a trace from the start state and returns each step's
// transition, in order. Each op must have exactly one outcome.
func Replay(d *Design, b Bounds, ops []spec.Op) ([]Outcome, error) {
	if err := b.Validate(); err != nil {
		return nil, err
	}
	s := Init(b)
	out := make([]Outcome, 0, len(ops))
	for i, op := range ops {
		o := Step(d, b, s, op)
		if len(o) != 1 {
			return out, &ReplayError{Index: i, Op: op, Outcomes: len(o)}
		}
		out = append(out, o[0])
		s = o[0].Next
	}
	return out, nil
}
