package conformance

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/xpwc/xpwc/faultinject/crashfs"
	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/sim"
	"github.com/xpwc/xpwc/spec"
)

// The bounds the harness runs the model at: what the real cache can be
// driven through deterministically from one test process (see
// docs/model.md, "conformance"); runnable narrows the ops further by
// filesystem and format.
func bounds() model.Bounds {
	return model.Bounds{Procs: 2, Names: 2, Programs: 2, Kernels: 2, Sources: 2, Foreign: true}
}

// v2Design is the design the v2 format is held to: ExecuTorch's trailer
// (no commit point, no checksum), with automatic compaction off on both
// sides: the model counts garbage in packings and the cache in bytes, so
// they would compact at different moments.
func v2Design() (model.Design, error) {
	d, err := model.DesignByName("no-commit-point")
	d.NoCompaction = true
	return d, err
}

const packedLen = 64

// key is the real key of name n packed by kernel version kv from source
// version src: every field the model's identity abstracts.
func key(n spec.Name, kv, src uint8) spec.Key {
	return spec.Key{
		Weight:      n.String(),
		Seed:        0x5eed0000 + uint32(kv),
		Fingerprint: 0xf1f10000 + uint64(kv),
		Source:      0x50c0000 + uint64(src),
	}
}

// packed is what the packer produces for name n under kv and src.
func packed(n spec.Name, kv, src uint8) []byte {
	b := make([]byte, packedLen)
	for i := range b {
		b[i] = byte(int(n)*31 + int(kv)*7 + int(src)*3 + i)
	}
	return b
}

// backend is the filesystem a sequence runs on.
type backend uint8

const (
	// backendOS is the OS filesystem in a temporary directory: real mmap,
	// flock and fsync, but no power loss (a power crash there closes every
	// instance, which loses nothing).
	backendOS backend = iota
	// backendCrashFS is faultinject/crashfs: a process crash of the only
	// process with an instance keeps the page cache and drops its open
	// files, locks and mappings; a power loss keeps only what was synced,
	// plus none, all or a seeded share of the rest (sim.PowerLossAt).
	backendCrashFS
)

func (b backend) String() string { return [...]string{"os", "crashfs"}[b] }

// worldConfig is what a sequence runs on: the caches write spec.FormatV2
// (ExecuTorch's layout), and runnable keeps sequences to what v2
// guarantees. (v3 runs in sim's world.)
type worldConfig struct {
	backend backend
}

func (c worldConfig) String() string { return c.backend.String() + " v2" }

// world is the real system: the cache instances of each process and the
// versions each process runs, mirroring what the model calls Env and Proc.
type world struct {
	dir, path string
	cfg       worldConfig
	cfs       *crashfs.FS // the current crashfs (backendCrashFS)
	fsys      vfs.FS      // the filesystem of the caches and of the harness's reads
	step      int
	kernel    uint8
	src       [model.MaxNames]uint8
	procs     [2]realProc
	tally     *tally
}

// tally counts what a run exercised, so a run that did nothing shows.
type tally struct {
	seqs, steps, hits, commits int
	powerLoss, midSave         int // power losses (crashfs); crashes inside a commit
}

type realProc struct {
	c        *cache.Cache
	kernel   uint8
	src      [model.MaxNames]uint8
	reserved map[spec.Name][]byte
}

// observation is what one step showed: the op's own result and the
// projection of the whole system after it.
type observation struct {
	err     error
	hit     bool
	bytes   []byte
	load    spec.LoadOutcome
	commits uint64 // commits made by the step
	toHeap  bool   // an insert landed on the heap (HeapBytes grew)
	file    fileView
	names   [2][]string // indexed names per open instance
	open    [2]bool
	// tailOpen: before a v2 finalize or save the file did not end in a
	// footer (its writer had appended since its commit).
	tailOpen bool
}

