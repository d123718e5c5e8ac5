package cache_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/spec"
	"github.com/xpwc/xpwc/spec/spectest"
)

// TestLegacyCRC32CFileRebuiltNotMisread: a v3 file written before the
// commit slot named the data checksum (entries checksummed with CRC32C,
// the field zero) holds the very bytes the program wants. Under every
// verification policy, VerifyOff included, the cache rejects it with
// spec.ErrUnsupportedChecksum and serves none of it: every weight is
// re-packed into a new file, and the launch after that hits everything (G1,
// G3, G7). Were the file read, VerifyOff would hit on its entries and
// the other policies would call every entry corrupt.
func TestLegacyCRC32CFileRebuiltNotMisread(t *testing.T) {
	for _, policy := range []cache.VerifyPolicy{cache.VerifyOnFirstUse, cache.VerifyOnLoad, cache.VerifyOff} {
		t.Run(policy.String(), func(t *testing.T) {
			ks := keys(3, 1)
			ws := make([]spectest.Weight, len(ks))
			for i, k := range ks {
				ws[i] = spectest.Weight{Key: k, Data: packed(k)}
			}
			b := spectest.NewV3(os.Getpagesize())
			b.LegacyCRC32C = true
			b.Save(ws)
			opts := cache.Options{Path: tempPath(t), VerifyData: policy}
			require.NoError(t, os.WriteFile(opts.Path, b.File, 0o600))

			s := process(t, opts, ks)
			require.Equal(t, spec.LoadRejected, s.Load)
			require.ErrorIs(t, s.LoadErr, spec.ErrUnsupportedChecksum)
			require.Zero(t, s.Hits)
			require.Equal(t, uint64(3), s.Repacks[cache.RepackNew])

			s = process(t, opts, ks)
			require.Equal(t, spec.LoadOK, s.Load)
			require.Equal(t, uint64(3), s.Hits)
		})
	}
}
