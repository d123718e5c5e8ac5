package spec

import "io"

// windowSize is the read buffer of an index scan. It must exceed the largest
// encoded entry of either format (v2: 24 + 8192 name bytes; v3: 44 + 8193 +
// 7), so any entry fits in one window.
const windowSize = 16 << 10

// window reads the index range [lo, hi) of a file through a fixed buffer, so
// a parse allocates the buffer and what it decodes, not a copy of the index
// (the allocation goal is at most twice the index size).
type window struct {
	r      io.ReaderAt
	lo, hi int64
	buf    []byte
	off    int64 // file offset of buf[0]
	n      int   // valid bytes in buf
}

func newWindow(r io.ReaderAt, lo, hi int64) *window {
	return &window{r: r, lo: lo, hi: hi, buf: make([]byte, min(hi-lo, windowSize))}
}

// at returns the n bytes at file offset off, valid until the next call. The
// caller guarantees lo <= off, off+n <= hi and n <= windowSize.
func (w *window) at(off int64, n int, field string) ([]byte, error) {
	if off >= w.off && off+int64(n) <= w.off+int64(w.n) {
		i := off - w.off
		return w.buf[i : i+int64(n)], nil
	}
	// Refill from off, not from the end of the previous window: an entry
	// that straddled the boundary is read again whole, which costs at most
	// one entry's bytes per refill and keeps the caller's slice contiguous.
	m := min(int64(len(w.buf)), w.hi-off)
	if err := readFull(w.r, off, w.buf[:m], field); err != nil {
		return nil, err
	}
	w.off, w.n = off, int(m)
	return w.buf[:n], nil
}

// crc returns the CRC32C of the whole range, read window by window.
func (w *window) crc(field string) (uint32, error) {
	var crc uint32
	for off := w.lo; off < w.hi; off += int64(len(w.buf)) {
		n := min(int64(len(w.buf)), w.hi-off)
		if err := readFull(w.r, off, w.buf[:n], field); err != nil {
			return 0, err
		}
		crc = UpdateCRC32C(crc, w.buf[:n])
		w.off, w.n = off, int(n)
	}
	return crc, nil
}
