package explore

import (
	"encoding/binary"
	"io"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Counting the liveness graph's sources by their top byte as the search
// writes them, then into the index's runs (countTops), counts each run as
// counting the sources one by one does, whatever the runs' width (a small
// graph has fewer than 256 runs).
func TestCountTopsIsCount(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 2, 5, 17, 100, 700, 5000} {
		var tops [256]uint32
		one := newFPIndex(n)
		for range n {
			fp := r.Uint64()
			tops[fp>>56]++
			one.count(fp)
		}
		byTop := newFPIndex(n)
		byTop.countTops(&tops)
		assert.Equal(t, one.top, byTop.top, "%d sources, %d runs", n, 1<<byTop.topBits)
	}
}

// The named steps' file, written in batches shared between goroutines,
// reads back, in segments on any number of goroutines, as the graph its
// rows make in order; a segment that does not hold what its record says
// is an error, not a graph.
func TestReadNamedIsTheGraphInOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	fps, x := randomIndex(r, 2000)
	var rows [][]byte
	want := &graph{}
	for range 1500 {
		var row []byte
		want.startNode()
		for range r.IntN(7) {
			i, flags := r.IntN(len(fps)), byte(r.IntN(32))
			fp := fps[i]
			if r.IntN(4) == 0 {
				fp = r.Uint64() // (almost surely) a state without a row: left out
			} else {
				want.add(uint32(i), flags)
			}
			row = binary.LittleEndian.AppendUint64(row, fp)
			row = append(row, flags)
		}
		rows = append(rows, row)
	}
	want.finish()
	for _, naming := range []int{1, 2, 3} {
		sp := &spill{temp: newTestTemp(t)}
		named := sp.file()
		b := nameRows(x, rows, 97, naming, &named)
		named.flush()
		require.NoError(t, sp.err)
		for _, reading := range []int{1, 2, 5} {
			got, err := readNamed(named.f, b.segs, reading)
			require.NoError(t, err)
			assert.Equal(t, want.nodes(), got.nodes(), "naming %d, reading %d", naming, reading)
			assert.Equal(t, want.n, got.n)
			for v := range want.nodes() {
				e, h := want.row(v)
				ge, gh := got.row(v)
				require.Equal(t, []int{e, h}, []int{ge, gh}, "row %d", v)
				for ; e < h; e++ {
					require.Equal(t, want.to.at(e), got.to.at(e), "row %d", v)
					require.Equal(t, want.flags.at(e), got.flags.at(e), "row %d", v)
				}
			}
		}
		for _, bad := range []func(s *namedSegment){
			func(s *namedSegment) { s.rows++ },
			func(s *namedSegment) { s.rows-- },
			func(s *namedSegment) { s.steps++ },
			func(s *namedSegment) { s.steps-- },
			func(s *namedSegment) { s.size-- },
		} {
			for _, at := range []int{len(b.segs) / 2, len(b.segs) - 1} { // the last: no segment after it to absorb a step too many
				segs := append([]namedSegment(nil), b.segs...)
				bad(&segs[at])
				_, err := readNamed(named.f, segs, 2)
				assert.Error(t, err)
			}
		}
		require.NoError(t, sp.close())
	}
}

// Placing the rows' sources from the heads file on several goroutines, each
// a range of rows, builds the index placing them one by one in row order
// builds; a short file is an error.
func TestPlaceHeadsIsPlaceInOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{1, 1000, 3*headsPerWorker + 17} {
		fps := make([]uint64, n)
		var tops [256]uint32
		sp := &spill{temp: newTestTemp(t)}
		heads := sp.file()
		for i := range fps {
			fps[i] = r.Uint64()
			if i%5 == 0 {
				fps[i] = fps[i]&(1<<56-1) | 0x42<<56 // a crowded run
			}
			tops[fps[i]>>56]++
			heads.write(binary.LittleEndian.AppendUint64(nil, fps[i]))
		}
		heads.flush()
		require.NoError(t, sp.err)
		want := newFPIndex(n)
		want.countTops(&tops)
		want.startPlacing()
		for i, fp := range fps {
			want.place(fp, uint32(i))
		}
		for _, workers := range []int{1, 2, 3} {
			got := newFPIndex(n)
			got.countTops(&tops)
			got.startPlacing()
			f := &countingReader{r: heads.f}
			require.NoError(t, got.placeHeads(f, n, workers))
			if n < headsPerWorker {
				assert.Equal(t, int32(1), f.reads.Load(), "%d rows, %d workers: read once, on one goroutine", n, workers)
			}
			assert.Equal(t, want.top, got.top, "%d rows, %d workers", n, workers)
			assert.Equal(t, want.fps, got.fps, "%d rows, %d workers", n, workers)
			assert.Equal(t, want.ids, got.ids, "%d rows, %d workers", n, workers)
		}
		got := newFPIndex(n + 1)
		got.countTops(&tops)
		got.startPlacing()
		assert.Error(t, got.placeHeads(heads.f, n+1, 2), "a row past the file's end")
		require.NoError(t, sp.close())
	}
}

// countingReader counts the reads of a file.
type countingReader struct {
	r     io.ReaderAt
	reads atomic.Int32
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	c.reads.Add(1)
	return c.r.ReadAt(p, off)
}

// shortReader returns one byte less than asked for, and no error, which
// io.ReaderAt's contract forbids: a file that does it is still not read as
// whole.
type shortReader struct{}

func (shortReader) ReadAt(p []byte, _ int64) (int, error) { return max(len(p)-1, 0), nil }

func TestReadFullShortReadIsAnError(t *testing.T) {
	assert.Error(t, readFull(shortReader{}, make([]byte, 8), 0))
	assert.NoError(t, readFull(shortReader{}, nil, 0), "nothing asked, nothing missing")
}

// resize leaves the blocks as that many adds do: full but for the last,
// and no block at all for none.
func TestResizeIsAdds(t *testing.T) {
	for _, n := range []int{0, 1, blockLen - 1, blockLen, blockLen + 1, 2 * blockLen} {
		var sized, added blocks[uint8]
		sized.resize(n)
		for range n {
			added.add(0)
		}
		require.Equal(t, len(added.b), len(sized.b), "%d values: blocks", n)
		for k := range added.b {
			assert.Equal(t, len(added.b[k]), len(sized.b[k]), "%d values: block %d", n, k)
		}
		assert.Equal(t, n, sized.len())
	}
}
