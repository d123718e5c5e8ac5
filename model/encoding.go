package model

import (
	"github.com/zeebo/xxh3"

	"github.com/xpwc/xpwc/spec"
)

// A State's encoding writes every field, one byte each, in the order State
// declares them. It is what the explorer hashes and what orders the two
// processes of a state (Canonical): equal states have equal encodings and,
// since Decode inverts Encode, unequal states unequal ones. Every field of
// State is one byte wide today, so the order of encodings is the order of
// the fields compared one by one, first field first.
const (
	entrySize = 10
	procSize  = 4 + maxNames + maxNames*entrySize + maxNames + 11
	diskSize  = 4 + maxNames
	envSize   = 2 + maxNames
	// EncodedSize is the length of a State's encoding.
	EncodedSize = maxProcs*procSize + diskSize + envSize + 1 + maxNames
)

// Encoding is a State written out field by field.
type Encoding [EncodedSize]byte

// Encode writes s into e.
func (s *State) Encode(e *Encoding) {
	for p := range s.Procs {
		s.Procs[p].encode((*[procSize]byte)(e[p*procSize:]))
	}
	b := (*[EncodedSize - encDisk]byte)(e[encDisk:])
	d := &s.Disk
	b[0] = byte(d.State)
	encodeRecs((*[maxNames]byte)(b[encIdx-encDisk:]), &d.Idx)
	b[1+maxNames], b[2+maxNames], b[encLock-encDisk] = d.Garbage, d.Volatile, d.Lock
	b[diskSize] = s.Env.Kernel
	copy(b[diskSize+1:], s.Env.Src[:])
	b[diskSize+1+maxNames] = s.Env.Settled
	b[diskSize+envSize] = b2u(s.GhostValid)
	encodeRecs((*[maxNames]byte)(b[diskSize+envSize+1:]), &s.Ghost)
}

// The offsets of a Proc's fields in its encoding.
const (
	procEnts = 4 + maxNames
	procTomb = procEnts + maxNames*entrySize
	procOpts = procTomb + maxNames
)

func (p *Proc) encode(b *[procSize]byte) {
	b[0], b[1] = byte(p.Phase), p.Kernel
	copy(b[2:], p.Src[:])
	b[2+maxNames], b[3+maxNames] = byte(p.Prog), p.Loaded
	for n := range p.Ents {
		x, e := (*[entrySize]byte)(b[procEnts+n*entrySize:]), &p.Ents[n]
		x[0], x[1], x[2], x[3] = byte(e.Rec), byte(e.Status), e.Hold, e.Maps
		x[4], x[5], x[6], x[7] = b2u(e.Verified), b2u(e.Retired), b2u(e.Fallback), b2u(e.CurIno)
		x[8], x[9] = e.Step, byte(e.Place)
	}
	encodeRecs((*[maxNames]byte)(b[procTomb:]), &p.Tomb)
	o := (*[procSize - procOpts]byte)(b[procOpts:])
	o[0], o[1], o[2], o[3] = b2u(p.FileOn), b2u(p.NoFile), b2u(p.Expect), b2u(p.Blocked)
	o[4], o[5], o[6], o[7] = b2u(p.HeapLaunch), b2u(p.Replacing), b2u(p.Clean), b2u(p.Broken)
	o[8], o[9], o[10] = b2u(p.LoadFlag), b2u(p.OptModule), b2u(p.OptCaller)
}

func encodeRecs(b *[maxNames]byte, r *[maxNames]Rec) {
	for n, x := range r {
		b[n] = byte(x)
	}
}

// Decode is the inverse of Encode.
func (e *Encoding) Decode() State {
	var s State
	for q := range s.Procs {
		s.Procs[q].decode((*[procSize]byte)(e[q*procSize:]))
	}
	b := (*[EncodedSize - encDisk]byte)(e[encDisk:])
	d := &s.Disk
	d.State = DiskState(b[0])
	decodeRecs(&d.Idx, (*[maxNames]byte)(b[encIdx-encDisk:]))
	d.Garbage, d.Volatile, d.Lock = b[1+maxNames], b[2+maxNames], b[encLock-encDisk]
	s.Env.Kernel = b[diskSize]
	copy(s.Env.Src[:], b[diskSize+1:])
	s.Env.Settled = b[diskSize+1+maxNames]
	s.GhostValid = b[diskSize+envSize] != 0
	decodeRecs(&s.Ghost, (*[maxNames]byte)(b[diskSize+envSize+1:]))
	return s
}

func (p *Proc) decode(b *[procSize]byte) {
	p.Phase, p.Kernel = spec.Phase(b[0]), b[1]
	copy(p.Src[:], b[2:])
	p.Prog, p.Loaded = spec.Program(b[2+maxNames]), b[3+maxNames]
	for n := range p.Ents {
		x, e := (*[entrySize]byte)(b[procEnts+n*entrySize:]), &p.Ents[n]
		e.Rec, e.Status, e.Hold, e.Maps = Rec(x[0]), spec.EntryStatus(x[1]), x[2], x[3]
		e.Verified, e.Retired, e.Fallback, e.CurIno = x[4] != 0, x[5] != 0, x[6] != 0, x[7] != 0
		e.Step, e.Place = x[8], spec.Placement(x[9])
	}
	decodeRecs(&p.Tomb, (*[maxNames]byte)(b[procTomb:]))
	o := (*[procSize - procOpts]byte)(b[procOpts:])
	p.FileOn, p.NoFile, p.Expect, p.Blocked = o[0] != 0, o[1] != 0, o[2] != 0, o[3] != 0
	p.HeapLaunch, p.Replacing, p.Clean, p.Broken = o[4] != 0, o[5] != 0, o[6] != 0, o[7] != 0
	p.LoadFlag, p.OptModule, p.OptCaller = o[8] != 0, o[9] != 0, o[10] != 0
}

func decodeRecs(r *[maxNames]Rec, b *[maxNames]byte) {
	for n, x := range b {
		r[n] = Rec(x)
	}
}

// Fingerprint is a 64-bit hash (XXH3) of the encoding: what the explorer
// keeps of a visited state instead of the state. Two distinct states share
// a fingerprint with probability about 2^-64; docs/model.md works out what
// that means for a whole exploration.
func (e *Encoding) Fingerprint() uint64 { return xxh3.Hash(e[:]) }

// Offsets of the disk's fields in an encoding.
const (
	encDisk = maxProcs * procSize
	encIdx  = encDisk + 1
	encLock = encIdx + maxNames + 2
)

// canonicalCopies is canonicalCopies of the encoded state, in the same
// order of records.
func (e *Encoding) canonicalCopies() {
	for n := range maxNames {
		ent, tomb := procEnts+n*entrySize, procTomb+n // of the first process; maxProcs is 2
		l := e[encIdx+n] | e[ent] | e[tomb] | e[procSize+ent] | e[procSize+tomb]
		if Rec(l)&recCopy == 0 {
			continue // no labels to renumber
		}
		var r relabel
		e[encIdx+n] = byte(r.apply(Rec(e[encIdx+n])))
		for q := range maxProcs {
			ent, tomb := q*procSize+procEnts+n*entrySize, q*procSize+procTomb+n
			e[ent] = byte(r.apply(Rec(e[ent])))
			e[tomb] = byte(r.apply(Rec(e[tomb])))
		}
	}
}
