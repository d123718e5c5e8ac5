package spec

import (
	"bytes"
	"encoding/binary"
	"io"
)

// v2 is ExecuTorch's XNNWeightsCache file (kCacheVersion 2, PR #20170),
// byte-exact. Layout, all little-endian:
//
//	[0, index_start)        packed data regions, each at a page-aligned offset
//	[index_start, size-20)  entries back to back, no padding:
//	                        name_len u32 | name | file_offset u64 | data_size u64 | seed u32
//	[size-20, size)         footer: index_start u64 | entry_count u32 | magic u32 | version u32
//
// docs/format.md lists every check ParseV2 makes and where it is stricter
// than ExecuTorch.
const (
	// V2Magic is kCacheMagic. Stored little-endian its bytes read "CWPX".
	V2Magic uint32 = 0x58505743
	// V2Version is kCacheVersion; v1 entries had no seed (PR #20170).
	V2Version uint32 = 2
	// V2FooterSize is the size of the footer at the end of the file.
	V2FooterSize = 20
	// V2EntryFixedSize is the size of an entry without its name bytes.
	V2EntryFixedSize = 4 + 8 + 8 + 4
	// V2Alignment is the alignment ParseV2 demands of data offsets.
	// ExecuTorch rounds offsets up to sysconf(_SC_PAGESIZE), which is 4 KiB
	// or 16 KiB on its targets, so every offset it writes is a multiple of
	// 4 KiB.
	V2Alignment = 4096
	// V2MaxNameLen bounds a stored v2 name: a weight name and a bias name,
	// each at most MaxNameLen, concatenated.
	V2MaxNameLen = 2 * MaxNameLen
)

// V2File is a parsed, validated v2 file.
type V2File struct {
	// Size is the file size the file was parsed with.
	Size int64
	// IndexStart is the offset of the first entry; data lies before it.
	IndexStart uint64
	// Entries in index order (ExecuTorch writes hash-map order). Names are
	// cut from a few shared buffers.
	Entries []Entry
	// LiveBytes is the sum of the entries' data sizes. GarbageBytes is the
	// rest of [0, IndexStart): page padding, old trailers left by earlier
	// saves, and regions no entry references.
	LiveBytes, GarbageBytes uint64
}

// EncodeV2Index encodes entries and the footer exactly as ExecuTorch's
// save_packed_index does, for writing at indexStart; the file must end right
// after the returned bytes. Each entry's stored name is Key.V2Name(). The
// caller supplies valid entries (ParseV2 says what valid means); the encoder
// does not check them so that tests can build invalid files with it.
func EncodeV2Index(indexStart uint64, entries []Entry) []byte {
	n := V2FooterSize
	for i := range entries {
		n += V2EntryFixedSize + len(entries[i].Key.Weight) + len(entries[i].Key.Bias)
	}
	b := make([]byte, 0, n)
	le := binary.LittleEndian
	for i := range entries {
		e := &entries[i]
		b = le.AppendUint32(b, uint32(len(e.Key.Weight)+len(e.Key.Bias)))
		b = append(b, e.Key.Weight...)
		b = append(b, e.Key.Bias...)
		b = le.AppendUint64(b, e.Offset)
		b = le.AppendUint64(b, e.Size)
		b = le.AppendUint32(b, e.Key.Seed)
	}
	return appendV2Footer(b, indexStart, uint32(len(entries)), V2Version)
}

// appendV2Footer appends a footer; the version is a parameter so tests can
// write v1 and future footers.
func appendV2Footer(b []byte, indexStart uint64, count, version uint32) []byte {
	le := binary.LittleEndian
	b = le.AppendUint64(b, indexStart)
	b = le.AppendUint32(b, count)
	b = le.AppendUint32(b, V2Magic)
	return le.AppendUint32(b, version)
}

// V2Footer is the decoded footer of a v2 file, before any check.
type V2Footer struct {
	IndexStart uint64 `json:"index_start"`
	Count      uint32 `json:"entry_count"`
	Magic      uint32 `json:"magic"`
	Version    uint32 `json:"version"`
}

