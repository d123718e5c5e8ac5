package conform

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sort"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/sim"
	"github.com/xpwc/xpwc/spec"
)

// GoAdapter is xpwc's own cache behind the protocol, under design name:
// "reference" is the cache as it is; a design variant of the model's
// catalog is the cache with that design's historical bug put back by a
// wrapper (variants), claiming every capability the reference claims, as
// the historical caches claimed to be correct. The conformance run must
// catch each one.
func GoAdapter(design string) (Adapter, error) {
	a := Adapter{Name: "xpwc-go", Capabilities: referenceCapabilities(), Format: "v3", Open: sim.OpenGo}
	if design == "reference" {
		return a, nil
	}
	if design == executorchDesign {
		// What ExecuTorch's cache has: the seed in its key and a writer
		// lock; its file is v2, which the driver does not hold to v3.
		a.Name, a.Format = "executorch-port", "v2"
		a.Capabilities = []string{CapSeeds, CapLocking}
		a.Open = openExecuTorch
		return a, nil
	}
	if opts, ok := policies[design]; ok {
		// The cache under another verification policy, claiming it.
		a.Name = "xpwc-go/" + design
		a.Capabilities = append(a.Capabilities, CapOnCompute)
		a.Open = sim.OpenGoWith(opts)
		return a, nil
	}
	if design == v2Design {
		a.Name, a.Format = "xpwc-go/"+design, "v2"
		a.Capabilities = slices.DeleteFunc(a.Capabilities, func(c string) bool { return c == CapFormatV3 })
		a.Open = sim.OpenGoWith(cache.Options{Format: spec.FormatV2})
		return a, nil
	}
	wrap, ok := variants[design]
	if !ok {
		if _, err := model.DesignByName(design); err == nil {
			return Adapter{}, fmt.Errorf("conform: design %q has no adapter (%s)", design, notEmulated[design])
		}
		return Adapter{}, fmt.Errorf("conform: unknown design %q (reference, %v)", design, VariantNames())
	}
	a.Name = "xpwc-go/" + design
	a.Open = func(path string, fsys vfs.FS) (sim.Instance, error) {
		in, err := sim.OpenGo(path, fsys)
		if err != nil {
			return nil, err
		}
		return wrap(path, in), nil
	}
	return a, nil
}

// referenceCapabilities is what xpwc's cache claims under its default
// policy (data checked at first use, so not verify-on-compute).
func referenceCapabilities() []string {
	return slices.DeleteFunc(Capabilities(), func(c string) bool { return c == CapOnCompute })
}

// v2Design is served by the cache in ExecuTorch's v2 format rather than by
// a wrapper: the footer at the end of the file is its only commit point, a
// crash between data appended after it and a new footer leaves no loadable
// index (I3), and no data is checksummed (I2); the v2 key has no
// fingerprint or source either. The adapter says its format is v2, which
// the driver does not read, and claims every other capability.
const v2Design = "no-commit-point"

// policies serve the cache under a verification policy: on-compute (the
// runtime's default, correct) and compute-unchecked (the reads of the
// on-compute policy without their check: the cache with data checks off).
var policies = map[string]cache.Options{
	"on-compute":        {VerifyData: cache.VerifyOnCompute},
	"compute-unchecked": {VerifyData: cache.VerifyOff},
}

