package spec_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/spec"
	"github.com/xpwc/xpwc/spec/spectest"
)

// checkPartition: ranges in order, contiguous, covering the file.
func checkPartition(t *testing.T, rs []spec.Range, size int64) map[spec.RangeKind]int64 {
	t.Helper()
	pos := int64(0)
	sum := map[spec.RangeKind]int64{}
	for i, r := range rs {
		require.Equal(t, pos, r.Off, "range %d %+v leaves a gap or overlaps", i, r)
		require.Positive(t, r.Len, "range %d", i)
		pos += r.Len
		sum[r.Kind] += r.Len
	}
	require.Equal(t, size, pos, "ranges sum to the file size")
	return sum
}

// TestByteMap: the ranges of v2 and v3 files (one and two saves) partition
// the file, live data sums to LiveBytes, and dead plus padding is the
// garbage the parsers report.
func TestByteMap(t *testing.T) {
	ws := spectest.Weights(3, 5000, 1)
	v2, _ := spectest.BuildV2(4096, ws)
	pv2, err := spec.ParseV2(bytes.NewReader(v2), int64(len(v2)))
	require.NoError(t, err)
	sum := checkPartition(t, spec.MapV2(pv2), pv2.Size)
	require.Equal(t, int64(pv2.LiveBytes), sum[spec.RangeData])
	require.Equal(t, int64(pv2.GarbageBytes), sum[spec.RangeDead]+sum[spec.RangePadding])
	require.Equal(t, int64(spec.V2FooterSize), sum[spec.RangeFooter])
	// Two 5000-byte entries padded to two pages; the last one's gap to the
	// index is dead, since a rewrite puts a v2 index right after the data.
	require.Equal(t, int64(2*(8192-5000)), sum[spec.RangePadding])
	require.Equal(t, int64(8192-5000), spec.Garbage(spec.MapV2(pv2)))

	b := spectest.NewV3(4096)
	b.Save(ws[:2])
	b.Save(spectest.Weights(3, 700, 2)) // replaces two, adds one: stale data and an old index are dead
	pv3, err := spec.ParseV3(bytes.NewReader(b.File), int64(len(b.File)))
	require.NoError(t, err)
	rs := spec.MapV3(pv3)
	sum = checkPartition(t, rs, pv3.Size)
	require.Equal(t, int64(pv3.LiveBytes), sum[spec.RangeData])
	require.Equal(t, int64(pv3.GarbageBytes), sum[spec.RangeDead]+sum[spec.RangePadding])
	require.Equal(t, int64(pv3.Commit.IndexLen), sum[spec.RangeIndex])
	require.Positive(t, sum[spec.RangeDead], "the first save's data and index are dead")
	require.Equal(t, spec.RangeSlot, rs[0].Kind)
}

// TestExplainDead: the dead ranges of a byte map are split around the index
// blocks of earlier saves (whole: superseded; cut short: torn), the map
// still partitions the file, and the garbage stays the same.
func TestExplainDead(t *testing.T) {
	b := spectest.NewV3(4096)
	b.Save(spectest.Weights(2, 5000, 1))
	b.Save(spectest.Weights(3, 700, 2))
	pv3, err := spec.ParseV3(bytes.NewReader(b.File), int64(len(b.File)))
	require.NoError(t, err)
	plain := spec.MapV3(pv3)
	rs, err := spec.ExplainDead(plain, bytes.NewReader(b.File), spec.FormatV3)
	require.NoError(t, err)
	checkPartition(t, rs, pv3.Size)
	require.Equal(t, spec.Garbage(plain), spec.Garbage(rs))
	var old *spec.Range
	for i := range rs {
		if rs[i].Name == "superseded index, 2 entries" {
			old = &rs[i]
		}
	}
	require.NotNil(t, old, "the first save's index block is named: %v", rs)
	require.Equal(t, spec.RangeDead, old.Kind)
	require.Equal(t, spec.V3IndexMagic, string(b.File[old.Off:old.Off+8]))

	// The same block with a count past what it holds: torn.
	torn := append([]byte(nil), b.File...)
	binary.LittleEndian.PutUint64(torn[old.Off+8:], 1000)
	rs, err = spec.ExplainDead(plain, bytes.NewReader(torn), spec.FormatV3)
	require.NoError(t, err)
	checkPartition(t, rs, pv3.Size)
	names := map[string]bool{}
	for _, r := range rs {
		names[r.Name] = true
	}
	require.True(t, names["torn index"], "%v", rs)
	require.False(t, names["superseded index, 2 entries"])
}

