package spec

import "hash/crc32"

// SourceDigest is a Key.Source for the unpacked source bytes of a weight,
// parts concatenated (weights, then bias): CRC-32 (IEEE) and CRC-32C side
// by side. Both run on hardware (PCLMULQDQ, SSE4.2) at several GB/s
// together, where table-driven CRC-64 runs at 0.5 GB/s. Two different
// polynomials catch every burst of up to 32 bits and miss a random change
// with probability about 2⁻⁶⁴. It guards against stale packings after a
// model update (G1), not against a forger, who controls the weights anyway.
func SourceDigest(parts ...[]byte) uint64 {
	var ieee, c uint32
	for _, p := range parts {
		ieee = crc32.Update(ieee, crc32.IEEETable, p)
		c = crc32.Update(c, castagnoli, p)
	}
	return uint64(ieee)<<32 | uint64(c)
}
