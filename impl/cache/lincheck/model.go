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
}

func (s State) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "active=%d known=%08b reserved=%016b", int(s.Active)-1, s.Known, s.Reserved)
	for n, sl := range s.Slots {
		if sl.Present {
			fmt.Fprintf(&b, " n%d=v%d/h%d/%b", n, sl.Variant, sl.Handle, sl.Holders)
		}
	}
	return b.String()
}

func hashState(s State) uint64 {
	h := fnv.New64a()
	fmt.Fprint(h, s.Active, s.Known, s.Reserved, s.Loaded)
	for _, sl := range s.Slots {
		fmt.Fprint(h, sl.Present, sl.Variant, sl.Handle, sl.Holders)
	}
	return h.Sum64()
}

// NewModel returns the sequential specification as a porcupine model. It is
// nondeterministic where the cache's behaviour depends on what the model
// does not see (an entry's placement, the effect of an operation that never
// returned) and is converted with porcupine's power-set construction.
func NewModel(cfg ModelConfig) porcupine.Model {
	nm := porcupine.NondeterministicModel{
		Init: func() []any {
			return []any{State{}}
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
		if !want(ErrNone) {
			return nil
		}
		s.Active = in.Program + 1
		s.Known |= 1 << in.Program
		if !s.Loaded {
			s.Loaded = true
			for n, w := range cfg.Warm {
				if w != 0 && !s.Slots[n].Present {
					s.Slots[n] = slot{Present: true, Variant: w - 1}
				}
			}
		}
		return []State{s}

	case KindLookUp:
		// model.lookUp: a hit needs every field of the key to match (G1)
		// and adds the entry to the active program's set (Hold).
		sl := &s.Slots[in.Name]
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
		s.Reserved &^= 1 << in.Client
		sl := &s.Slots[in.Name]
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
		*sl = slot{Present: true, Variant: in.Variant, Handle: h, Holders: active()}
		return []State{s}

	case KindFinalize:
		// model.finalize: the program ends, unused reservations are dropped.
		if s.Active == 0 {
			return when(want(ErrNoProgram), s)
		}
		if !want(ErrNone) {
			return nil
		}
		s.Active, s.Reserved = 0, 0
		return []State{s}

	case KindSave, KindCompact:
		// model.save: commits (Compact: rewrites the file); nothing
		// observable through the provider API.
		return when(want(ErrNone), s)

	case KindInvalidate:
		// model.invalidate: the entry leaves the index, so look-ups miss and
		// re-pack; programs holding its handle keep it (their bytes stay
		// valid), which the model does not follow further.
		if !want(ErrNone) {
			return nil
		}
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
				gone := st
				gone.Slots[n] = slot{}
				next = append(next, gone)
				if !cfg.HeapOnly {
					next = append(next, st)
				}
			}
			states = next
		}
		return states
	}
	return nil
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
func partitionByName(history []porcupine.Operation) [][]porcupine.Operation {
	byName := map[int][]porcupine.Operation{}
	var global []porcupine.Operation
	for _, op := range history {
		in := op.Input.(Input)
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