// TestExplainDeadV2: in a v2 file's dead bytes, a footer (magic, version 2)
// whose index_start lies before it names the entry records between them
// and itself; a footer pointing outside the dead range is named alone; the
// rest stays plain dead, and the pieces still cover the range exactly.
func TestExplainDeadV2(t *testing.T) {
	const base = 4096 + 3 // odd, as a dead range after unpadded data is
	var dead []byte
	dead = append(dead, bytes.Repeat([]byte{0xAB}, 100)...) // stale data
	idx := len(dead)
	dead = append(dead, etEntry("a", 0, 10, 1)...)
	dead = append(dead, etEntry("bb", 4096, 10, 1)...)
	foot := len(dead)
	dead = append(dead, etFooter(uint64(base+idx), 2, spec.V2Magic, 2)...)
	dead = append(dead, 1, 2, 3) // bytes after the trailer
	stray := len(dead)
	dead = append(dead, etFooter(1<<40, 7, spec.V2Magic, 2)...) // index_start outside
	dead = append(dead, 9, 9)

	file := append(make([]byte, base), dead...)
	in := []spec.Range{{Off: base, Len: int64(len(dead)), Kind: spec.RangeDead}}
	rs, err := spec.ExplainDead(in, bytes.NewReader(file), spec.FormatV2)
	require.NoError(t, err)
	want := []spec.Range{
		{Off: base, Len: int64(idx), Kind: spec.RangeDead},
		{Off: base + int64(idx), Len: int64(foot - idx), Kind: spec.RangeDead, Name: "old v2 index, 2 entries"},
		{Off: base + int64(foot), Len: spec.V2FooterSize, Kind: spec.RangeDead, Name: "old v2 footer"},
		{Off: base + int64(foot) + spec.V2FooterSize, Len: 3, Kind: spec.RangeDead},
		{Off: base + int64(stray), Len: spec.V2FooterSize, Kind: spec.RangeDead, Name: "old v2 footer"},
		{Off: base + int64(stray) + spec.V2FooterSize, Len: 2, Kind: spec.RangeDead},
	}
	require.Equal(t, want, rs)

	// A range longer than what ExplainDead reads keeps no name, and costs
	// no read.
	big := []spec.Range{{Off: 0, Len: spec.MaxExplainBytes + 1, Kind: spec.RangeDead}}
	rs, err = spec.ExplainDead(big, failingReader{}, spec.FormatV2)
	require.NoError(t, err)
	require.Equal(t, big, rs)
	// Ranges that are not dead are passed through unread; a dead one that
	// cannot be read is an error.
	live := []spec.Range{{Off: 0, Len: 10, Kind: spec.RangeData}}
	rs, err = spec.ExplainDead(live, failingReader{}, spec.FormatV3)
	require.NoError(t, err)
	require.Equal(t, live, rs)
	_, err = spec.ExplainDead(in, failingReader{}, spec.FormatV2)
	require.ErrorIs(t, err, errDisk)
}

// TestExplainDeadV3Placement: a superseded v3 index block is found only at
// the 8-aligned file offsets writers use, whatever the dead range's start,
// and its extent is its header and entries exactly.
func TestExplainDeadV3Placement(t *testing.T) {
	block := rawV3Index(2, rawV3Entry("w\x00", 4096, 10), rawV3Entry("v\x00b", 8192, 10))
	const base = 8192 + 5
	pad := 3 // base+pad is 8-aligned
	dead := append(bytes.Repeat([]byte{0xEE}, pad), block...)
	dead = append(dead, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 1)
	// The same magic at a misaligned offset is not a block.
	dead = append(dead, []byte(spec.V3IndexMagic)...)
	file := append(make([]byte, base), dead...)
	in := []spec.Range{{Off: base, Len: int64(len(dead)), Kind: spec.RangeDead}}
	rs, err := spec.ExplainDead(in, bytes.NewReader(file), spec.FormatV3)
	require.NoError(t, err)
	want := []spec.Range{
		{Off: base, Len: int64(pad), Kind: spec.RangeDead},
		{Off: base + int64(pad), Len: int64(len(block)), Kind: spec.RangeDead, Name: "superseded index, 2 entries"},
		{Off: base + int64(pad+len(block)), Len: int64(len(dead) - pad - len(block)), Kind: spec.RangeDead},
	}
	require.Equal(t, want, rs)
}

