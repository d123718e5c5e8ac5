package model

import "github.com/xpwc/xpwc/spec"

// init initializes program q on process p's instance, opening the instance
// (and loading the file) when it has none.
func (m machine) init(o *Outcome, p spec.Proc, q spec.Program) bool {
	s := &o.Next
	pr := &s.Procs[p]
	if pr.Phase == spec.PhasePacking || pr.Loaded&(1<<q) != 0 {
		return false
	}
	useFile := pr.OptModule
	if m.d.BorrowOptions {
		useFile = pr.OptCaller // PR 19673: the caller's map, as it is now
	}
	o.Result.Place = spec.PlaceHeap
	if useFile {
		o.Result.Place = spec.PlaceFile
	}
	if pr.Phase == spec.PhaseNoInstance {
		pr.FileOn = useFile
	}
	// The index is read under the shared lock: while another process
	// writes, this launch keeps the view it has and packs to heap (G8).
	busy := pr.FileOn && s.Disk.Lock != 0
	switch {
	case !pr.FileOn:
	case m.d.LockInitToDestroy:
		o.Result.Load, busy = m.initLocking(o, p)
	case busy:
		o.Result.Load = spec.LoadLocked
	case pr.Phase == spec.PhaseNoInstance:
		o.Result.Load = m.open(o, p)
	default:
		o.Result.Load = m.refresh(o, p)
	}
	pr.Phase = spec.PhasePacking
	pr.Prog = q
	pr.Loaded |= 1 << q
	pr.NoFile = !useFile || !pr.FileOn
	pr.Blocked = pr.NoFile || busy
	pr.HeapLaunch = busy
	pr.Clean = true
	pr.Expect = !pr.Blocked && s.Env.Settled&(1<<q) != 0 && pr.Kernel == s.Env.Kernel && m.srcCurrent(s, pr, q)
	return true
}

// initLocking is an init of a design whose writer lock is taken at init
// and held until destroy (LockInitToDestroy): the instance that holds the
// lock runs no loader; one that holds entries takes the lock without
// loading (ReinitWithoutLoad); otherwise it loads under the shared lock,
// and a load that finds no index is a fresh write under the writer lock.
// busy: the launch packs to the heap for a lock another process holds.
func (m machine) initLocking(o *Outcome, p spec.Proc) (spec.LoadOutcome, bool) {
	s := &o.Next
	pr := &s.Procs[p]
	me := uint8(p) + 1
	if s.Disk.Lock == me {
		return spec.LoadOK, false // the write descriptor is open: the view is kept
	}
	if m.d.ReinitWithoutLoad && pr.Phase != spec.PhaseNoInstance && holdsEntries(pr) {
		// The heap fall-back's re-init: no loader; the lock if it is
		// free (a loaded instance's own shared lock refuses it).
		if pr.LoadFlag || !m.lockFree(s) {
			return spec.LoadOK, true
		}
		s.Disk.Lock = me
		return spec.LoadOK, false
	}
	if s.Disk.Lock != 0 {
		return spec.LoadLocked, true // the shared lock of the load is refused
	}
	var load spec.LoadOutcome
	if pr.Phase == spec.PhaseNoInstance || !holdsEntries(pr) {
		load = m.open(o, p)
	} else {
		load = m.refresh(o, p)
	}
	if load == spec.LoadOK {
		return load, false // loaded: its mapping keeps the shared lock
	}
	if !m.lockFree(s) {
		return spec.LoadLocked, true
	}
	s.Disk.Lock = me // the fresh write's lock, held until destroy
	return load, false
}

// lockFree reports whether the writer lock can be taken: nobody holds it
// and, under LockInitToDestroy, no instance maps a file it loaded (its
// shared lock).
func (m machine) lockFree(s *State) bool {
	if s.Disk.Lock != 0 {
		return false
	}
	if m.d.LockInitToDestroy {
		for q := 0; q < m.b.Procs; q++ {
			if s.Procs[q].Phase != spec.PhaseNoInstance && s.Procs[q].LoadFlag {
				return false
			}
		}
	}
	return true
}

