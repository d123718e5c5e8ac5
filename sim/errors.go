package sim

import (
	"errors"
	"fmt"
	"strings"

	"github.com/xpwc/xpwc/spec"
)

// ErrDivergence is matched by every *DivergenceError.
var ErrDivergence = errors.New("sim: the cache diverged from the model")

// DivergenceError is a step at which the real cache's observable result or
// file differs from the model's: the conformance failure this package
// exists to find.
type DivergenceError struct {
	Step  int // 1-based, counting lifecycle directives
	Op    string
	What  string // "result", "file", "truncation", …
	Model string
	Cache string
	// Also lists the other checks the same step failed (the file, a
	// truncation in place), so that a result that differs does not hide
	// what the step did to the file. Signature reads only the first.
	Also []*DivergenceError
}

func (e *DivergenceError) Error() string {
	s := fmt.Sprintf("step %d %q: %s differs:\n  model: %s\n  cache: %s", e.Step, e.Op, e.What, e.Model, e.Cache)
	for _, a := range e.Also {
		s += fmt.Sprintf("\n  and the %s differs:\n  model: %s\n  cache: %s", a.What, a.Model, a.Cache)
	}
	return s
}

// Find returns the divergence of kind what among e and e.Also.
func (e *DivergenceError) Find(what string) (*DivergenceError, bool) {
	if e.What == what {
		return e, true
	}
	for _, a := range e.Also {
		if a.What == what {
			return a, true
		}
	}
	return nil, false
}

func (e *DivergenceError) Unwrap() error { return ErrDivergence }

// ErrImplementation is matched by the failures of an implementation
// itself rather than by its results: an Opener that cannot start one, an
// Instance's Fault (a broken protocol, a timeout, a dead process).
var ErrImplementation = errors.New("sim: the implementation failed")

// ErrNotSupported is matched by every *UnsupportedError: an implementation that does not
// have an operation at all (ExecuTorch has no invalidate). A run ends
// there: what it needs is not claimed, from that step on.
var ErrNotSupported = errors.New("sim: the implementation does not have this operation")

// UnsupportedError names the operation an implementation does not have.
type UnsupportedError struct {
	Op  string
	Msg string
}

func (e *UnsupportedError) Error() string {
	if e.Msg == "" {
		return fmt.Sprintf("sim: the implementation has no %s", e.Op)
	}
	return fmt.Sprintf("sim: the implementation has no %s: %s", e.Op, e.Msg)
}

func (e *UnsupportedError) Unwrap() error { return ErrNotSupported }

// ViewKeeper is an Instance that can say its last init ran no loader and
// kept the view it had; that init's load outcome is not compared.
type ViewKeeper interface {
	KeptView() bool
}

// Computer is an Instance that tells an inference's read after finalize
// (a compute, which may check the bytes) from any other read; handle
// reads of the others go through Bytes.
type Computer interface {
	Compute(h Handle) ([]byte, error)
}

// ErrHarness is matched by every *HarnessError: a scenario that misuses the
// language (unknown directive, ambiguous crash, an op the cache side cannot
// perform). Such a scenario fails; it is not a finding about the cache.
var ErrHarness = errors.New("sim: scenario misuse")

// HarnessError says which directive is misused and how.
type HarnessError struct {
	Op   spec.Op
	Line string
	Msg  string
}

func (e *HarnessError) Error() string {
	line := e.Line
	if line == "" {
		line = e.Op.String()
	}
	return fmt.Sprintf("sim: %q: %s", line, e.Msg)
}

func (e *HarnessError) Unwrap() error { return ErrHarness }

// ErrViolation is matched by every *ViolationError: the model broke an
// invariant under the reference design (the model is wrong, or the
// scenario found a hole in the design), or under any design when
// Config.AnyViolation asks for it.
var ErrViolation = errors.New("sim: reference design violates an invariant")

// ViolationError names the step and the invariants.
type ViolationError struct {
	Step       int
	Op         string
	Invariants []spec.InvariantID
}

func (e *ViolationError) Error() string {
	return fmt.Sprintf("step %d %q: violates %v", e.Step, e.Op, e.Invariants)
}

func (e *ViolationError) Unwrap() error { return ErrViolation }

// Signature summarizes a failure so that shrinking keeps the same failure:
// the kind of error, the verb of the failing op and what differed.
func Signature(err error) string {
	var d *DivergenceError
	var v *ViolationError
	var h *HarnessError
	var k *KnownDivergenceError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &k):
		return "known/" + k.ID
	case errors.As(err, &d):
		verb, _, _ := strings.Cut(d.Op, " ")
		cache, _, _ := strings.Cut(d.Cache, " (")
		return "divergence/" + d.What + "/" + verb + ": " + d.Model + " / " + cache
	case errors.As(err, &v):
		return fmt.Sprintf("violation/%v", v.Invariants)
	case errors.As(err, &h):
		return "harness"
	}
	return "error"
}