// fileView is the committed index parsed from the file.
type fileView struct {
	exists  bool
	err     error
	entries map[string]spec.Key
}

// stored is k as v2 stores it: neither the fingerprint nor the source
// digest.
func stored(k spec.Key) spec.Key {
	k.Fingerprint, k.Source = 0, 0
	return k
}

// crashfsDir is the cache directory on crashfs.
const crashfsDir = "/cache"

func newWorld(dir string, cfg worldConfig) (*world, error) {
	w := &world{cfg: cfg}
	switch cfg.backend {
	case backendOS:
		d, err := os.MkdirTemp(dir, "xpwc-conformance-")
		if err != nil {
			return nil, err
		}
		w.dir, w.fsys = d, vfs.OS()
	case backendCrashFS:
		w.cfs = crashfs.New(crashfs.Options{})
		if err := w.cfs.MkdirAll(crashfsDir); err != nil {
			return nil, err
		}
		w.dir, w.fsys = crashfsDir, w.cfs
	}
	w.path = filepath.Join(w.dir, "weights.xpwc")
	for p := range w.procs {
		w.procs[p] = realProc{reserved: map[spec.Name][]byte{}}
	}
	return w, nil
}

func (w *world) close() {
	for p := range w.procs {
		if c := w.procs[p].c; c != nil {
			_ = c.Close()
		}
	}
	if w.cfg.backend == backendOS {
		_ = os.RemoveAll(w.dir)
	}
}

// end ends process p cleanly (a restart, or an instance the harness cannot
// crash alone): the instance closes without finalize or save, which leaves
// the disk a crash between operations leaves; the next process runs the
// versions installed now.
func (w *world) end(p spec.Proc) error {
	rp := &w.procs[p]
	var err error
	if rp.c != nil {
		err = rp.c.Close()
	}
	w.fresh(p)
	return err
}

func (w *world) fresh(p spec.Proc) {
	w.procs[p] = realProc{kernel: w.kernel, src: w.src, reserved: map[spec.Name][]byte{}}
}

// alone reports whether p is the only process with an instance.
func (w *world) alone(p spec.Proc) bool {
	for q := range w.procs {
		if spec.Proc(q) != p && w.procs[q].c != nil {
			return false
		}
	}
	return true
}

// crash kills process p. On crashfs, with no other instance open, the
// whole filesystem goes through ProcessCrash: open files, locks and
// mappings vanish without a close, the page cache stays. For midSave
// nothing is cut: the file already ends in the space p appended, which is
// what the model's mid-save leaves. Otherwise the instance is closed
// (end), which leaves the same disk for a file with nothing appended.
func (w *world) crash(p spec.Proc, midSave bool) error {
	rp := &w.procs[p]
	if rp.c == nil || w.cfs == nil || !w.alone(p) {
		if midSave {
			return fmt.Errorf("harness: a crash inside a commit needs crashfs and no other instance")
		}
		return w.end(p)
	}
	w.cfs = w.cfs.ProcessCrash()
	w.fsys = w.cfs
	w.fresh(p)
	return nil
}

// powerLoss kills every process (never inside a commit: v2Demands). On
// crashfs only what was synced survives, plus the share of the rest the
// step's loss mode keeps. On the OS filesystem every instance is closed
// (nothing can be lost there).
func (w *world) powerLoss() error {
	if w.cfs == nil {
		var err error
		for p := range w.procs {
			err = errors.Join(err, w.end(spec.Proc(p)))
		}
		return err
	}
	w.cfs = sim.PowerLossAt(w.cfs, w.step)
	w.fsys = w.cfs
	for p := range w.procs {
		w.fresh(spec.Proc(p)) // the old instances died with the machine
	}
	if w.tally != nil {
		w.tally.powerLoss++
	}
	return nil
}

