package spec

import "io"

// DefaultMaxIndexBytes is the longest index a Parser accepts unless told
// otherwise: 1 GiB, about ten million entries with typical tensor names,
// far beyond any model's weights cache (a 1,184-weight model's index is
// about 100 KiB). Parsing a valid index costs time and memory in
// proportion to its length, so the limit is what a caller pays at most for
// a file whose index is real; a forged index costs only what is decoded
// before its first inconsistency, whatever it declares.
const DefaultMaxIndexBytes = 1 << 30

// crcAfterError is the most index bytes ParseV3 reads past a decode error
// to tell a damaged index (ErrChecksum) from a forged one (the decode
// error). A longer rest is not read: the decode error is reported with its
// offset, so rejecting a forged index never costs its declared length.
const crcAfterError = 1 << 20

// Parser parses cache files with limits a caller may set. The zero value
// applies the defaults; ParseV2 and ParseV3 are the zero Parser's methods.
type Parser struct {
	// MaxIndexBytes caps the length of an index (v2: from index_start to
	// the end of the footer; v3: the committed index block). A longer one
	// is rejected with ErrIndexTooLarge before any of it is read. Zero
	// means DefaultMaxIndexBytes.
	MaxIndexBytes uint64

	// Prefetch, if set, is told the file range [lo, hi) of the index once
	// its bounds are checked and before it is decoded, up to its first
	// MiB: what a read would fetch in one go, while a forged index of
	// holes costs only what is decoded. A caller decoding from a mapping
	// (Mapped) faults the range in there with one call instead of a fault
	// per block of pages the decoder reaches.
	Prefetch func(lo, hi int64)

	// Populate, if set, is handed the memory the parse is about to fill
	// with the Entries and names it decodes, as an address and a length,
	// at most a step (64 KiB) ahead of the writes. A caller in a fresh
	// process enters those pages with one call each (impl/cache:
	// MADV_POPULATE_WRITE) instead of a page fault a page. It must not
	// write to the memory.
	Populate func(addr uintptr, n int)
}

func (p Parser) prefetch(lo, hi int64) {
	if p.Prefetch != nil {
		p.Prefetch(lo, min(hi, lo+wholeRange))
	}
}

func (p Parser) maxIndex() uint64 {
	if p.MaxIndexBytes == 0 {
		return DefaultMaxIndexBytes
	}
	return p.MaxIndexBytes
}

// ParseV2 is Parser{}.ParseV2.
func ParseV2(r io.ReaderAt, size int64) (*V2File, error) { return Parser{}.ParseV2(r, size) }

// ParseV3 is Parser{}.ParseV3.
func ParseV3(r io.ReaderAt, size int64) (*V3File, error) { return Parser{}.ParseV3(r, size) }