// holdsEntries reports whether the instance holds any entry.
func holdsEntries(pr *Proc) bool {
	for n := range pr.Ents {
		if pr.Ents[n].Rec.Present() {
			return true
		}
	}
	return false
}

// ownFileSpace reports whether the instance has space of its own in the
// file: packings appended or committed by it, or a reservation there.
func ownFileSpace(pr *Proc) bool {
	for n := range pr.Ents {
		e := &pr.Ents[n]
		if e.Status == spec.EntryAppended || e.Status == spec.EntryCommitted || e.ReservedInFile() {
			return true
		}
	}
	return false
}

func (m machine) srcCurrent(s *State, pr *Proc, q spec.Program) bool {
	for n := 0; n < m.b.Names; n++ {
		if m.names(q)&(1<<n) != 0 && pr.Src[n] != s.Env.Src[n] {
			return false
		}
	}
	return true
}

// open is the first load of a new instance.
func (m machine) open(o *Outcome, p spec.Proc) spec.LoadOutcome {
	s := &o.Next
	pr := &s.Procs[p]
	if m.d.NoIndex {
		// PR 19862: the file is scratch space for this launch.
		m.truncate(o)
		return spec.LoadMissing
	}
	switch s.Disk.State {
	case DiskValid:
		for n := 0; n < m.b.Names; n++ {
			if r := s.Disk.Idx[n]; r.Present() {
				pr.Ents[n] = Entry{Rec: r, Status: spec.EntryLoaded, Maps: 1, CurIno: true}
			}
		}
		pr.LoadFlag = true
		return spec.LoadOK
	case DiskCorrupt:
		o.Events |= EvtLoadCorrupt
		if m.d.TruncateInPlace && m.lockFree(s) {
			m.truncate(o) // ExecuTorch's fresh write: ftruncate(0)
		}
		return spec.LoadRejected
	}
	return spec.LoadMissing
}

// refresh brings an open instance's view up to the newest commit at a later
// program init: entries the index no longer lists retire, entries it lists
// that the instance lacks are mapped. The reference never maps a range the
// instance maps already (G5).
func (m machine) refresh(o *Outcome, p spec.Proc) spec.LoadOutcome {
	s := &o.Next
	pr := &s.Procs[p]
	var idx [maxNames]Rec
	outcome := spec.LoadOK
	switch s.Disk.State {
	case DiskValid:
		idx = s.Disk.Idx
	case DiskCorrupt:
		outcome = spec.LoadRejected
		o.Events |= EvtLoadCorrupt
	default:
		outcome = spec.LoadMissing
	}
	for n := 0; n < m.b.Names; n++ {
		r, e := idx[n], &pr.Ents[n]
		fileBacked := e.Status == spec.EntryLoaded || e.Status == spec.EntryCommitted
		if fileBacked && !e.Retired && e.Rec.Copy() != r.Copy() {
			if e.Hold != 0 {
				e.Retired = true
			} else {
				*e = Entry{}
			}
		}
		if t := pr.Tomb[n]; t != 0 {
			if m.d.sameTombCopy(r, t) {
				continue // still listed: this instance's next commit drops it
			}
			pr.Tomb[n] = 0 // gone or replaced by another writer
		}
		if r.Present() && (!e.Rec.Present() || e.Retired || e.Status == spec.EntryHeap) {
			// The entry it replaces lives on for the programs holding it,
			// outside the index; the loaded one is held by nobody yet.
			*e = Entry{Rec: r, Status: spec.EntryLoaded, Maps: 1, CurIno: true}
			o.Events |= EvtRefresh
		}
	}
	if m.d.LoadedFlagOnlyOnLoad && !pr.LoadFlag && outcome == spec.LoadOK {
		// PR 19988: cache_loaded_ was never set on the fresh-write path, so
		// this init loads the whole file again and maps the instance's own
		// committed regions a second time.
		for n := 0; n < m.b.Names; n++ {
			e := &pr.Ents[n]
			if e.Status == spec.EntryCommitted && e.CurIno && e.Rec.Copy() == idx[n].Copy() {
				e.Maps++
			}
		}
		pr.LoadFlag = true
	}
	return outcome
}

