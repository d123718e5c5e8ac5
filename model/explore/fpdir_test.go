package explore

import (
	"encoding/binary"
	"io"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The liveness graph's index of fingerprints finds each placed
// fingerprint's number and none for an absent one, also at the ends of the
// range of fingerprints, in a bucket that many share (placed out of
// order), and when the index is small.
func TestFPIndexFindsWhatWasPlaced(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	fps := []uint64{0, 1, math.MaxUint64, math.MaxUint64 - 1, 1 << 48, 1<<48 - 1}
	for range 5000 {
		fps = append(fps, r.Uint64())
	}
	for k := range 40 { // one bucket's worth of fingerprints and more, in falling order
		fps = append(fps, 0xabcd<<48|uint64(40-k)*977)
	}
	for _, n := range []int{1, 3, len(fps)} {
		x := newFPIndex(n)
		for _, fp := range fps[len(fps)-n:] {
			x.count(fp)
		}
		x.startPlacing()
		want := map[uint64]uint32{}
		for i, fp := range fps[len(fps)-n:] {
			x.place(fp, uint32(i))
			want[fp] = uint32(i)
		}
		x.finish(2)
		for fp, id := range want {
			got, ok := x.find(fp)
			assert.True(t, ok, "%#x", fp)
			assert.Equal(t, id, got, "%#x", fp)
		}
		for range 5000 {
			fp := r.Uint64()
			_, in := want[fp]
			_, ok := x.find(fp)
			assert.Equal(t, in, ok, "%#x", fp)
		}
		_, ok := x.find(0xabcd<<48 | 1)
		assert.False(t, ok)
	}
}

// Naming the graph's steps in batches, the rows of a batch shared between
// goroutines, writes what naming them one by one in order writes: each
// row's count of steps to states in the index, then those steps.
func TestStepBatchNamesInOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	fps, x := randomIndex(r, 1000)
	var rows [][]byte
	var want []byte
	for range 300 {
		var row, rec []byte
		n := 0
		for range r.IntN(6) {
			fp, flags := r.Uint64(), byte(r.IntN(8))
			i := r.IntN(len(fps))
			if r.IntN(3) > 0 {
				fp = fps[i] // else (almost surely) a state without a row
			}
			row = binary.LittleEndian.AppendUint64(row, fp)
			row = append(row, flags)
			if fp == fps[i] {
				rec = binary.LittleEndian.AppendUint32(rec, uint32(i))
				rec = append(rec, flags)
				n++
			}
		}
		rows = append(rows, row)
		want = binary.AppendUvarint(want, uint64(n))
		want = append(want, rec...)
	}
	for _, workers := range []int{1, 3} {
		sp := &spill{temp: newTestTemp(t)}
		named := sp.file()
		nameRows(x, rows, 7, workers, &named)
		got, err := io.ReadAll(named.reader())
		require.NoError(t, err)
		require.NoError(t, sp.close())
		assert.Equal(t, want, got, "workers %d", workers)
	}
}

// nameRows names rows (each a state's steps) through one stepBatch, a
// batch every `every` rows and the rest at the end, as the search does.
func nameRows(x *fpIndex, rows [][]byte, every, workers int, named *spillFile) *stepBatch {
	var b stepBatch
	for k, row := range rows {
		b.steps = append(b.steps, row...)
		b.ends = append(b.ends, len(b.steps))
		if k%every == every-1 {
			b.name(x, workers, named)
		}
	}
	b.name(x, workers, named)
	return &b
}

// randomIndex is an index of n random fingerprints, the i-th numbered i.
func randomIndex(r *rand.Rand, n int) ([]uint64, *fpIndex) {
	fps := make([]uint64, n)
	x := newFPIndex(n)
	for i := range fps {
		fps[i] = r.Uint64()
		x.count(fps[i])
	}
	x.startPlacing()
	for i, fp := range fps {
		x.place(fp, uint32(i))
	}
	x.finish(1)
	return fps, x
}