// DecodeV2Footer decodes the last V2FooterSize bytes of a file without
// checking them (simrun inspect shows them for files that fail).
func DecodeV2Footer(b [V2FooterSize]byte) V2Footer {
	le := binary.LittleEndian
	return V2Footer{
		IndexStart: le.Uint64(b[0:]),
		Count:      le.Uint32(b[8:]),
		Magic:      le.Uint32(b[12:]),
		Version:    le.Uint32(b[16:]),
	}
}

// ParseV2 reads and validates a v2 file of the given size through r. It
// never reads outside [0, size), and what it reads and allocates grows with
// the entries it decodes, never with what the footer declares (G7): the
// name bytes and Entries of the entries decoded (at most twice over, as
// they grow), a read buffer (the whole index when it is at most 1 MiB, read
// with one read; else 64 KiB), a duplicate-name table of at most 20 bytes per
// entry, and a bitmap of one bit per page before index_start of at most
// 4 MiB (a larger data area is checked by sorting instead). An index
// longer than p.MaxIndexBytes is rejected before it is read. Every error
// matches ErrCorrupt unless it is an I/O error from r.
func (p Parser) ParseV2(r io.ReaderAt, size int64) (*V2File, error) {
	if size < V2FooterSize {
		return nil, ferr(0, "file_size", uint64(max(size, 0)), ErrTooSmall)
	}
	footOff := size - V2FooterSize
	var fb [V2FooterSize]byte
	if err := readFull(r, footOff, fb[:], "footer"); err != nil {
		return nil, err
	}
	f := DecodeV2Footer(fb)
	// Same order as ExecuTorch's load_packed_cache: magic, version, then
	// index_start, so an ExecuTorch v1 file reports its version.
	if f.Magic != V2Magic {
		return nil, ferr(footOff+12, "magic", uint64(f.Magic), ErrBadMagic)
	}
	if f.Version != V2Version {
		return nil, ferr(footOff+16, "version", uint64(f.Version), &VersionError{Got: f.Version, Want: V2Version})
	}
	if f.IndexStart > uint64(footOff) {
		return nil, ferr(footOff, "index_start", f.IndexStart, ErrIndexOutOfBounds)
	}
	// ExecuTorch rejects the zero-entry trailer (index_start == size-20) but
	// loads zero entries from a count of 0 with index bytes present (#20562);
	// both are rejected here.
	if f.Count == 0 {
		return nil, ferr(footOff+8, "entry_count", 0, ErrEmptyIndex)
	}
	indexLen := uint64(footOff) - f.IndexStart
	if indexLen+V2FooterSize > p.maxIndex() {
		return nil, ferr(footOff, "index_start", f.IndexStart, ErrIndexTooLarge)
	}
	// The count must fit the index before anything is allocated for it:
	// this bounds the Entries slice by the real file size.
	if uint64(f.Count) > indexLen/V2EntryFixedSize {
		return nil, ferr(footOff+8, "entry_count", uint64(f.Count), ErrCountMismatch)
	}
	p.prefetch(int64(f.IndexStart), footOff)
	entries, live, err := decodeV2Entries(newWindow(r, int64(f.IndexStart), footOff), f, newFresh(p.Populate))
	if err != nil {
		return nil, withDecoded(err, entries)
	}
	v := &V2File{Size: size, IndexStart: f.IndexStart, Entries: entries, LiveBytes: live}
	v.GarbageBytes = f.IndexStart - v.LiveBytes
	return v, nil
}

// v2NameBytes is the most name bytes a v2 index of indexLen bytes (its
// records, up to the footer) can hold in count entries, as v3NameBytes is
// for v3: the records less their fixed fields, and no more than count of
// the longest v2 names.
func v2NameBytes(indexLen, count uint64) uint64 {
	return min(indexLen-count*V2EntryFixedSize, count*V2MaxNameLen)
}

