package model

import (
	"fmt"
	"strings"

	"github.com/xpwc/xpwc/spec"
)

// State is one state of the whole system: every process and its cache
// instance, the cache file, the environment and the ghost record of the last
// visible commit. It is a comparable value of fixed size (no maps, slices or
// pointers), so == compares states and Step copies them freely; Encoding
// writes one out field by field for the explorer to hash. Fields that do
// not matter in a phase are kept zero so that equal situations are equal
// values.
type State struct {
	Procs [maxProcs]Proc
	Disk  Disk
	Env   Env
	// Ghost is the last commit that became visible: what a new process must
	// load (I3). GhostValid is false before the first commit and after a
	// foreign writer destroyed the index (the guarantee is then G7's).
	GhostValid bool
	Ghost      [maxNames]Rec
}

// Rec is one committed copy of a packing: present, the kernel and source
// versions it was packed with, which copy it is, and whether its bytes are
// still intact.
type Rec uint8

const (
	recPresent Rec = 1 << iota
	recKernel      // kernel version (0 or 1)
	recSource      // source version (0 or 1)
	recCorrupt     // bytes changed after packing
	recLate        // changed after this instance checked them (instances only)

	// The copy label: every packing written to the file is a new copy, with a
	// label no other record of its name holds (newCopy), and a compaction
	// keeps it. Only equality of labels means anything, so Step renumbers
	// them (canonicalCopies). A re-pack of a copy a foreign write changed has
	// the same key as that copy; the label is what tells them apart (G3).
	recCopyShift     = 5
	recCopy      Rec = 7 << recCopyShift
)

func mkRec(kernel, source uint8) Rec {
	r := recPresent
	if kernel != 0 {
		r |= recKernel
	}
	if source != 0 {
		r |= recSource
	}
	return r
}

// Present reports whether the record holds a packing.
func (r Rec) Present() bool { return r&recPresent != 0 }

// Key is the record without its copy label and integrity bits: what a
// look-up compares.
func (r Rec) Key() Rec { return r & (recPresent | recKernel | recSource) }

// Copy is the record without its integrity bits: which committed copy it is.
// Tombstones and a refresh compare copies, not keys.
func (r Rec) Copy() Rec { return r & (recPresent | recKernel | recSource | recCopy) }

// Content is the record without its copy label: what a file's index and
// bytes say of the name, to compare with a real file, whose copy identities
// are not labels.
func (r Rec) Content() Rec { return r &^ recCopy }

func (r Rec) label() uint8 { return uint8(r&recCopy) >> recCopyShift }

func (r Rec) withLabel(l uint8) Rec { return r&^recCopy | Rec(l)<<recCopyShift }

// Packing is the record in the spec's vocabulary.
func (r Rec) Packing() spec.Packing {
	return spec.Packing{
		Kernel:      b2u(r&recKernel != 0),
		Source:      b2u(r&recSource != 0),
		Intact:      r&recCorrupt == 0,
		LateCorrupt: r&recLate != 0,
	}
}

func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// Launch steps of one name in the program being packed: the XNNPACK order
// look up, (on a miss) reserve, pack, insert.
const (
	stepNone uint8 = iota
	stepHit
	stepMissed
	stepReserved
	stepDone
)

// Entry is one name in one process's cache instance.
type Entry struct {
	Rec    Rec
	Status spec.EntryStatus
	// Hold is the set of loaded programs (bitmask) holding the entry.
	Hold uint8
	// Maps counts the mappings of this entry's file range in the process.
	Maps uint8
	// Verified: the instance checked the bytes (data CRC) or packed them.
	Verified bool
	// Retired: the committed index no longer lists this packing; programs
	// holding it keep using it, new look-ups miss.
	Retired bool
	// Fallback: a heap packing made because the file could not be used
	// (busy lock, no path): a launch that relies on it is not clean (G3).
	Fallback bool
	// CurIno: the mapping is of the file now at the path (not a file since
	// replaced by rename), so a truncation in place would cut it (I8).
	CurIno bool
	// Step is this name's progress in the current launch.
	Step  uint8
	Place spec.Placement // where Step==stepReserved reserved its space
}

// ReservedInFile reports whether the launch reserved this name's space in
// the cache file and has not inserted it yet. A v2 writer grows the file
// at that point, so its end is no longer a footer (model/conformance).
func (e *Entry) ReservedInFile() bool {
	return e.Step == stepReserved && e.Place == spec.PlaceFile
}

