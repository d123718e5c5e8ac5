// Package crashpoint enumerates the crash points of cache workloads on the
// crash-simulating filesystem and checks the guarantees in the process that
// comes after each crash.
//
// A workload is run once to count its mutating filesystem calls (N). Then,
// for every n in [0, N], it is run again on a fresh filesystem that freezes
// after its n-th call, and crashed: once as a process crash, and as power
// losses (every subset of the unsynced units when there are few, a seeded
// sample otherwise). On each crashed state a new process recovers — a
// launch over the workload's current keys — and a second launch follows.
// The checks:
//
//   - G1: every hit's bytes equal the reference packing of the current key,
//     in both launches.
//   - G2: every entry of the last save that had returned before the crash
//     point is a hit in the recovery launch.
//   - G3: the second launch hits every key.
//   - G7: loading the crashed file yields a load or a typed error
//     (spec.ErrCorrupt), never a panic; the cache's consistency check
//     passes.
//   - Save order (reported as G2): in a crashed v3 file the newest commit
//     slot that passes its own checks names an intact index, so no crash
//     needs the reader's fallback for damaged indexes.
package crashpoint

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"runtime/debug"

	"github.com/xpwc/xpwc/faultinject/crashfs"
	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/spec"
)

// Dir and Path are where workloads keep the cache.
const (
	Dir  = "/data/cache"
	Path = Dir + "/model.xpwc"
)

// Env is what a workload step gets: the filesystem and the cache options,
// and Saved, to call after each save that returned success with the keys
// it saved. Saved marks the save point for G2.
type Env struct {
	FS    vfs.FS
	Opts  cache.Options
	Saved func(keys []spec.Key)
	// Observe, if set, receives every launch's result and error.
	Observe func(LaunchResult, error)
}

func (e Env) observe(r LaunchResult, err error) {
	if e.Observe != nil {
		e.Observe(r, err)
	}
}

// Workload is a scenario whose crash points are enumerated.
type Workload struct {
	Name string
	// Setup prepares the filesystem before the recorded part (earlier
	// launches, a corrupt file); it is not crashed.
	Setup func(e Env) error
	// Run is the recorded part; it is crashed after each of its calls.
	Run func(e Env) error
	// Keys are the current keys after Run: what recovery looks up.
	Keys []spec.Key
	// Pack is the packer of Run and of the checks; nil means Pack.
	Pack func(spec.Key) []byte
}

func (w Workload) packer() func(spec.Key) []byte {
	if w.Pack == nil {
		return Pack
	}
	return w.Pack
}

// Config tunes an enumeration.
type Config struct {
	Format spec.Format
	// Outcomes bounds the power-loss outcomes per crash point: all of them
	// when 2^units <= Outcomes, else a seeded sample of Outcomes.
	Outcomes int
	Seed     uint64
	// LossUnit is crashfs.Options.LossUnit (0: 512-byte sectors).
	LossUnit int
	// CompactGarbageRatio is cache.Options.CompactGarbageRatio for
	// TwoCrashes (0: the cache's default).
	CompactGarbageRatio float64
	// Wrap, if set, wraps the filesystem Run sees (an errorfs injector, or
	// a deliberately broken filesystem in the harness's own tests). Setup
	// and the recovery launches see the plain crash filesystem.
	Wrap func(vfs.FS) vfs.FS
	_    struct{}
}

// Violation is one broken guarantee in one crashed state.
type Violation struct {
	Guarantee string // "G1", "G2", "G3", "G7"
	// Point is the crash point n: the first n calls of Run took effect;
	// LastOp is the n-th one.
	Point  int
	LastOp string
	Crash  string // "process" or "power#i"
	Detail string
}

func (v Violation) String() string {
	return fmt.Sprintf("%s after op %d (%s), %s crash: %s", v.Guarantee, v.Point, v.LastOp, v.Crash, v.Detail)
}

// Report is the result of an enumeration.
type Report struct {
	Workload    string
	Format      spec.Format
	Ops         int // mutating calls of Run
	CrashPoints int
	// Exhaustive counts the crash points whose power-loss outcomes were
	// all enumerated (2^units <= Config.Outcomes); the others were sampled.
	Exhaustive int
	States     int // crashed states recovered and checked
	Violations []Violation
}

// ByGuarantee counts violations per guarantee.
func (r Report) ByGuarantee() map[string]int { return byGuarantee(r.Violations) }

// byGuarantee counts vs per guarantee; every report prints it.
func byGuarantee(vs []Violation) map[string]int {
	out := map[string]int{}
	for _, v := range vs {
		out[v.Guarantee]++
	}
	return out
}

func (r Report) String() string {
	return fmt.Sprintf("%s %s: %d ops, %d crash points (%d with every loss subset), %d crash states checked, violations %v",
		r.Workload, r.Format, r.Ops, r.CrashPoints, r.Exhaustive, r.States, r.ByGuarantee())
}

