package lincheck

import (
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/anishathalye/porcupine"
)

// Bounds of State's fixed-size arrays, so that State is a comparable value
// (porcupine compares and hashes states; model.State is built the same way).
const (
	MaxNames    = 8
	MaxPrograms = 8
	MaxClients  = 16
)

// ModelConfig says what the model cannot observe and must be told.
type ModelConfig struct {
	// HeapOnly: the cache has no path, so every entry is a heap entry and
	// releasing its last program drops it from the index. Otherwise an
	// entry may live in the file (kept) or on the heap (a reservation
	// turned to heap by a write session ending under it, G8): the model
	// cannot tell and allows both.
	HeapOnly bool
	// Warm[n] is 1+variant of the committed entry of name n that the first
	// InitializeForProgram loads from the file, 0 for none.
	Warm []uint8
	// NoPartition checks the whole history as one; by default it is split
	// by name, with the whole-cache operations in every partition.
	NoPartition bool
	// V2: the file is ExecuTorch's v2 format, whose only commit point is
	// the footer at the end of the file. Space appended since the last
	// commit leaves the file without a footer at its end until a commit or
	// a Close writes one, so a power loss in that window may take every
	// committed entry with it (docs/guarantees.md, G2 for v2). v3 commits
	// survive any power loss once they returned.
	V2 bool
}

// slot is the current (indexed) entry of one name.
type slot struct {
	Present bool
	Variant uint8
	// Handle is the handle number look-ups must return; 0 while unknown
	// (loaded from the file, or inserted by an operation that never
	// returned), bound by the first operation that returns it.
	Handle uint64
	// Holders is the set of programs whose reference set holds the entry
	// (model.Entry.Hold).
	Holders uint8
	// InFile: the entry's bytes are in the file (loaded, or inserted into
	// file-backed space), so the next commit lists it; otherwise it is a
	// heap entry, which no commit lists.
	InFile bool
}

// committed is one name in the file's committed index.
type committed struct {
	Present bool
	Variant uint8
}

// State is the sequential specification's state: the index by name, the
// active program, the programs with a reference set, the clients holding a
// reservation, and whether the committed index was loaded.
type State struct {
	Slots    [MaxNames]slot
	Active   uint8 // 1+program, 0 when no program is being initialized
	Known    uint8
	Reserved uint16
	Loaded   bool
	// Tainted: reservations that a save or compaction overlapped; the
	// write session may have ended under them, which sends their insert to
	// the heap (HeapWriteFailed), or not.
	Tainted uint16
	// Dirty: the instance has appended or dropped an entry since its last
	// commit (model.Proc's appended entries and tombstones).
	Dirty bool
	// Locked: the instance holds the writer lock (from its first
	// file-backed reservation, or a commit, until the session ends).
	Locked bool
	// Unterminated: space was appended to the file since the last commit
	// (a reservation), so a v2 file does not end in a footer until the
	// next commit or a Close; with V2 set, Finalize and Save commit then
	// even with nothing new.
	Unterminated bool
	// Disk is the committed index: what a relaunch or a second process
	// loads.
	Disk [MaxNames]committed
	// Second is what the second process loaded, if it is open.
	Second     [MaxNames]committed
	SecondOpen bool
}

func (s State) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "active=%d known=%08b reserved=%016b tainted=%016b dirty=%v locked=%v unterminated=%v", int(s.Active)-1, s.Known, s.Reserved, s.Tainted, s.Dirty, s.Locked, s.Unterminated)
	for n, sl := range s.Slots {
		if sl.Present {
			where := "heap"
			if sl.InFile {
				where = "file"
			}
			fmt.Fprintf(&b, " n%d=v%d/h%d/%b/%s", n, sl.Variant, sl.Handle, sl.Holders, where)
		}
	}
	b.WriteString(" disk:")
	for n, d := range s.Disk {
		if d.Present {
			fmt.Fprintf(&b, " n%d=v%d", n, d.Variant)
		}
	}
	if s.SecondOpen {
		b.WriteString(" second:")
		for n, d := range s.Second {
			if d.Present {
				fmt.Fprintf(&b, " n%d=v%d", n, d.Variant)
			}
		}
	}
	return b.String()
}