var errDisk = errors.New("disk on fire")

type failingReader struct{}

func (failingReader) ReadAt([]byte, int64) (int, error) { return 0, errDisk }

// TestByteMapExact: hand-laid files mapped range by range. Padding runs to
// the next page boundary after an entry (one byte after a page-minus-one
// entry, none after an entry ending on a boundary) and never into the next
// range; before an index it runs only to the index's alignment (none in
// v2, 8 bytes in v3), so a gap before the index is dead.
func TestByteMapExact(t *testing.T) {
	const page = 4096
	data := func(off, n int64, name string) spec.Range {
		return spec.Range{Off: off, Len: n, Kind: spec.RangeData, Name: name}
	}
	pad := func(off, n int64, name string) spec.Range {
		return spec.Range{Off: off, Len: n, Kind: spec.RangePadding, Name: name}
	}
	dead := func(off, n int64) spec.Range { return spec.Range{Off: off, Len: n, Kind: spec.RangeDead} }

	// v2: five pages of data, then three 25-byte entries and the footer.
	v2 := make([]byte, 5*page)
	v2 = append(v2, etEntry("a", 0, page-1, 1)...)
	v2 = append(v2, etEntry("b", 2*page, page+1, 1)...)
	v2 = append(v2, etEntry("c", 4*page, 1, 1)...)
	v2 = append(v2, etFooter(5*page, 3, spec.V2Magic, 2)...)
	f2, err := parseV2(v2)
	require.NoError(t, err)
	require.Equal(t, []spec.Range{
		data(0, page-1, "a"), pad(page-1, 1, "a"), dead(page, page),
		data(2*page, page+1, "b"), pad(3*page+1, page-1, "b"),
		data(4*page, 1, "c"), dead(4*page+1, page-1),
		{Off: 5 * page, Len: 75, Kind: spec.RangeIndex},
		{Off: 5*page + 75, Len: 20, Kind: spec.RangeFooter},
	}, spec.MapV2(f2))

	// v3: the header page, a at page 1, b (8 bytes) at page 3, then dead
	// bytes up to the index at 3 pages + 512.
	idx := rawV3Index(2, rawV3Entry("a\x00", page, page-1), rawV3Entry("b\x00", 3*page, 8))
	v3 := spec.EncodeV3Header(page)
	v3 = append(v3, make([]byte, 3*page+512-len(v3))...)
	v3 = append(v3, idx...)
	copy(v3[512:], rawSlot(4, page, 1, 3*page+512, uint64(len(idx)), spec.CRC32C(idx)))
	f3, err := parseV3(v3)
	require.NoError(t, err)
	require.Equal(t, []spec.Range{
		{Off: 0, Len: 512, Kind: spec.RangeSlot, Name: "slot 0"},
		{Off: 512, Len: 512, Kind: spec.RangeSlot, Name: "slot 1"},
		{Off: 1024, Len: page - 1024, Kind: spec.RangeHeader},
		data(page, page-1, "a"), pad(2*page-1, 1, "a"), dead(2*page, page),
		data(3*page, 8, "b"), dead(3*page+8, 504),
		{Off: 3*page + 512, Len: int64(len(idx)), Kind: spec.RangeIndex},
	}, spec.MapV3(f3))

	// b ending 3 bytes short of an 8-byte boundary: those 3 are padding.
	idx = rawV3Index(1, rawV3Entry("b\x00", page, 13))
	v3 = spec.EncodeV3Header(page)
	v3 = append(v3, make([]byte, page+512-len(v3))...)
	v3 = append(v3, idx...)
	copy(v3[512:], rawSlot(4, page, 1, page+512, uint64(len(idx)), spec.CRC32C(idx)))
	f3, err = parseV3(v3)
	require.NoError(t, err)
	require.Equal(t, []spec.Range{
		data(page, 13, "b"), pad(page+13, 3, "b"), dead(page+16, 512-16),
		{Off: page + 512, Len: int64(len(idx)), Kind: spec.RangeIndex},
	}, spec.MapV3(f3)[3:])

	// Data after the index, the last range of the file: padded to the end
	// of the file, which comes before the next page boundary.
	idx = rawV3Index(1, rawV3Entry("c\x00", 2*page, 10))
	v3 = spec.EncodeV3Header(page)
	v3 = append(v3, idx...)
	v3 = append(v3, make([]byte, 2*page+100-len(v3))...)
	copy(v3[512:], rawSlot(4, page, 1, page, uint64(len(idx)), spec.CRC32C(idx)))
	f3, err = parseV3(v3)
	require.NoError(t, err)
	require.Equal(t, []spec.Range{
		{Off: page, Len: int64(len(idx)), Kind: spec.RangeIndex}, dead(page+int64(len(idx)), page-int64(len(idx))),
		data(2*page, 10, "c"), pad(2*page+10, 90, "c"),
	}, spec.MapV3(f3)[3:])
}

