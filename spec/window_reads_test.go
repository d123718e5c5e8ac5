package spec

import (
	"bytes"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readLog is an io.ReaderAt that records each read as [offset, length]: on
// a real file every one is a pread, so how many there are and how long each
// is is what a parse costs.
type readLog struct {
	r     io.ReaderAt
	reads [][2]int64
}

func (l *readLog) ReadAt(b []byte, off int64) (int, error) {
	l.reads = append(l.reads, [2]int64{off, int64(len(b))})
	return l.r.ReadAt(b, off)
}

// TestWindowReads pins the window's reads and buffer: a range of at most
// wholeRange bytes is read whole with its first request, and nothing is
// read again (ParseV2 and ParseV3 document this: one read for a model's
// index); a longer range gets the big window, where a request inside the
// buffer reads nothing, down to its last byte, and one that is not refills
// from its own offset, stopping at the end of the range.
func TestWindowReads(t *testing.T) {
	file := make([]byte, 3<<20)
	for i := range file {
		file[i] = byte(i * 7)
	}
	log := &readLog{r: bytes.NewReader(file)}
	at := func(w *window, off int64, n int) {
		t.Helper()
		b, err := w.at(off, n, "test")
		require.NoError(t, err)
		require.Equal(t, file[off:off+int64(n)], b)
	}
	expect := func(want ...[2]int64) {
		t.Helper()
		assert.Equal(t, want, log.reads)
		log.reads = nil
	}

	// A model's index: one read, whatever the decoder asks for after.
	const lo, hi = 100, 100 + 120_000
	w := newWindow(log, lo, hi)
	assert.Len(t, w.buf, hi-lo)
	at(w, lo, 8)
	expect([2]int64{lo, hi - lo})
	at(w, lo+4090, 16)
	at(w, lo+50_000, maxEntryWindow)
	at(w, hi-8, 8)
	at(w, lo+1, 4) // backwards too
	expect()

	// The whole range up to wholeRange bytes, the big window past it.
	assert.Len(t, newWindow(log, 1000, 1100).buf, 100)
	assert.Len(t, newWindow(log, 1000, 1000+wholeRange).buf, wholeRange)
	assert.Len(t, newWindow(log, 1000, 1000+wholeRange+1).buf, bigWindow)

	const blo, bhi = 100, 100 + 2<<20
	w = newWindow(log, blo, bhi)
	at(w, blo, 8)
	expect([2]int64{blo, bigWindow})
	at(w, blo+bigWindow-8, 8) // the buffer's last bytes
	expect()
	at(w, blo+bigWindow-7, 8) // one byte past the buffer
	expect([2]int64{blo + bigWindow - 7, bigWindow})
	at(w, blo+1, maxEntryWindow) // before the buffer
	expect([2]int64{blo + 1, bigWindow})
	at(w, bhi-8, 8) // near the end a read stops at hi
	expect([2]int64{bhi - 8, 8})
}

// TestWindowSum: the window's running CRC32C over a range read front to
// back, with refills that re-read a straddling entry and a request that
// skips ahead (which sumRest fills in), equals the CRC32C of the range.
func TestWindowSum(t *testing.T) {
	file := make([]byte, 40_000)
	for i := range file {
		file[i] = byte(i*13 + i>>8)
	}
	const lo, hi = 300, 30_300
	for _, reads := range [][][2]int64{
		nil,       // sumRest reads everything
		{{lo, 8}}, // one window, then the rest
		{{lo, 8}, {lo + 4090, 16}, {lo + 4095, 1}, {lo + 8000, 5000}},
		{{lo, 8}, {lo + 20_000, 8}}, // skips ahead: a gap
		{{hi - 8, 8}},               // the last bytes first
	} {
		w := newWindow(bytes.NewReader(file), lo, hi)
		w.startSum()
		for _, r := range reads {
			_, err := w.at(r[0], int(r[1]), "test")
			require.NoError(t, err)
		}
		got, err := w.sumRest("test")
		require.NoError(t, err)
		assert.Equal(t, CRC32C(file[lo:hi]), got, "reads %v", reads)
	}
	// A read error while summing the rest is returned.
	w := newWindow(bytes.NewReader(file[:lo+100]), lo, hi)
	w.startSum()
	_, err := w.sumRest("index")
	var fe *FormatError
	require.ErrorAs(t, err, &fe)
	assert.ErrorIs(t, err, ErrTooSmall)
	assert.Equal(t, "index", fe.Field)
	assert.Equal(t, int64(lo+100), fe.Off)
}
