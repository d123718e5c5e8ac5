//go:build !amd64

package spec

import "hash/crc32"

// updateCRC32C is crc32.Update with the Castagnoli table (the folding
// CRC of crc_amd64.s is amd64's).
func updateCRC32C(crc uint32, b []byte) uint32 { return crc32.Update(crc, castagnoli, b) }