// apply runs op on the real system and observes the result. holder is
// the process the model says holds the writer lock (for a crash inside a
// commit).
func (w *world) apply(op spec.Op, holder spec.Proc) observation {
	w.step++
	var o observation
	if op.Kind == spec.OpFinalize || op.Kind == spec.OpSave {
		// A v2 writer whose file ends in space it appended since its
		// commit commits again to end it with a footer (docs/cache.md).
		f := readFile(w.fsys, w.path)
		o.tailOpen = f.exists && f.err != nil
	}
	var before cache.Stats
	var rp *realProc
	if !op.Kind.IsEvent() {
		rp = &w.procs[op.Proc]
		if rp.c != nil {
			before = rp.c.Stats()
		}
	}
	switch op.Kind {
	case spec.OpInit:
		if rp.c == nil {
			rp.c, o.err = cache.Open(cache.Options{Path: w.path, FS: w.fsys, Format: spec.FormatV2, CompactGarbageRatio: -1})
		}
		if o.err == nil {
			o.err = rp.c.InitializeForProgram(op.Program.String())
		}
		if o.err == nil {
			o.load = rp.c.Stats().Load
		}
	case spec.OpLookUp:
		var h cache.Handle
		h, o.hit = rp.c.LookUp(key(op.Name, rp.kernel, rp.src[op.Name]))
		if o.hit {
			var b []byte
			b, o.err = rp.c.Bytes(h)
			o.bytes = bytes.Clone(b)
		}
	case spec.OpReserve:
		var b []byte
		b, o.err = rp.c.ReserveSpace(packedLen)
		if o.err == nil {
			copy(b, packed(op.Name, rp.kernel, rp.src[op.Name]))
			rp.reserved[op.Name] = b[:packedLen]
		}
	case spec.OpInsert:
		_, o.err = rp.c.LookUpOrInsert(key(op.Name, rp.kernel, rp.src[op.Name]), rp.reserved[op.Name])
		delete(rp.reserved, op.Name)
		after := rp.c.Stats()
		o.toHeap = sum(after.HeapBytes) > sum(before.HeapBytes)
	case spec.OpFinalize:
		o.err = rp.c.Finalize()
	case spec.OpSave:
		o.err = rp.c.Save()
	case spec.OpInvalidate:
		// The model's invalidate is the cache's Invalidate and Save.
		if o.err = rp.c.Invalidate(op.Name.String()); o.err == nil {
			o.err = rp.c.Save()
		}
	case spec.OpUnload:
		o.err = rp.c.DeleteProgram(op.Program.String())
	case spec.OpDestroy:
		o.err = rp.c.Close()
		*rp = realProc{kernel: rp.kernel, src: rp.src, reserved: map[spec.Name][]byte{}}
	case spec.EvCrash:
		mid := op.Branch == spec.BranchMidSave
		if mid && w.tally != nil {
			w.tally.midSave++
		}
		if op.Crash == spec.CrashPower {
			o.err = w.powerLoss()
		} else {
			o.err = w.crash(op.Proc, mid)
		}
	case spec.EvRestart:
		o.err = w.end(op.Proc)
	case spec.EvKernelUpgrade:
		w.kernel++
	case spec.EvSourceChange:
		w.src[op.Name]++
	default:
		o.err = fmt.Errorf("harness: %s not supported", op)
	}
	if rp != nil && rp.c != nil && op.Kind != spec.OpDestroy {
		o.commits = rp.c.Stats().Commits - before.Commits
	}
	if w.tally != nil {
		w.tally.steps++
		w.tally.commits += int(o.commits)
		if o.hit {
			w.tally.hits++
		}
	}
	o.file = readFile(w.fsys, w.path)
	for p := range w.procs {
		if c := w.procs[p].c; c != nil {
			o.open[p] = true
			o.names[p] = c.Names()
		}
	}
	return o
}

// lockHolder is the process the model says holds the writer lock (A when
// none does; only a crash inside a commit asks, and only when one does).
func lockHolder(s *model.State) spec.Proc {
	return spec.Proc(max(int(s.Disk.Lock)-1, 0))
}

