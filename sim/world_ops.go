package sim

import (
	"bytes"
	"errors"
	"os"

	"github.com/xpwc/xpwc/faultinject/crashpoint"
	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/spec"
)

// perform does op on the real cache and returns what the runtime observed,
// in the spec's vocabulary, so it compares field by field with the model's
// result. holder is the model's writer-lock holder (for a crash inside a
// commit), -1 when none.
func (w *world) perform(op spec.Op, holder int) (spec.Result, error) {
	var r spec.Result
	w.note, w.recorded = "", false
	p := int(op.Proc)
	pr := &w.procs[p]
	n := int(op.Name)
	switch op.Kind {
	case spec.OpInit:
		if pr.c == nil {
			path := ""
			if v, ok := pr.module.Lookup(optBackend, "packed_cache_path"); ok {
				path, _ = v.AsString()
			}
			c, err := cache.Open(cache.Options{Path: path, FS: w.fsys})
			if err != nil {
				r.Failed = true
				return r, nil
			}
			pr.c = c
		}
		r.Place = spec.PlaceHeap
		if pr.c.Path() != "" {
			r.Place = spec.PlaceFile
		}
		if err := pr.c.InitializeForProgram(progName(op.Program)); err != nil {
			r.Failed = true
		}
		st := pr.c.Stats()
		r.Load = loadOutcome(st.Load)
		if st.LoadErr != nil {
			w.note = "load: " + st.LoadErr.Error()
		}
	case spec.OpLookUp:
		if pr.c == nil {
			return r, errNoInstance(op)
		}
		before := pr.c.Stats().Verified
		h, hit := pr.c.LookUp(pr.key(n))
		r.Checked = pr.c.Stats().Verified > before
		if hit {
			b, err := pr.c.Bytes(h)
			if err != nil {
				r.Failed = true
				break
			}
			r.Hit = true
			r.Bytes = classify(b, n, pr.want(n))
		}
	case spec.OpReserve:
		if pr.c == nil {
			return r, errNoInstance(op)
		}
		packed := crashpoint.Pack(pr.key(n))
		before := w.sizes()
		buf, err := pr.c.ReserveSpace(len(packed))
		if err != nil {
			r.Failed = true
			break
		}
		copy(buf, packed) // the packer runs between reserve and insert
		pr.pending[n] = buf
		r.Place = spec.PlaceHeap
		st := pr.c.Stats()
		switch {
		case grew(before, w.sizes()):
			r.Place = spec.PlaceFile
		case pr.c.Path() == "":
			r.Reason = spec.ReasonNoPath
		case errors.Is(st.FallbackErr, cache.ErrLockBusy),
			st.Load == cache.LoadLocked && errors.Is(st.LoadErr, cache.ErrLockBusy):
			// The lock was busy when this launch's program init loaded
			// (the whole launch packs to heap) or when the reservation
			// tried to take the writer lock.
			r.Reason = spec.ReasonLockBusy
		}
		if r.Place == spec.PlaceHeap && st.FallbackErr != nil {
			w.note = "fallback: " + st.FallbackErr.Error()
		}
	case spec.OpInsert:
		if pr.c == nil || pr.pending[n] == nil {
			return r, errNoInstance(op)
		}
		if _, err := pr.c.LookUpOrInsert(pr.key(n), pr.pending[n]); err != nil {
			r.Failed = true
		}
		pr.pending[n] = nil
	case spec.OpFinalize, spec.OpSave:
		if pr.c == nil {
			return r, errNoInstance(op)
		}
		before := w.snap()
		var err error
		if op.Kind == spec.OpFinalize {
			err = pr.c.Finalize()
		} else {
			err = pr.c.Save()
		}
		// An explicit save may report that it could not commit now, with
		// the reason (I12); finalize never fails.
		r.Failed = err != nil
		if errors.Is(err, cache.ErrLockBusy) {
			r.Reason = spec.ReasonLockBusy
		}
		w.recorded = err != nil && op.Kind == spec.OpSave && pr.c.Stats().CommitErr != nil
		r.Wrote = w.snap() != before
	case spec.OpInvalidate:
		if pr.c == nil {
			return r, errNoInstance(op)
		}
		before := w.snap()
		if err := pr.c.Invalidate(weightName(n)); err != nil {
			r.Failed = true
			break
		}
		// The model commits an invalidation at once; the cache does at the
		// next save, so the harness saves.
		if err := pr.c.Save(); err != nil {
			r.Failed = true
			if errors.Is(err, cache.ErrLockBusy) {
				r.Reason = spec.ReasonLockBusy
			}
			w.recorded = pr.c.Stats().CommitErr != nil
		}
		r.Wrote = w.snap() != before
	case spec.OpUnload:
		if pr.c == nil {
			return r, errNoInstance(op)
		}
		r.Failed = pr.c.DeleteProgram(progName(op.Program)) != nil
	case spec.OpDestroy:
		if pr.c == nil {
			return r, errNoInstance(op)
		}
		r.Failed = pr.c.Close() != nil
		pr.c = nil
		pr.pending = [spec.MaxNames][]byte{}
	case spec.EvCrash:
		if op.Crash == spec.CrashPower {
			return r, w.powerLoss(op.Branch == spec.BranchMidSave, holder)
		}
		w.kill(p, op.Branch == spec.BranchMidSave)
	case spec.EvRestart:
		if pr.c != nil {
			_ = pr.c.Close()
		}
		w.start(p)
	case spec.EvKernelUpgrade:
		w.kernel++
	case spec.EvSourceChange:
		w.src[n]++
	case spec.EvForeign:
		return r, w.foreign(op)
	case spec.EvClobberOptions:
		// The caller reuses its map; the module copied it at load (G6).
		pr.caller.Clear()
	}
	return r, nil
}

