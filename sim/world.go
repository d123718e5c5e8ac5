package sim

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/xpwc/xpwc/faultinject/crashfs"
	"github.com/xpwc/xpwc/faultinject/errorfs"
	"github.com/xpwc/xpwc/impl/runtime/options"
	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/spec"
)

// Backend is the filesystem the real cache runs on.
type Backend string

const (
	// BackendModel runs the model alone (design variants, whose bug the
	// real cache does not have).
	BackendModel Backend = "model"
	// BackendOS is the OS filesystem in a temporary directory. A power
	// loss cannot be simulated on it.
	BackendOS Backend = "os"
	// BackendCrashFS is faultinject/crashfs: in-memory, with process crash
	// and seeded power loss.
	BackendCrashFS Backend = "crashfs"
)

// ErrUnsupported is returned for a directive the backend cannot perform
// (power loss on the OS filesystem).
var ErrUnsupported = errors.New("sim: not supported on this backend")

const (
	optBackend   = "xnnpack"
	cacheName    = "weights.xpwc"
	crashfsDir   = "/cache"
	powerSeedMix = 0x9e3779b97f4a7c15
)

// world is the real side: one cache instance per abstract process, all on
// one path of one filesystem, and the environment (kernel and source
// versions) the harness turns into keys.
type world struct {
	backend Backend
	dir     string
	path    string
	cfs     *crashfs.FS // current crashfs (BackendCrashFS)
	base    vfs.FS      // what the harness observes through
	inj     errorfs.Injector
	fsys    vfs.FS // what the caches use: base, or base wrapped by inj
	open    Opener // opens a process's instance

	kernel uint8
	src    [spec.MaxNames]uint8
	procs  [spec.MaxProcs]proc
	step   int
	// fault is an implementation's failure to start (see Instance.Fault).
	fault error
	// note explains the last perform's observation (a fallback's or a
	// load's error) for divergence reports.
	note string
	// recorded: the last save failed and the cache recorded the failure
	// in Stats.CommitErr, which I12 allows an explicit save.
	recorded bool
	// keptLoad: the last init ran no loader (ViewKeeper): its load
	// outcome is not compared.
	keptLoad bool
	// toHeap: the last insert grew the instance's heap bytes (the packing
	// landed on the heap, not in the file).
	toHeap bool
	// v2: the caches write v2 (sim/v2.go).
	v2 bool
	// handleOnly: the design checks at the compute (on-compute): a
	// look-up hands a handle and the harness does not read it (a read
	// would be the compute's, which checks); its bytes are compared at the
	// compute (handler_compute.go).
	handleOnly bool
}

// proc is one process: the kernel and sources it started with (a running
// process keeps the files it loaded), its module's own copy of the load
// options and the caller's map (PR 19673), its cache instance and the
// buffers it reserved and has not inserted yet.
type proc struct {
	kernel  uint8
	src     [spec.MaxNames]uint8
	caller  *options.Map
	module  *options.Map
	c       Instance
	pending [spec.MaxNames]Reservation
	// checked: this instance packed, or checked on a hit, its packing of
	// the name (what I2 lets it hand out unchecked afterwards). Only the
	// comparison under injected faults uses it.
	checked [spec.MaxNames]bool
	// held: the handle of each name's entry the instance last handed out
	// (a hit, an insert, a re-pack at compute): what an inference after
	// finalize reads (OpCompute).
	held [spec.MaxNames]Handle
}

func newWorld(b Backend, dir string, inj errorfs.Injector, open Opener) (*world, error) {
	w := &world{backend: b, inj: inj, open: open}
	if w.open == nil {
		w.open = OpenGo
	}
	switch b {
	case BackendOS:
		if dir == "" {
			return nil, fmt.Errorf("sim: the os backend needs a directory")
		}
		w.dir, w.base = dir, vfs.OS()
	case BackendCrashFS:
		w.cfs = crashfs.New(crashfs.Options{})
		if err := w.cfs.MkdirAll(crashfsDir); err != nil {
			return nil, err
		}
		w.dir, w.base = crashfsDir, w.cfs
	default:
		return nil, fmt.Errorf("sim: unknown backend %q", b)
	}
	w.path = filepath.Join(w.dir, cacheName)
	w.rewrap()
	for p := range w.procs {
		w.start(p)
	}
	return w, nil
}

func (w *world) rewrap() {
	w.fsys = w.base
	if w.inj != nil {
		w.fsys = errorfs.Wrap(w.base, w.inj)
	}
}

// start begins a new process p running the installed kernel and sources,
// its module loaded with the cache path.
func (w *world) start(p int) {
	caller := &options.Map{}
	_ = caller.Set(optBackend, options.Option{Key: "packed_cache_path", Value: options.String(w.path)})
	w.procs[p] = proc{kernel: w.kernel, src: w.src, caller: caller, module: caller.Clone()}
}

func (pr *proc) key(n int) spec.Key { return key(n, pr.kernel, pr.src[n]) }

func (pr *proc) want(n int) spec.Packing {
	return spec.Packing{Kernel: pr.kernel, Source: pr.src[n], Intact: true}
}

func progName(q spec.Program) string { return q.String() }

// snapshot is what a G4 check compares: the live file's existence, size,
// modification time and bytes.
type snapshot struct {
	exists bool
	size   int64
	mtime  int64
	data   string
}

