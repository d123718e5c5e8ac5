package spec

import (
	"bytes"
	"encoding/binary"
)

// A v3 index block: a 16-byte header (magic, entry count u64) followed by
// count entries, each
//
//	offset u64 | size u64 | fingerprint u64 | source u64 | copy_id u64 |
//	seed u32 | crc u32 | name_len u32 | name (weight NUL bias) |
//	zero padding to a multiple of 8
//
// Fixed fields come first and every entry starts 8-aligned, so a reader on a
// strict-alignment machine can decode the block in place from a mapping.
const (
	// V3IndexHeaderSize is the size of the index block header.
	V3IndexHeaderSize = 16
	// V3EntryFixedSize is the size of an entry without name and padding.
	V3EntryFixedSize = 8 + 8 + 8 + 8 + 8 + 4 + 4 + 4
	// V3MinEntrySize is the smallest encoded entry: a one-byte weight name
	// and its separator, padded. It bounds the count a block can hold.
	V3MinEntrySize = (V3EntryFixedSize + 2 + 7) &^ 7
)

// v3EntrySize is the encoded size of an entry whose name is nameLen bytes.
func v3EntrySize(nameLen int) int { return (V3EntryFixedSize + nameLen + 7) &^ 7 }

// EncodeV3Index encodes entries, in the given order, as a v3 index block.
// Names are Key.Name(). As with EncodeV2Index, validity is the caller's
// business and ParseV3's to check.
func EncodeV3Index(entries []Entry) []byte {
	n := V3IndexHeaderSize
	for i := range entries {
		n += v3EntrySize(len(entries[i].Key.Weight) + len(NameSeparator) + len(entries[i].Key.Bias))
	}
	b := make([]byte, 0, n)
	le := binary.LittleEndian
	b = append(b, V3IndexMagic...)
	b = le.AppendUint64(b, uint64(len(entries)))
	for i := range entries {
		e := &entries[i]
		start := len(b)
		b = le.AppendUint64(b, e.Offset)
		b = le.AppendUint64(b, e.Size)
		b = le.AppendUint64(b, e.Key.Fingerprint)
		b = le.AppendUint64(b, e.Key.Source)
		b = le.AppendUint64(b, e.CopyID)
		b = le.AppendUint32(b, e.Key.Seed)
		b = le.AppendUint32(b, e.CRC)
		b = le.AppendUint32(b, uint32(len(e.Key.Weight)+len(NameSeparator)+len(e.Key.Bias)))
		b = append(b, e.Key.Weight...)
		b = append(b, NameSeparator...)
		b = append(b, e.Key.Bias...)
		for (len(b)-start)%8 != 0 {
			b = append(b, 0)
		}
	}
	return b
}

// NewCommit returns the commit that names index, an encoded index block
// written at indexOff, as generation generation of a file with pageSize.
func NewCommit(generation uint64, pageSize int, indexOff uint64, index []byte) Commit {
	return Commit{
		Generation: generation,
		IndexOff:   indexOff,
		IndexLen:   uint64(len(index)),
		IndexCRC:   CRC32C(index),
		PageSize:   uint32(pageSize),
	}
}

// v3Bounds is what an index is validated against.
type v3Bounds struct {
	size     uint64 // file size
	header   uint64 // header size = page size
	page     uint64
	indexOff uint64
	indexLen uint64
}