func errNoInstance(op spec.Op) error {
	return &HarnessError{Op: op, Msg: "the cache side has no instance or reservation for it"}
}

// loadOutcome maps the cache's load outcome to the spec's. Outcomes the
// model has no word for (a busy lock, an I/O failure) are distinct values
// above the spec's, so they never compare equal to a model result.
func loadOutcome(l cache.LoadOutcome) spec.LoadOutcome {
	switch l {
	case cache.LoadOK:
		return spec.LoadOK
	case cache.LoadMissing:
		return spec.LoadEmpty
	case cache.LoadRejected:
		return spec.LoadCorrupt
	case cache.LoadDisabled, cache.LoadNotYet:
		return spec.LoadNone
	case cache.LoadLocked:
		return spec.LoadBusy
	}
	return loadFailed
}

// loadFailed is a load the model has no word for (an I/O failure): a value
// above the spec's, so it never compares equal to a model result.
const loadFailed spec.LoadOutcome = 100

// foreign scribbles on the live file outside the protocol: one data byte
// of a committed entry, or the magic of both commit slots, so no commit
// loads (G7).
func (w *world) foreign(op spec.Op) error {
	off := int64(0)
	if op.Foreign == spec.ForeignData {
		f, err := w.parse()
		if err != nil {
			return &HarnessError{Op: op, Msg: "the file does not parse: " + err.Error()}
		}
		found := false
		for _, e := range f.Entries {
			if e.Key.Weight == weightName(int(op.Name)) {
				off, found = int64(e.Offset), true
			}
		}
		if !found {
			return &HarnessError{Op: op, Msg: "the file lists no entry for it"}
		}
	}
	f, err := w.base.OpenFile(w.path, os.O_RDWR, 0)
	if err != nil {
		return &HarnessError{Op: op, Msg: err.Error()}
	}
	defer func() { _ = f.Close() }()
	offs := []int64{off}
	if op.Foreign == spec.ForeignIndex {
		offs = []int64{0, spec.V3SlotSize} // the magic of both slots
	}
	for _, o := range offs {
		var b [1]byte
		if _, err := f.ReadAt(b[:], o); err != nil {
			return &HarnessError{Op: op, Msg: err.Error()}
		}
		b[0] ^= 0xA5
		if _, err := f.WriteAt(b[:], o); err != nil {
			return &HarnessError{Op: op, Msg: err.Error()}
		}
	}
	// Durable, as the model has it: a power loss must not undo the
	// scribble.
	if err := f.Sync(); err != nil {
		return &HarnessError{Op: op, Msg: err.Error()}
	}
	return nil
}

// parse reads the live file as a new process would.
func (w *world) parse() (*spec.V3File, error) {
	b, err := w.readFile()
	if err != nil {
		return nil, err
	}
	return spec.ParseV3(bytes.NewReader(b), int64(len(b)))
}