// decodeV2Entries decodes and validates the index [f.IndexStart, w.hi) and
// sums the entries' sizes (in the same pass: a second one over a million
// entries costs a few milliseconds).
func decodeV2Entries(w *window, f V2Footer, fr *fresh) (entries []Entry, live uint64, err error) {
	le := binary.LittleEndian
	end := w.hi
	indexLen := uint64(end) - f.IndexStart
	count := uint64(f.Count)
	if count > MaxEntries {
		return nil, 0, ferr(w.hi+8, "entry_count", count, ErrTooManyEntries)
	}
	names := newNameArena(v2NameBytes(indexLen, count), 0, fr)
	entries = make([]Entry, 0, min(count, preallocEntries))
	uniq := newNameSet(count, weightName)
	starts := newStartMap(V2Alignment, f.IndexStart)
	good := 0 // entries fully decoded and checked
	pos := int64(f.IndexStart)
	for range count {
		rest := end - pos
		if rest < 4 {
			// The index ran out before the declared count: ExecuTorch stops
			// here and loads what it has (#20562's 63-byte file).
			return entries[:good], 0, ferr(w.hi+8, "entry_count", count, ErrCountMismatch)
		}
		b, ok := w.in(pos, 4)
		if !ok {
			if b, err = w.refill(pos, 4, "name_len"); err != nil {
				return entries[:good], 0, err
			}
		}
		nameLen := le.Uint32(b)
		if rest < V2EntryFixedSize || int64(nameLen) > rest-V2EntryFixedSize {
			return entries[:good], 0, ferr(pos, "name_len", uint64(nameLen), ErrEntryOutOfBounds)
		}
		if nameLen == 0 || nameLen > V2MaxNameLen {
			return entries[:good], 0, ferr(pos, "name_len", uint64(nameLen), ErrBadName)
		}
		// The record is read only once its length is known to lie inside
		// the index, so the window never reads past the footer.
		if b, ok = w.in(pos+4, int(nameLen)+V2EntryFixedSize-4); !ok {
			if b, err = w.refill(pos+4, int(nameLen)+V2EntryFixedSize-4, "entry"); err != nil {
				return entries[:good], 0, err
			}
		}
		name, fixed := b[:nameLen], b[nameLen:]
		if bytes.IndexByte(name, 0) >= 0 {
			// A NUL would make the name ambiguous once converted to v3.
			return entries[:good], 0, ferr(pos+4, "name", uint64(nameLen), ErrBadName)
		}
		entries = growEntries(entries, count)
		fr.entry(entries)
		entries = entries[:len(entries)+1]
		e := &entries[len(entries)-1]
		e.Key.Weight = w.name(name, names)
		e.Offset = le.Uint64(fixed)
		e.Size = le.Uint64(fixed[8:])
		e.Key.Seed = le.Uint32(fixed[16:])
		// offset < index_start and size <= index_start - offset, as
		// ExecuTorch checks, written so neither side can overflow.
		if e.Offset >= f.IndexStart || e.Size > f.IndexStart-e.Offset {
			return entries[:good], 0, ferr(pos+4+int64(nameLen), "file_offset", e.Offset, ErrEntryOutOfBounds)
		}
		if e.Offset%V2Alignment != 0 {
			return entries[:good], 0, ferr(pos+4+int64(nameLen), "file_offset", e.Offset, ErrMisaligned)
		}
		uniq.add(name)
		starts.add(entries, len(entries)-1)
		live += e.Size
		good++
		pos += V2EntryFixedSize + int64(nameLen)
	}
	// Bytes between the last declared entry and the footer: ExecuTorch
	// ignores them; here they mean a torn or forged index.
	if pos != end {
		return entries, 0, ferr(pos, "index", uint64(end-pos), ErrTrailingBytes)
	}
	// ExecuTorch lets a later duplicate overwrite the first, orphaning its
	// region; such a file came from a broken writer and is rejected.
	if i := uniq.firstDup(entries); i >= 0 {
		return entries, 0, ferr(int64(f.IndexStart), "name", uint64(i), ErrDuplicateName)
	}
	if a, b := starts.overlap(entries); a >= 0 {
		return entries, 0, ferr(int64(f.IndexStart), "file_offset", entries[b].Offset, overlapErr(a, b))
	}
	return entries, live, nil
}
