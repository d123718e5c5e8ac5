package spec

import (
	"encoding/binary"
	"io"
)

// Format names a cache file format.
type Format int

const (
	FormatUnknown Format = iota
	FormatV2
	FormatV3
)

func (f Format) String() string {
	switch f {
	case FormatV2:
		return "v2"
	case FormatV3:
		return "v3"
	}
	return "unknown"
}

// DetectFormat tells which parser a file is for, by magic only: v3 if either
// commit slot starts with the slot magic (one may be torn), else v2 if the
// footer carries V2Magic. It checks nothing else; the parser does. The v3
// test comes first because a v2 file ends in caller data only at its footer,
// while a v3 file's footer position holds arbitrary bytes. An unknown file
// comes with ErrTooSmall or ErrBadMagic.
func DetectFormat(r io.ReaderAt, size int64) (Format, error) {
	// Either slot's magic is enough: power loss may have torn the slot
	// being written, and the other one still identifies the file.
	var m [8]byte
	for pos := int64(0); pos < 2; pos++ {
		off := pos * V3SlotSize
		if size < off+int64(len(m)) {
			break
		}
		if err := readFull(r, off, m[:], "magic"); err != nil {
			return FormatUnknown, err
		}
		if string(m[:]) == V3SlotMagic {
			return FormatV3, nil
		}
	}
	if size < V2FooterSize {
		return FormatUnknown, ferr(0, "file_size", uint64(max(size, 0)), ErrTooSmall)
	}
	var mb [4]byte
	if err := readFull(r, size-8, mb[:], "magic"); err != nil {
		return FormatUnknown, err
	}
	if v := binary.LittleEndian.Uint32(mb[:]); v != V2Magic {
		return FormatUnknown, ferr(size-8, "magic", uint64(v), ErrBadMagic)
	}
	return FormatV2, nil
}
