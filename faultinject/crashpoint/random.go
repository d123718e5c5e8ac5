package crashpoint

import (
	"fmt"

	"github.com/xpwc/xpwc/faultinject/crashfs"
	"github.com/xpwc/xpwc/faultinject/errorfs"
	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/spec"
)

// RandomFaults is the injector of RandomRuns: each call fails with
// probability p, with one of the faults of G8 chosen under seed. Decisions
// follow the order of calls (errorfs.RandomCalls), not their paths, because
// the cache's temporary file names are random: so a run is reproducible from
// its seed. Its String is the DSL text that rebuilds it.
func RandomFaults(p float64, seed uint64) errorfs.Injector {
	injs := make([]errorfs.Injector, len(Faults))
	for i, f := range Faults {
		injs[i] = errorfs.InjectRandomCalls(p/float64(len(Faults)), seed+uint64(i), nil, f)
	}
	return errorfs.Any(injs...)
}

// RandomReport is the result of RandomRuns.
type RandomReport struct {
	Format     spec.Format
	Runs       int
	Launches   int
	Injected   int64
	Saves      int // launches whose commit succeeded despite the faults
	States     int // recovered states (after the faults, and after a power loss)
	Violations []Violation
}

func (r RandomReport) String() string {
	return fmt.Sprintf("%s: %d runs, %d faulted launches, %d errors injected, %d saves succeeded, %d states recovered, violations %v",
		r.Format, r.Runs, r.Launches, r.Injected, r.Saves, r.States, byGuarantee(r.Violations))
}

// RandomRuns runs, per seed, a sequence of launches (cold, upgrade, compact,
// upgrade again, warm) with random faults on every call, then recovers the
// file as a new process, once as left and once after a power loss. Checks:
// no faulted launch fails or serves wrong bytes (G8, G1); the last save that
// succeeded is whole after recovery (G2); the launch after the recovery hits
// everything (G3).
func RandomRuns(cfg Config, runs int, p float64) (RandomReport, error) {
	rep := RandomReport{Format: cfg.Format, Runs: runs}
	opts := cache.Options{Path: Path, Format: cfg.Format}
	k1 := Keys(6, 1)
	k2 := Upgrade(k1)
	k3 := Upgrade(k2)
	steps := []struct {
		keys    []spec.Key
		compact bool
	}{{k1, false}, {k2, false}, {k2, true}, {k3, false}, {k3, false}}

	for run := 0; run < runs; run++ {
		seed := cfg.Seed + uint64(run)*1000
		fsys := crashfs.New(crashfs.Options{LossUnit: cfg.LossUnit})
		if err := fsys.MkdirAll(Dir); err != nil {
			return rep, err
		}
		ctr := errorfs.NewCounter(RandomFaults(p, seed))
		faulty := errorfs.Wrap(fsys, errorfs.NewToggle(ctr))
		var saved []spec.Key
		add := func(v Violation) {
			v.Point, v.LastOp = run, ctr.String()
			rep.Violations = append(rep.Violations, v)
		}
		for i, st := range steps {
			rep.Launches++
			var r LaunchResult
			var err error
			func() {
				defer func() {
					if x := recover(); x != nil {
						err = fmt.Errorf("panic: %v", x)
					}
				}()
				if st.compact {
					r, err = Compact(faulty, opts, st.keys)
					if err != nil && r.Stats.Load != spec.LoadNone {
						err = nil // a failed compaction is a recorded commit error
					}
				} else {
					r, err = Launch(faulty, opts, st.keys)
				}
			}()
			if err != nil {
				add(Violation{Guarantee: "G8", Crash: fmt.Sprintf("step %d", i), Detail: err.Error()})
				continue
			}
			for _, k := range r.Wrong {
				add(Violation{Guarantee: "G1", Crash: fmt.Sprintf("step %d", i), Detail: "faulted launch served wrong bytes for " + keyName(k)})
			}
			if st.compact && r.Committed && r.Stats.CommitErr == nil {
				// A compaction keeps what the file holds: the keys that hit.
				saved = r.Hits
				rep.Saves++
				continue
			}
			var all bool
			if saved, all = savedAfter(saved, st.keys, r); all {
				rep.Saves++
			}
		}
		rep.Injected += ctr.Count()
		keys := k3
		if saved != nil {
			keys = saved
		}
		for _, crash := range []string{"none", "power"} {
			var state *crashfs.FS
			if crash == "none" {
				state = fsys.ProcessCrash()
			} else {
				state = fsys.PowerLoss(seed)
			}
			rep.States++
			for _, v := range recoverAndCheck(state, opts, keys, saved, Pack) {
				v.Crash = crash
				add(v)
			}
			fsys = state
		}
	}
	return rep, nil
}

// savedAfter is what is known to be saved (G2) after a launch over ks that
// returned r, given what was saved before it; all reports whether the launch
// saved every key of ks.
func savedAfter(saved, ks []spec.Key, r LaunchResult) (next []spec.Key, all bool) {
	switch {
	case r.Stats.CommitErr != nil:
		// A commit that failed after its commit point was written (the
		// fsync after the slot write, or the directory fsync after the
		// rename) may still have taken effect: G2 allows the previous
		// index or the new one. The entries it re-packed are no longer
		// required to be the saved ones.
		return withoutWeights(saved, r.Misses), false
	case !r.Committed || len(r.Misses) == 0:
		// Nothing new committed: the previous save stands.
		return saved, false
	case len(r.Stats.HeapBytes) == 0 && r.Stats.FallbackErr == nil:
		return ks, true
	default:
		// Some packings fell back (to heap, or stayed out of the commit
		// because their data could not be made durable, with the reason
		// in FallbackErr), while others replaced saved entries: only the
		// saved entries this launch did not re-pack are still known to
		// be on disk.
		return withoutWeights(saved, r.Misses), false
	}
}

// withoutWeights drops from ks the keys whose weight name is in drop.
func withoutWeights(ks, drop []spec.Key) []spec.Key {
	names := map[string]bool{}
	for _, k := range drop {
		names[k.Weight] = true
	}
	var out []spec.Key
	for _, k := range ks {
		if !names[k.Weight] {
			out = append(out, k)
		}
	}
	return out
}