// Enumerate runs w at every crash point and checks every crashed state.
func Enumerate(cfg Config, w Workload) (Report, error) {
	rep := Report{Workload: w.Name, Format: cfg.Format}
	opts := cache.Options{Path: Path, Format: cfg.Format}

	// The reference run: count the calls and note the save points.
	type savePoint struct {
		at   int
		keys []spec.Key
	}
	fsys, base, err := prepare(cfg, w, opts)
	if err != nil {
		return rep, fmt.Errorf("setup of %s: %w", w.Name, err)
	}
	saves := []savePoint{{at: 0, keys: setupSaved(cfg, w, opts)}}
	e := Env{FS: wrap(cfg, fsys), Opts: opts, Saved: func(ks []spec.Key) {
		saves = append(saves, savePoint{at: fsys.Ops() - base, keys: append([]spec.Key(nil), ks...)})
	}}
	if err := w.Run(e); err != nil {
		return rep, fmt.Errorf("reference run of %s: %w", w.Name, err)
	}
	log := fsys.Log()[base:]
	rep.Ops = len(log)
	// The save order is checked in every crashed state of a v3 file unless
	// Setup left the file damaged on purpose.
	checkOrder := cfg.Format == spec.FormatV3
	if pre, _, err := prepare(cfg, w, opts); err == nil && checkOrder {
		checkOrder = checkCommitOrder(pre.ProcessCrash()) == nil
	}

	for n := 0; n <= rep.Ops; n++ {
		rep.CrashPoints++
		last := lastOp(log, n)
		var mustHit []spec.Key
		for _, s := range saves {
			if s.at <= n {
				mustHit = s.keys
			}
		}
		fsys, _, err := prepare(cfg, w, opts)
		if err != nil {
			return rep, err
		}
		fsys.SetCrashAfter(base + n)
		// Bytes handed out before the crash must be right too (G1).
		observe := func(r LaunchResult, _ error) {
			for _, k := range r.Wrong {
				rep.Violations = append(rep.Violations, Violation{Guarantee: "G1", Point: n, LastOp: last, Crash: "-",
					Detail: "the crashing run was served wrong bytes for " + keyName(k)})
			}
		}
		if p := runCrashing(w, Env{FS: wrap(cfg, fsys), Opts: opts, Saved: func([]spec.Key) {}, Observe: observe}); p != "" {
			rep.Violations = append(rep.Violations, Violation{Guarantee: "G8", Point: n, LastOp: last, Crash: "-",
				Detail: "the crashing run panicked: " + p})
		}
		check := func(state *crashfs.FS, crash string) {
			rep.States++
			if checkOrder {
				if err := checkCommitOrder(state); err != nil {
					rep.Violations = append(rep.Violations, Violation{Guarantee: "G2", Point: n, LastOp: last, Crash: crash, Detail: err.Error()})
				}
			}
			for _, v := range recoverAndCheck(state, opts, w.Keys, mustHit, w.packer()) {
				v.Point, v.LastOp, v.Crash = n, last, crash
				rep.Violations = append(rep.Violations, v)
			}
		}
		if cfg.exhaustive(fsys) {
			rep.Exhaustive++
		}
		check(fsys.ProcessCrash(), "process")
		i := 0
		for state := range fsys.PowerLossOutcomes(cfg.Outcomes, cfg.Seed+uint64(n)) {
			check(state, fmt.Sprintf("power#%d", i))
			i++
		}
	}
	return rep, nil
}

// lastOp names the last call that took effect at crash point n of log.
func lastOp(log []crashfs.LogEntry, n int) string {
	if n == 0 {
		return "start"
	}
	return log[n-1].Op.String()
}

// exhaustive reports whether PowerLossOutcomes enumerates every outcome of
// fsys rather than sampling them.
func (c Config) exhaustive(fsys *crashfs.FS) bool {
	return crashfs.Exhaustive(fsys.LossUnits(), c.Outcomes)
}

func wrap(cfg Config, fsys *crashfs.FS) vfs.FS {
	if cfg.Wrap == nil {
		return fsys
	}
	return cfg.Wrap(fsys)
}

// prepare builds a fresh filesystem with the cache directory, runs Setup and
// returns it with the number of calls Setup made.
func prepare(cfg Config, w Workload, opts cache.Options) (*crashfs.FS, int, error) {
	fsys := crashfs.New(crashfs.Options{LossUnit: cfg.LossUnit})
	if err := fsys.MkdirAll(Dir); err != nil {
		return nil, 0, err
	}
	if w.Setup != nil {
		if err := w.Setup(Env{FS: fsys, Opts: opts, Saved: func([]spec.Key) {}}); err != nil {
			return nil, 0, err
		}
	}
	return fsys, fsys.Ops(), nil
}

// setupSaved is what Setup's saves left for G2: the keys of its last save.
func setupSaved(cfg Config, w Workload, opts cache.Options) []spec.Key {
	if w.Setup == nil {
		return nil
	}
	var last []spec.Key
	fsys := crashfs.New(crashfs.Options{LossUnit: cfg.LossUnit})
	_ = fsys.MkdirAll(Dir)
	_ = w.Setup(Env{FS: fsys, Opts: opts, Saved: func(ks []spec.Key) { last = ks }})
	return last
}