func (w *world) snap() snapshot {
	fi, err := w.base.Stat(w.path)
	if err != nil {
		return snapshot{}
	}
	s := snapshot{exists: true, size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if b, err := w.readFile(); err == nil {
		s.data = string(b)
	}
	return s
}

func (w *world) readFile() ([]byte, error) {
	f, err := w.base.OpenFile(w.path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	n, err := f.Size()
	if err != nil {
		return nil, err
	}
	b := make([]byte, n)
	if _, err := f.ReadAt(b, 0); err != nil && n > 0 {
		return nil, err
	}
	return b, nil
}

// liveInfo is the live file's FileInfo, nil when there is none.
func (w *world) liveInfo() os.FileInfo {
	fi, err := w.base.Stat(w.path)
	if err != nil {
		return nil
	}
	return fi
}

// shrunkInPlace describes a truncation of the live file in place since
// before: the same file, smaller. The reference never does it (it appends,
// or replaces the file by rename), since another process may map the bytes
// cut and take SIGBUS on its next access (I8). Only the OS backend tells
// files apart (os.SameFile); elsewhere it reports nothing.
func (w *world) shrunkInPlace(before os.FileInfo) string {
	after := w.liveInfo()
	if before == nil || after == nil || !os.SameFile(before, after) || after.Size() >= before.Size() {
		return ""
	}
	return fmt.Sprintf("truncated in place from %d to %d bytes", before.Size(), after.Size())
}

// mappedTwice says which copies of packed bytes process p's instance maps
// more than once (I7), in its own count (MapCounter); "" when none, when
// p has no instance, or when the instance cannot count.
func (w *world) mappedTwice(p spec.Proc) (string, error) {
	c, ok := w.procs[p].c.(MapCounter)
	if !ok {
		return "", nil
	}
	ms, err := c.Mappings()
	if errors.Is(err, ErrNotSupported) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	var twice []string
	for _, m := range ms {
		if m.Maps > 1 {
			twice = append(twice, fmt.Sprintf("%s mapped %d times", nameOf(m.Name), m.Maps))
		}
	}
	return strings.Join(twice, ", "), nil
}

// sizes maps the live file and writers' temporary files to their sizes: a
// reservation in the file grows one of them (or creates a new temporary
// file, while a writer may remove a crashed writer's leftover).
func (w *world) sizes() map[string]int64 {
	out := map[string]int64{}
	names, err := w.base.ReadDir(w.dir)
	if err != nil {
		return out
	}
	for _, n := range names {
		if n != cacheName && !strings.HasPrefix(n, cacheName+".tmp-") {
			continue
		}
		if fi, err := w.base.Stat(filepath.Join(w.dir, n)); err == nil {
			out[n] = fi.Size()
		}
	}
	return out
}

// grew reports whether some file of after is larger than it was before.
func grew(before, after map[string]int64) bool {
	for n, sz := range after {
		if sz > before[n] {
			return true
		}
	}
	return false
}

// kill ends process p the way a crash does: its instance is dropped
// without committing. On crashfs with no other instance open the whole
// filesystem goes through ProcessCrash (open files, locks and mappings
// vanish, the page cache stays); otherwise the instance is closed without
// a commit, which leaves the same disk: appended bytes stay as garbage and
// the lock is released.
func (w *world) kill(p int, midSave bool) {
	pr := &w.procs[p]
	if pr.c != nil {
		if w.cfs != nil && w.alone(p) {
			if midSave && !w.v2 {
				// Cut the commit after its first mutating call: the commit
				// point, written last, is never reached (G2). A v2 file
				// already ends in the space its writer appended, which is
				// what the model's mid-save leaves (no commit point).
				w.cfs.SetCrashAfter(w.cfs.Ops() + 1)
				_ = pr.c.Save()
			}
			w.cfs = w.cfs.ProcessCrash()
			w.base = w.cfs
			w.rewrap()
		} else {
			pr.c.Kill()
		}
	}
	w.start(p)
}

// alone reports whether p is the only process with an instance.
func (w *world) alone(p int) bool {
	for q := range w.procs {
		if q != p && w.procs[q].c != nil {
			return false
		}
	}
	return true
}

// lossModes are the power-loss outcomes, by the step's position (so a
// scenario replays the same losses): every unsynced write lost, none lost,
// and a seeded half kept. Whatever is lost, a commit that returned must
// survive whole (G2).
var lossModes = [...]float64{0, 1, 0.5}

// PowerLossAt is f after a power loss at lifecycle step step (1-based):
// what was synced, plus what the step's loss mode keeps of the rest. Every
// lockstep world loses power this way, so a sequence loses the same writes
// wherever it runs.
func PowerLossAt(f *crashfs.FS, step int) *crashfs.FS {
	return f.PowerLossWith(crashfs.LossConfig{Seed: uint64(step) ^ powerSeedMix, Keep: lossModes[step%len(lossModes)]})
}

// powerLoss kills every process and keeps only what was durable plus the
// share of the rest the step's loss mode keeps.
func (w *world) powerLoss(midSave bool, holder int) error {
	if w.cfs == nil {
		return fmt.Errorf("%w: power loss needs the crashfs backend", ErrUnsupported)
	}
	if midSave && !w.v2 && w.procs[holder].c != nil {
		w.cfs.SetCrashAfter(w.cfs.Ops() + 1)
		_ = w.procs[holder].c.Save()
	}
	w.cfs = PowerLossAt(w.cfs, w.step)
	w.base = w.cfs
	w.rewrap()
	for p := range w.procs {
		w.start(p)
	}
	return nil
}

// close releases every instance (end of a run).
func (w *world) close() {
	for p := range w.procs {
		if c := w.procs[p].c; c != nil {
			_ = c.Close()
			w.procs[p].c = nil
		}
	}
}

// compactions is how many times process p's instance rewrote the file (0
// without an instance).
func (w *world) compactions(p spec.Proc) uint64 {
	if c := w.procs[p].c; c != nil {
		return c.Stats().Compactions
	}
	return 0
}