// decodeV3Index decodes and validates the index block in w, and sums the
// entries' sizes in the same pass. The caller checks the block's CRC, and
// that the block is at least V3IndexHeaderSize long (index_len).
func decodeV3Index(w *window, bd v3Bounds, fr *fresh) (entries []Entry, live uint64, err error) {
	le := binary.LittleEndian
	end := w.hi
	good := 0 // entries fully decoded and checked
	pos := w.lo
	h, err := w.at(pos, V3IndexHeaderSize, "index")
	if err != nil {
		return nil, 0, err
	}
	if string(h[:8]) != V3IndexMagic {
		return nil, 0, ferr(pos, "magic", le.Uint64(h), ErrBadMagic)
	}
	count := le.Uint64(h[8:])
	body := uint64(end-pos) - V3IndexHeaderSize
	// Before allocating: the block must be able to hold count entries of the
	// minimum size, so Entries is bounded by the file size (G7).
	if count > body/V3MinEntrySize {
		return nil, 0, ferr(pos+8, "count", count, ErrCountMismatch)
	}
	if count > MaxEntries {
		return nil, 0, ferr(pos+8, "count", count, ErrTooManyEntries)
	}
	names := newNameArena(v3NameBytes(body, count), v3LikelyPadding(count), fr)
	entries = make([]Entry, 0, min(count, preallocEntries))
	uniq := newNameSet(count, v3Name)
	starts := newStartMap(bd.page, bd.size)
	pos += V3IndexHeaderSize
	for range count {
		rest := end - pos
		if rest == 0 {
			// Fewer entries than declared: a writer that miscounted, or a
			// count forged to make a reader allocate (it fit the size check
			// above only because the names are long).
			return entries[:good], 0, ferr(w.lo+8, "count", count, ErrCountMismatch)
		}
		if rest < V3EntryFixedSize {
			return entries[:good], 0, ferr(pos, "entry", uint64(rest), ErrEntryOutOfBounds)
		}
		b, ok := w.in(pos, V3EntryFixedSize)
		if !ok {
			if b, err = w.refill(pos, V3EntryFixedSize, "entry"); err != nil {
				return entries[:good], 0, err
			}
		}
		b = b[:V3EntryFixedSize] // one bounds check for the fields below
		entries = growEntries(entries, count)
		fr.entry(entries)
		entries = entries[:len(entries)+1]
		e := &entries[len(entries)-1]
		e.Offset = le.Uint64(b)
		e.Size = le.Uint64(b[8:])
		e.Key.Fingerprint = le.Uint64(b[16:])
		e.Key.Source = le.Uint64(b[24:])
		e.CopyID = le.Uint64(b[32:])
		e.Key.Seed = le.Uint32(b[40:])
		e.CRC = le.Uint32(b[44:])
		// name_len is checked against the bytes actually left before it is
		// used for anything, in int64 so that no value can wrap (the 32-bit
		// wrap of ExecuTorch's bounds arithmetic, docs/bugs.md, "9. Forged
		// or corrupt index fields").
		nameLen := int64(le.Uint32(b[48:]))
		if nameLen > rest-V3EntryFixedSize {
			return entries[:good], 0, ferr(pos+48, "name_len", uint64(nameLen), ErrEntryOutOfBounds)
		}
		if nameLen > 2*MaxNameLen+1 {
			return entries[:good], 0, ferr(pos+48, "name_len", uint64(nameLen), ErrBadName)
		}
		size := int64(v3EntrySize(int(nameLen)))
		if size > rest {
			return entries[:good], 0, ferr(pos+V3EntryFixedSize+nameLen, "padding", uint64(size-rest), ErrEntryOutOfBounds)
		}
		if b, ok = w.in(pos+V3EntryFixedSize, int(size-V3EntryFixedSize)); !ok {
			if b, err = w.refill(pos+V3EntryFixedSize, int(size-V3EntryFixedSize), "name"); err != nil {
				return entries[:good], 0, err
			}
		}
		name := b[:nameLen]
		// Canonical encoding: a file that parses re-encodes to the same
		// bytes, which the round-trip fuzz target relies on. The padding
		// (at most 7 bytes) is checked as the top of the entry's last word.
		if !zeroTail(b, len(b)-int(nameLen)) {
			for _, c := range b[nameLen:] {
				if c != 0 {
					return entries[:good], 0, ferr(pos+V3EntryFixedSize+nameLen, "padding", uint64(c), ErrTrailingBytes)
				}
			}
		}
		// Exactly one separator and a non-empty weight: "ab"+"c" and
		// "a"+"bc" must stay different keys (G1), and unnamed constants are
		// never persisted. Both names must be valid tensor names (at most
		// MaxNameLen, no separator). This is SplitName and ValidTensorName
		// in one scan of the name.
		sep, one := oneNUL(name)
		if !one || sep <= 0 || sep > MaxNameLen || len(name)-sep-1 > MaxNameLen {
			return entries[:good], 0, ferr(pos+V3EntryFixedSize, "name", uint64(nameLen), ErrBadName)
		}
		full := w.name(name, names)
		e.Key.Weight, e.Key.Bias = full[:sep], full[sep+1:]
		if !v3RangeOK(e, &bd) {
			if err := checkV3Range(e, bd, pos); err != nil {
				return entries[:good], 0, err
			}
		}
		uniq.add(name)
		starts.add(entries, len(entries)-1)
		live += e.Size
		good++
		pos += size
	}
	if pos != end {
		return entries, 0, ferr(pos, "index", uint64(end-pos), ErrTrailingBytes)
	}
	// Names are unique: a save that re-packs a weight replaces its entry, so
	// two entries with one name (even with different seeds) mean a broken
	// writer, and a look-up could not tell which one the index meant.
	if i := uniq.firstDup(entries); i >= 0 {
		return entries, 0, ferr(w.lo, "name", uint64(i), ErrDuplicateName)
	}
	if a, b := starts.overlap(entries); a >= 0 {
		return entries, 0, ferr(w.lo, "offset", entries[b].Offset, overlapErr(a, b))
	}
	return entries, live, nil
}

