package crashpoint

import (
	"fmt"

	"github.com/xpwc/xpwc/faultinject/crashfs"
	"github.com/xpwc/xpwc/faultinject/errorfs"
	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/spec"
)

// Faults are the injected failures of G8: each is tried at every seam call
// of a workload.
var Faults = []errorfs.Injector{
	errorfs.ENOSPC, errorfs.EIO, errorfs.EINTR, errorfs.ENOMEM, errorfs.EROFS,
	errorfs.EACCES, errorfs.NotExist, errorfs.WouldBlock,
	&errorfs.ShortWrite{N: 100, Cause: errorfs.ENOSPC},
}

// ErrorReport is the result of an error-point enumeration.
type ErrorReport struct {
	Workload string
	Format   spec.Format
	Calls    int   // seam calls of Run, each a fault point
	Runs     int   // faulted runs
	Injected int64 // errors that reached the cache
	// Fallbacks counts faulted runs whose launch recorded a fallback or a
	// failed commit in Stats (the rest hit a call whose failure the cache
	// may ignore, such as closing a file).
	Fallbacks  int
	Violations []Violation
}

func (r ErrorReport) String() string {
	return fmt.Sprintf("%s %s: %d calls, %d faulted runs, %d errors injected, %d recorded fallbacks, violations %v",
		r.Workload, r.Format, r.Calls, r.Runs, r.Injected, r.Fallbacks, byGuarantee(r.Violations))
}

// EnumerateErrors runs w once per (seam call, fault) with that call failing,
// and checks G8 (the run never fails nor panics because of the file; every
// hit is right, G1) and what follows: the previous commit still loads (G2)
// and, with the fault gone, one launch re-packs and the next hits all (G3).
func EnumerateErrors(cfg Config, w Workload) (ErrorReport, error) {
	rep := ErrorReport{Workload: w.Name, Format: cfg.Format}
	opts := cache.Options{Path: Path, Format: cfg.Format}
	mustHit := setupSaved(cfg, w, opts)

	fsys, _, err := prepare(cfg, w, opts)
	if err != nil {
		return rep, err
	}
	calls := 0
	// Toggles pause injection (and counting) during the cache's own
	// consistency check, which is test scaffolding, not a fault point.
	counting := errorfs.Wrap(fsys, errorfs.NewToggle(errorfs.InjectorFunc(func(errorfs.Op) error { calls++; return nil })))
	if err := w.Run(Env{FS: counting, Opts: opts, Saved: func([]spec.Key) {}}); err != nil {
		return rep, fmt.Errorf("reference run of %s: %w", w.Name, err)
	}
	rep.Calls = calls

	for i := 0; i < calls; i++ {
		for _, fault := range Faults {
			rep.Runs++
			fsys, _, err := prepare(cfg, w, opts)
			if err != nil {
				return rep, err
			}
			ctr := errorfs.NewCounter(errorfs.InjectOnIndex(int64(i), nil, fault))
			at := func(v Violation) Violation {
				v.Point, v.LastOp, v.Crash = i, ctr.String(), "none"
				return v
			}
			res, perr := runFaulted(w, errorfs.Wrap(fsys, errorfs.NewToggle(ctr)), opts)
			rep.Injected += ctr.Count()
			if perr != "" {
				rep.Violations = append(rep.Violations, at(Violation{Guarantee: "G8", Detail: perr}))
				continue
			}
			if res.fallback {
				rep.Fallbacks++
			}
			for _, v := range res.violations {
				rep.Violations = append(rep.Violations, at(v))
			}
			for _, v := range afterFault(fsys, opts, w.Keys, mustHit, w.packer()) {
				rep.Violations = append(rep.Violations, at(v))
			}
		}
	}
	return rep, nil
}

type faultedResult struct {
	fallback   bool
	violations []Violation
}

// runFaulted runs the workload on the faulty filesystem and collects what
// each of its launches saw.
func runFaulted(w Workload, fsys vfs.FS, opts cache.Options) (res faultedResult, panicked string) {
	defer func() {
		if r := recover(); r != nil {
			panicked = fmt.Sprintf("faulted run panicked: %v", r)
		}
	}()
	var results []LaunchResult
	var errs []error
	_ = w.Run(Env{FS: fsys, Opts: opts, Saved: func([]spec.Key) {}, Observe: func(r LaunchResult, err error) {
		results = append(results, r)
		errs = append(errs, err)
	}})
	for i, r := range results {
		if errs[i] != nil {
			// Launch returns an error only when a provider call failed:
			// inference would fail because of the file (G8).
			res.violations = append(res.violations, Violation{Guarantee: "G8", Detail: "launch failed: " + errs[i].Error()})
		}
		for _, k := range r.Wrong {
			res.violations = append(res.violations, Violation{Guarantee: "G1", Detail: "faulted launch served wrong bytes for " + keyName(k)})
		}
		if r.CheckErr != nil {
			res.violations = append(res.violations, Violation{Guarantee: "G7", Detail: "cache check: " + r.CheckErr.Error()})
		}
		st := r.Stats
		if st.FallbackErr != nil || st.CommitErr != nil || len(st.HeapBytes) > 0 || st.Load == spec.LoadFailed || st.Load == spec.LoadLocked {
			res.fallback = true
		}
	}
	return res, ""
}

// afterFault runs two clean launches on the filesystem the fault left.
// It runs them twice: after the faulted process exits (its page cache
// intact), and after a power loss that keeps nothing unsynced, since a
// fault must not have left the previous commit depending on unsynced state.
func afterFault(fsys *crashfs.FS, opts cache.Options, keys, mustHit []spec.Key, pack func(spec.Key) []byte) []Violation {
	var vs []Violation
	for _, next := range []*crashfs.FS{fsys.ProcessCrash(), fsys.PowerLossWith(crashfs.LossConfig{Keep: 0})} {
		vs = append(vs, recoverAndCheck(next, opts, keys, mustHit, pack)...)
	}
	return vs
}
