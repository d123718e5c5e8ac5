package spec

import "io"

// The read buffer of an index scan must hold the largest encoded entry of
// either format (v2: 24 + 8192 name bytes = 8216; v3: 44 + 8193 + 7 padding
// = 8240), so any entry fits in one window. A small index starts with 4 KiB,
// which holds any entry with a name under 4 KiB, and grows to maxEntryWindow
// at the first entry that needs it: the window is a visible share of a
// small parse's allocation (the goal is at most twice the index size).
// Indexes over bigWindowFrom get a large window, so that a million entries
// cost about a thousand reads (each a pread on a real file) instead of sixteen thousand.
const (
	smallWindow    = 4 << 10
	maxEntryWindow = 8<<10 + 64
	bigWindow      = 64 << 10
	bigWindowFrom  = 1 << 20
)

// window reads the index range [lo, hi) of a file through a fixed buffer, so
// a parse allocates the buffer and what it decodes, not a copy of the index
// (the allocation goal is at most twice the index size).
type window struct {
	r      io.ReaderAt
	lo, hi int64
	buf    []byte
	off    int64 // file offset of buf[0]
	n      int   // valid bytes in buf

	// With summing on, every byte the window reads for the first time is
	// added to sum, so a decoder that reads its range front to back gets the
	// range's CRC32C without a second pass over it (see sumRest).
	summing bool
	sumEnd  int64 // bytes [lo, sumEnd) are in sum
	sum     uint32
}

func newWindow(r io.ReaderAt, lo, hi int64) *window {
	size := int64(smallWindow)
	if hi-lo > bigWindowFrom {
		size = bigWindow
	}
	return &window{r: r, lo: lo, hi: hi, buf: make([]byte, min(hi-lo, size))}
}

// at returns the n bytes at file offset off, valid until the next call. The
// caller guarantees lo <= off, off+n <= hi and n <= maxEntryWindow.
func (w *window) at(off int64, n int, field string) ([]byte, error) {
	if off >= w.off && off+int64(n) <= w.off+int64(w.n) {
		i := off - w.off
		return w.buf[i : i+int64(n)], nil
	}
	// Refill from off, not from the end of the previous window: an entry
	// that straddled the boundary is read again whole, which costs at most
	// one entry's bytes per refill and keeps the caller's slice contiguous.
	if n > len(w.buf) {
		w.buf = make([]byte, min(w.hi-w.lo, maxEntryWindow))
	}
	m := min(int64(len(w.buf)), w.hi-off)
	if err := readFull(w.r, off, w.buf[:m], field); err != nil {
		return nil, err
	}
	w.off, w.n = off, int(m)
	if w.summing {
		w.addSum()
	}
	return w.buf[:n], nil
}

// startSum turns on summing: from now on the window's reads are summed.
func (w *window) startSum() {
	w.summing, w.sumEnd, w.sum = true, w.lo, 0
}

// addSum adds the bytes of the current window that are not yet summed. A
// refill starts at or before the end of what was read before (decoders read
// forward, and a refill only re-reads a straddling entry), so the summed
// bytes stay one prefix of the range; a window that skipped ahead would
// leave a gap, which sumRest notices and re-reads.
func (w *window) addSum() {
	end := w.off + int64(w.n)
	if w.off > w.sumEnd || end <= w.sumEnd {
		return
	}
	w.sum = UpdateCRC32C(w.sum, w.buf[w.sumEnd-w.off:w.n])
	w.sumEnd = end
}

// sumRest returns the CRC32C of the whole range: what the decoder's reads
// summed, plus the rest of the range, which it reads now (a decoder that
// stopped early at a bad entry has not read it).
func (w *window) sumRest(field string) (uint32, error) {
	for w.sumEnd < w.hi {
		off := w.sumEnd
		n := min(int64(len(w.buf)), w.hi-off)
		if err := readFull(w.r, off, w.buf[:n], field); err != nil {
			return 0, err
		}
		w.off, w.n = off, int(n)
		w.addSum()
	}
	return w.sum, nil
}
