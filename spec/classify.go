package spec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
)

// V2ScanLimit is how far back from the end of a file Recognize looks for
// the footer of an earlier v2 commit: 64 MiB of appended data.
const V2ScanLimit = 64 << 20

// v2FooterTail is the last eight bytes of a v2 footer: magic, version 2.
var v2FooterTail = binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, V2Magic), V2Version)

// Recognize tells whether a file is a cache file, also one DetectFormat
// rejects, so that a cache replaces only files it could have written: v3
// when either commit slot starts with the slot magic; v2 when the footer at
// the end carries V2Magic, or when a v2 footer (magic, version 2, an
// index_start before it and at least one entry) ends within the last scan
// bytes — what a writer that died while appending to a v2 file leaves,
// since v2's only commit point is a footer at the end of the file. A file
// shorter than the slot magic is v3 when it is a prefix of it.
// FormatUnknown with a nil error means the file is not a cache file
// (foreign); a read error is returned as such. The scan reads at most scan
// bytes, in 1 MiB steps from the end.
func Recognize(r io.ReaderAt, size, scan int64) (Format, error) {
	f, err := DetectFormat(r, size)
	if err == nil || !errors.Is(err, ErrCorrupt) {
		return f, err
	}
	if size > 0 && size < int64(len(V3SlotMagic)) {
		// A v3 file cut inside its first slot magic.
		b := make([]byte, size)
		if err := readFull(r, 0, b, "magic"); err != nil {
			return FormatUnknown, err
		}
		if strings.HasPrefix(V3SlotMagic, string(b)) {
			return FormatV3, nil
		}
	}
	const step = 1 << 20
	buf := make([]byte, min(step+V2FooterSize, max(size, 0)))
	lo := max(0, size-scan)
	for end := size; end > lo; {
		start := max(lo, end-step)
		n := min(end+V2FooterSize, size) - start // overlap: a footer across steps
		b := buf[:n]
		if err := readFull(r, start, b, "footer"); err != nil {
			return FormatUnknown, err
		}
		for i := len(b); ; {
			i = bytes.LastIndex(b[:i], v2FooterTail)
			if i < 0 {
				break
			}
			foot := start + int64(i) - 12 // the footer's first byte
			if foot >= 0 && v2FooterPlausible(r, foot) {
				return FormatV2, nil
			}
		}
		end = start
	}
	return FormatUnknown, nil
}

// v2FooterPlausible reports whether the footer at off names an index that
// starts before it and holds at least one entry.
func v2FooterPlausible(r io.ReaderAt, off int64) bool {
	var b [V2FooterSize]byte
	if readFull(r, off, b[:], "footer") != nil {
		return false
	}
	f := DecodeV2Footer(b)
	return f.Count > 0 && f.IndexStart < uint64(off) && uint64(off)-f.IndexStart >= V2EntryFixedSize+1
}
