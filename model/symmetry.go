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
// whether it swapped the processes to get it. Swapping reorders the records
// copy labels are numbered by, so the mirror image is renumbered before the
// two are compared.
func (s State) Canonical() (State, bool) {
	t := s
	t.Procs[0], t.Procs[1] = t.Procs[1], t.Procs[0]
	switch t.Disk.Lock {
	case 1:
		t.Disk.Lock = 2
	case 2:
		t.Disk.Lock = 1
	}
	canonicalCopies(&t)
	if !procsLess(&t.Procs, &s.Procs) {
		return s, false
	}
	return t, true
}

// procsLess orders process pairs by their bytes. Proc holds only one-byte
// fields (TestProcHasNoPadding), so equal processes have equal bytes.
func procsLess(a, b *[maxProcs]Proc) bool {
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
