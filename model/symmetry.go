package model

import (
	"bytes"
	"encoding/binary"

	"github.com/xpwc/xpwc/spec"
)

// Processes are interchangeable: every design treats A and B alike, so a
// state and the state with A and B swapped have mirror-image futures. The
// explorer visits one state of each pair, the canonical one.
//
// So are names, where the programs allow it: every rule of Step treats each
// name by the same code over its own records (entries, tombstones, the
// index, the ghost, its source version), and counts that mix names
// (garbage, live entries) are sums. Only which names a program packs tells
// w0 from w1, so exchanging them is a symmetry when every program packs
// both or neither (Bounds.Symmetries). The two exchanges commute and each
// is its own inverse: with both, the explorer visits one state of each
// orbit of four.

// Renaming is a renaming of processes and names: the identity, an exchange
// of the processes, of the names w0 and w1, or both. Renamings compose by
// exclusive or.
type Renaming uint8

const (
	SwapProcs Renaming = 1 << iota // processes A and B exchanged
	SwapNames                      // names w0 and w1 exchanged
)

// Symmetries returns the renamings under which Step's transitions at
// bounds b are the same up to renaming, for every design: SwapProcs at two
// processes, SwapNames at two or more names when every program packs both
// w0 and w1 or neither.
func (b Bounds) Symmetries() Renaming {
	var g Renaming
	if b.Procs == 2 {
		g |= SwapProcs
	}
	if b.Names >= 2 {
		g |= SwapNames
		for p := 0; p < b.Programs; p++ {
			if m := b.ProgramNames(spec.Program(p)) & 0b11; m == 0b01 || m == 0b10 {
				g &^= SwapNames
			}
		}
	}
	return g
}

// Op renames op: its process, and its name when it takes one.
func (r Renaming) Op(op spec.Op) spec.Op {
	if r&SwapProcs != 0 && TakesProc(op) {
		op.Proc = 1 - op.Proc
	}
	if r&SwapNames != 0 && takesName(op) && op.Name < 2 {
		op.Name = 1 - op.Name
	}
	return op
}

func takesName(op spec.Op) bool {
	switch op.Kind {
	case spec.OpLookUp, spec.OpReserve, spec.OpInsert, spec.OpInvalidate, spec.OpCompute, spec.EvSourceChange:
		return true
	case spec.EvForeign:
		return op.Foreign == spec.ForeignData
	}
	return false
}

// Renamed returns s renamed by r, its copy labels renumbered.
func (s State) Renamed(r Renaming) State {
	var e, x Encoding
	s.Encode(&e)
	e.rename(&x, r)
	return x.Decode()
}

// rename writes into x the encoding e renamed by r.
func (e *Encoding) rename(x *Encoding, r Renaming) {
	if r&SwapProcs != 0 {
		e.mirror(x)
	} else {
		*x = *e
	}
	if r&SwapNames != 0 {
		x.swapNames()
	}
}

// swapNames exchanges the records of w0 and w1 in the encoding. Labels are
// numbered name by name, so the result needs no renumbering. The records
// are swapped as fixed-size arrays: the canonical form swaps names twice
// per successor the explorer generates.
func (e *Encoding) swapNames() {
	for q := range maxProcs {
		o := q * procSize
		e[o+2], e[o+3] = e[o+3], e[o+2]
		a, b := (*[entrySize]byte)(e[o+procEnts:]), (*[entrySize]byte)(e[o+procEnts+entrySize:])
		*a, *b = *b, *a
		e[o+procTomb], e[o+procTomb+1] = e[o+procTomb+1], e[o+procTomb]
	}
	e[encIdx], e[encIdx+1] = e[encIdx+1], e[encIdx]
	const env = encDisk + diskSize
	e[env+1], e[env+2] = e[env+2], e[env+1]
	const ghost = env + envSize + 1
	e[ghost], e[ghost+1] = e[ghost+1], e[ghost]
}

// CanonicalEncodingUnder writes the encoding of the representative of s's
// orbit under the renamings in group g (a set of Renaming bits, from
// Bounds.Symmetries) into e, and returns the renaming that takes s to it.
// With the processes alone it is CanonicalEncoding. With the names, the
// representative is the least encoding of the orbit (of two renamings giving
// it, the identity before SwapNames before SwapProcs before both).
func (s *State) CanonicalEncodingUnder(e *Encoding, g Renaming) Renaming {
	if g&SwapNames == 0 {
		if g&SwapProcs != 0 && s.CanonicalEncoding(e) {
			return SwapProcs
		}
		if g&SwapProcs == 0 {
			s.Encode(e)
		}
		return 0
	}
	var c [4]Encoding // indexed by Renaming
	s.Encode(&c[0])
	keep, swap := true, g&SwapProcs != 0 // whether the orbit's least can keep or exchange the processes
	if swap {
		keep, swap = firstProcOrder(&c[0])
	}
	best := SwapProcs
	if keep {
		c[SwapNames] = c[0]
		c[SwapNames].swapNames()
		best = 0
		if c[SwapNames].less(&c[best]) {
			best = SwapNames
		}
	}
	if swap {
		c[0].mirror(&c[SwapProcs])
		c[SwapProcs|SwapNames] = c[SwapProcs]
		c[SwapProcs|SwapNames].swapNames()
		if !keep || c[SwapProcs].less(&c[best]) {
			best = SwapProcs
		}
		if c[SwapProcs|SwapNames].less(&c[best]) {
			best = SwapProcs | SwapNames
		}
	}
	*e = c[best]
	return best
}