// runCrashing runs the workload on a filesystem that will crash under it.
// Errors are expected (the cache sees ErrCrashed); a panic is not (G8).
func runCrashing(w Workload, e Env) (panicked string) {
	defer func() {
		if r := recover(); r != nil {
			panicked = fmt.Sprintf("%v\n%s", r, debug.Stack())
		}
	}()
	_ = w.Run(e)
	return ""
}

// recoverAndCheck runs the recovery launch and the one after it on state.
func recoverAndCheck(state *crashfs.FS, opts cache.Options, keys, mustHit []spec.Key, pack func(spec.Key) []byte) (vs []Violation) {
	defer func() {
		if r := recover(); r != nil {
			vs = append(vs, Violation{Guarantee: "G7", Detail: fmt.Sprintf("recovery panicked: %v\n%s", r, debug.Stack())})
		}
	}()
	add := func(g, format string, args ...any) {
		vs = append(vs, Violation{Guarantee: g, Detail: fmt.Sprintf(format, args...)})
	}
	r1, err := LaunchPacked(state, opts, keys, pack)
	if err != nil {
		add("G8", "recovery launch failed: %v", err)
		return vs
	}
	checkLoad(r1.Stats, add)
	for _, k := range r1.Wrong {
		add("G1", "recovery hit %s with wrong bytes", keyName(k))
	}
	if r1.CheckErr != nil {
		add("G7", "cache check after recovery: %v", r1.CheckErr)
	}
	hit := map[spec.Key]bool{}
	for _, k := range r1.Hits {
		hit[k] = true
	}
	for _, k := range mustHit {
		if inKeys(keys, k) && !hit[k] {
			add("G2", "saved entry %s missing after the crash (load %s %v)", path.Base(k.Weight), r1.Stats.Load, r1.Stats.LoadErr)
			break
		}
	}
	if !r1.Committed {
		add("G3", "recovery launch could not commit: %v", r1.Stats.CommitErr)
	}
	r2, err := LaunchPacked(state, opts, keys, pack)
	if err != nil {
		add("G8", "second launch failed: %v", err)
		return vs
	}
	for _, k := range r2.Wrong {
		add("G1", "second launch hit %s with wrong bytes", keyName(k))
	}
	if len(r2.Misses) > 0 {
		add("G3", "second launch re-packed %d of %d (load %s %v)", len(r2.Misses), len(keys), r2.Stats.Load, r2.Stats.LoadErr)
	}
	if r2.CheckErr != nil {
		add("G7", "cache check after second launch: %v", r2.CheckErr)
	}
	return vs
}

func checkLoad(st cache.Stats, add func(string, string, ...any)) {
	switch st.Load {
	case spec.LoadOK, spec.LoadMissing:
	case spec.LoadOtherFormat:
		// A crash before a conversion's rename leaves the file of the
		// other format, whose entries the recovery carries over again.
	case spec.LoadRejected:
		if !errors.Is(st.LoadErr, spec.ErrCorrupt) {
			add("G7", "file rejected with an untyped error: %v", st.LoadErr)
		}
	default:
		add("G8", "recovery load outcome %s: %v", st.Load, st.LoadErr)
	}
}

// checkCommitOrder checks the save order of a crashed v3 file: the newest
// commit slot that passes its own checks names an index that is intact.
// The save makes the index durable before it writes the slot that names
// it, so a power loss can tear the slot being written (its CRC fails) but
// never leave a valid slot naming a lost index; the reader's fallback to
// the older slot is then needed only for media damage, and a save whose
// order was wrong would lean on it for every crash in that window.
func checkCommitOrder(state *crashfs.FS) error {
	f, err := state.OpenFile(Path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return err
	}
	commits, slotErrs, err := spec.ReadCommitSlots(f, size)
	if err != nil {
		return nil // too small to hold slots: the load check judges it
	}
	newest := -1
	for pos := range 2 {
		if slotErrs[pos] == nil && (newest < 0 || commits[pos].Generation > commits[newest].Generation) {
			newest = pos
		}
	}
	if newest < 0 {
		return nil
	}
	v, err := spec.ParseV3(f, size)
	if err == nil && v.Slot == newest {
		return nil
	}
	return fmt.Errorf("commit slot %d (generation %d) is valid but names an index that is not intact (%v): the slot became durable before its index", newest, commits[newest].Generation, err)
}

func inKeys(ks []spec.Key, k spec.Key) bool {
	for _, x := range ks {
		if x == k {
			return true
		}
	}
	return false
}

// keyName prints a key's names without the NUL separator of Key.Name.
func keyName(k spec.Key) string {
	if k.Bias == "" {
		return k.Weight
	}
	return k.Weight + "+" + k.Bias
}
