package model

import "github.com/xpwc/xpwc/spec"

// commitIfDirty commits when the instance has something new, taking the
// writer lock if it is free (and giving it back unless a launch is in
// progress). It reports false when the lock is busy, leaving the commit
// pending.
func (m machine) commitIfDirty(o *Outcome, p spec.Proc) bool {
	s := &o.Next
	pr := &s.Procs[p]
	if !dirty(pr) {
		return true
	}
	me := uint8(p) + 1
	switch s.Disk.Lock {
	case me:
		m.commit(o, p)
	case 0:
		// Taking the lock re-reads the newest commit, as a reservation does.
		s.Disk.Lock = me
		pr.Replacing = s.Disk.State == DiskCorrupt
		m.refreshKeepingSteps(o, p)
		m.commit(o, p)
		if pr.Phase != spec.PhasePacking {
			s.Disk.Lock = 0
			pr.Replacing = false
		}
	default:
		return false
	}
	return true
}

// commit publishes process p's changes under the writer lock: the newest
// committed index (re-read, so concurrent commits merge) without the
// packings p dropped, plus p's appended packings. A file whose index is
// unreadable is replaced by rename, never truncated in place (G6). When the
// merge leaves nothing to change, nothing is written (G4).
func (m machine) commit(o *Outcome, p spec.Proc) {
	s := &o.Next
	pr := &s.Procs[p]
	if m.d.NoIndex {
		// PR 19862: msync and nothing else; no index is ever written.
		for n := range pr.Ents {
			if pr.Ents[n].Status == spec.EntryAppended {
				pr.Ents[n].Status = spec.EntryCommitted
			}
		}
		pr.Tomb = [maxNames]Rec{}
		return
	}
	var idx [maxNames]Rec
	replace := pr.Replacing
	changed := false
	switch {
	case s.Disk.State == DiskValid:
		idx = s.Disk.Idx
	case s.Disk.State == DiskCorrupt && !replace:
		// A foreign write made the index unreadable during this session:
		// the session's file is still the live one, and its next commit
		// lists what the instance knows is committed there. It has not
		// re-read the file, so it writes whatever made it dirty.
		changed = true
		for n := 0; n < m.b.Names; n++ {
			e := &pr.Ents[n]
			if (e.Status == spec.EntryLoaded || e.Status == spec.EntryCommitted) && !e.Retired {
				idx[n] = e.Rec
				if d := s.Disk.Idx[n]; d.Copy() == e.Rec.Copy() {
					// The index names the bytes in the file at the path,
					// which the instance re-read when it took the lock;
					// its own mapping may be of an older file (compacted
					// since) and hold them intact.
					idx[n] = e.Rec&^recCorrupt | d&recCorrupt
				}
			}
		}
	}
	orig := idx
	garbage := int(s.Disk.Garbage)
	for n := 0; n < m.b.Names; n++ {
		if t := pr.Tomb[n]; t != 0 && m.d.sameTombCopy(idx[n], t) {
			idx[n] = 0
			garbage++
			changed = true
		}
		pr.Tomb[n] = 0
	}
	var displaced, fresh uint8
	for n := 0; n < m.b.Names; n++ {
		e := &pr.Ents[n]
		if e.Status != spec.EntryAppended {
			continue
		}
		fresh |= 1 << n
		if idx[n].Present() {
			garbage++
		}
		idx[n] = e.Rec
		e.Status = spec.EntryCommitted
		changed = true
	}
	if !changed && !replace {
		return // another writer's commit already made this one unnecessary
	}
	for n := 0; n < m.b.Names; n++ {
		// A process still running an older kernel or source drops or
		// re-packs over the current packing: with one packing per name
		// that is an invalidation for everyone else (G3).
		if current(&s.Env, n, orig[n]) && !current(&s.Env, n, idx[n]) {
			displaced |= 1 << n
		}
	}
	m.invalidateFor(s, displaced)
	// A session that began with no commit on disk (no file, or only a
	// crashed writer's uncommitted bytes) wrote a new file from the start,
	// as a replacement does: its packings are in the file renamed over the
	// path, and nothing of the old file's garbage is carried over.
	created := s.Disk.State == DiskEmpty
	m.publish(o, idx, garbage, replace, created, p, fresh)
	pr.Replacing = false // the new file is the live one now
}

