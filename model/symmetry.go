package model

import (
	"bytes"
	"github.com/xpwc/xpwc/internal/rawmem"

	"github.com/xpwc/xpwc/spec"
)

// Processes are interchangeable: every design treats A and B alike, so a
// state and the state with A and B swapped have mirror-image futures. The
// explorer visits one state of each pair, the canonical one.

// Canonical returns the representative of s and its mirror image, and
// whether it swapped the processes to get it.
func (s State) Canonical() (State, bool) {
	if !procLess(&s.Procs[1], &s.Procs[0]) {
		return s, false
	}
	s.Procs[0], s.Procs[1] = s.Procs[1], s.Procs[0]
	switch s.Disk.Lock {
	case 1:
		s.Disk.Lock = 2
	case 2:
		s.Disk.Lock = 1
	}
	return s, true
}

// procLess orders processes by their bytes. Proc holds only one-byte fields
// (TestProcHasNoPadding), so equal processes have equal bytes.
func procLess(a, b *Proc) bool {
	return bytes.Compare(rawmem.Bytes(a), rawmem.Bytes(b)) < 0
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
