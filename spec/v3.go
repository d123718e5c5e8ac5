package spec

import "encoding/binary"

// v3 is the reference format (docs/format.md has the byte tables):
//
//	[0, page)      header page: commit slot 0 at 0, slot 1 at 512, rest zero
//	[page, ...)    data regions at page-aligned offsets, appended
//	index blocks   appended after the data of their save
//
// A commit slot is the only way to find an index (G1: no trailer can be
// forged inside weight bytes, because nothing is searched for). A save
// appends data and a new index block, makes them durable, then writes the
// slot of the next generation (generation%2) and makes it durable; until that
// slot is durable the other slot still names the previous index, whose bytes
// the save never touched (G2). Each slot sits in its own 512-byte sector, so
// power loss tearing the slot write at sector granularity can destroy only
// the slot being written, never the previous commit.
const (
	// V3Version is the format version recorded in every commit slot. Version
	// 4 added copy_id to index entries; a file of another version is
	// reported with a *VersionError and rebuilt, never read with the wrong
	// entry layout.
	V3Version uint32 = 4
	// V3SlotSize is the size of one commit slot: one disk sector.
	V3SlotSize = 512
	// MinPageSize and MaxPageSize bound the writer page size a v3 file may
	// record: 4 KiB (Linux/Android) to 64 KiB (some arm64 kernels).
	MinPageSize = 4 << 10
	MaxPageSize = 64 << 10

	// Commit slot field offsets; the slot CRC covers [0, slotCRCOff).
	slotMagicOff    = 0
	slotVersionOff  = 8
	slotPageSizeOff = 12
	slotGenOff      = 16
	slotIndexOffOff = 24
	slotIndexLenOff = 32
	slotIndexCRCOff = 40
	slotDataSumOff  = 44
	slotReservedOff = 48
	slotCRCOff      = V3SlotSize - 4
)

// V3SlotMagic opens every commit slot; V3IndexMagic opens every index block.
// Eight bytes each, so a chance match inside other data is negligible, and
// neither is trusted without the CRC that follows it anyway.
const (
	V3SlotMagic  = "XPWCSLOT"
	V3IndexMagic = "XPWCIDX3"
)

// The data checksum field of a commit slot names the algorithm of every
// entry's data checksum (Entry.CRC) in the index it commits. Files written
// before the field existed hold zero there (the bytes were reserved) and
// CRC32C checksums: a reader rejects them with ErrUnsupportedChecksum, so
// they are rebuilt and never verified with the wrong algorithm (G1, G7).
const (
	// DataChecksumCRC32C is CRC32C, what v3 files stored before XXH3. It is
	// no longer read nor written.
	DataChecksumCRC32C uint32 = 0
	// DataChecksumXXH3 is DataChecksum: XXH3-64 folded to 32 bits.
	DataChecksumXXH3 uint32 = 1
	// V3DataChecksum is the algorithm this package writes and reads.
	V3DataChecksum = DataChecksumXXH3
)

// ValidPageSize reports whether n may be recorded as a v3 writer page size.
func ValidPageSize(n int) bool {
	return n >= MinPageSize && n <= MaxPageSize && n&(n-1) == 0
}

// V3HeaderSize is the size of the header of a file written with pageSize:
// the whole first page, so that the first data region is page-aligned and
// the header is never mapped together with data.
func V3HeaderSize(pageSize int) int { return pageSize }

// CommitSlotOffset is where the slot of a generation lives: slot
// generation%2. A save of generation g overwrites the slot of g-2 and leaves
// g-1, the last committed generation, intact.
func CommitSlotOffset(generation uint64) int64 {
	return int64(generation%2) * V3SlotSize
}

// Commit is the content of a v3 commit slot: which index is committed.
type Commit struct {
	// Generation counts saves; 0 means "never committed" and appears only in
	// a fresh header. The newest valid slot wins.
	Generation uint64
	// IndexOff and IndexLen locate the index block; IndexCRC is the CRC32C
	// of its IndexLen bytes.
	IndexOff, IndexLen uint64
	IndexCRC           uint32
	// PageSize is the writer's page size: the size of the header and the
	// alignment of every data offset.
	PageSize uint32
}

