package spec

import "fmt"

// The lifecycle vocabulary: the operations a runtime performs on a cache, the
// environment events that happen to it, and what each one observably returns.
// The model (model/), the scenario files and the conformance harness all speak
// this vocabulary, so a trace found by the explorer can be replayed against
// the real cache line by line.
//
// The vocabulary is deliberately small-integer typed (processes A, B, …,
// programs P1, P2, …, tensor names w0, w1, …): a scenario names abstract
// actors, and the harness that replays it maps them to real paths, programs
// and tensor names.

// OpKind is one operation of the runtime or one event of the environment.
type OpKind uint8

const (
	opInvalid OpKind = iota

	// OpInit initializes a program on the process's cache instance (the
	// ExecuTorch backend's init). On an instance that has no view of the file
	// yet it opens the cache and loads the committed index; on one that has,
	// it refreshes the view when another process committed since (G3).
	OpInit
	// OpLookUp looks a packed weight up (XNNPACK's look_up).
	OpLookUp
	// OpReserve reserves space for a packing after a miss.
	OpReserve
	// OpInsert inserts the packed bytes (look_up_or_insert after packing).
	OpInsert
	// OpFinalize ends the program's packing: msync(MS_SYNC) the new data,
	// protect it read-only and commit it when something new was written (G2,
	// G5); nothing is written when nothing is new (G4).
	OpFinalize
	// OpSave commits explicitly (ExecuTorch's save_weight_cache_on_disk).
	OpSave
	// OpInvalidate drops a name from the instance's view of the cache (an
	// explicit invalidation by the runtime) and saves: the file loses the
	// entry if it still lists the packing the instance knew. In the cache
	// API it is Invalidate followed by Save.
	OpInvalidate
	// OpUnload deletes a program: its references to entries are released.
	OpUnload
	// OpDestroy closes the process's cache instance: every program is
	// unloaded and every mapping released.
	OpDestroy
	// OpCompute is an inference after finalize reading one weight's packed
	// bytes through the handle its program holds (XNNPACK's offset_to_addr,
	// then the operator's compute). Under the on-compute policy it is where
	// an unchecked entry is checked (I13); an entry that fails is re-packed
	// outside any program's packing (the writer lock, reserve, insert, save)
	// and the output is computed from the new bytes. Result.Bytes is the
	// packing the output was computed from.
	OpCompute

	// EvCrash kills one process (CrashProcess) or the machine (CrashPower).
	// It has several outcomes (see Branch): the model lists every one.
	EvCrash
	// EvRestart ends a process cleanly and starts it again: the new process
	// runs the kernel installed now.
	EvRestart
	// EvKernelUpgrade installs a kernel whose packed layout differs: every
	// packing made before is stale for processes started after (G1, G3).
	EvKernelUpgrade
	// EvSourceChange replaces one tensor's source weights under the same name
	// (a new model file): its packing is stale for programs initialized after.
	EvSourceChange
	// EvForeign is a process outside the protocol writing to the cache path:
	// bit rot or a stray writer in data bytes (ForeignData) or in the index
	// (ForeignIndex). G1 and G7 say what the cache must do about it.
	EvForeign
	// EvClobberOptions is the caller of a module load reusing the options map
	// it passed, after the load returned (PR 19673): the module must have
	// copied it (G6).
	EvClobberOptions

	opLimit
)

var opKindNames = [...]string{
	opInvalid:        "invalid",
	OpInit:           "init",
	OpLookUp:         "lookup",
	OpReserve:        "reserve",
	OpInsert:         "insert",
	OpFinalize:       "finalize",
	OpSave:           "save",
	OpInvalidate:     "invalidate",
	OpUnload:         "unload",
	OpDestroy:        "destroy",
	OpCompute:        "compute",
	EvCrash:          "crash",
	EvRestart:        "restart",
	EvKernelUpgrade:  "upgrade-kernel",
	EvSourceChange:   "change-source",
	EvForeign:        "foreign",
	EvClobberOptions: "clobber-options",
}

// String is the op's verb in the scenario text form.
func (k OpKind) String() string {
	if k < opLimit {
		return opKindNames[k]
	}
	return "invalid"
}

// IsEvent reports whether k happens to the runtime rather than being done by
// it. Events have no meaningful result; operations do.
func (k OpKind) IsEvent() bool { return k >= EvCrash && k < opLimit }

// OpKinds lists every valid kind in declaration order.
func OpKinds() []OpKind {
	out := make([]OpKind, opLimit-OpInit)
	for i := range out {
		out[i] = OpInit + OpKind(i)
	}
	return out
}

// Proc names a process; printed A, B, …
type Proc uint8