// firstProcOrder tells, from an encoding's first two bytes of each process
// (phase and kernel), which renamings can give its orbit's least encoding:
// those that keep the processes in place (keep), those that exchange them
// (swap), or, when the two tie, both. The first process's first two bytes
// begin every renaming's encoding, and neither exchanging names nor
// renumbering copy labels changes them, so the side whose first process
// has the lesser two bytes holds the least; computing the other side's
// encodings (a mirror image, an exchange of names, two compares) is what
// this saves on most successors.
func firstProcOrder(e *Encoding) (keep, swap bool) {
	a := uint16(e[0])<<8 | uint16(e[1])
	b := uint16(e[procSize])<<8 | uint16(e[procSize+1])
	return a <= b, b <= a
}

// less orders encodings as bytes.Compare does, eight bytes at a time read
// big-endian: the explorer compares three or four a successor, and two
// encodings of one orbit mostly differ in their first word.
func (e *Encoding) less(f *Encoding) bool {
	const words = EncodedSize / 8
	for i := 0; i < words*8; i += 8 {
		x, y := binary.BigEndian.Uint64(e[i:]), binary.BigEndian.Uint64(f[i:])
		if x != y {
			return x < y
		}
	}
	return bytes.Compare(e[words*8:], f[words*8:]) < 0
}

// ProcsAmbiguous reports whether s equals one of its renamings in group g
// that exchanges the processes: then which process is which cannot be told
// from the state.
func (s *State) ProcsAmbiguous(g Renaming) bool {
	if g&SwapProcs == 0 {
		return false
	}
	var e, x Encoding
	s.Encode(&e)
	for _, r := range [...]Renaming{SwapProcs, SwapProcs | SwapNames} {
		if r&^g != 0 {
			continue
		}
		e.rename(&x, r)
		if x == e {
			return true
		}
	}
	return false
}

// Canonical returns the representative of s and its mirror image, and
// whether it swapped the processes to get it.
func (s State) Canonical() (State, bool) {
	var e Encoding
	swapped := s.CanonicalEncoding(&e)
	return e.Decode(), swapped
}

// CanonicalEncoding writes the encoding of the representative of s and its
// mirror image into e, and reports whether it swapped the processes. The
// representative is the one whose encoding comes first: the whole
// encoding, since two processes whose bytes tie can still be told apart by
// the disk (which one holds the lock). Swapping reorders the records copy
// labels are numbered by, so the mirror image is renumbered before the two
// are compared.
func (s *State) CanonicalEncoding(e *Encoding) bool {
	s.Encode(e)
	if keep, swap := firstProcOrder(e); !swap {
		return false
	} else if !keep {
		var m Encoding
		e.mirror(&m)
		*e = m
		return true
	}
	var m Encoding
	e.mirror(&m)
	if !m.less(e) {
		return false
	}
	*e = m
	return true
}

// mirror writes into m the encoding of the state e encodes with the
// processes swapped, its copy labels renumbered.
func (e *Encoding) mirror(m *Encoding) {
	copy(m[:procSize], e[procSize:2*procSize])
	copy(m[procSize:2*procSize], e[:procSize])
	copy(m[encDisk:], e[encDisk:])
	switch m[encLock] {
	case 1:
		m[encLock] = 2
	case 2:
		m[encLock] = 1
	}
	m.canonicalCopies()
}

// SelfMirror reports whether s equals its own mirror image: then which
// process is which cannot be told from the state.
func (s *State) SelfMirror() bool {
	var e, m Encoding
	s.Encode(&e)
	e.mirror(&m)
	return m == e
}

// TakesProc reports whether op names a process (so that renaming the
// processes renames it).
func TakesProc(op spec.Op) bool {
	switch op.Kind {
	case spec.EvKernelUpgrade, spec.EvSourceChange, spec.EvForeign:
		return false
	case spec.EvCrash:
		return op.Crash == spec.CrashProcess
	}
	return true
}