// refreshKeepingSteps refreshes the view in the middle of a launch: the
// entries' progress in the launch stays.
func (m machine) refreshKeepingSteps(o *Outcome, p spec.Proc) {
	pr := &o.Next.Procs[p]
	var steps [maxNames]uint8
	for n := range pr.Ents {
		steps[n] = pr.Ents[n].Step
	}
	m.refresh(o, p)
	for n := range pr.Ents {
		pr.Ents[n].Step = steps[n]
	}
}

// lookUp is XNNPACK's look_up of name n in the program being packed.
func (m machine) lookUp(o *Outcome, p spec.Proc, n spec.Name) bool {
	pr := &o.Next.Procs[p]
	if pr.Phase != spec.PhasePacking || m.names(pr.Prog)&(1<<n) == 0 {
		return false
	}
	e := &pr.Ents[n]
	if e.Step != stepNone {
		return false
	}
	want := mkRec(pr.Kernel, pr.Src[n])
	have := e.Rec.Key()
	if m.d.NoSeed {
		// v1: the key is the name; the layout the bytes have is not asked.
		want &^= recKernel
		have &^= recKernel
	}
	if m.d.IgnoreSource {
		// Names and seed: the source weights the bytes came from are not
		// asked.
		want &^= recSource
		have &^= recSource
	}
	match := e.Rec.Present() && !e.Retired && have == want
	if match && !e.Verified && m.d.CheckAtCompute {
		// On compute: the handle is handed out unchecked; its first
		// compute checks it (compute).
		o.Events |= EvtUncheckedHandle
		if e.Rec&recCorrupt != 0 && !m.d.ComputeUnchecked {
			// That check will fail and re-pack it: this launch is not the
			// one after which every launch hits (G3).
			pr.Clean = false
		}
	}
	if match && !e.Verified && m.d.checksAtLookUp() {
		o.Result.Checked = true
		if e.Rec&recCorrupt != 0 {
			o.Events |= EvtCorruptCaught
			match = false
			tombstone(pr, int(n))
			if e.Hold != 0 {
				e.Retired = true
			} else {
				*e = Entry{}
			}
		} else {
			e.Verified = true
		}
	}
	if match && e.Fallback && !pr.Blocked && !m.d.FallbackHits {
		// A heap packing made when the file could not be used (a busy
		// lock, no path), still held by another program of the instance,
		// or it would be gone: this launch can write the file, so it
		// re-packs the name there. A hit would keep the packing out of the
		// file for as long as that program stays loaded, and no launch
		// would be the one after which every launch hits (G3; docs/bugs.md,
		// "A fall-back heap packing kept out of the file"). The heap
		// packing lives on for its holders, outside the index, as a
		// retired entry does.
		o.Events |= EvtFallbackMiss
		match = false
		e.Retired = true
	}
	if match {
		o.Result.Hit = true
		o.Result.Bytes = e.Rec.Packing()
		e.Hold |= 1 << pr.Prog
		e.Step = stepHit
		if e.Fallback {
			// Only a launch that cannot write the file hits it (or a
			// design whose look-up finds every packing, FallbackHits).
			pr.Blocked = true
		}
		if e.Rec&recLate != 0 {
			// Checked before a foreign write changed it: this launch cannot
			// see the corruption, so it does not count as the launch that
			// re-packs after it (G3); a process that loads the file does.
			pr.Clean = false
		}
		if fileBacked := e.Status == spec.EntryLoaded || e.Status == spec.EntryCommitted; fileBacked && !e.CurIno {
			// Served from a mapping of a file no longer at the path (the
			// file was compacted or replaced since): if the file now there
			// does not hold these bytes intact, this launch did not see
			// what the next one will load, so it is not the launch after
			// which every launch hits (G3; found by random lockstep runs
			// with an early compaction before a foreign write).
			if d := o.Next.Disk.Idx[n]; o.Next.Disk.State != DiskValid || d.Copy() != e.Rec.Copy() || d&recCorrupt != 0 {
				pr.Clean = false
			}
		}
		if e.Status == spec.EntryLoaded {
			o.Events |= EvtWarmHit
		}
		return true
	}
	if e.Rec.Present() && e.Rec.Key() != mkRec(pr.Kernel, pr.Src[n]) {
		o.Events |= EvtStaleMiss
	}
	e.Step = stepMissed
	return true
}