// Program names a program (a model file); printed P1, P2, …
type Program uint8

// Name names one packed weight (a weight, bias pair); printed w0, w1, …
type Name uint8

// Bounds of the abstract vocabulary. Scenario text outside them is rejected.
const (
	MaxProcs    = 4
	MaxPrograms = 4
	MaxNames    = 8
)

// CrashKind is the reach of a crash. The two follow the crash model of
// docs/faults.md: a process crash keeps every completed write in the page cache;
// power loss keeps only what was made durable.
type CrashKind uint8

const (
	_ CrashKind = iota // the zero value is no crash kind
	// CrashProcess is SIGKILL, the OOM killer or jetsam on one process.
	CrashProcess
	// CrashPower is power loss or a kernel crash: every process dies.
	CrashPower
)

// ForeignKind says where a foreign writer scribbled.
type ForeignKind uint8

const (
	_ ForeignKind = iota // the zero value is no foreign kind
	// ForeignData changes the data bytes of one committed entry.
	ForeignData
	// ForeignIndex makes the committed index unreadable.
	ForeignIndex
)

// Branch identifies one outcome of an event that has several (crash, power
// loss). A trace records the branch taken so that a replay takes the same one.
type Branch uint8

const (
	// BranchNone is the only outcome of a deterministic op.
	BranchNone Branch = iota
	// BranchIdle: the crash hit between operations.
	BranchIdle
	// BranchMidSave: the crash hit inside a commit, after the new data was
	// appended and before the commit point was durable.
	BranchMidSave
	// BranchForged: the crash hit inside a commit of a format without a
	// checksummed commit point, and the bytes at the end of the file happen
	// to parse as a trailer (weight bytes read as an index).
	BranchForged
	// BranchDataLost: power loss dropped data pages that a commit referenced
	// but that had not been made durable before it. No design of the model
	// commits before its data is durable, so the model never produces it;
	// the word is kept for scenarios of such designs.
	BranchDataLost
	// BranchCompact: a commit (finalize, save, invalidate, a compute's re-pack) that the model
	// would append rewrites the file to drop its garbage instead. The model
	// counts garbage in packings and the cache in bytes (dead index blocks
	// and page padding included), so the cache may compact before the
	// model's bound on garbage is reached; never after (G4). The model's
	// default is to append; a lockstep run names this branch where the
	// cache compacted.
	BranchCompact
	branchLimit
)

var branchNames = [...]string{
	BranchNone:     "",
	BranchIdle:     "idle",
	BranchMidSave:  "mid-save",
	BranchForged:   "forged-trailer",
	BranchDataLost: "data-lost",
	BranchCompact:  "compact",
}

// String is the branch's text form ("" for BranchNone).
func (b Branch) String() string {
	if b < branchLimit {
		return branchNames[b]
	}
	return "invalid"
}

// Op is one line of a scenario: an operation or event with its arguments.
// Fields an op kind does not take are zero.
type Op struct {
	Kind    OpKind
	Proc    Proc        // every operation, EvCrash with CrashProcess, EvRestart, EvClobberOptions
	Program Program     // OpInit, OpUnload
	Name    Name        // OpLookUp, OpReserve, OpInsert, OpInvalidate, OpCompute, EvSourceChange, EvForeign with ForeignData
	Crash   CrashKind   // EvCrash
	Foreign ForeignKind // EvForeign
	Branch  Branch      // EvCrash: which outcome; OpFinalize, OpSave, OpInvalidate, OpCompute: BranchCompact or none
}

// Placement is where a reservation or an entry lives.
type Placement uint8

const (
	PlaceNone Placement = iota
	// PlaceFile: appended to the cache file and mapped (G5).
	PlaceFile
	// PlaceHeap: heap memory, never persisted (G8 fallback or no path).
	PlaceHeap
)

// Reason records why something went to the heap or was re-packed (G8: every
// fallback has a recorded reason).
type Reason uint8

const (
	ReasonNone Reason = iota
	// ReasonLockBusy: another process holds the writer lock.
	ReasonLockBusy
	// ReasonNoPath: the program did not opt in to a cache file.
	ReasonNoPath
	// ReasonDesign: the design under study sends it there (historical
	// designs only; the reference never reports it).
	ReasonDesign
)

// LoadOutcome is what loading the committed index found: the one
// vocabulary of the model's results, the cache's Stats, the simulator's
// scenario files (load=NAME), simrun's output and the conformance
// protocol, each of which spells it with String.
type LoadOutcome uint8

