package spec

import (
	"errors"
	"fmt"
	"io"
	"math"
	"unsafe"
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
	return fmt.Errorf("xpwc: reading %s at offset %d: %w", field, off, err)
}

// parsedV3Name returns the stored name (weight NUL bias) of an entry decoded
// by decodeV3Index without building it: there Weight and Bias are slices of
// one buffer with the separator between them, and Weight is never empty, so
// the whole name is the len(Weight)+1+len(Bias) bytes from Weight's start.
// It must not be called on any other Entry.
func parsedV3Name(e *Entry) string {
	return unsafe.String(unsafe.StringData(e.Key.Weight), len(e.Key.Weight)+len(NameSeparator)+len(e.Key.Bias))
}

// MaxEntries is the most entries a parser will allocate for: far beyond any
// index on a 64-bit platform, about 16 million with 32-bit ints, where a
// larger []Entry could not be allocated at all.
const MaxEntries = math.MaxInt / 128

// namesCap bounds the names buffer's initial size so the int conversion
// cannot wrap on 32-bit platforms. A larger index makes the buffer grow,
// which costs a copy but keeps every name handed out valid (strings.Builder
// never writes to bytes it has already exposed).
func namesCap(bound uint64) int { return int(min(bound, math.MaxInt/2)) }
