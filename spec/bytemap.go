package spec

import "sort"

// RangeKind says what a byte range of a cache file holds.
type RangeKind string

const (
	// RangeSlot is a v3 commit slot; RangeHeader the rest of the v3 header
	// page (zeros).
	RangeSlot   RangeKind = "slot"
	RangeHeader RangeKind = "header"
	// RangeData is a live entry's bytes, RangePadding the bytes after it up
	// to the next page boundary (or the next range), which alignment
	// leaves unused.
	RangeData    RangeKind = "data"
	RangePadding RangeKind = "padding"
	// RangeIndex is the committed index: v3's index block; v2's entry
	// records. RangeFooter is v2's footer.
	RangeIndex  RangeKind = "index"
	RangeFooter RangeKind = "footer"
	// RangeDead is everything else: data of stale or never committed
	// packings, superseded index blocks and v2 trailers, torn appends.
	RangeDead RangeKind = "dead"
)

// Range is one byte range of a cache file: [Off, Off+Len), what it holds,
// and for data and padding the entry's name.
type Range struct {
	Off, Len int64
	Kind     RangeKind
	Name     string
}

// MapV3 lays out a parsed v3 file: its ranges in offset order, contiguous,
// covering [0, Size) exactly.
func MapV3(f *V3File) []Range {
	owned := []Range{
		{Off: 0, Len: V3SlotSize, Kind: RangeSlot, Name: "slot 0"},
		{Off: V3SlotSize, Len: V3SlotSize, Kind: RangeSlot, Name: "slot 1"},
		{Off: 2 * V3SlotSize, Len: int64(f.PageSize) - 2*V3SlotSize, Kind: RangeHeader},
		{Off: int64(f.Commit.IndexOff), Len: int64(f.Commit.IndexLen), Kind: RangeIndex},
	}
	return fill(owned, f.Entries, int64(f.PageSize), 8, f.Size, func(e Entry) string { return e.Key.V2Name() })
}

// MapV2 lays out a parsed v2 file: its ranges in offset order, contiguous,
// covering [0, Size) exactly.
func MapV2(f *V2File) []Range {
	foot := f.Size - V2FooterSize
	owned := []Range{
		{Off: int64(f.IndexStart), Len: foot - int64(f.IndexStart), Kind: RangeIndex},
		{Off: foot, Len: V2FooterSize, Kind: RangeFooter},
	}
	return fill(owned, f.Entries, V2Alignment, 1, f.Size, func(e Entry) string { return e.Key.Weight })
}

// fill adds the entries' data and padding to the owned ranges and the dead
// ranges between them. Parsed files have disjoint, in-bounds ranges (the
// parsers check it), so sorting them gives a partition of the file.
//
// Padding is what a rewrite keeps: up to the next page boundary after an
// entry, since the next entry starts on one; but an entry followed by the
// index is followed, in a rewrite, by the index at the next indexAlign
// boundary (8 in v3, none in v2), so only that much of the gap is padding
// and the rest is dead. Dead bytes are the garbage (Garbage).
func fill(owned []Range, entries []Entry, align, indexAlign, size int64, name func(Entry) string) []Range {
	for _, e := range entries {
		if e.Size > 0 {
			owned = append(owned, Range{Off: int64(e.Offset), Len: int64(e.Size), Kind: RangeData, Name: name(e)})
		}
	}
	sort.Slice(owned, func(i, j int) bool { return owned[i].Off < owned[j].Off })
	var out []Range
	pos := int64(0)
	for i, r := range owned {
		if r.Len <= 0 {
			continue
		}
		if r.Off > pos {
			out = append(out, Range{Off: pos, Len: r.Off - pos, Kind: RangeDead})
		}
		out = append(out, r)
		pos = r.Off + r.Len
		if r.Kind == RangeData {
			// Alignment padding: to the next page boundary, never into
			// the next range.
			end := min((pos+align-1)/align*align, size)
			if i+1 < len(owned) {
				next := owned[i+1]
				if next.Kind == RangeIndex {
					end = min(end, (pos+indexAlign-1)/indexAlign*indexAlign)
				}
				end = min(end, next.Off)
			}
			if end > pos {
				out = append(out, Range{Off: pos, Len: end - pos, Kind: RangePadding, Name: r.Name})
				pos = end
			}
		}
	}
	if pos < size {
		out = append(out, Range{Off: pos, Len: size - pos, Kind: RangeDead})
	}
	return out
}

// Garbage is the bytes of a file a rewrite would not keep: its dead
// ranges. It is the one definition of garbage: simrun inspect and diff
// report it, and impl/cache counts its Stats.GarbageBytes and decides
// compaction by the same rule of the file's layout.
func Garbage(rs []Range) int64 {
	var n int64
	for _, r := range rs {
		if r.Kind == RangeDead {
			n += r.Len
		}
	}
	return n
}

// Space splits the bytes of a byte map that hold no live data into garbage
// and padding, for a reader: padding is what alignment alone left unused,
// garbage what was dropped. Padding is the padding ranges of live entries
// and, where a dead range no earlier save's index or trailer is found in
// (ExplainDead names those) directly follows a live entry, its bytes up to
// the next align boundary: an appended file starts its index on a page, so
// this gap never held an entry. Garbage is every other dead byte: stale and
// never committed packings, superseded indexes and trailers, torn appends.
//
// Garbage (what a rewrite would not keep, which decides compaction) counts
// that gap too, since a rewrite puts the index right after the entry:
// Garbage(rs) = garbage + the gap, and the gap is at most align-1 bytes
// after each live entry.
func Space(rs []Range, align int64) (garbage, padding int64) {
	for _, r := range SpaceMap(rs, align) {
		switch r.Kind {
		case RangePadding:
			padding += r.Len
		case RangeDead:
			garbage += r.Len
		}
	}
	return garbage, padding
}

// SpaceMap is the byte map as Space reads it, for a reader to see: the gap
// Space counts as padding (an unnamed dead range directly after a live
// entry, up to the next align boundary) is a padding range named after
// that entry, merged with the entry's own padding range, and the rest of
// the dead range stays dead. Its dead ranges sum to Space's garbage, its
// padding ranges to Space's padding. Garbage must be given the map
// SpaceMap was given, not its result: a rewrite frees that gap.
func SpaceMap(rs []Range, align int64) []Range {
	out := make([]Range, 0, len(rs))
	afterLive, name := false, ""
	for _, r := range rs {
		if r.Kind == RangeDead && afterLive && r.Name == "" && align > 0 {
			if gap := min((r.Off+align-1)/align*align-r.Off, r.Len); gap > 0 {
				if last := &out[len(out)-1]; last.Kind == RangePadding && last.Off+last.Len == r.Off {
					last.Len += gap
				} else {
					out = append(out, Range{Off: r.Off, Len: gap, Kind: RangePadding, Name: name})
				}
				r.Off, r.Len = r.Off+gap, r.Len-gap
			}
			if r.Len == 0 {
				afterLive = false
				continue
			}
		}
		out = append(out, r)
		afterLive = r.Kind == RangeData || (r.Kind == RangePadding && afterLive)
		if r.Kind == RangeData {
			name = r.Name
		}
	}
	return out
}
