package spec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
)

// MaxExplainBytes bounds how many dead bytes ExplainDead reads: a file's
// dead ranges can be gigabytes of stale data, and naming them is a courtesy
// of inspect, not worth reading a forged file's holes for.
const MaxExplainBytes = 256 << 20

// ExplainDead names what the dead ranges of a byte map hold where their
// bytes show it, splitting a range around what it finds: in v3, index
// blocks of earlier saves ("superseded index, N entries") and blocks cut
// short by a crash ("torn index"); in v2, the trailers earlier saves left
// ("old v2 index, N entries", "old v2 footer"). The kinds stay RangeDead, so
// Garbage is unchanged. At most MaxExplainBytes of dead ranges are read;
// larger ones keep no name. A read error is returned as is.
func ExplainDead(rs []Range, r io.ReaderAt, format Format) ([]Range, error) {
	out := make([]Range, 0, len(rs))
	budget := int64(MaxExplainBytes)
	for _, d := range rs {
		if d.Kind != RangeDead || d.Len > budget {
			out = append(out, d)
			continue
		}
		budget -= d.Len
		b := make([]byte, d.Len)
		// A whole read may come with io.EOF at the end of the input, as
		// io.ReaderAt allows; only a short one is an error.
		if n, err := r.ReadAt(b, d.Off); n < len(b) {
			return nil, fmt.Errorf("spec: read dead range at %d: %w", d.Off, err)
		}
		var found []Range
		if format == FormatV2 {
			found = oldV2Trailers(b, d.Off)
		} else {
			found = oldV3Indexes(b, d.Off)
		}
		out = append(out, splitDead(d, found)...)
	}
	return out, nil
}

// splitDead cuts d around found (ordered, disjoint, inside d).
func splitDead(d Range, found []Range) []Range {
	var out []Range
	pos := d.Off
	for _, f := range found {
		if f.Off > pos {
			out = append(out, Range{Off: pos, Len: f.Off - pos, Kind: RangeDead})
		}
		out = append(out, f)
		pos = f.Off + f.Len
	}
	if end := d.Off + d.Len; pos < end {
		out = append(out, Range{Off: pos, Len: end - pos, Kind: RangeDead})
	}
	return out
}

// oldV3Indexes finds v3 index blocks in b (file offset base) at 8-aligned
// offsets, where writers put them: whole blocks whose entries fit, and a
// block whose entries run past b, torn.
func oldV3Indexes(b []byte, base int64) []Range {
	le := binary.LittleEndian
	var out []Range
	for i := int((8 - base%8) % 8); i+V3IndexHeaderSize <= len(b); i += 8 {
		if string(b[i:i+8]) != V3IndexMagic {
			continue
		}
		count := le.Uint64(b[i+8:])
		q, n := i+V3IndexHeaderSize, uint64(0)
		for ; n < count && q+V3EntryFixedSize <= len(b); n++ {
			nameLen := int(le.Uint32(b[q+48:]))
			if nameLen > 2*MaxNameLen+1 {
				break
			}
			q += v3EntrySize(nameLen)
		}
		if n == count && q <= len(b) {
			out = append(out, Range{Off: base + int64(i), Len: int64(q - i), Kind: RangeDead,
				Name: fmt.Sprintf("superseded index, %d entries", count)})
			i = q - 8 // blocks are whole multiples of 8: q is 8-aligned
			continue
		}
		out = append(out, Range{Off: base + int64(i), Len: int64(len(b) - i), Kind: RangeDead, Name: "torn index"})
		break
	}
	return out
}

// oldV2Trailers finds v2 trailers in b (file offset base): a footer (magic
// and version 2) whose index_start lies inside b before it, and the entry
// records between them.
func oldV2Trailers(b []byte, base int64) []Range {
	le := binary.LittleEndian
	var tail [8]byte
	le.PutUint32(tail[:], V2Magic)
	le.PutUint32(tail[4:], V2Version)
	var out []Range
	from := 0
	for {
		k := bytes.Index(b[from:], tail[:])
		if k < 0 {
			return out
		}
		m := from + k // magic at footer offset 12
		from = m + 8
		foot := m - 12
		if foot < 0 || (len(out) > 0 && base+int64(foot) < out[len(out)-1].Off+out[len(out)-1].Len) {
			continue
		}
		start := int64(le.Uint64(b[foot:])) - base
		count := le.Uint32(b[foot+8:])
		if start < 0 || start > int64(foot) || (len(out) > 0 && base+start < out[len(out)-1].Off+out[len(out)-1].Len) {
			out = append(out, Range{Off: base + int64(foot), Len: V2FooterSize, Kind: RangeDead, Name: "old v2 footer"})
			continue
		}
		if int64(foot) > start {
			out = append(out, Range{Off: base + start, Len: int64(foot) - start, Kind: RangeDead,
				Name: fmt.Sprintf("old v2 index, %d entries", count)})
		}
		out = append(out, Range{Off: base + int64(foot), Len: V2FooterSize, Kind: RangeDead, Name: "old v2 footer"})
	}
}
