package spec

import "hash/crc32"

// castagnoli is the CRC32C table. crc32 uses the SSE4.2/ARMv8 instructions
// for it, so checking data costs about a memory pass (G1's verification
// policy is priced in docs/format.md).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// CRC32C returns the CRC32C (Castagnoli) of b: the checksum v3 uses for
// commit slots, index blocks and entry data.
func CRC32C(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// UpdateCRC32C continues a CRC32C over more bytes, for data written or read
// in pieces.
func UpdateCRC32C(crc uint32, b []byte) uint32 { return crc32.Update(crc, castagnoli, b) }
