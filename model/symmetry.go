package model

import "github.com/xpwc/xpwc/spec"

// Processes are interchangeable: every design treats A and B alike, so a
// state and the state with A and B swapped have mirror-image futures. The
// explorer visits one state of each pair, the canonical one.

// Canonical returns the representative of s and its mirror image, and
// whether it swapped the processes to get it.
func (s State) Canonical() (State, bool) {
	var e Encoding
	swapped := s.CanonicalEncoding(&e)
	return e.Decode(), swapped
}

// CanonicalEncoding writes the encoding of the representative of s and its
// mirror image into e, and reports whether it swapped the processes. The
// representative is the one whose processes come first in the order of
// their encodings. Swapping reorders the records copy labels are numbered
// by, so the mirror image is renumbered before the two are compared.
func (s *State) CanonicalEncoding(e *Encoding) bool {
	s.Encode(e)
	var m Encoding
	e.mirror(&m)
	if !procsLess(&m, e) {
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