// TestExplainDeadV3Blocks: superseded index blocks are named at their exact
// extent: one whose entry has the longest name a v3 index allows, and right
// after it an empty block (count 0, 16 bytes) that ends exactly where the
// dead range ends; with one byte of it cut off, too short for a block
// header, those bytes stay plain dead. A read
// that returns the whole range with io.EOF is a whole read.
func TestExplainDeadV3Blocks(t *testing.T) {
	const base = 4096
	longest := strings.Repeat("w", spec.MaxNameLen) + "\x00" + strings.Repeat("b", spec.MaxNameLen)
	a := rawV3Index(1, rawV3Entry(longest, 8192, 1))
	b := rawV3Index(0)
	file := make([]byte, base)
	file = append(file, a...)
	file = append(file, b...)
	dead := []spec.Range{{Off: base, Len: int64(len(a) + len(b)), Kind: spec.RangeDead}}
	for _, r := range []io.ReaderAt{bytes.NewReader(file), eofReader{file}} {
		rs, err := spec.ExplainDead(dead, r, spec.FormatV3)
		require.NoError(t, err)
		require.Equal(t, []spec.Range{
			{Off: base, Len: int64(len(a)), Kind: spec.RangeDead, Name: "superseded index, 1 entries"},
			{Off: base + int64(len(a)), Len: 16, Kind: spec.RangeDead, Name: "superseded index, 0 entries"},
		}, rs)
	}
	dead[0].Len--
	rs, err := spec.ExplainDead(dead, bytes.NewReader(file), spec.FormatV3)
	require.NoError(t, err)
	require.Equal(t, []spec.Range{
		{Off: base, Len: int64(len(a)), Kind: spec.RangeDead, Name: "superseded index, 1 entries"},
		{Off: base + int64(len(a)), Len: 15, Kind: spec.RangeDead},
	}, rs)
}

// eofReader returns io.EOF with every read that reaches the end of b, even
// a whole one, as io.ReaderAt allows.
type eofReader struct{ b []byte }

func (r eofReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := bytes.NewReader(r.b).ReadAt(p, off)
	if err == nil && off+int64(n) == int64(len(r.b)) {
		err = io.EOF
	}
	return n, err
}

