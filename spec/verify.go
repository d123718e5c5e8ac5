package spec

import "io"

// verifyChunk bounds the buffer VerifyEntryData reads through, so checking a
// multi-megabyte weight does not allocate its size.
const verifyChunk = 64 << 10

// VerifyEntryData checks e's data bytes in r against e.CRC (v3: the
// DataChecksum the commit slot names) and returns a *FormatError wrapping
// ErrChecksum on mismatch. This is the G1 check for data corrupted after its
// commit; the cache decides when to run it (policy in docs/format.md). v2
// entries carry no checksum and cannot be verified.
func VerifyEntryData(r io.ReaderAt, e Entry) error {
	buf := make([]byte, min(e.Size, verifyChunk))
	h := NewDataHasher()
	for done := uint64(0); done < e.Size; {
		n := min(e.Size-done, uint64(len(buf)))
		if err := readFull(r, int64(e.Offset+done), buf[:n], "data"); err != nil {
			return err
		}
		h.Write(buf[:n])
		done += n
	}
	if sum := h.Sum(); sum != e.CRC {
		return ferr(int64(e.Offset), "checksum", uint64(sum), ErrChecksum)
	}
	return nil
}
