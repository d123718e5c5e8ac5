package spec

// Entry is one committed packed weight as an index records it: its identity,
// where its bytes lie in the file and (v3) their checksum.
//
// For v2 files Key.Weight holds the stored name, which is ExecuTorch's plain
// concatenation of weight and bias names (the split is lost, see
// Key.V2Name), Key.Bias is empty, and Fingerprint, Source and CRC are zero
// because v2 cannot store them.
type Entry struct {
	Key Key
	// Offset is the byte offset of the packed data in the file. Writers place
	// data at page-aligned offsets so that a read-only mapping of the file
	// hands out aligned packed weights.
	Offset uint64
	// Size is the number of data bytes: the size the packer asked for, not
	// the page-rounded length of its region.
	Size uint64
	// CRC is the DataChecksum (XXH3, as the commit slot's data checksum
	// field says) of the Size data bytes (v3; 0 in v2).
	// Parsers do not read data; VerifyEntryData checks it (G1).
	CRC uint32
	// CopyID names this copy of the packing (v3; 0 in v2). A writer gives
	// every packing it writes a new one and a compaction carries it over, so
	// a re-pack never shares it with the copy it replaces even when key,
	// size and CRC are equal: the re-pack of a copy a foreign write changed
	// has the intact bytes' CRC, which is the one the index lists (G3).
	CopyID uint64
}

// End is the offset one past the entry's last data byte. The parsers reject
// entries for which it would overflow, so on a parsed entry it is exact.
func (e Entry) End() uint64 { return e.Offset + e.Size }
