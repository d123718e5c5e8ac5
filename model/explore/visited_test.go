package explore

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/spec"
)

// A fingerprint's top bits pick its slot, scaled to the table's size: in
// fpSet the top 32, in a segment of fpTable the 32 below the segment's
// byte; the bits below them play no part.
func TestHomeIsTheTopBitsScaled(t *testing.T) {
	s := newFPSet()
	assert.Equal(t, 4095, s.home(^uint64(0)))
	assert.Equal(t, 2048, s.home(1<<63))
	assert.Equal(t, 0, s.home(1<<32-1))
	assert.Equal(t, 999, fpHome(0x00ffffffff000000, 1000))
	assert.Equal(t, 500, fpHome(0x0080000000000000, 1000))
	assert.Equal(t, 0, fpHome(0xff00000000ffffff, 1000))
}

// fpSet is at most 4/5 full after every insert and grows by half again.
func TestFPSetFillAndGrowth(t *testing.T) {
	s := newFPSet()
	x := uint64(0x9e3779b97f4a7c15)
	for range 50000 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		before := len(s.slots)
		require.True(t, s.add(x))
		require.LessOrEqual(t, 5*s.n, 4*len(s.slots), "past 4/5 full at %d", s.n)
		if len(s.slots) != before {
			require.Equal(t, before/2*3, len(s.slots), "grown by half again")
		}
	}
}

// Each segment of fpTable is at most 4/5 full after every insert, and grows
// by a quarter, rounded up to whole pages of slots; release is called
// when, and only when, the segments replaced since the last call hold an
// eighth of the table's fingerprints.
func TestFPTableFillAndGrowth(t *testing.T) {
	var tab *fpTable
	before, replaced, releases := 0, 0, 0 // replaced: slots of the segments replaced since the last release
	tab = newFPTable(func() {
		releases++
		require.GreaterOrEqual(t, replaced+before, tab.n/8, "released early")
		replaced = -before
	})
	x := uint64(0x9e3779b97f4a7c15)
	grown := 0
	for range 700_000 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		s := &tab.segs[x>>56]
		before = len(s.slots)
		_, added := tab.addID(x, 0)
		require.True(t, added)
		require.LessOrEqual(t, 5*s.n, 4*len(s.slots), "past 4/5 full at %d", s.n)
		if n := len(s.slots); n != before {
			replaced += before
			grown++
			quarter := before * 5 / 4
			require.Zero(t, n%pageWords, "whole pages")
			require.True(t, n >= quarter && n-pageWords < max(quarter, 1), "%d slots grown to %d", before, n)
		}
	}
	assert.Greater(t, grown, 4*fpSegments, "every segment grew a few times")
	assert.Less(t, replaced, tab.n/8, "no release owed")
	assert.Greater(t, releases, 10)
}

// links keeps an op as its index in a table of 14 bits (the top two say
// how the state was renamed): the 16,384th distinct op fits, the next
// panics instead of being read back as another.
func TestLinksOpTableBound(t *testing.T) {
	l := newLinks()
	op := func(i int) spec.Op {
		return spec.Op{Kind: spec.OpInsert, Proc: spec.Proc(i), Name: spec.Name(i >> 8), Program: spec.Program(i >> 16)}
	}
	for i := range namesBit {
		l.add(0, op(i), 0) // state i+1, reached from the start
	}
	assert.Equal(t, []spec.Op{op(namesBit - 1)}, l.path(namesBit))
	assert.Panics(t, func() { l.add(0, op(namesBit), 0) })
}