// TestExplainDeadV2Adjacent: a footer that starts exactly where the
// previous trailer ends is named (an empty index before it, so only the
// footer); footer bytes that begin inside the previous footer are not.
func TestExplainDeadV2Adjacent(t *testing.T) {
	const base = 8192
	trailer := append(etEntry("a", 0, 1, 1), etFooter(base, 1, spec.V2Magic, 2)...)
	file := append(make([]byte, base), trailer...)
	file = append(file, etFooter(base+45, 1, spec.V2Magic, 2)...)
	dead := []spec.Range{{Off: base, Len: 65, Kind: spec.RangeDead}}
	rs, err := spec.ExplainDead(dead, bytes.NewReader(file), spec.FormatV2)
	require.NoError(t, err)
	require.Equal(t, []spec.Range{
		{Off: base, Len: 25, Kind: spec.RangeDead, Name: "old v2 index, 1 entries"},
		{Off: base + 25, Len: 20, Kind: spec.RangeDead, Name: "old v2 footer"},
		{Off: base + 45, Len: 20, Kind: spec.RangeDead, Name: "old v2 footer"},
	}, rs)

	// The footer's last eight bytes again right after it: a "footer" that
	// would start 4 bytes before the previous one ends.
	file = append(append(make([]byte, base), trailer...), trailer[len(trailer)-8:]...)
	dead[0].Len = 53
	rs, err = spec.ExplainDead(dead, bytes.NewReader(file), spec.FormatV2)
	require.NoError(t, err)
	require.Equal(t, []spec.Range{
		{Off: base, Len: 25, Kind: spec.RangeDead, Name: "old v2 index, 1 entries"},
		{Off: base + 25, Len: 20, Kind: spec.RangeDead, Name: "old v2 footer"},
		{Off: base + 45, Len: 8, Kind: spec.RangeDead},
	}, rs)
}

// TestExplainDeadV2Trailers: the v2 trailer scan at each of its bounds. A
// footer at the very start of a dead range is named; a second whole trailer
// right after a first one is named index and footer; an index_start that
// points into the previous trailer names only the footer; and a footer
// whose magic follows a false match immediately (the scan resumes right
// after each match) is still found.
func TestExplainDeadV2Trailers(t *testing.T) {
	const base = 8192
	dead := func(parts ...[]byte) ([]byte, []spec.Range) {
		file := make([]byte, base)
		for _, p := range parts {
			file = append(file, p...)
		}
		return file, []spec.Range{{Off: base, Len: int64(len(file) - base), Kind: spec.RangeDead}}
	}
	// A false match: index_start's high word is the magic and count is the
	// version, so magic and version also appear 8 bytes before the real ones.
	falseMatch := le.AppendUint32(nil, 7)
	falseMatch = append(falseMatch, etFooter(0, 0, spec.V2Magic, 2)[12:]...)
	falseMatch = append(falseMatch, etFooter(0, 0, spec.V2Magic, 2)[12:]...)
	cases := []struct {
		name  string
		parts [][]byte
		want  []spec.Range
	}{
		{"footer at the range's start", [][]byte{etFooter(0, 3, spec.V2Magic, 2)}, []spec.Range{
			{Off: base, Len: 20, Kind: spec.RangeDead, Name: "old v2 footer"},
		}},
		{"two whole trailers", [][]byte{
			etEntry("a", 0, 1, 1), etFooter(base, 1, spec.V2Magic, 2),
			etEntry("b", 0, 1, 1), etFooter(base+45, 1, spec.V2Magic, 2),
		}, []spec.Range{
			{Off: base, Len: 25, Kind: spec.RangeDead, Name: "old v2 index, 1 entries"},
			{Off: base + 25, Len: 20, Kind: spec.RangeDead, Name: "old v2 footer"},
			{Off: base + 45, Len: 25, Kind: spec.RangeDead, Name: "old v2 index, 1 entries"},
			{Off: base + 70, Len: 20, Kind: spec.RangeDead, Name: "old v2 footer"},
		}},
		{"index_start inside the previous footer", [][]byte{
			etEntry("a", 0, 1, 1), etFooter(base, 1, spec.V2Magic, 2),
			etEntry("b", 0, 1, 1), etFooter(base+30, 1, spec.V2Magic, 2),
		}, []spec.Range{
			{Off: base, Len: 25, Kind: spec.RangeDead, Name: "old v2 index, 1 entries"},
			{Off: base + 25, Len: 20, Kind: spec.RangeDead, Name: "old v2 footer"},
			{Off: base + 45, Len: 25, Kind: spec.RangeDead},
			{Off: base + 70, Len: 20, Kind: spec.RangeDead, Name: "old v2 footer"},
		}},
		{"magic right after a false match", [][]byte{falseMatch}, []spec.Range{
			{Off: base, Len: 20, Kind: spec.RangeDead, Name: "old v2 footer"},
		}},
	}
	for _, tc := range cases {
		file, d := dead(tc.parts...)
		rs, err := spec.ExplainDead(d, bytes.NewReader(file), spec.FormatV2)
		require.NoError(t, err, tc.name)
		require.Equal(t, tc.want, rs, tc.name)
	}
}