// run steps ops on the model and on w in lockstep from the initial state
// and returns the first difference; visit, if not nil, sees every step.
func (w *world) run(d *model.Design, b model.Bounds, ops []spec.Op, visit func(i int, out model.Outcome, o observation)) error {
	s := model.Init(b)
	for i, op := range ops {
		outs := model.Step(d, b, s, op)
		if len(outs) != 1 {
			return fmt.Errorf("op %d %s: %d outcomes in the model, want 1", i+1, op, len(outs))
		}
		if !runnable(w.cfg, &s, op, lockHolder(&s)) {
			return fmt.Errorf("op %d %s: not demanded on %s (runnable)", i+1, op, w.cfg)
		}
		o := w.apply(op, lockHolder(&s))
		if visit != nil {
			visit(i, outs[0], o)
		}
		if diffs := compare(b, outs[0], o); len(diffs) > 0 {
			return fmt.Errorf("op %d %s: %s", i+1, op, strings.Join(diffs, "; "))
		}
		s = outs[0].Next
	}
	return nil
}

func sum(m map[cache.HeapReason]uint64) uint64 {
	var s uint64
	for _, v := range m {
		s += v
	}
	return s
}

func readFile(fsys vfs.FS, path string) fileView {
	f, err := fsys.OpenFile(path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return fileView{}
	}
	v := fileView{exists: true, err: err}
	if err != nil {
		return v
	}
	defer func() { _ = f.Close() }()
	size, err := f.Size()
	if err != nil {
		v.err = err
		return v
	}
	parsed, err := spec.ParseV2(f, size)
	if err != nil {
		v.err = err
		return v
	}
	v.entries = map[string]spec.Key{}
	for _, e := range parsed.Entries {
		v.entries[e.Key.Weight] = e.Key
	}
	return v
}

// emptyIndex reports whether the model's committed index lists nothing.
func emptyIndex(s *model.State) bool {
	for _, r := range s.Disk.Idx {
		if r.Present() {
			return false
		}
	}
	return true
}