// VariantNames lists the buggy designs GoAdapter serves besides the
// reference.
func VariantNames() []string {
	out := []string{v2Design, executorchDesign, "compute-unchecked"}
	for n := range variants {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// notEmulated says, for each design of the catalog without an adapter,
// why a process behind the protocol cannot show its bug.
var notEmulated = map[string]string{
	"borrowed-options": "the options map belongs to the runtime that calls the cache; the protocol starts at set_path, after the module copied or borrowed it",
}

// variants put a historical bug back into the reference cache, each the
// smallest change that shows it through the protocol.
var variants = map[string]func(path string, in sim.Instance) sim.Instance{
	// Entries keyed by name alone (v1 files): a look-up is answered
	// whatever seed, fingerprint and source the entry was packed for.
	"v1-no-seed": func(path string, in sim.Instance) sim.Instance {
		return &noSeed{Instance: in, path: path, byName: map[string]spec.Key{}}
	},
	// Nothing persists from one launch to the next: every instance
	// truncates the file in place when it starts (PR 19862's fresh file).
	"pr19862-no-index": func(path string, in sim.Instance) sim.Instance {
		return &truncating{Instance: in, path: path, always: true}
	},
	// A file whose index does not load is truncated in place instead of
	// replaced by rename, under other processes' mappings.
	"truncate-in-place": func(path string, in sim.Instance) sim.Instance {
		return &truncating{Instance: in, path: path}
	},
	// An instance that loaded a file sends every re-pack to the heap.
	"repack-to-heap": func(_ string, in sim.Instance) sim.Instance {
		return &repackToHeap{Instance: in, heap: map[spec.Key][]byte{}}
	},
	// The loaded flag set only when a load succeeds: after a fresh write
	// the next init loads the file again and maps the instance's own
	// committed copies a second time. Only stats shows it.
	"pr19988-cache-loaded-flag": func(path string, in sim.Instance) sim.Instance {
		return &loadedFlag{Instance: in, path: path, extra: map[uint64]int{}}
	},
}

// loadedFlag puts back PR 19988's cache_loaded_, set only by an init
// whose load succeeded: an instance that started on a missing or refused
// file and committed loads the whole file again at its next init whose
// load succeeds, a real second read-only mapping of it, so each committed
// copy it held before that init is mapped twice.
type loadedFlag struct {
	sim.Instance
	path    string
	loaded  bool
	started bool
	extra   map[uint64]int // copy identity -> mappings made by reloads
	maps    []vfs.Mapping
	files   []vfs.File
}

func (l *loadedFlag) Unwrap() sim.Instance { return l.Instance }

func (l *loadedFlag) inner() []cache.MappedCopy {
	mc, ok := mapCounter(l.Instance)
	if !ok {
		return nil
	}
	ms, _ := mc.Mappings()
	return ms
}

func (l *loadedFlag) InitializeForProgram(p string) error {
	held := map[uint64]bool{}
	for _, m := range l.inner() {
		held[m.Copy] = m.Copy != 0
	}
	again := l.started && !l.loaded
	l.started = true
	err := l.Instance.InitializeForProgram(p)
	if l.Instance.Stats().Load != spec.LoadOK || l.path == "" {
		return err
	}
	l.loaded = true
	if again {
		l.reload(held)
	}
	return err
}

// reload maps the whole file once more, as ExecuTorch's load does, and
// counts the mapping for every copy the instance held that the file's
// index lists.
func (l *loadedFlag) reload(held map[uint64]bool) {
	b, err := os.ReadFile(l.path)
	if err != nil || len(b) == 0 {
		return
	}
	f, err := spec.ParseV3(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return
	}
	vf, err := vfs.OS().OpenFile(l.path, os.O_RDONLY, 0)
	if err != nil {
		return
	}
	m, err := vf.Map(0, len(b), vfs.ProtRead)
	if err != nil {
		_ = vf.Close()
		return
	}
	l.files, l.maps = append(l.files, vf), append(l.maps, m)
	for _, e := range f.Entries {
		if held[e.CopyID] {
			l.extra[e.CopyID]++
		}
	}
}

// Mappings implements sim.MapCounter: the instance's own count and the
// reloads' mappings.
func (l *loadedFlag) Mappings() ([]cache.MappedCopy, error) {
	ms := l.inner()
	for i := range ms {
		ms[i].Maps += l.extra[ms[i].Copy]
	}
	return ms, nil
}

func (l *loadedFlag) release() {
	for _, m := range l.maps {
		_ = m.Close()
	}
	for _, f := range l.files {
		_ = f.Close()
	}
	l.maps, l.files = nil, nil
}

func (l *loadedFlag) Close() error { l.release(); return l.Instance.Close() }

func (l *loadedFlag) Kill() { l.release(); l.Instance.Kill() }

// noSeed keys entries by name alone: a look-up is answered with whatever
// entry the weight's name has, from this instance's inserts or the file's
// committed index, whatever seed, fingerprint and source it was packed for.
type noSeed struct {
	sim.Instance
	path   string
	byName map[string]spec.Key
}

func (n *noSeed) Unwrap() sim.Instance { return n.Instance }

func (n *noSeed) InitializeForProgram(p string) error {
	err := n.Instance.InitializeForProgram(p)
	if b, rerr := os.ReadFile(n.path); rerr == nil {
		if f, perr := spec.ParseV3(bytes.NewReader(b), int64(len(b))); perr == nil {
			for _, e := range f.Entries {
				n.byName[e.Key.Weight] = e.Key
			}
		}
	}
	return err
}

func (n *noSeed) LookUp(k spec.Key) (sim.Handle, bool) {
	if old, ok := n.byName[k.Weight]; ok {
		k = old
	}
	return n.Instance.LookUp(k)
}

func (n *noSeed) Insert(k spec.Key, r sim.Reservation) error {
	n.byName[k.Weight] = k
	return n.Instance.Insert(k, r)
}

// truncating truncates the file in place at its first init (always), or
// after an init whose load rejected the file. An instance that truncates
// at its start never loads: it reports the empty file it made.
type truncating struct {
	sim.Instance
	path    string
	always  bool
	started bool
	fresh   bool
}

func (t *truncating) Unwrap() sim.Instance { return t.Instance }

func (t *truncating) Stats() cache.Stats {
	st := t.Instance.Stats()
	if t.fresh {
		st.Load, st.LoadErr = spec.LoadMissing, nil
	}
	return st
}

func (t *truncating) InitializeForProgram(p string) error {
	first := !t.started
	t.started = true
	if t.always && first && t.path != "" {
		if err := os.Truncate(t.path, 0); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	err := t.Instance.InitializeForProgram(p)
	t.fresh = t.always && first
	if !t.always && t.Instance.Stats().Load == spec.LoadRejected && t.path != "" {
		if terr := os.Truncate(t.path, 0); terr != nil {
			return terr
		}
	}
	return err
}

// repackToHeap keeps re-packs of an instance that loaded a file in its own
// heap map, never in the cache.
type repackToHeap struct {
	sim.Instance
	heap    map[spec.Key][]byte
	handles [][]byte
	pending map[uint64][]byte
}

// heapBit marks the handles and reservation ids of heap packings.
const heapBit = 1 << 62

func (h *repackToHeap) Unwrap() sim.Instance { return h.Instance }

func (h *repackToHeap) loaded() bool { return h.Instance.Stats().Load == spec.LoadOK }

func (h *repackToHeap) LookUp(k spec.Key) (sim.Handle, bool) {
	if b, ok := h.heap[k]; ok {
		h.handles = append(h.handles, b)
		return sim.Handle(heapBit | uint64(len(h.handles))), true
	}
	return h.Instance.LookUp(k)
}

func (h *repackToHeap) Bytes(hd sim.Handle) ([]byte, error) {
	if hd&heapBit != 0 {
		i := int(hd &^ heapBit)
		if i < 1 || i > len(h.handles) {
			return nil, cache.ErrStaleHandle
		}
		return h.handles[i-1], nil
	}
	return h.Instance.Bytes(hd)
}

func (h *repackToHeap) ReserveSpace(n int) (sim.Reservation, error) {
	if !h.loaded() {
		return h.Instance.ReserveSpace(n)
	}
	if h.pending == nil {
		h.pending = map[uint64][]byte{}
	}
	id := heapBit | uint64(len(h.pending)+1)
	b := make([]byte, n)
	h.pending[id] = b
	return sim.Reservation{ID: id, Buf: b}, nil
}

func (h *repackToHeap) Insert(k spec.Key, r sim.Reservation) error {
	if r.ID&heapBit == 0 {
		return h.Instance.Insert(k, r)
	}
	h.heap[k] = r.Buf
	return nil
}

func (h *repackToHeap) DeleteProgram(p string) error {
	clear(h.heap)
	return h.Instance.DeleteProgram(p)
}