// v3NameBytes is the most name bytes an index body of body bytes can hold
// in count entries (count fits the body): the body less the entries' fixed
// fields, and no more than count of the longest names. It bounds the name
// arena, whose first buffer is exactly this size up to nameChunk.
func v3NameBytes(body, count uint64) uint64 {
	return min(body-count*V3EntryFixedSize, count*(2*MaxNameLen+1))
}

// v3LikelyPadding is how many of v3NameBytes' bytes are most likely
// entries' padding, not names: 3 an entry, the 0-7 bytes' mean rounded
// down, so that names of spread lengths seldom reach past it (and one
// that does only faults in the rest on its first write).
func v3LikelyPadding(count uint64) int { return int(min(count, MaxEntries) * 3) }

// zeroTail reports whether the last n bytes of b, n at most 7, are zero,
// reading them as the top of b's last 8 bytes when b has that many.
func zeroTail(b []byte, n int) bool {
	if len(b) < 8 {
		for _, c := range b[len(b)-n:] {
			if c != 0 {
				return false
			}
		}
		return true
	}
	// The word shifted right by 64-8n, in two shifts whose counts are
	// below 64, so no check for a larger count is compiled in: n == 0
	// shifts the top bit out, n == 7 keeps the top 7 bytes.
	return binary.LittleEndian.Uint64(b[len(b)-8:])>>1>>((63-8*uint(n))&63) == 0
}

// oneNULGo returns the index of name's first zero byte (-1 if none) and
// whether it is the only one.
func oneNULGo(name []byte) (sep int, one bool) {
	sep = bytes.IndexByte(name, 0)
	return sep, sep >= 0 && !hasNUL(name[sep+1:])
}

// hasNUL reports whether b holds a zero byte. It reads b 8 bytes at a
// time, where a second bytes.IndexByte call cost a v3 load of 1,184 names
// about 17,000 instructions more. The test flags exactly the words that
// hold a zero (it can flag a byte above a zero, never a word without one).
func hasNUL(b []byte) bool {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	if len(b) < 8 {
		for _, c := range b {
			if c == 0 {
				return true
			}
		}
		return false
	}
	le := binary.LittleEndian
	last := le.Uint64(b[len(b)-8:]) // overlaps the loop's last word
	for ; len(b) > 8; b = b[8:] {
		if x := le.Uint64(b); (x-lo)&^x&hi != 0 {
			return true
		}
	}
	return (last-lo)&^last&hi != 0
}

// v3RangeOK reports whether checkV3Range passes, in one expression the
// decoder inlines; checkV3Range says which check failed.
func v3RangeOK(e *Entry, bd *v3Bounds) bool {
	return e.Offset&(bd.page-1) == 0 && e.Offset >= bd.header && e.Offset <= bd.size &&
		e.Size <= bd.size-e.Offset && !rangesOverlap(e.Offset, e.Size, bd.indexOff, bd.indexLen)
}

// checkV3Range validates one entry's data range: page-aligned, after the
// header, inside the file, clear of the index block.
func checkV3Range(e *Entry, bd v3Bounds, off int64) error {
	if e.Offset&(bd.page-1) != 0 { // page is a power of two (ValidPageSize)
		return ferr(off, "offset", e.Offset, ErrMisaligned)
	}
	if e.Offset < bd.header {
		return ferr(off, "offset", e.Offset, ErrEntryOutOfBounds)
	}
	if e.Offset > bd.size {
		return ferr(off, "offset", e.Offset, ErrEntryOutOfBounds)
	}
	if e.Size > bd.size-e.Offset {
		return ferr(off+8, "size", e.Size, ErrEntryOutOfBounds)
	}
	if rangesOverlap(e.Offset, e.Size, bd.indexOff, bd.indexLen) {
		return ferr(off, "offset", e.Offset, ErrEntryOutOfBounds)
	}
	return nil
}