func hashState(s State) uint64 {
	// Byte by byte rather than through fmt: porcupine hashes every state
	// it visits, and the check's time goes there.
	var b [8 + MaxNames*13 + MaxNames*4]byte
	i := 0
	put := func(v ...byte) { i += copy(b[i:], v) }
	bit := func(v bool) byte {
		if v {
			return 1
		}
		return 0
	}
	put(s.Active, s.Known, byte(s.Reserved), byte(s.Reserved>>8), byte(s.Tainted), byte(s.Tainted>>8),
		bit(s.Loaded)|bit(s.Dirty)<<1|bit(s.Locked)<<2|bit(s.SecondOpen)<<3|bit(s.Unterminated)<<4)
	for _, sl := range s.Slots {
		put(bit(sl.Present)|bit(sl.InFile)<<1, sl.Variant, sl.Holders)
		h := sl.Handle
		put(byte(h), byte(h>>8), byte(h>>16), byte(h>>24), byte(h>>32), byte(h>>40), byte(h>>48), byte(h>>56))
	}
	for n := range MaxNames {
		put(bit(s.Disk[n].Present), s.Disk[n].Variant, bit(s.Second[n].Present), s.Second[n].Variant)
	}
	h := fnv.New64a()
	_, _ = h.Write(b[:i])
	return h.Sum64()
}

// initial is the state before the first operation: nothing indexed, the
// committed index cfg.Warm.
func initial(cfg ModelConfig) State {
	var s State
	for n, w := range cfg.Warm {
		if w != 0 {
			s.Disk[n] = committed{Present: true, Variant: w - 1}
		}
	}
	return s
}

// commit is a commit of the instance: the file lists its file entries,
// and the session holds the writer lock.
func (s *State) commit() {
	for n, sl := range s.Slots {
		s.Disk[n] = committed{Present: sl.Present && sl.InFile, Variant: sl.Variant}
		if !s.Disk[n].Present {
			s.Disk[n].Variant = 0
		}
	}
	s.Dirty, s.Locked, s.Unterminated = false, true, false
}

// NewModel returns the sequential specification as a porcupine model. It is
// nondeterministic where the cache's behaviour depends on what the model
// does not see (an entry's placement, the effect of an operation that never
// returned) and is converted with porcupine's power-set construction.
func NewModel(cfg ModelConfig) porcupine.Model {
	nm := porcupine.NondeterministicModel{
		Init: func() []any {
			return []any{initial(cfg)}
		},
		Step: func(state, input, output any) []any {
			return step(cfg, state.(State), input.(Input), output.(Output))
		},
		Hash: func(state any) uint64 { return hashState(state.(State)) },
		DescribeOperation: func(input, output any) string {
			return describe(input.(Input), output.(Output))
		},
		DescribeState: func(state any) string { return state.(State).String() },
	}
	if !cfg.NoPartition {
		nm.Partition = partitionByName
	}
	return nm.ToModel()
}

// step is the sequential specification of one operation. It returns every
// state the operation may lead to with the given output, none if the
// output is impossible.
func step(cfg ModelConfig, s State, in Input, out Output) []any {
	if out.Unknown {
		// The operation may not have taken effect at all, or taken effect
		// with any output.
		next := []any{s}
		for _, ns := range apply(cfg, s, in, out, true) {
			next = append(next, ns)
		}
		return next
	}
	var next []any
	for _, ns := range apply(cfg, s, in, out, false) {
		next = append(next, ns)
	}
	return next
}

