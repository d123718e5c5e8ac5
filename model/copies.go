package model

import "github.com/xpwc/xpwc/spec"

// Copy labels stand for the cache's copy identities (spec.Entry.CopyID): a
// writer gives every packing it writes to the file a new identity, so two
// records of a name are the same copy only if one was read or carried from
// the other. The model needs no more than a label per live record: with
// maxProcs processes a name is held by at most the file's index, and each
// process's entry and tombstone, so a free label always exists.

// newCopy returns a label for a new copy of name n: one that no record of n
// in s holds.
func newCopy(s *State, n spec.Name) uint8 {
	var used uint8
	mark := func(r Rec) {
		if r.Present() {
			used |= 1 << r.label()
		}
	}
	mark(s.Disk.Idx[n])
	for q := range s.Procs {
		mark(s.Procs[q].Ents[n].Rec)
		mark(s.Procs[q].Tomb[n])
	}
	for l := uint8(1); ; l++ {
		if used&(1<<l) == 0 {
			return l
		}
	}
}

// canonicalCopies renumbers each name's labels in the order the records
// appear (the file's index, then each process's entry and tombstone), so
// that states that differ only in the labels' values are one state. Only
// equality of labels is observable, so the renumbering changes no behaviour.
// Encoding.canonicalCopies does the same on an encoding.
func canonicalCopies(s *State) {
	for n := range maxNames {
		if !hasLabels(s, n) {
			continue
		}
		var r relabel
		s.Disk.Idx[n] = r.apply(s.Disk.Idx[n])
		for q := range s.Procs {
			p := &s.Procs[q]
			p.Ents[n].Rec = r.apply(p.Ents[n].Rec)
			p.Tomb[n] = r.apply(p.Tomb[n])
		}
	}
}

func hasLabels(s *State, n int) bool {
	a, b := &s.Procs[0], &s.Procs[1] // maxProcs is 2
	return (s.Disk.Idx[n]|a.Ents[n].Rec|a.Tomb[n]|b.Ents[n].Rec|b.Tomb[n])&recCopy != 0
}

// relabel numbers labels 1, 2, … in the order apply first sees them.
type relabel struct {
	to   [8]uint8 // old label -> new label, 0 for not yet seen
	last uint8
}

func (r *relabel) apply(x Rec) Rec {
	l := x.label()
	if !x.Present() || l == 0 {
		return x
	}
	if r.to[l] == 0 {
		r.last++
		r.to[l] = r.last
	}
	return x.withLabel(r.to[l])
}
