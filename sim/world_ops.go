package sim

import (
	"bytes"

	"github.com/xpwc/xpwc/spec"
)

// perform does op on the real cache and returns what the runtime observed,
// in the spec's vocabulary, so it compares field by field with the model's
// result. holder is the model's writer-lock holder (for a crash inside a
// commit), -1 when none. Each verb has its handler_<verb>.go.
func (w *world) perform(op spec.Op, holder int) (spec.Result, error) {
	res, err := w.performOp(op, holder)
	if err == nil {
		err = w.faulted()
	}
	return res, err
}

// faulted returns the failure of an implementation (Instance.Fault), which
// ends the run whatever the step observed.
func (w *world) faulted() error {
	if w.fault != nil {
		return w.fault
	}
	for p := range w.procs {
		if c := w.procs[p].c; c != nil {
			if err := c.Fault(); err != nil {
				return err
			}
		}
	}
	return nil
}

func (w *world) performOp(op spec.Op, holder int) (spec.Result, error) {
	w.note, w.recorded, w.toHeap, w.keptLoad = "", false, false, false
	pr := &w.procs[op.Proc]
	if pr.c == nil && needsInstance(op.Kind) {
		return spec.Result{}, errNoInstance(op)
	}
	switch op.Kind {
	case spec.OpInit:
		return w.handleInit(pr, op), nil
	case spec.OpLookUp:
		return w.handleLookUp(pr, int(op.Name)), nil
	case spec.OpReserve:
		return w.handleReserve(pr, int(op.Name)), nil
	case spec.OpInsert:
		return w.handleInsert(pr, op)
	case spec.OpFinalize, spec.OpSave:
		return w.handleCommit(pr, op), nil
	case spec.OpInvalidate:
		return w.handleInvalidate(pr, int(op.Name)), nil
	case spec.OpUnload:
		return spec.Result{Failed: pr.c.DeleteProgram(progName(op.Program)) != nil}, nil
	case spec.OpDestroy:
		return w.handleDestroy(pr), nil
	case spec.OpCompute:
		return w.handleCompute(pr, op)
	case spec.EvCrash:
		return spec.Result{}, w.handleCrash(op, holder)
	case spec.EvRestart:
		w.handleRestart(int(op.Proc))
	case spec.EvKernelUpgrade:
		w.kernel++
	case spec.EvSourceChange:
		w.src[op.Name]++
	case spec.EvForeign:
		return spec.Result{}, w.foreign(op)
	case spec.EvClobberOptions:
		// The caller reuses its map; the module copied it at load (G6).
		pr.caller.Clear()
	}
	return spec.Result{}, nil
}

// needsInstance reports whether the cache side needs an open instance to
// perform k (the model enables k only then; a mismatch is a harness bug).
func needsInstance(k spec.OpKind) bool {
	switch k {
	case spec.OpLookUp, spec.OpReserve, spec.OpInsert, spec.OpFinalize, spec.OpSave,
		spec.OpInvalidate, spec.OpUnload, spec.OpDestroy, spec.OpCompute:
		return true
	}
	return false
}

func errNoInstance(op spec.Op) error {
	return &HarnessError{Op: op, Msg: "the cache side has no instance or reservation for it"}
}

// loadOutcome is the cache's load outcome as the model would report it:
// the same word, except that a cache without a path loads nothing, as an
// op that does not load. Outcomes the model never produces (failed,
// other-format) stay as they are and never compare equal to its result.
func loadOutcome(l spec.LoadOutcome) spec.LoadOutcome {
	if l == spec.LoadDisabled {
		return spec.LoadNone
	}
	return l
}

// parse reads the live file as a new process would.
func (w *world) parse() (*spec.V3File, error) {
	b, err := w.readFile()
	if err != nil {
		return nil, err
	}
	return spec.ParseV3(bytes.NewReader(b), int64(len(b)))
}
