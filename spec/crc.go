package spec

import (
	"hash/crc32"

	"github.com/zeebo/xxh3"
)

// castagnoli is the CRC32C table. crc32 uses the SSE4.2/ARMv8 instructions
// for it; it checksums the small structures (commit slots, index blocks),
// and on amd64 an index is folded with VPCLMULQDQ where the CPU has it
// (updateCRC32C).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// CRC32C returns the CRC32C (Castagnoli) of b: the checksum v3 uses for
// commit slots and index blocks.
func CRC32C(b []byte) uint32 { return updateCRC32C(0, b) }

// UpdateCRC32C continues a CRC32C over more bytes, for data written or read
// in pieces.
func UpdateCRC32C(crc uint32, b []byte) uint32 { return updateCRC32C(crc, b) }

// DataChecksum is the checksum of an entry's data bytes that a v3 index
// stores (Entry.CRC) and that the commit slot's data checksum field names
// (V3DataChecksum = DataChecksumXXH3): XXH3-64 of b, its two halves XORed
// into 32 bits. Verifying data is one pass over every packed weight on a
// warm launch, so its speed matters: over a mapped cache file, hash/crc32's
// Castagnoli ran at about a quarter of a plain read sweep on the reference
// machine and XXH3 at about four fifths of it (docs/benchmarks.md,
// BenchmarkChecksumMappedFile). XXH3 is not a CRC (no guaranteed burst
// detection) but misses a random change with probability about 2⁻³²,
// which is what G1's data check relies on; the index and slots, whose
// structure the parser trusts, keep CRC32C.
func DataChecksum(b []byte) uint32 { return fold64(xxh3.Hash(b)) }

func fold64(h uint64) uint32 { return uint32(h) ^ uint32(h>>32) }

// DataHasher computes DataChecksum over bytes given in pieces: the result
// equals DataChecksum of their concatenation.
type DataHasher struct{ h *xxh3.Hasher }

// NewDataHasher returns an empty DataHasher.
func NewDataHasher() DataHasher { return DataHasher{h: xxh3.New()} }

// Write adds b.
func (d DataHasher) Write(b []byte) { _, _ = d.h.Write(b) }

// Sum is the DataChecksum of everything written.
func (d DataHasher) Sum() uint32 { return fold64(d.h.Sum64()) }