const (
	// LoadNone: nothing was loaded (no program initialized yet, or an op
	// that does not load).
	LoadNone LoadOutcome = iota
	// LoadMissing: no file, or a file with no committed index yet (a cold
	// start).
	LoadMissing
	// LoadOK: a committed index was loaded.
	LoadOK
	// LoadRejected: the file failed a check (a typed error matching
	// ErrCorrupt, or not a cache file); it is replaced by rename at the
	// next commit, never truncated (G7).
	LoadRejected
	// LoadLocked: another process holds the writer lock, so the index was
	// not read; this launch packs to heap (G8) with the view it had.
	LoadLocked
	// LoadFailed: the file could not be read at all (an I/O error, no
	// permission, not a regular file): the launch packs to heap (G8) and
	// writes nothing. The model never produces it: its filesystem does not
	// fail, so a lockstep run in which the cache reports it diverges, as
	// it should; error injection compares only safety (sim.Config.Faults).
	LoadFailed
	// LoadOtherFormat: the file is a cache of a format the caller did not
	// name; its entries were loaded and are carried over into a file of
	// the configured format at the next commit. The model has one format.
	LoadOtherFormat
	// LoadDisabled: the cache has no path (G6); the model always has one.
	LoadDisabled
	loadLimit
)

var loadNames = [loadLimit]string{
	LoadNone:        "none",
	LoadMissing:     "missing",
	LoadOK:          "ok",
	LoadRejected:    "rejected",
	LoadLocked:      "locked",
	LoadFailed:      "failed",
	LoadOtherFormat: "other-format",
	LoadDisabled:    "disabled",
}

// String is the outcome's name.
func (l LoadOutcome) String() string {
	if l < loadLimit {
		return loadNames[l]
	}
	return fmt.Sprintf("LoadOutcome(%d)", uint8(l))
}

// ParseLoadOutcome is the inverse of String.
func ParseLoadOutcome(s string) (LoadOutcome, error) {
	for l, name := range loadNames {
		if name == s {
			return LoadOutcome(l), nil
		}
	}
	return LoadNone, fmt.Errorf("spec: unknown load outcome %q", s)
}

// MarshalText writes the name, so JSON carries it as a string.
func (l LoadOutcome) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// UnmarshalText reads a name written by MarshalText.
func (l *LoadOutcome) UnmarshalText(b []byte) error {
	v, err := ParseLoadOutcome(string(b))
	if err != nil {
		return err
	}
	*l = v
	return nil
}

// Packing is the abstract identity of packed bytes: which kernel version
// packed them from which source version, and whether the bytes are still
// what was packed. A hit is correct when Kernel and Source are the ones the
// caller expects and the bytes are intact (G1).
type Packing struct {
	Kernel uint8
	Source uint8
	// Intact is false when the bytes were changed after packing (a foreign
	// writer, a forged index, data lost to power).
	Intact bool
	// LateCorrupt marks bytes that passed this instance's data check and
	// were changed afterwards: G1 does not promise to catch that (the
	// verification policy checks once per instance).
	LateCorrupt bool
}

// Result is what an operation observably returned. Events return the zero
// Result.
type Result struct {
	// Hit is the look-up's answer; Bytes is the packing handed out on a hit.
	Hit   bool
	Bytes Packing
	// Checked reports that this look-up verified the entry's data.
	Checked bool
	// Place is where OpReserve put the space, Reason why it is not the file.
	Place  Placement
	Reason Reason
	// Load is what OpInit's load found.
	Load LoadOutcome
	// Wrote reports that the op wrote to the cache file (OpFinalize,
	// OpSave, OpInvalidate).
	Wrote bool
	// Failed reports an error returned to the runtime. G7 and G8 say the
	// reference design fails no step of loading, packing or finalizing
	// because of the cache; an explicit save (or invalidation) that finds
	// the writer lock busy reports it, with Reason set (I12).
	Failed bool
}

// Phase is the observable phase of a process and its cache instance.
type Phase uint8

const (
	// PhaseNoInstance: the process runs but has no cache instance open.
	PhaseNoInstance Phase = iota
	// PhaseIdle: an instance is open and no program is being packed.
	PhaseIdle
	// PhasePacking: a program was initialized and is not finalized yet.
	PhasePacking
)

// EntryStatus is the observable status of one name in one instance.
type EntryStatus uint8

const (
	EntryAbsent EntryStatus = iota
	// EntryLoaded: read from the committed index, mapped read-only.
	EntryLoaded
	// EntryAppended: packed into the file by this instance, not committed.
	EntryAppended
	// EntryCommitted: packed into the file by this instance and committed.
	EntryCommitted
	// EntryHeap: packed on the heap; never persisted.
	EntryHeap
)