// EncodeCommitSlot encodes c as a V3SlotSize-byte slot with its CRC.
func EncodeCommitSlot(c Commit) []byte {
	b := make([]byte, V3SlotSize)
	le := binary.LittleEndian
	copy(b[slotMagicOff:], V3SlotMagic)
	le.PutUint32(b[slotVersionOff:], V3Version)
	le.PutUint32(b[slotPageSizeOff:], c.PageSize)
	le.PutUint64(b[slotGenOff:], c.Generation)
	le.PutUint64(b[slotIndexOffOff:], c.IndexOff)
	le.PutUint64(b[slotIndexLenOff:], c.IndexLen)
	le.PutUint32(b[slotIndexCRCOff:], c.IndexCRC)
	le.PutUint32(b[slotDataSumOff:], V3DataChecksum)
	le.PutUint32(b[slotCRCOff:], CRC32C(b[:slotCRCOff]))
	return b
}

// EncodeV3Header returns a fresh header page: both slots hold generation 0
// (no commit yet) with the page size, so DetectFormat recognises the file and
// ParseV3 reports ErrNoCommit until the first save commits.
func EncodeV3Header(pageSize int) []byte {
	b := make([]byte, V3HeaderSize(pageSize))
	empty := EncodeCommitSlot(Commit{PageSize: uint32(pageSize)})
	copy(b[0:], empty)
	copy(b[V3SlotSize:], empty)
	return b
}

// ParseCommitSlot decodes and checks the slot bytes b found at slot position
// pos (0 or 1). Checks in order: magic (ErrBadMagic), version
// (*VersionError), CRC (ErrChecksum), data checksum algorithm
// (ErrUnsupportedChecksum), page size (ErrBadPageSize), reserved
// bytes zero and generation parity (ErrBadSlot). A generation-0 slot is
// returned without error; the caller decides that it commits nothing.
func ParseCommitSlot(b []byte, pos int) (Commit, error) {
	base := int64(pos) * V3SlotSize
	if len(b) < V3SlotSize {
		return Commit{}, ferr(base, "slot", uint64(len(b)), ErrTooSmall)
	}
	b = b[:V3SlotSize]
	le := binary.LittleEndian
	if string(b[slotMagicOff:slotMagicOff+8]) != V3SlotMagic {
		return Commit{}, ferr(base+slotMagicOff, "magic", le.Uint64(b[slotMagicOff:]), ErrBadMagic)
	}
	if v := le.Uint32(b[slotVersionOff:]); v != V3Version {
		return Commit{}, ferr(base+slotVersionOff, "version", uint64(v), &VersionError{Got: v, Want: V3Version})
	}
	if got, want := le.Uint32(b[slotCRCOff:]), CRC32C(b[:slotCRCOff]); got != want {
		return Commit{}, ferr(base+slotCRCOff, "slot_crc", uint64(got), ErrChecksum)
	}
	if a := le.Uint32(b[slotDataSumOff:]); a != V3DataChecksum {
		return Commit{}, ferr(base+slotDataSumOff, "data_checksum", uint64(a), ErrUnsupportedChecksum)
	}
	c := Commit{
		PageSize:   le.Uint32(b[slotPageSizeOff:]),
		Generation: le.Uint64(b[slotGenOff:]),
		IndexOff:   le.Uint64(b[slotIndexOffOff:]),
		IndexLen:   le.Uint64(b[slotIndexLenOff:]),
		IndexCRC:   le.Uint32(b[slotIndexCRCOff:]),
	}
	if !ValidPageSize(int(c.PageSize)) {
		return Commit{}, ferr(base+slotPageSizeOff, "page_size", uint64(c.PageSize), ErrBadPageSize)
	}
	if !allZero(b[slotReservedOff:slotCRCOff]) {
		for i := slotReservedOff; i < slotCRCOff; i++ {
			if b[i] != 0 {
				return Commit{}, ferr(base+int64(i), "reserved", uint64(b[i]), ErrBadSlot)
			}
		}
	}
	if c.Generation == 0 {
		if c.IndexOff != 0 || c.IndexLen != 0 || c.IndexCRC != 0 {
			return Commit{}, ferr(base+slotIndexOffOff, "index_off", c.IndexOff, ErrBadSlot)
		}
		return c, nil
	}
	if CommitSlotOffset(c.Generation) != base {
		// A correct writer puts generation g in slot g%2; anything else
		// would let two slots claim one generation.
		return Commit{}, ferr(base+slotGenOff, "generation", c.Generation, ErrBadSlot)
	}
	return c, nil
}

// allZero reports whether b is all zero bytes, reading it 8 bytes at a
// time: byte by byte, the 460 reserved bytes of both slots cost a v3 load
// several thousand instructions (about 9,000 by callgrind, within its
// run-to-run spread of a few thousand).
func allZero(b []byte) bool {
	var acc uint64
	for ; len(b) >= 8; b = b[8:] {
		acc |= binary.LittleEndian.Uint64(b)
	}
	for _, c := range b {
		acc |= uint64(c)
	}
	return acc == 0
}