// reserve finds space for a packing of n after a miss.
func (m machine) reserve(o *Outcome, p spec.Proc, n spec.Name) bool {
	s := &o.Next
	pr := &s.Procs[p]
	e := &pr.Ents[n]
	if pr.Phase != spec.PhasePacking || e.Step != stepMissed {
		return false
	}
	r := &o.Result
	switch {
	case pr.NoFile:
		r.Place, r.Reason = spec.PlaceHeap, spec.ReasonNoPath
	case m.d.LoadedRepacksToHeap && pr.LoadFlag:
		r.Place, r.Reason = spec.PlaceHeap, spec.ReasonDesign
	case pr.HeapLaunch:
		r.Place, r.Reason = spec.PlaceHeap, spec.ReasonLockBusy
	case m.d.LockInitToDestroy && s.Disk.Lock != uint8(p)+1:
		// Only an init takes the lock: without it, the heap.
		r.Place, r.Reason = spec.PlaceHeap, spec.ReasonLockBusy
		pr.Blocked, pr.HeapLaunch = true, true
	case m.d.ReinitWithoutLoad && !ownFileSpace(pr) && s.Disk.State != DiskEmpty:
		// The lock taken without a load: the writer's end of the file is
		// offset 0, and its reservation truncates the file in place.
		m.truncate(o)
		r.Place = spec.PlaceFile
	default:
		r.Place, r.Reason = m.takeWriter(o, p)
		if r.Reason == spec.ReasonLockBusy {
			pr.Blocked, pr.HeapLaunch = true, true
		}
	}
	if m.d.ReserveBreaksIndex && r.Place == spec.PlaceFile && s.Disk.State == DiskValid {
		// Appended after the trailer: the file no longer ends in one.
		s.Disk.State = DiskCorrupt
	}
	e.Step = stepReserved
	e.Place = r.Place
	e.Fallback = r.Reason == spec.ReasonLockBusy || r.Reason == spec.ReasonNoPath
	return true
}

// takeWriter is a reservation's use of the writer lock: the file when p
// holds it or takes it now, the heap with a reason when another process
// holds it.
func (m machine) takeWriter(o *Outcome, p spec.Proc) (spec.Placement, spec.Reason) {
	s := &o.Next
	switch s.Disk.Lock {
	case uint8(p) + 1:
		return spec.PlaceFile, spec.ReasonNone
	case 0:
		// Taking the writer lock re-reads the newest commit, which another
		// process may have made since this launch's init (G2, G3).
		s.Disk.Lock = uint8(p) + 1
		s.Procs[p].Replacing = s.Disk.State == DiskCorrupt
		m.refreshKeepingSteps(o, p)
		return spec.PlaceFile, spec.ReasonNone
	}
	// G8: a busy lock is a heap packing with a reason, not an error.
	o.Events |= EvtLockBusy
	return spec.PlaceHeap, spec.ReasonLockBusy
}

// insert stores the packing made into the reserved space.
func (m machine) insert(o *Outcome, p spec.Proc, n spec.Name) bool {
	pr := &o.Next.Procs[p]
	e := &pr.Ents[n]
	if pr.Phase != spec.PhasePacking || e.Step != stepReserved {
		return false
	}
	m.put(o, p, n, 1<<pr.Prog)
	return true
}

