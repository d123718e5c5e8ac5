package spec_test

import (
	"bytes"
	"encoding/binary"
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