// TestSpaceSplitsPaddingFromGarbage: one save leaves no garbage, only
// padding, though a rewrite would free the gap before the index (Garbage);
// a second save that replaces entries leaves garbage.
func TestSpaceSplitsPaddingFromGarbage(t *testing.T) {
	ws := spectest.Weights(3, 5000, 1)
	v2, _ := spectest.BuildV2(4096, ws)
	pv2, err := spec.ParseV2(bytes.NewReader(v2), int64(len(v2)))
	require.NoError(t, err)
	g, p := spec.Space(spec.MapV2(pv2), spec.V2Alignment)
	require.Zero(t, g)
	require.Equal(t, int64(3*(8192-5000)), p, "every entry's page padding, the last one's gap included")
	require.Equal(t, int64(8192-5000), spec.Garbage(spec.MapV2(pv2)))

	b := spectest.NewV3(4096)
	b.Save(ws[:2])
	one, err := spec.ParseV3(bytes.NewReader(b.File), int64(len(b.File)))
	require.NoError(t, err)
	g, p = spec.Space(spec.MapV3(one), 4096)
	require.Zero(t, g)
	require.Positive(t, p)

	b.Save(spectest.Weights(3, 700, 2))
	two, err := spec.ParseV3(bytes.NewReader(b.File), int64(len(b.File)))
	require.NoError(t, err)
	rs, err := spec.ExplainDead(spec.MapV3(two), bytes.NewReader(b.File), spec.FormatV3)
	require.NoError(t, err)
	g, p = spec.Space(rs, 4096)
	require.GreaterOrEqual(t, g, int64(2*5000), "the replaced entries are garbage")
	sum := checkPartition(t, rs, two.Size)
	require.Equal(t, sum[spec.RangeDead]+sum[spec.RangePadding], g+p, "every unused byte is one or the other")
}

// TestSpaceMapShowsTheGapAsPadding: SpaceMap partitions the file like the
// map it is given, its dead and padding ranges sum to Space's garbage and
// padding, and the gap before an index appended on the next page is a
// padding range named after the entry before it, not dead.
func TestSpaceMapShowsTheGapAsPadding(t *testing.T) {
	ws := spectest.Weights(3, 5000, 1)
	v2, _ := spectest.BuildV2(4096, ws)
	pv2, err := spec.ParseV2(bytes.NewReader(v2), int64(len(v2)))
	require.NoError(t, err)
	b := spectest.NewV3(4096)
	b.Save(ws[:2])
	b.Save(spectest.Weights(3, 700, 2))
	two, err := spec.ParseV3(bytes.NewReader(b.File), int64(len(b.File)))
	require.NoError(t, err)
	rs3, err := spec.ExplainDead(spec.MapV3(two), bytes.NewReader(b.File), spec.FormatV3)
	require.NoError(t, err)
	for _, tc := range []struct {
		name  string
		rs    []spec.Range
		size  int64
		align int64
	}{{"v2", spec.MapV2(pv2), pv2.Size, spec.V2Alignment}, {"v3 two saves", rs3, two.Size, 4096}} {
		shown := spec.SpaceMap(tc.rs, tc.align)
		sum := checkPartition(t, shown, tc.size)
		g, p := spec.Space(tc.rs, tc.align)
		require.Equal(t, g, sum[spec.RangeDead], tc.name)
		require.Equal(t, p, sum[spec.RangePadding], tc.name)
		for i, r := range shown {
			if r.Kind == spec.RangePadding {
				require.Equal(t, spec.RangeData, shown[i-1].Kind, "%s: padding %+v follows its entry", tc.name, r)
				require.Equal(t, shown[i-1].Name, r.Name, tc.name)
			}
		}
	}
	// v2: the last entry is followed by the index on the next page, with
	// no padding range of its own in MapV2.
	shown := spec.SpaceMap(spec.MapV2(pv2), spec.V2Alignment)
	last := shown[len(shown)-3]
	require.Equal(t, spec.Range{Off: 16384 + 5000, Len: 8192 - 5000, Kind: spec.RangePadding, Name: ws[2].Key.Weight}, last)
}
