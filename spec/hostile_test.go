package spec_test

import (
	"bytes"
	"errors"
	"io"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/spec"
	"github.com/xpwc/xpwc/spec/spectest"
)

// TestHostileSparseFiles: a forged 64 GiB file is rejected with a typed
// format error in well under a second, allocating under 64 MiB (G7: cost
// bounded by what is decoded, not by what is declared). The default index
// limit rejects these from the declared length alone; with the limit lifted
// the decoders must stop at the first inconsistency by themselves.
func TestHostileSparseFiles(t *testing.T) {
	parsers := []struct {
		name string
		p    spec.Parser
	}{{"default limit", spec.Parser{}}, {"no limit", spec.Parser{MaxIndexBytes: math.MaxUint64}}}
	for _, tc := range spectest.HostileFiles() {
		for _, p := range parsers {
			t.Run(tc.Name+"/"+p.name, func(t *testing.T) {
				var err error
				start := time.Now()
				n := allocated(func() { err = parseAny(p.p, tc.File, tc.File.Size) })
				took := time.Since(start)
				require.ErrorIs(t, err, spec.ErrCorrupt)
				var fe *spec.FormatError
				require.True(t, errors.As(err, &fe), "%v is not a *FormatError", err)
				assert.Less(t, n, uint64(64<<20), "allocated %d bytes", n)
				assert.Less(t, took, time.Second, "took %v", took)
				t.Logf("%v: %d bytes allocated in %v", err, n, took)
			})
		}
	}
}

// parseAny parses a file in the format DetectFormat finds, as the cache and
// simrun inspect do.
func parseAny(p spec.Parser, r io.ReaderAt, size int64) error {
	f, err := spec.DetectFormat(r, size)
	if err != nil {
		return err
	}
	if f == spec.FormatV2 {
		_, err = p.ParseV2(r, size)
	} else {
		_, err = p.ParseV3(r, size)
	}
	return err
}

// TestMaxIndexBytes: an index longer than the parser's limit is rejected
// from its declared length alone, at the field that declares it, and a
// limit of exactly the index's length accepts the file.
func TestMaxIndexBytes(t *testing.T) {
	ws := []spectest.Weight{{Key: spec.Key{Weight: "w", Bias: "b", Seed: 1}, Data: []byte("packed")}}
	v2, _ := spectest.BuildV2(4096, ws)
	v2Index := uint64(len(v2) - 4096) // one page of data, then index and footer
	_, err := spec.Parser{MaxIndexBytes: v2Index - 1}.ParseV2(bytes.NewReader(v2), int64(len(v2)))
	var fe *spec.FormatError
	require.ErrorAs(t, err, &fe)
	assert.ErrorIs(t, err, spec.ErrIndexTooLarge)
	assert.Equal(t, int64(len(v2)-spec.V2FooterSize), fe.Off)
	_, err = spec.Parser{MaxIndexBytes: v2Index}.ParseV2(bytes.NewReader(v2), int64(len(v2)))
	require.NoError(t, err)

	b := spectest.NewV3(4096)
	b.Save(ws)
	idx := len(spec.EncodeV3Index(b.Entries))
	_, err = spec.Parser{MaxIndexBytes: uint64(idx) - 1}.ParseV3(bytes.NewReader(b.File), int64(len(b.File)))
	require.ErrorAs(t, err, &fe)
	assert.ErrorIs(t, err, spec.ErrIndexTooLarge)
	assert.Equal(t, int64(spec.V3SlotSize+32), fe.Off, "the index length field of slot 1")
	_, err = spec.Parser{MaxIndexBytes: uint64(idx)}.ParseV3(bytes.NewReader(b.File), int64(len(b.File)))
	require.NoError(t, err)
}