// put stores a fresh packing of n into the space e.Place says (file or
// heap) for the programs in hold: a launch's insert, or a compute's re-pack.
func (m machine) put(o *Outcome, p spec.Proc, n spec.Name, hold uint8) {
	pr := &o.Next.Procs[p]
	e := &pr.Ents[n]
	want := mkRec(pr.Kernel, pr.Src[n])
	if e.Rec.Present() && !e.Retired && e.Rec&^recCopy == want {
		// The same packing arrived meanwhile (the reservation re-read a
		// commit of another process): the bytes compare equal, the
		// existing entry is kept and the reservation is garbage (G4).
		if e.Place == spec.PlaceFile {
			s := &o.Next
			s.Disk.Garbage = uint8(min(int(s.Disk.Garbage)+1, garbageCap))
			s.Disk.Volatile = uint8(min(int(s.Disk.Volatile)+1, garbageCap))
		}
		e.Hold |= hold
		e.Verified = true
		e.Step, e.Place, e.Fallback = stepDone, spec.PlaceNone, false
		return
	}
	tombstone(pr, int(n))
	ne := Entry{
		Rec:      want,
		Status:   spec.EntryHeap,
		Hold:     hold, // the replaced entry lives on for its holders
		Verified: true,
		Fallback: e.Fallback,
		Step:     stepDone,
	}
	if e.Place == spec.PlaceFile {
		ne.Status, ne.Maps, ne.CurIno = spec.EntryAppended, 1, true
		ne.Rec = want.withLabel(newCopy(&o.Next, n))
	}
	*e = ne
}

// finalize ends the launch: commit what is new, release the writer lock,
// and record whether the launch was clean (G3).
func (m machine) finalize(o *Outcome, p spec.Proc) bool {
	s := &o.Next
	pr := &s.Procs[p]
	if pr.Phase != spec.PhasePacking {
		return false
	}
	for n := 0; n < m.b.Names; n++ {
		if m.names(pr.Prog)&(1<<n) != 0 && pr.Ents[n].Step != stepHit && pr.Ents[n].Step != stepDone {
			return false
		}
	}
	// A commit the lock does not allow now stays pending: Finalize does
	// not fail (G8).
	m.commitIfDirty(o, p)
	if s.Disk.Lock == uint8(p)+1 && !m.d.LockInitToDestroy {
		s.Disk.Lock = 0
	}
	pr.Replacing = false
	q := pr.Prog
	if pr.Clean && !pr.Blocked && pr.Kernel == s.Env.Kernel && m.srcCurrent(s, pr, q) && !m.dropPending(s, q) {
		s.Env.Settled |= 1 << q
	}
	if pr.Expect {
		o.Events |= EvtConverged
	}
	for n := range pr.Ents {
		pr.Ents[n].Step, pr.Ents[n].Place = stepNone, spec.PlaceNone
	}
	pr.Phase, pr.Prog = spec.PhaseIdle, 0
	pr.Expect, pr.Blocked, pr.Clean, pr.NoFile, pr.HeapLaunch = false, false, false, false, false
	return true
}

// dropPending reports whether some process dropped a packing of a name of
// program q from its view and could not commit the drop yet (the lock was
// busy): the invalidation has not reached the file, so a launch that hit the
// packing meanwhile is not the launch after which every launch hits (G3).
func (m machine) dropPending(s *State, q spec.Program) bool {
	for p := 0; p < m.b.Procs; p++ {
		for n := 0; n < m.b.Names; n++ {
			if m.names(q)&(1<<n) != 0 && s.Procs[p].Tomb[n] != 0 {
				return true
			}
		}
	}
	return false
}

