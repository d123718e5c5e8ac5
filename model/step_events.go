package model

import "github.com/xpwc/xpwc/spec"

// crash lists every outcome of a process crash or power loss. A crash
// between operations is always possible; a crash inside a commit is possible
// when the crashing process holds the writer lock with appended data; a
// design without a commit point has one more, a forged trailer.
func (m machine) crash(dst []Outcome, s *State, op spec.Op) []Outcome {
	power := op.Crash == spec.CrashPower
	if !power && op.Crash != spec.CrashProcess {
		return dst
	}
	if !power && s.Procs[op.Proc] == freshProc(&s.Env) {
		return dst // identical to the state it is in
	}
	branches := [3]spec.Branch{spec.BranchIdle}
	nb := 1
	if s.Disk.Lock != 0 {
		holder := spec.Proc(s.Disk.Lock - 1)
		if (power || holder == op.Proc) && hasAppended(&s.Procs[holder]) {
			branches[nb] = spec.BranchMidSave
			nb++
			if m.d.NoCommitPoint {
				branches[nb] = spec.BranchForged
				nb++
			}
		}
	}
	for _, br := range branches[:nb] {
		if op.Branch != spec.BranchNone && op.Branch != br {
			continue
		}
		out := Outcome{Op: op, Next: *s}
		out.Op.Branch = br
		if br != spec.BranchIdle {
			m.midSave(&out, spec.Proc(s.Disk.Lock-1), br)
			out.Events |= EvtMidSave
		}
		if power {
			for p := 0; p < m.b.Procs; p++ {
				m.kill(&out.Next, spec.Proc(p))
			}
			d := &out.Next.Disk
			d.Garbage -= min(d.Volatile, d.Garbage)
			d.Volatile = 0
		} else {
			m.kill(&out.Next, op.Proc)
		}
		dst = append(dst, out)
	}
	return dst
}

// kill ends process p: its lock is released (flock dies with the process),
// its appended but uncommitted data becomes garbage, and a new process
// starts running the kernel and sources installed now.
func (m machine) kill(s *State, p spec.Proc) {
	pr := &s.Procs[p]
	g := int(s.Disk.Garbage)
	for n := range pr.Ents {
		if pr.Ents[n].Status == spec.EntryAppended {
			g++
		}
	}
	s.Disk.Volatile = uint8(min(int(s.Disk.Volatile)+g-int(s.Disk.Garbage), garbageCap))
	s.Disk.Garbage = uint8(min(g, garbageCap))
	if s.Disk.Lock == uint8(p)+1 {
		s.Disk.Lock = 0
	}
	*pr = freshProc(&s.Env)
}

func (m machine) restart(o *Outcome, p spec.Proc) bool {
	s := &o.Next
	if s.Procs[p] == freshProc(&s.Env) {
		return false
	}
	m.kill(s, p)
	return true
}

func (m machine) upgrade(o *Outcome) bool {
	s := &o.Next
	if int(s.Env.Kernel)+1 >= m.b.Kernels {
		return false
	}
	s.Env.Kernel++
	m.invalidateFor(s, 1<<m.b.Names-1)
	return true
}

func (m machine) changeSource(o *Outcome, n spec.Name) bool {
	s := &o.Next
	if int(s.Env.Src[n])+1 >= m.b.Sources {
		return false
	}
	s.Env.Src[n]++
	m.invalidateFor(s, 1<<n)
	return true
}

// foreign is a writer outside the protocol. Corrupting the index voids the
// commit guarantee (G7 takes over: reject and rebuild); corrupting data is
// seen by every process that maps those pages.
func (m machine) foreign(o *Outcome, op spec.Op) bool {
	s := &o.Next
	if s.Disk.State != DiskValid {
		return false
	}
	switch op.Foreign {
	case spec.ForeignIndex:
		s.Disk.State = DiskCorrupt
		s.GhostValid, s.Ghost = false, [maxNames]Rec{}
		m.invalidateFor(s, 1<<m.b.Names-1)
		return true
	case spec.ForeignData:
		r := s.Disk.Idx[op.Name]
		if !r.Present() || r&recCorrupt != 0 {
			return false
		}
		s.Disk.Idx[op.Name] |= recCorrupt
		for p := range s.Procs {
			e := &s.Procs[p].Ents[op.Name]
			shared := e.Status == spec.EntryLoaded || e.Status == spec.EntryCommitted
			if shared && e.CurIno && e.Rec.Copy() == r.Copy() {
				e.Rec |= recCorrupt
				if e.Verified {
					e.Rec |= recLate
				}
			}
		}
		m.invalidateFor(s, 1<<op.Name)
		return true
	}
	return false
}

// clobber is the caller reusing the options map it passed to the module
// load. Only a design that borrowed the map can tell.
func (m machine) clobber(o *Outcome, p spec.Proc) bool {
	pr := &o.Next.Procs[p]
	if !pr.OptCaller {
		return false
	}
	if m.d.BorrowOptions {
		pr.OptCaller = false
	}
	return true
}
