package model

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/xpwc/xpwc/spec"
)

// The alphabet is every op of every process, program and name within the
// bounds, once each: per process an init and an unload per program, five
// name ops per name, finalize, save, destroy, a crash, a restart and (with
// foreign writers) clobbered options; then a power loss, an upgrade, a
// source change per name and (with foreign writers) a foreign write per
// name and one to the index.
func TestAlphabetIsEveryOpOnce(t *testing.T) {
	for _, b := range []Bounds{
		DefaultBounds(),
		{Procs: 1, Names: 3, Programs: 1, Kernels: 1, Sources: 1},
		{Procs: 2, Names: 2, Programs: 2, Kernels: 2, Sources: 2, Foreign: true},
	} {
		foreign := 0
		if b.Foreign {
			foreign = 1
		}
		ops := Alphabet(b)
		want := b.Procs*(2*b.Programs+5*b.Names+5+foreign) + 2 + b.Names + foreign*(b.Names+1)
		assert.Len(t, ops, want, "%+v", b)
		seen := map[spec.Op]bool{}
		perProc := map[spec.Proc]int{}
		for _, op := range ops {
			assert.False(t, seen[op], "%s twice", op)
			seen[op] = true
			assert.True(t, inBounds(b, op), "%s out of %+v", op, b)
			if TakesProc(op) {
				perProc[op.Proc]++
			}
		}
		for p := 0; p < b.Procs; p++ {
			assert.Equal(t, 2*b.Programs+5*b.Names+5+foreign, perProc[spec.Proc(p)], "ops of process %d", p)
		}
	}
}

// programsWith is the programs packing a name: at one name both programs
// pack w0; at three, w1 is shared and w0, w2 are each one program's.
func TestProgramsWith(t *testing.T) {
	b := DefaultBounds()
	assert.Equal(t, uint8(0b11), b.programsWith(0))
	b.Names = 3
	assert.Equal(t, []uint8{0b01, 0b11, 0b10}, []uint8{b.programsWith(0), b.programsWith(1), b.programsWith(2)})
	b.Programs = 1
	assert.Equal(t, []uint8{0b01, 0b01, 0}, []uint8{b.programsWith(0), b.programsWith(1), b.programsWith(2)})
}