// save commits explicitly; with nothing new it writes nothing (G4).
func (m machine) save(o *Outcome, p spec.Proc) bool {
	pr := &o.Next.Procs[p]
	if pr.Phase == spec.PhaseNoInstance {
		return false
	}
	for n := range pr.Ents {
		if pr.Ents[n].Step == stepReserved {
			// Not between a reservation and its insert: ExecuTorch holds
			// the cache mutex across a program's packing, and a commit that
			// rewrites the file cannot carry a reservation over.
			return false
		}
	}
	if m.d.IdleSaveWrites && !dirty(pr) && pr.FileOn && o.Next.Disk.State == DiskEmpty &&
		(o.Next.Disk.Lock == 0 || o.Next.Disk.Lock == uint8(p)+1) {
		// A trailer with no entries on the file this instance created:
		// written, and refused by the next load.
		// The fresh write truncated the file, so the trailer is all of it.
		o.Next.Disk = Disk{State: DiskCorrupt, Lock: o.Next.Disk.Lock}
		o.Result.Wrote = true
		return true
	}
	if !m.commitIfDirty(o, p) {
		// An explicit save reports that it could not commit; the
		// packings stay usable and the commit pending.
		o.Result.Failed, o.Result.Reason = true, spec.ReasonLockBusy
	}
	return true
}

// invalidate drops n from the instance's view and saves: the next commit
// drops it from the file if the file still lists the packing the instance
// knew (another process may have replaced it since). Names in use by a
// loaded program are not offered (the cache lets their holders keep them;
// the model keeps one entry per name).
func (m machine) invalidate(o *Outcome, p spec.Proc, n spec.Name) bool {
	s := &o.Next
	pr := &s.Procs[p]
	e := &pr.Ents[n]
	if m.d.NoInvalidate || pr.Phase != spec.PhaseIdle || e.Hold != 0 || !e.Rec.Present() || e.Retired {
		return false
	}
	tombstone(pr, int(n))
	*e = Entry{}
	m.invalidateFor(s, 1<<n)
	if !m.commitIfDirty(o, p) {
		o.Result.Failed, o.Result.Reason = true, spec.ReasonLockBusy
	}
	if o.Result.Wrote {
		o.Events |= EvtInvalidated
	}
	return true
}

// tombstone records that entry n leaves the instance's view of the
// committed index.
func tombstone(pr *Proc, n int) {
	e := &pr.Ents[n]
	if (e.Status == spec.EntryLoaded || e.Status == spec.EntryCommitted) && !e.Retired {
		pr.Tomb[n] = e.Rec.Copy()
	}
}

// unload releases program q's references (ExecuTorch delete_packed_data).
// File-backed entries stay mapped, so a reload hits and writes nothing (G4).
func (m machine) unload(o *Outcome, p spec.Proc, q spec.Program) bool {
	pr := &o.Next.Procs[p]
	if pr.Phase != spec.PhaseIdle || pr.Loaded&(1<<q) == 0 {
		return false
	}
	pr.Loaded &^= 1 << q
	for n := range pr.Ents {
		e := &pr.Ents[n]
		e.Hold &^= 1 << q
		if e.Hold == 0 && (e.Status == spec.EntryHeap || e.Retired) {
			*e = Entry{}
		}
	}
	return true
}

// destroy closes the instance: every program unloaded, every mapping gone.
func (m machine) destroy(o *Outcome, p spec.Proc) bool {
	pr := &o.Next.Procs[p]
	if pr.Phase != spec.PhaseIdle {
		return false
	}
	*pr = Proc{Kernel: pr.Kernel, Src: pr.Src, OptModule: pr.OptModule, OptCaller: pr.OptCaller}
	if o.Next.Disk.Lock == uint8(p)+1 {
		o.Next.Disk.Lock = 0 // a lock held from init (LockInitToDestroy)
	}
	return true
}

// dirty reports whether the instance has something to commit.
func dirty(pr *Proc) bool {
	for n := range pr.Ents {
		if pr.Ents[n].Status == spec.EntryAppended || pr.Tomb[n] != 0 {
			return true
		}
	}
	return false
}

func hasAppended(pr *Proc) bool {
	for n := range pr.Ents {
		if pr.Ents[n].Status == spec.EntryAppended {
			return true
		}
	}
	return false
}
