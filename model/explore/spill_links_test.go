package explore

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A parent link that cannot be read, after an I/O error or at one, reads
// as the start state's (-1): a trace (links.trace walks parents while they
// are positive) then ends, and the run returns the error, instead of
// walking a parent that was never read.
func TestDiskLinksAfterAnError(t *testing.T) {
	put := func(l *diskLinks) {
		for i := range 4 {
			l.put(int32(i)-1, uint16(i))
		}
	}
	s := &spill{temp: newTestTemp(t)}
	l := newDiskLinks(s)
	put(l)
	p, via := l.get(3)
	require.NoError(t, s.err)
	assert.Equal(t, int32(2), p)
	assert.Equal(t, uint16(3), via)

	s.fail(errInjected) // another file of the run failed
	p, _ = l.get(3)
	assert.Equal(t, int32(-1), p, "after an error")
	assert.ErrorIs(t, s.close(), errInjected)

	temp := &faultyTemp{testTemp: newTestTemp(t), method: "ReadAt", at: 1}
	s = &spill{temp: temp}
	l = newDiskLinks(s)
	put(l)
	p, _ = l.get(3)
	assert.Equal(t, int32(-1), p, "at a failed read")
	assert.ErrorIs(t, s.close(), errInjected)
}

// The graph file's row sources are read back (headsDo, for a lasso's
// states) every one, in order, numbered by row, also past the first
// buffer's worth (8,192 rows).
func TestHeadsDoReadsEveryRowInOrder(t *testing.T) {
	s := &spill{temp: newTestTemp(t)}
	g := newDiskGraph(s)
	const rows = 3*spillBuffer/8 + 5
	for i := range rows {
		g.startNode(int32(i), uint64(i)*977+1)
		g.add(7, 0)
	}
	g.flushRow()
	var got []uint64
	g.headsDo(func(src uint64, row uint32) {
		require.Equal(t, uint32(len(got)), row)
		got = append(got, src)
	})
	require.NoError(t, s.close())
	require.Len(t, got, rows)
	for i, src := range got {
		require.Equal(t, uint64(i)*977+1, src, "row %d", i)
	}
}

// A row of the graph file keeps every step, up to the most a row may
// have, 2^20 (rows have a few dozen; its count takes three varint bytes);
// a row that says it has more is an error.
func TestLongRowReadsBack(t *testing.T) {
	s := &spill{temp: newTestTemp(t)}
	g := newDiskGraph(s)
	const steps = 1 << 20
	g.startNode(5, 99)
	var want []byte
	for i := range steps {
		g.add(uint64(i), uint8(i))
		want = append(binary.LittleEndian.AppendUint64(want, uint64(i)), uint8(i))
	}
	rows := 0
	g.rowsDo(func(src uint64, num int32, b []byte) {
		rows++
		assert.Equal(t, uint64(99), src)
		assert.Equal(t, int32(5), num)
		assert.True(t, bytes.Equal(want, b), "the row's steps")
	})
	require.NoError(t, s.close())
	assert.Equal(t, 1, rows)
}

// The error a row longer than that reads as (the file is corrupt).
func TestTooLongRowIsAnError(t *testing.T) {
	s := &spill{temp: newTestTemp(t)}
	g := newDiskGraph(s)
	g.startNode(5, 99)
	g.add(1, 0)
	g.flushRow()
	g.w.Write(binary.AppendUvarint(make([]byte, 12), 1<<20+1))
	g.rows++
	g.rowsDo(func(uint64, int32, []byte) {})
	assert.ErrorContains(t, s.close(), "row too long")
}
