package model

import "github.com/xpwc/xpwc/spec"

// Canon is the explorer's canonical form of a state under one design and
// bounds: the state with the fields no future step can read forgotten
// (set to one value), then the least of its renamings in a group
// (CanonicalEncodingUnder). Two states with one canonical form have the
// same futures up to renaming, with the same results, events and
// verdicts on every step (TestCanonIsABisimulation), so the explorer
// visits one of them.
//
// The forgotten fields (docs/model.md, "Dead fields"):
//   - LoadFlag, in a design that never reads it (only the historical
//     designs whose loaded flag changes what they do read it);
//   - Clean, during a launch whose finalize can no longer settle its
//     program by it: the program is settled already (finalize only ever
//     adds to Settled, and what takes the program out of Settled clears
//     Clean too), or the launch fell back to the heap, or the process
//     runs an outdated kernel or source (all three last to the launch's
//     end);
//   - the garbage count, and an unreadable index, while the next commit
//     must write a new file (garbageDead);
//   - whether a name's step in a launch was a hit or a packing (stepHit
//     or stepDone), once the launch cannot be a converged one: it fell
//     back to the heap or has no path (both last to its end), or another
//     name of it missed (a miss ends in a packing). Only ConvergedLaunch
//     tells the two steps apart; every op treats them alike.
type Canon struct {
	group      Renaming
	b          Bounds
	forget     bool
	loadFlag   bool // the design reads LoadFlag
	midSave    bool // a crash in a commit can forge a loadable footer (NoCommitPoint)
	initLocks  bool // an init takes the writer lock without replacing (LockInitToDestroy)
	programsOf [maxPrograms]uint8
}

// NewCanon returns the canonical form of design d's states at bounds b
// under the renamings in group, forgetting dead fields unless keepDead.
func NewCanon(d *Design, b Bounds, group Renaming, keepDead bool) Canon {
	c := Canon{group: group, b: b, forget: !keepDead,
		loadFlag: d.LoadedRepacksToHeap || d.LockInitToDestroy || d.LoadedFlagOnlyOnLoad,
		midSave:  d.NoCommitPoint, initLocks: d.LockInitToDestroy}
	for q := range maxPrograms {
		c.programsOf[q] = b.ProgramNames(spec.Program(q))
	}
	return c
}

// Group is the renamings the form identifies states under.
func (c *Canon) Group() Renaming { return c.group }

// Encode writes s's canonical encoding into e and returns the renaming
// that takes s (its dead fields forgotten) to it.
func (c *Canon) Encode(s *State, e *Encoding) Renaming {
	if !c.forget {
		return s.CanonicalEncodingUnder(e, c.group)
	}
	f := *s
	c.Forget(&f)
	return f.CanonicalEncodingUnder(e, c.group)
}

// Same reports whether x and y are one state once their dead fields are
// forgotten (without renaming).
func (c *Canon) Same(x, y State) bool {
	if c.forget {
		c.Forget(&x)
		c.Forget(&y)
	}
	return x == y
}

// Forget sets s's dead fields to their one value.
func (c *Canon) Forget(s *State) {
	if c.garbageDead(s) {
		s.Disk.Garbage, s.Disk.Volatile = 0, 0
		if s.Disk.State == DiskCorrupt {
			// Nothing reads an unreadable index but a commit that
			// appends to it.
			s.Disk.Idx = [maxNames]Rec{}
			canonicalCopies(s) // its labels numbered the others
		}
	}
	for p := range s.Procs {
		pr := &s.Procs[p]
		if !c.loadFlag {
			pr.LoadFlag = false
		}
		if pr.Clean && (s.Env.Settled&(1<<pr.Prog) != 0 || pr.Blocked || pr.Kernel != s.Env.Kernel || !c.srcCurrent(s, pr)) {
			pr.Clean = false
		}
		if pr.Phase == spec.PhasePacking && (pr.Blocked || pr.NoFile || c.missed(pr)) {
			for n := range pr.Ents {
				if pr.Ents[n].Step == stepHit {
					pr.Ents[n].Step = stepDone
				}
			}
		}
	}
}

// garbageDead reports whether no commit can count s's garbage: the file
// has no loadable index and the next commit writes a new one. With no
// commit yet, every commit creates the file. With an unreadable index,
// every writer that takes the lock from now on replaces the file
// (Proc.Replacing); only a writer holding it since before the index broke
// appends to it. A design whose init takes the lock (LockInitToDestroy)
// does so without replacing, and a crash inside a NoCommitPoint commit can
// forge a loadable footer that keeps the count.
func (c *Canon) garbageDead(s *State) bool {
	switch {
	case c.midSave:
		return false
	case s.Disk.State == DiskEmpty:
		return true
	case s.Disk.State != DiskCorrupt || c.initLocks:
		return false
	}
	return s.Disk.Lock == 0 || s.Procs[s.Disk.Lock-1].Replacing
}

// missed reports whether a name of the launch's program missed: its step
// is past the look-up and not a hit.
func (c *Canon) missed(pr *Proc) bool {
	names := c.programsOf[pr.Prog]
	for n := range maxNames {
		if st := pr.Ents[n].Step; names&(1<<n) != 0 && st != stepNone && st != stepHit {
			return true
		}
	}
	return false
}

func (c *Canon) srcCurrent(s *State, pr *Proc) bool {
	names := c.programsOf[pr.Prog]
	for n := range maxNames {
		if names&(1<<n) != 0 && pr.Src[n] != s.Env.Src[n] {
			return false
		}
	}
	return true
}

// ProcsAmbiguous reports whether s, its dead fields forgotten, equals one
// of its renamings that exchanges the processes (State.ProcsAmbiguous).
func (c *Canon) ProcsAmbiguous(s State) bool {
	if c.forget {
		c.Forget(&s)
	}
	return s.ProcsAmbiguous(c.group)
}
