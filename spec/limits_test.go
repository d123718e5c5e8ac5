package spec_test

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/spec"
	"github.com/xpwc/xpwc/spec/spectest"
)

// TestTooManyEntriesOn32Bit: an index that really holds more entries than a
// 32-bit process can allocate is a typed error, not a makeslice panic (G7).
// The index exists only as a sparse file, so the test needs little memory;
// run it with GOARCH=386 (on 64-bit the limit is out of reach).
func TestTooManyEntriesOn32Bit(t *testing.T) {
	if strconv.IntSize != 32 {
		t.Skip("MaxEntries is beyond any file on 64-bit platforms; run with GOARCH=386")
	}
	count := uint64(spec.MaxEntries) + 1
	indexLen := int64(count) * spec.V2EntryFixedSize
	// Offsets 0 and size 0 with empty names: the parser must refuse before
	// it decodes any of them.
	footer := spec.EncodeV2Index(0, nil)[:spec.V2FooterSize]
	le.PutUint32(footer[8:], uint32(count))
	f := &spectest.SparseFile{Size: indexLen + spec.V2FooterSize, Parts: []spectest.Part{{Off: indexLen, Data: footer}}}
	_, err := spec.ParseV2(f, f.Size)
	require.ErrorIs(t, err, spec.ErrTooManyEntries)
}