// apply performs in on s. With blind set the output is not checked (the
// operation never returned) and no handle is bound.
func apply(cfg ModelConfig, s State, in Input, out Output, blind bool) []State {
	want := func(e ErrClass) bool { return blind || out.Err == e }
	active := func() uint8 {
		if s.Active == 0 {
			return 0
		}
		return 1 << (s.Active - 1)
	}
	switch in.Kind {
	case KindInit:
		// model.init: one program at a time (ErrProgramActive mirrors the
		// explorer not enabling OpInit while another program is packing).
		if s.Active != 0 && s.Active != in.Program+1 {
			return when(want(ErrProgramActive), s)
		}
		if s.Active != in.Program+1 && s.Known&(1<<in.Program) != 0 {
			// A finalized program lives until it is deleted: packing it
			// again is misuse (cache.ErrProgramLive).
			return when(want(ErrProgramLive), s)
		}
		if !want(ErrNone) {
			return nil
		}
		s.Active = in.Program + 1
		s.Known |= 1 << in.Program
		if !s.Loaded {
			// The first init of an instance loads the committed index
			// (model.init; a relaunch starts a new instance).
			s.Loaded = true
			for n, d := range s.Disk {
				if d.Present && !s.Slots[n].Present && !cfg.HeapOnly {
					s.Slots[n] = slot{Present: true, Variant: d.Variant, InFile: true}
				}
			}
		}
		return []State{s}

	case KindLookUp:
		// model.lookUp: a hit needs every field of the key to match (G1)
		// and adds the entry to the active program's set (Hold).
		sl := &s.Slots[in.Name]
		if repacksHeap(cfg, &s, in.Name, in.Variant) {
			*sl = slot{} // it lives on for its holders, outside the index
		}
		match := sl.Present && sl.Variant == in.Variant
		if !blind {
			if out.Err != ErrNone || out.Hit != match {
				return nil
			}
			if match && sl.Handle != 0 && out.Handle != sl.Handle {
				return nil
			}
		}
		if match {
			if sl.Handle == 0 && !blind {
				sl.Handle = out.Handle
			}
			sl.Holders |= active()
		}
		return []State{s}

	case KindReserve:
		// model.reserve: where the space lives (file or heap, G8) is not
		// observable here; that it exists until Finalize is.
		if !want(ErrNone) {
			return nil
		}
		s.Reserved |= 1 << in.Client
		s.Tainted &^= 1 << in.Client
		if !cfg.HeapOnly {
			// File-backed space: the writer lock is taken (no other
			// process writes, so it is free) and the file grows.
			s.Locked, s.Unterminated = true, true
		}
		return []State{s}

	case KindInsert:
		// model.insert. A reservation dropped by Finalize cannot be
		// inserted (ErrNotReserved): packed bytes are never indexed from
		// space the cache no longer accounts for.
		if s.Reserved&(1<<in.Client) == 0 {
			return when(want(ErrNotReserved), s)
		}
		if !want(ErrNone) {
			return nil
		}
		tainted := s.Tainted&(1<<in.Client) != 0
		s.Reserved &^= 1 << in.Client
		s.Tainted &^= 1 << in.Client
		sl := &s.Slots[in.Name]
		if repacksHeap(cfg, &s, in.Name, in.Variant) {
			*sl = slot{}
		}
		if sl.Present && sl.Variant == in.Variant {
			// Equal key and (deterministically) equal bytes: the existing
			// entry's handle, the new space is garbage.
			if !blind && sl.Handle != 0 && out.Handle != sl.Handle {
				return nil
			}
			if sl.Handle == 0 && !blind {
				sl.Handle = out.Handle
			}
			sl.Holders |= active()
			return []State{s}
		}
		// A new entry replaces the old one in the index; handles are never
		// reused, so its handle is new.
		h := out.Handle
		if blind {
			h = 0
		} else if h == 0 || (sl.Handle != 0 && h == sl.Handle) {
			return nil
		}
		// The replaced entry, if in the file, is dropped by the next commit.
		s.Dirty = s.Dirty || sl.InFile
		*sl = slot{Present: true, Variant: in.Variant, Handle: h, Holders: active()}
		if cfg.HeapOnly {
			return []State{s}
		}
		inFile := s
		inFile.Slots[in.Name].InFile = true
		inFile.Dirty = true
		if !tainted {
			return []State{inFile}
		}
		return []State{inFile, s}

	case KindFinalize:
		// model.finalize: the program ends, unused reservations are dropped.
		if s.Active == 0 {
			return when(want(ErrNoProgram), s)
		}
		if !want(ErrNone) {
			return nil
		}
		if (s.Dirty || cfg.V2 && s.Unterminated) && !cfg.HeapOnly {
			s.commit()
		}
		s.Active, s.Reserved, s.Tainted, s.Locked = 0, 0, 0, false
		return []State{s}

	case KindSave, KindCompact:
		// model.save: commits what changed (Compact: rewrites the file
		// always) and ends the session when no program is active. Either
		// may end the session or move the file under an outstanding
		// reservation: its insert may go to the heap.
		if !want(ErrNone) {
			return nil
		}
		if cfg.HeapOnly {
			return []State{s}
		}
		s.Tainted |= s.Reserved
		// A v2 file that grew since its last commit is committed again
		// even with nothing new, so that it ends in a footer (v2's only
		// commit point; TestV2ReservationAfterCommit).
		if s.Dirty || in.Kind == KindCompact || cfg.V2 && s.Unterminated {
			s.commit()
			if s.Active == 0 {
				s.Locked = false
			}
		} else if s.Active == 0 && s.Reserved == 0 {
			// Nothing to commit: an idle session with no reservation
			// outstanding ends, so the idle instance does not keep the
			// writer lock (Cache.Save).
			s.Locked = false
		}
		return []State{s}

	case KindInvalidate:
		// model.invalidate: the entry leaves the index, so look-ups miss and
		// re-pack; programs holding its handle keep it (their bytes stay
		// valid), which the model does not follow further.
		if !want(ErrNone) {
			return nil
		}
		s.Dirty = s.Dirty || s.Slots[in.Name].InFile
		s.Slots[in.Name] = slot{}
		return []State{s}

	case KindDelete:
		// model.unload: the program's references go; an entry nobody holds
		// leaves the index if it is a heap entry and stays if it is in the
		// file (a reload then hits and writes nothing, G4).
		bit := uint8(1) << in.Program
		if s.Known&bit == 0 {
			return when(want(ErrUnknownProgram), s)
		}
		if !want(ErrNone) {
			return nil
		}
		s.Known &^= bit
		if s.Active == in.Program+1 {
			s.Active = 0
		}
		states := []State{s}
		for n := range s.Slots {
			if s.Slots[n].Holders&bit == 0 {
				continue
			}
			var next []State
			for _, st := range states {
				st.Slots[n].Holders &^= bit
				if st.Slots[n].Holders != 0 {
					next = append(next, st)
					continue
				}
				if !st.Slots[n].InFile {
					st.Slots[n] = slot{}
				}
				next = append(next, st)
			}
			states = next
		}
		return states

	case KindRelaunch:
		// The instance closes without committing (Close) and a new one
		// starts: nothing indexed until its first init loads the file.
		if !want(ErrNone) {
			return nil
		}
		return []State{{Disk: s.Disk, Second: s.Second, SecondOpen: s.SecondOpen}}

	case KindPowerLoss:
		// Every instance is gone, as after a relaunch, but nothing closed:
		// the committed index is what a commit that returned made durable
		// (G2), except that a v2 file without its footer at the end loads
		// nothing.
		if !want(ErrNone) {
			return nil
		}
		kept := State{Disk: s.Disk}
		if cfg.V2 && s.Unterminated {
			return []State{kept, {}}
		}
		return []State{kept}

	case KindOpen2:
		// A second process loads the committed index, unless this one's
		// writer holds the lock: its loader then finds the lock busy and
		// loads nothing (G8: its launch packs to the heap).
		if !want(ErrNone) {
			return nil
		}
		s.SecondOpen = true
		s.Second = [MaxNames]committed{}
		if !s.Locked && !cfg.HeapOnly {
			s.Second = s.Disk
		}
		return []State{s}

	case KindLookUp2:
		d := s.Second[in.Name]
		match := s.SecondOpen && d.Present && d.Variant == in.Variant
		return when(blind || (out.Err == ErrNone && out.Hit == match), s)

	case KindClose2:
		if !want(ErrNone) {
			return nil
		}
		s.SecondOpen, s.Second = false, [MaxNames]committed{}
		return []State{s}
	}
	return nil
}

