package conformance

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/spec"
)

// The bounds the harness runs the model at: what the real cache can be
// driven through deterministically from one test process. Crashes take only
// their between-operations branch (a crash inside a commit needs the
// crash-simulating filesystem: faultinject/crashpoint covers it), and
// foreign writers are off (see docs/model.md, "conformance").
func bounds() model.Bounds {
	return model.Bounds{Procs: 2, Names: 2, Programs: 2, Kernels: 2, Sources: 2, Foreign: true}
}

// harnessDesign is the reference with automatic compaction off on both
// sides: the model counts garbage in packings and the cache in bytes, so
// they would compact at different moments, and whether a mapping sees a
// later foreign write depends on which file it maps.
func harnessDesign() (model.Design, error) {
	d, err := model.DesignByName("reference")
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

// world is the real system: the cache instances of each process and the
// versions each process runs, mirroring what the model calls Env and Proc.
type world struct {
	dir, path string
	kernel    uint8
	src       [model.MaxNames]uint8
	procs     [2]realProc
	tally     *tally
}

// tally counts what a run exercised, so a run that did nothing shows.
type tally struct {
	seqs, steps, hits, commits int
	foreign, corrupt           int // foreign writes; corrupt data caught by the cache
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
	load    cache.LoadOutcome
	commits uint64 // commits made by the step
	toHeap  bool   // an insert landed on the heap (HeapBytes grew)
	file    fileView
	names   [2][]string // indexed names per open instance
	open    [2]bool
}

// fileView is the committed index parsed from the file.
type fileView struct {
	exists  bool
	err     error
	entries map[string]spec.Key
}

func newWorld(dir string) (*world, error) {
	d, err := os.MkdirTemp(dir, "xpwc-conformance-")
	if err != nil {
		return nil, err
	}
	w := &world{dir: d, path: filepath.Join(d, "weights.xpwc")}
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
	_ = os.RemoveAll(w.dir)
}

// kill ends process p: the instance goes without finalize or save, as a
// process that dies between operations; the next one runs the versions
// installed now.
func (w *world) kill(p spec.Proc) error {
	rp := &w.procs[p]
	var err error
	if rp.c != nil {
		err = rp.c.Close()
	}
	*rp = realProc{kernel: w.kernel, src: w.src, reserved: map[spec.Name][]byte{}}
	return err
}

// apply runs op on the real system and observes the result.
func (w *world) apply(op spec.Op) observation {
	var o observation
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
			rp.c, o.err = cache.Open(cache.Options{Path: w.path, CompactGarbageRatio: -1})
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
		if op.Crash == spec.CrashPower {
			for p := range w.procs {
				o.err = errors.Join(o.err, w.kill(spec.Proc(p)))
			}
		} else {
			o.err = w.kill(op.Proc)
		}
	case spec.EvRestart:
		o.err = w.kill(op.Proc)
	case spec.EvKernelUpgrade:
		w.kernel++
	case spec.EvSourceChange:
		w.src[op.Name]++
	case spec.EvForeign:
		o.err = w.foreign(op)
	default:
		o.err = fmt.Errorf("harness: %s not supported", op)
	}
	if rp != nil && rp.c != nil && op.Kind != spec.OpDestroy {
		o.commits = rp.c.Stats().Commits - before.Commits
	}
	if w.tally != nil {
		if op.Kind == spec.EvForeign {
			w.tally.foreign++
		}
		if rp != nil && rp.c != nil && op.Kind == spec.OpLookUp {
			w.tally.corrupt += int(rp.c.Stats().Corrupt - before.Corrupt)
		}
		w.tally.steps++
		w.tally.commits += int(o.commits)
		if o.hit {
			w.tally.hits++
		}
	}
	o.file = readFile(w.path)
	for p := range w.procs {
		if c := w.procs[p].c; c != nil {
			o.open[p] = true
			o.names[p] = c.Names()
		}
	}
	return o
}

// foreign writes to the file outside the protocol: one data byte of the
// entry for the name, or the generation of both commit slots (zeroed, so a
// second write cannot bring an older commit back). It syncs, as the model
// treats foreign writes as durable.
func (w *world) foreign(op spec.Op) error {
	f, err := os.OpenFile(w.path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if op.Foreign == spec.ForeignIndex {
		// The generations, not the magics: without its magic the file
		// would be foreign, left alone rather than rebuilt (as in sim).
		var zero [8]byte
		for _, off := range []int64{16, spec.V3SlotSize + 16} {
			if _, err := f.WriteAt(zero[:], off); err != nil {
				return err
			}
		}
		return f.Sync()
	}
	st, err := f.Stat()
	if err != nil {
		return err
	}
	parsed, err := spec.ParseV3(f, st.Size())
	if err != nil {
		return err
	}
	for _, e := range parsed.Entries {
		if e.Key.Weight == op.Name.String() {
			var b [1]byte
			if _, err := f.ReadAt(b[:], int64(e.Offset)); err != nil {
				return err
			}
			b[0] ^= 0xa5
			if _, err := f.WriteAt(b[:], int64(e.Offset)); err != nil {
				return err
			}
			return f.Sync()
		}
	}
	return fmt.Errorf("harness: the file lists no entry for %s", op.Name)
}

func sum(m map[cache.HeapReason]uint64) uint64 {
	var s uint64
	for _, v := range m {
		s += v
	}
	return s
}

func readFile(path string) fileView {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fileView{}
	}
	v := fileView{exists: true, err: err}
	if err != nil {
		return v
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		v.err = err
		return v
	}
	parsed, err := spec.ParseV3(f, st.Size())
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
		want := map[spec.LoadOutcome]cache.LoadOutcome{
			spec.LoadEmpty: cache.LoadMissing, spec.LoadOK: cache.LoadOK, spec.LoadCorrupt: cache.LoadRejected,
			spec.LoadBusy: cache.LoadLocked,
		}[r.Load]
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
		if (o.commits > 0) != r.Wrote {
			bad("wrote: model %v, cache commits %d", r.Wrote, o.commits)
		}
	}
	// The file: its committed index is the model's disk.
	switch s.Disk.State {
	case model.DiskEmpty:
		if o.file.exists {
			bad("file: model has no commit, file exists (err %v, %d entries)", o.file.err, len(o.file.entries))
		}
	case model.DiskCorrupt:
		if o.file.err == nil {
			bad("file: model has an unreadable index, the file parses (%d entries)", len(o.file.entries))
		}
	case model.DiskValid:
		if o.file.err != nil || !o.file.exists {
			bad("file: model has a commit, file exists=%v err=%v", o.file.exists, o.file.err)
			break
		}
		want := map[string]spec.Key{}
		for n := 0; n < b.Names; n++ {
			if rec := s.Disk.Idx[n]; rec.Present() {
				pk := rec.Packing()
				want[spec.Name(n).String()] = key(spec.Name(n), pk.Kernel, pk.Source)
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
		var want []string
		for n := 0; n < b.Names; n++ {
			if e := pr.Ents[n]; e.Rec.Present() && !e.Retired {
				want = append(want, spec.Name(n).String())
			}
		}
		got := append([]string(nil), o.names[p]...)
		sort.Strings(got)
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
