package spec

import (
	"errors"
	"fmt"
	"github.com/xpwc/xpwc/internal/rawmem"
	"io"
	"math"
	"slices"
)

// readFull reads len(buf) bytes at off. A short read at end of file means the
// file is shorter than the size the caller passed (truncated under us, or a
// wrong size), which is reported as ErrTooSmall so that callers rebuild; any
// other read error is an I/O failure and is returned as such, not as
// corruption (G8 treats the two differently).
func readFull(r io.ReaderAt, off int64, buf []byte, field string) error {
	n, err := r.ReadAt(buf, off)
	if n == len(buf) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return ferr(off+int64(n), field, uint64(n), ErrTooSmall)
	}
	return fmt.Errorf("spec: reading %s at offset %d: %w", field, off, err)
}

// parsedV3Name returns the stored name (weight NUL bias) of an entry decoded
// by decodeV3Index without building it: there Weight and Bias are slices of
// one buffer with the separator between them, and Weight is never empty, so
// the whole name is the len(Weight)+1+len(Bias) bytes from Weight's start.
// It must not be called on any other Entry.
func parsedV3Name(e *Entry) string {
	return rawmem.ExtendString(e.Key.Weight, len(e.Key.Weight)+len(NameSeparator)+len(e.Key.Bias))
}

// MaxEntries is the most entries a parser will allocate for: far beyond any
// index on a 64-bit platform, about 16 million with 32-bit ints, where a
// larger []Entry could not be allocated at all.
const MaxEntries = math.MaxInt / 128

// A parser allocates for what it has decoded, never for what a file
// declares: a sparse file is as large as its footer claims, so a count that
// fits the file size can still ask for hundreds of gigabytes (G7). Entries
// start with room for at most preallocEntries and grow eightfold (never
// past the declared count) each time they fill, so a forged count costs at
// most eight times the Entries decoded before the first inconsistency,
// and a valid million-entry index about 1.15 times its Entries (doubling
// cost twice, and append's quarter steps copied the index many times).
const (
	preallocEntries = 1 << 14
	entriesGrowth   = 8
)

// growEntries returns entries with room for one more.
func growEntries(entries []Entry, count uint64) []Entry {
	if len(entries) < cap(entries) {
		return entries
	}
	n := min(uint64(max(entriesGrowth*cap(entries), 16)), count)
	return slices.Grow(entries, int(n)-len(entries))
}

// nameChunk is the largest buffer a nameArena allocates before it has
// names to put in it.
const nameChunk = 1 << 20

// nameArena hands out the names of an index as strings cut from a few large
// buffers: one allocation per MiB of names instead of one per name. A
// buffer is never written below its length, where the names handed out
// lie, so every name stays valid.
type nameArena struct {
	buf   []byte
	left  uint64 // the most name bytes the index can hold beyond those in earlier buffers
	fresh *fresh // nil: no Parser.Populate
	ready int    // buf[:ready] was handed to fresh; with no fresh, cap(buf)
	// pad is how many bytes of the bound are most likely not names (v3:
	// entry padding). The buffer that holds the rest of the bound is
	// handed without them until a name reaches them: a llama-1184 v3
	// arena was handed a page (of 14) no name reached, a fault's worth of
	// a fresh process's time.
	pad int
}

// newNameArena returns an arena for at most bound name bytes, of which pad
// are most likely not names.
func newNameArena(bound uint64, pad int, f *fresh) *nameArena {
	return &nameArena{left: bound, pad: pad, fresh: f}
}

// add copies name, which is not empty, into the arena and returns it as a
// string. It inlines: a name that fits the buffer (with Populate, the
// memory already handed over) costs its copy; the rest is addSlow.
func (a *nameArena) add(name []byte) string {
	start := len(a.buf)
	end := start + len(name)
	if end > a.ready {
		return a.addSlow(name)
	}
	a.buf = a.buf[:end]
	copy(a.buf[start:], name)
	return rawmem.BytesString(a.buf[start:])
}

func (a *nameArena) addSlow(name []byte) string {
	if cap(a.buf)-len(a.buf) < len(name) {
		// A small index gets one buffer of exactly its bound; a large or
		// forged one gets chunks, each filled before the next is made.
		a.left -= min(a.left, uint64(len(a.buf)))
		a.buf = make([]byte, 0, int(max(min(a.left, nameChunk), uint64(len(name)))))
		a.ready = 0
		if a.fresh == nil {
			a.ready = cap(a.buf)
		}
	}
	start := len(a.buf)
	if end := start + len(name); a.fresh != nil && end > a.ready {
		a.ready = min(cap(a.buf), end+populateStep)
		// buf holds the rest of the bound when its capacity reaches left,
		// which changes only when a new buffer is made.
		if likely := cap(a.buf) - a.pad; uint64(cap(a.buf)) >= a.left && a.ready == cap(a.buf) && end <= likely {
			// The tail is handed (once) if a name reaches it.
			a.ready = likely
		}
		a.fresh.hand(a.buf[start:a.ready])
	}
	a.buf = append(a.buf, name...)
	return rawmem.BytesString(a.buf[start:])
}

// populateStep is how far ahead of the decoder's writes (in bytes of names;
// populateEntries in Entries, about as many bytes) Parser.Populate is handed
// fresh memory: a forged index costs at most one step more than what is
// decoded before its first inconsistency (G7), a 1,184-entry index three
// calls.
const (
	populateStep    = 64 << 10
	populateEntries = 1 << 9
)

// fresh hands the memory a decode is about to fill, its Entries and their
// names, to Parser.Populate a step ahead of the writes.
type fresh struct {
	fn func(addr uintptr, n int)
	// Entries of the current backing array (cap) handed over, from its start.
	cap, done int
}

// newFresh returns nil when there is no fn: every method is then skipped.
func newFresh(fn func(addr uintptr, n int)) *fresh {
	if fn == nil {
		return nil
	}
	return &fresh{fn: fn}
}

func (f *fresh) hand(b []byte) { f.fn(rawmem.Region(b)) }

// entry is called before entries[len(entries)] is written (there is room
// for it). It inlines to a nil check when there is no Populate.
func (f *fresh) entry(entries []Entry) {
	if f != nil {
		f.handEntries(entries)
	}
}

// handEntries is entry with a Populate. A grown array's first part was
// written by the copy that grew it.
func (f *fresh) handEntries(entries []Entry) {
	n := len(entries)
	if cap(entries) != f.cap {
		f.cap, f.done = cap(entries), n
	}
	if n < f.done {
		return
	}
	f.done = min(cap(entries), n+populateEntries)
	f.fn(rawmem.Region(entries[n:f.done]))
}