// repacksHeap reports whether a look-up of name n during the active
// launch leaves a heap entry to be re-packed to the file instead of
// serving it (cache.find, docs/bugs.md "A fall-back heap packing kept out
// of the file"): the entry has the key looked up (find checks the key
// first: another variant's heap entry stays indexed), it is held by other
// programs only, and the launch can write the file (no busy lock or failed
// reservation is in these workloads).
func repacksHeap(cfg ModelConfig, s *State, n int, v uint8) bool {
	sl := s.Slots[n]
	return sl.Present && sl.Variant == v && !sl.InFile && !cfg.HeapOnly && s.Active != 0 && sl.Holders&(1<<(s.Active-1)) == 0
}

func when(ok bool, s State) []State {
	if !ok {
		return nil
	}
	return []State{s}
}

// partitionByName splits a history by name: look-ups, reservations and
// inserts of different names commute, so the history is linearizable only
// if each name's is. Whole-cache operations (init, finalize, save, delete)
// go to every partition. That is a projection: each partition may place
// such an operation at a different point, so the split check is weaker
// than the whole one for them; Check with NoPartition covers that on
// smaller histories.
//
// A history with a second process is not split: what its loader finds
// depends on whether the writer lock is held, which a reservation of any
// name decides, so no partition by name can predict it.
func partitionByName(history []porcupine.Operation) [][]porcupine.Operation {
	byName := map[int][]porcupine.Operation{}
	var global []porcupine.Operation
	for _, op := range history {
		in := op.Input.(Input)
		if in.Kind == KindOpen2 {
			return [][]porcupine.Operation{history}
		}
		if in.Kind.keyed() {
			byName[in.Name] = append(byName[in.Name], op)
		} else {
			global = append(global, op)
		}
	}
	if len(byName) == 0 {
		return [][]porcupine.Operation{history}
	}
	out := make([][]porcupine.Operation, 0, len(byName))
	for n := range MaxNames {
		if ops, ok := byName[n]; ok {
			out = append(out, append(ops, global...))
		}
	}
	return out
}
