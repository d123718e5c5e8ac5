package model

import (
	"bytes"

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
	b := (*[EncodedSize - maxProcs*procSize]byte)(e[maxProcs*procSize:])
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
	b := e[:]
	next := func() byte { c := b[0]; b = b[1:]; return c }
	bit := func() bool { return next() != 0 }
	recs := func(r *[maxNames]Rec) {
		for n := range r {
			r[n] = Rec(next())
		}
	}
	for q := range s.Procs {
		p := &s.Procs[q]
		p.Phase, p.Kernel = spec.Phase(next()), next()
		for n := range p.Src {
			p.Src[n] = next()
		}
		p.Prog, p.Loaded = spec.Program(next()), next()
		for n := range p.Ents {
			x := &p.Ents[n]
			x.Rec, x.Status, x.Hold, x.Maps = Rec(next()), spec.EntryStatus(next()), next(), next()
			x.Verified, x.Retired, x.Fallback, x.CurIno = bit(), bit(), bit(), bit()
			x.Step, x.Place = next(), spec.Placement(next())
		}
		recs(&p.Tomb)
		p.FileOn, p.NoFile, p.Expect, p.Blocked = bit(), bit(), bit(), bit()
		p.HeapLaunch, p.Replacing, p.Clean, p.Broken = bit(), bit(), bit(), bit()
		p.LoadFlag, p.OptModule, p.OptCaller = bit(), bit(), bit()
	}
	s.Disk.State = DiskState(next())
	recs(&s.Disk.Idx)
	s.Disk.Garbage, s.Disk.Volatile, s.Disk.Lock = next(), next(), next()
	s.Env.Kernel = next()
	for n := range s.Env.Src {
		s.Env.Src[n] = next()
	}
	s.Env.Settled, s.GhostValid = next(), bit()
	recs(&s.Ghost)
	return s
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
		var r relabel
		e[encIdx+n] = byte(r.apply(Rec(e[encIdx+n])))
		for q := range maxProcs {
			ent, tomb := q*procSize+procEnts+n*entrySize, q*procSize+procTomb+n
			e[ent] = byte(r.apply(Rec(e[ent])))
			e[tomb] = byte(r.apply(Rec(e[tomb])))
		}
	}
}

// procsBytes is the part of an encoding that holds the processes.
func (e *Encoding) procsBytes() []byte { return e[:maxProcs*procSize] }

// procsLess orders two encodings by their processes.
func procsLess(a, b *Encoding) bool {
	return bytes.Compare(a.procsBytes(), b.procsBytes()) < 0
}