// compare checks an observation against the model's outcome and the state
// it led to. It returns a description of every difference.
func compare(b model.Bounds, out model.Outcome, o observation) []string {
	var diffs []string
	bad := func(format string, args ...any) { diffs = append(diffs, fmt.Sprintf(format, args...)) }
	op, r, s := out.Op, out.Result, &out.Next
	switch {
	case r.Failed && r.Reason == spec.ReasonLockBusy:
		// An explicit save that finds the lock busy says so.
		if !errors.Is(o.err, cache.ErrLockBusy) {
			bad("model: lock busy, cache error %v", o.err)
		}
	case o.err != nil:
		bad("the cache returned an error: %v", o.err)
	}
	switch op.Kind {
	case spec.OpInit:
		want := map[spec.LoadOutcome]spec.LoadOutcome{
			spec.LoadMissing: spec.LoadMissing, spec.LoadOK: spec.LoadOK, spec.LoadRejected: spec.LoadRejected,
			spec.LoadLocked: spec.LoadLocked,
		}[r.Load]
		if s.Disk.State == model.DiskValid && emptyIndex(s) {
			// v2 cannot express an empty index: its commit removes the
			// file, which the next load finds missing. While another
			// process holds the writer lock, the load finds the lock on
			// the file that process has written since, or no file at all
			// (its reservations then find the lock busy): either.
			switch {
			case r.Load == spec.LoadOK:
				want = spec.LoadMissing
			case r.Load == spec.LoadLocked && o.load == spec.LoadMissing:
				want = o.load
			}
		}
		if r.Load != spec.LoadNone && o.load != want {
			bad("load outcome: model %d (%s), cache %q", r.Load, want, o.load)
		}
	case spec.OpLookUp:
		if o.hit != r.Hit {
			bad("look-up hit: model %v, cache %v", r.Hit, o.hit)
		} else if o.hit {
			same := bytes.Equal(o.bytes, packed(op.Name, r.Bytes.Kernel, r.Bytes.Source))
			if same != r.Bytes.Intact {
				bad("hit bytes: model %+v, cache bytes equal that packing: %v", r.Bytes, same)
			}
		}
	case spec.OpInsert:
		// A heap packing shows in HeapBytes; a file packing, or an insert
		// that found the same packing already there, does not.
		wantHeap := s.Procs[op.Proc].Ents[op.Name].Status == spec.EntryHeap
		if o.toHeap != wantHeap {
			bad("insert on the heap: model %v, cache %v", wantHeap, o.toHeap)
		}
	case spec.OpFinalize, spec.OpSave, spec.OpInvalidate:
		if o.commits > 0 && !r.Wrote && o.tailOpen && o.file.err == nil {
			// v2's re-terminating commit: the model's index again, now at
			// the end of the file (compared below). v2 gives up "nothing
			// written when nothing changed" here.
			break
		}
		if (o.commits > 0) != r.Wrote {
			bad("wrote: model %v, cache commits %d", r.Wrote, o.commits)
		}
	}
	// The file: its committed index is the model's disk. A v2 file whose
	// lock holder appended space since its commit ends in that space, and
	// its committed trailer cannot be found by position until the holder
	// commits or closes (only the holder can read it then: a load waits
	// for the lock).
	switch state := s.Disk.State; {
	case holderAppended(s):
	case state == model.DiskEmpty:
		if o.file.exists {
			bad("file: model has no commit, file exists (err %v, %d entries)", o.file.err, len(o.file.entries))
		}
	case state == model.DiskCorrupt:
		if o.file.err == nil {
			bad("file: model has an unreadable index, the file parses (%d entries)", len(o.file.entries))
		}
	case state == model.DiskValid && emptyIndex(s):
		if o.file.exists {
			bad("file: model has an empty index, the v2 file exists (err %v, %d entries)", o.file.err, len(o.file.entries))
		}
	case state == model.DiskValid:
		if o.file.err != nil || !o.file.exists {
			bad("file: model has a commit, file exists=%v err=%v", o.file.exists, o.file.err)
			break
		}
		want := map[string]spec.Key{}
		for n := 0; n < b.Names; n++ {
			if rec := s.Disk.Idx[n]; rec.Present() {
				pk := rec.Packing()
				want[spec.Name(n).String()] = stored(key(spec.Name(n), pk.Kernel, pk.Source))
			}
		}
		if fmt.Sprint(want) != fmt.Sprint(o.file.entries) {
			bad("file index: model %v, file %v", want, o.file.entries)
		}
	}
	// Each open instance: the names it indexes.
	for p := 0; p < b.Procs; p++ {
		pr := &s.Procs[p]
		open := pr.Phase != spec.PhaseNoInstance
		if open != o.open[p] {
			bad("proc %s: model open=%v, cache open=%v", spec.Proc(p), open, o.open[p])
			continue
		}
		if !open {
			continue
		}
		got := append([]string(nil), o.names[p]...)
		sort.Strings(got)
		// v2 removes the file for an empty index; an instance that finds
		// it gone forgets the entries it mapped from it.
		gone := s.Disk.State == model.DiskValid && emptyIndex(s)
		var want []string
		for n := 0; n < b.Names; n++ {
			e := pr.Ents[n]
			mapped := e.Status == spec.EntryLoaded || e.Status == spec.EntryCommitted
			if e.Rec.Present() && !e.Retired && !(gone && mapped && !slices.Contains(got, spec.Name(n).String())) {
				want = append(want, spec.Name(n).String())
			}
		}
		if fmt.Sprint(want) != fmt.Sprint(got) {
			bad("proc %s names: model %v, cache %v", spec.Proc(p), want, got)
		}
	}
	return diffs
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