// publish makes idx the committed index: appended with a new commit point,
// or written to a new file renamed over the path when the old one is
// unreadable (replace) or holds more garbage than live entries (compaction,
// G4). Renaming leaves every existing mapping on the old inode intact.
//
// Process p committed the packings in fresh. When an unreadable file is
// replaced, they were written into the new file, so p's mappings of them
// are of the file now at the path; a compaction copies every packing, and
// leaves all mappings on the old inode. A created file (the session began
// with no commit) is renamed into place like a replacement, so it is never
// compacted: the cache decides compaction only when appending to a live
// file (impl/cache commit.go; found by random conformance, formerly the
// known divergence refresh-remaps-compacted-entries).
func (m machine) publish(o *Outcome, idx [maxNames]Rec, garbage int, replace, created bool, p spec.Proc, fresh uint8) {
	s := &o.Next
	live := 0
	for _, r := range idx {
		if r.Present() {
			live++
		}
	}
	switch {
	case replace:
		o.Events |= EvtReplace
	case created:
		replace = true
	case (garbage > max(live, 1) || o.Op.Branch == spec.BranchCompact) && !m.d.NoCompaction:
		// The cache counts garbage in bytes, dead index blocks and page
		// padding included, and may compact before this count of packings
		// says so; a lockstep run names that commit branch=compact.
		replace = true
		fresh = 0
		o.Events |= EvtCompact
		// The rewrite copies each committed packing from the file at the
		// path, so the copy keeps its label truthfully: it is carried from
		// the record the index lists, bytes a foreign write changed
		// included (caught by their checksum, G1). Copied from the
		// committer's mapping of an older file, it would be a sibling of
		// the listed bytes under the same label, and an instance that maps
		// the changed ones would keep them at its refresh and miss in a
		// launch owed convergence (I4; found by the explorer at two names).
	}
	if replace {
		garbage = 0
		for q := range s.Procs {
			for n := range s.Procs[q].Ents {
				s.Procs[q].Ents[n].CurIno = spec.Proc(q) == p && fresh&(1<<n) != 0
			}
		}
	}
	s.Disk.State = DiskValid
	s.Disk.Idx = idx
	s.Disk.Garbage = uint8(min(garbage, garbageCap))
	s.Disk.Volatile = 0 // the commit's fdatasync made every appended byte durable
	s.GhostValid = true
	for n := range idx {
		s.Ghost[n] = idx[n].Key()
	}
	o.Result.Wrote = true
	o.Events |= EvtCommit
}

// truncate cuts the file to zero in place. Historical designs only: every
// mapping of the file's ranges is now beyond its end (I8).
func (m machine) truncate(o *Outcome) {
	s := &o.Next
	for p := range s.Procs {
		for n := range s.Procs[p].Ents {
			e := &s.Procs[p].Ents[n]
			if e.Maps > 0 && e.CurIno {
				s.Procs[p].Broken = true
			}
		}
	}
	s.Disk = Disk{Lock: s.Disk.Lock}
	o.Events |= EvtTruncate
}

// midSave applies what a commit interrupted by a crash left on disk. The
// reference writes its commit point last, checksummed: nothing before that
// point is visible, so the previous index stays (G2).
func (m machine) midSave(o *Outcome, p spec.Proc, br spec.Branch) {
	if !m.d.NoCommitPoint {
		return
	}
	s := &o.Next
	pr := &s.Procs[p]
	switch br {
	case spec.BranchMidSave:
		// v2 save: ftruncate(index_start+len) done, footer not written:
		// the file ends in zeros and no trailer parses.
		s.Disk.State = DiskCorrupt
	case spec.BranchForged:
		// The bytes now at the end parse as a footer: the entries it
		// names point at whatever bytes are there.
		s.Disk.State = DiskValid
		for n := 0; n < m.b.Names; n++ {
			if pr.Ents[n].Status == spec.EntryAppended {
				s.Disk.Idx[n] = pr.Ents[n].Rec | recCorrupt
			}
		}
	}
}
