package spec

import (
	"io"

	"github.com/xpwc/xpwc/internal/rawmem"
)

// An index of at most wholeRange bytes (every model's: a 1,184-weight index
// is about 120 KiB) is read whole, with one read, into a buffer of its
// length: a warm launch read a llama index with about thirty 4 KiB preads
// before, each a system call on a real file. A longer index is read through
// a bigWindow buffer, refilled as the decoder moves on, so a million
// entries cost about a thousand reads and a forged length costs at most
// the buffer. Either buffer holds the largest encoded entry of either
// format (v2: 24 + 8192 name bytes = 8216; v3: 44 + 8193 + 7 padding =
// 8240, maxEntryWindow) that fits in its range, so any entry is read in
// one piece.
const (
	maxEntryWindow = 8<<10 + 64
	wholeRange     = 1 << 20
	bigWindow      = 64 << 10
)

// window reads the index range [lo, hi) of a file through a fixed buffer, so
// a parse allocates the buffer and what it decodes, not a copy of the index
// (the allocation goal is at most twice the index size). From Bytes (a
// file in memory) it reads in place, with no buffer.
type window struct {
	r      io.ReaderAt
	lo, hi int64
	buf    []byte
	off    int64 // file offset of buf[0]
	n      int   // valid bytes in buf
	mem    Bytes // the file, when r is Bytes holding the range; buf is then the range itself, never written

	// With summing on, every byte the window reads for the first time is
	// added to sum, so a decoder that reads its range front to back gets the
	// range's CRC32C without a second read of it (see sumRest). From
	// memory (mem) the range is summed at the end instead.
	summing bool
	sumEnd  int64 // bytes [lo, sumEnd) are in sum
	sum     uint32
	seen    int64 // the end of the bytes handed out (unread reads it only from mem)
}

func newWindow(r io.ReaderAt, lo, hi int64) *window {
	var mem Bytes
	switch m := r.(type) {
	case Bytes:
		mem = m
	case Mapped:
		mem = m.Mem
	}
	if mem != nil && hi <= int64(len(mem)) {
		// The whole range is the window, so that at serves every request
		// from its inlined first branch.
		return &window{r: r, lo: lo, hi: hi, mem: mem, buf: mem[lo:hi:hi], off: lo, n: int(hi - lo)}
	}
	size := hi - lo
	if size > wholeRange {
		size = bigWindow
	}
	return &window{r: r, lo: lo, hi: hi, buf: make([]byte, size)}
}

// at returns the n bytes at file offset off, valid until the next call. The
// caller guarantees lo <= off, off+n <= hi and n <= maxEntryWindow.
func (w *window) at(off int64, n int, field string) ([]byte, error) {
	if b, ok := w.in(off, n); ok {
		return b, nil
	}
	return w.refill(off, n, field)
}

// in is at for a request inside the window: every request from memory or
// on an index read whole. It inlines, where at does not (its refill is a
// call): the decoders' loops call it first, and refill only when it fails,
// which saved a v3 load of 1,184 entries about 70,000 instructions.
func (w *window) in(off int64, n int) ([]byte, bool) {
	i, end := off-w.off, off-w.off+int64(n)
	if i < 0 || end > int64(w.n) {
		return nil, false
	}
	// From memory, what was handed out bounds what the decoder read
	// (unread). It is summed in one call by sumRest: two calls an entry,
	// on a few dozen bytes each, cost a v3 load of 1,184 entries about
	// 70 µs more than the one call on its 116 KiB.
	w.seen = max(w.seen, off+int64(n))
	return w.buf[i:end:end], true
}

// refill is at for a request outside the window: it reads the window anew
// from off.
func (w *window) refill(off int64, n int, field string) ([]byte, error) {
	if w.mem != nil {
		// Not reached (the window is the whole range): never read into
		// memory the caller owns, which may be a read-only mapping.
		end := off + int64(n)
		return w.mem[off:end:end], nil
	}
	// Refill from off, not from the end of the previous window: an entry
	// that straddled the boundary is read again whole, which costs at most
	// one entry's bytes per refill and keeps the caller's slice contiguous.
	// The buffer is never too short for n: it is the whole range, or
	// bigWindow, longer than any entry.
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

// unread is how many bytes of the range the decoder has not read: what
// sumRest reads that the decoder did not.
func (w *window) unread() int64 {
	if w.mem != nil {
		return w.hi - max(w.seen, w.lo)
	}
	return w.hi - w.sumEnd
}

// sumRest returns the CRC32C of the whole range: what the decoder's reads
// summed, plus the rest of the range, which it reads now (a decoder that
// stopped early at a bad entry has not read it).
func (w *window) sumRest(field string) (uint32, error) {
	if w.mem != nil && w.sumEnd < w.hi {
		w.sum = UpdateCRC32C(w.sum, w.mem[w.sumEnd:w.hi])
		w.sumEnd = w.hi
	}
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

// name returns b, bytes the window just handed out, as a string. When the
// window holds its whole range (every model's index) the string is cut
// from the window's buffer, which then serves as the names' storage: a warm
// load allocates the index once, not the index and then its names again.
// Such a buffer is never written again: every request in the range is served
// from it (at), and sumRest has nothing left to read, so the strings stay
// as they are. Otherwise (a big index read in pieces, whose buffer is
// refilled) or from Bytes (memory the caller owns, such as a mapping that
// is unmapped while the names live on) the name is copied into names.
func (w *window) name(b []byte, names *nameArena) string {
	if len(b) == 0 || w.mem != nil || w.off != w.lo || int64(w.n) != w.hi-w.lo {
		return names.add(b)
	}
	return rawmem.BytesString(b)
}

// Bytes is a file in memory, such as a read-only mapping of it, as an
// io.ReaderAt. The parsers decode an index from it in place, with no read
// buffer, and copy only the names they return: a warm load of a file in
// the page cache then allocates no copy of its index. The caller keeps it
// valid while a parse runs (for a mapping: reading a page of a file
// truncated under it faults).
type Bytes []byte

// ReadAt implements io.ReaderAt.
func (b Bytes) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off > int64(len(b)) {
		return 0, io.EOF
	}
	n := copy(p, b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Mapped is a file whose index is decoded in place from Mem, a read-only
// mapping of it (as from Bytes), while the few small reads a parse makes
// around the index (format magic, v2 footer, v3 commit slots) go through
// ReaderAt. Reading those from the mapping faulted in the file's first
// page, which on a shadow-paged guest maps the large folio it sits in,
// and cost a warm load in a process that maps the file anew each time
// more than the reads (BenchmarkWarmLoadCore1184).
type Mapped struct {
	io.ReaderAt
	Mem Bytes
}