// Proc is one process and its cache instance.
type Proc struct {
	Phase spec.Phase
	// Kernel and Src are the versions the process runs: fixed at process
	// start (a running process keeps the kernel and model files it loaded).
	Kernel uint8
	Src    [maxNames]uint8
	// Prog is the program being packed (PhasePacking).
	Prog spec.Program
	// Loaded is the set of programs initialized and not unloaded.
	Loaded uint8
	Ents   [maxNames]Entry
	// Tomb holds, per name, the packing this instance dropped from its view
	// of the committed index (invalidated, found corrupt, replaced by a
	// re-pack): its next commit drops it from the file too, if the file
	// still lists exactly that packing.
	Tomb [maxNames]Rec

	FileOn  bool // the instance uses the cache file (opted in)
	NoFile  bool // this launch reads "no path" from its options
	Expect  bool // this launch must hit every entry (I4)
	Blocked bool // this launch fell back to the heap (lock busy, no path)
	// HeapLaunch: the lock was busy at this launch's load or at one of its
	// reservations; the rest of its reservations go to the heap without
	// asking again, as the cache does (docs/locking.md, "A busy lock").
	HeapLaunch bool
	// Replacing: this process took the writer lock while the index was
	// unreadable, so its session writes a new file that its commit renames
	// over the path (G7).
	Replacing bool
	Clean     bool // no invalidation happened during this launch
	Broken    bool // a mapping was cut by a truncation (I8)
	LoadFlag  bool // the design's "loaded" flag (cache_loaded_ / loaded_from_disk_)
	// OptModule is the module's own copy of the load options (cache path
	// set or not); OptCaller is what the caller's map says now.
	OptModule bool
	OptCaller bool
}

// Disk is the cache file at the path, as a new process would find it.
type Disk struct {
	State   DiskState
	Idx     [maxNames]Rec
	Garbage uint8 // stale or orphaned packings, saturating at garbageCap
	// Volatile is the part of Garbage appended since the last commit made
	// the file durable (reservations never inserted, a dead writer's
	// uncommitted packings): a power loss may take that space back, so it
	// stops counting then. The cache counts bytes on disk, and an
	// over-count here would make the model compact where it appends.
	Volatile uint8
	// Lock is 1+holder of the writer lock, 0 when free.
	Lock uint8
}

// DiskState is what loading the file at the path would find.
type DiskState uint8

const (
	DiskEmpty   DiskState = iota // no file or no committed index yet
	DiskValid                    // a committed index loads
	DiskCorrupt                  // the index does not load
)

const garbageCap = 3

// Env is the world outside the cache.
type Env struct {
	Kernel uint8
	Src    [maxNames]uint8
	// Settled is the set of programs (bitmask) that had a clean launch since
	// the last invalidation touching them: their next launch must hit (G3).
	Settled uint8
}

// Init is the start state: no file, every process running the first kernel
// and sources, its module loaded with a cache path.
func Init(b Bounds) State {
	var s State
	for p := 0; p < b.Procs; p++ {
		s.Procs[p] = freshProc(&s.Env)
	}
	return s
}

func freshProc(e *Env) Proc {
	return Proc{Kernel: e.Kernel, Src: e.Src, OptModule: true, OptCaller: true}
}

// Live counts the present entries of the committed index.
func (d *Disk) Live() int {
	n := 0
	for _, r := range d.Idx {
		if r.Present() {
			n++
		}
	}
	return n
}

// String renders a state compactly for traces and test failures.
func (s State) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "env{kernel=%d src=%v settled=%02b}", s.Env.Kernel, s.Env.Src, s.Env.Settled)
	fmt.Fprintf(&b, " disk{%s idx=%v garbage=%d lock=%d}", [...]string{"empty", "valid", "corrupt"}[s.Disk.State], s.Disk.Idx, s.Disk.Garbage, s.Disk.Lock)
	if s.GhostValid {
		fmt.Fprintf(&b, " ghost=%v", s.Ghost)
	}
	for i, p := range s.Procs {
		fmt.Fprintf(&b, "\n  %s phase=%d kernel=%d loaded=%02b broken=%v ents=%v", spec.Proc(i), p.Phase, p.Kernel, p.Loaded, p.Broken, p.Ents)
	}
	return b.String()
}

// String renders a record as k<kernel>s<source>, with ! when corrupt.
func (r Rec) String() string {
	if !r.Present() {
		return "-"
	}
	s := fmt.Sprintf("k%ds%d", b2u(r&recKernel != 0), b2u(r&recSource != 0))
	if l := r.label(); l != 0 {
		s += fmt.Sprintf("#%d", l)
	}
	if r&recCorrupt != 0 {
		s += "!"
	}
	return s
}
