package cache_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/spec"
)

type fixedPacker struct{}

func (fixedPacker) Seed() uint32        { return 3 }
func (fixedPacker) Fingerprint() uint64 { return 0xf1 }

// NewKey's Source follows the unpacked bytes: one changed weight or bias
// value is another key, so Get packs it again instead of serving the old
// packing (G1); equal weights give equal keys across calls.
func TestNewKeyDigestsTheWeights(t *testing.T) {
	w, b := []float32{1, 2, 3, 4}, []float32{5, 6}
	k := cache.NewKey("fc.weight", "fc.bias", fixedPacker{}, w, b)
	require.Equal(t, spec.Key{Weight: "fc.weight", Bias: "fc.bias", Seed: 3, Fingerprint: 0xf1, Source: k.Source}, k)
	require.Equal(t, k, cache.NewKey("fc.weight", "fc.bias", fixedPacker{}, []float32{1, 2, 3, 4}, []float32{5, 6}))
	w[2] = 3.5
	require.NotEqual(t, k.Source, cache.NewKey("fc.weight", "fc.bias", fixedPacker{}, w, b).Source)
	w[2] = 3
	b[1] = 7
	require.NotEqual(t, k.Source, cache.NewKey("fc.weight", "fc.bias", fixedPacker{}, w, b).Source)
	require.NotEqual(t, k.Source, cache.NewKey[float32]("fc.weight", "", fixedPacker{}, w, nil).Source)
}

// Get packs on a miss, serves the packing on a hit (without calling pack),
// re-packs a weight whose source changed, and under the default policy
// re-packs an entry whose data fails its check. A packer's error is
// returned and nothing is inserted.
func TestGet(t *testing.T) {
	opts := cache.Options{Path: tempPath(t)}
	ks := keys(2, 1)
	packs := 0
	get := func(c *cache.Cache, k spec.Key) ([]byte, error) {
		return c.Get(k, sizeOf(k), func(dst []byte) error {
			packs++
			fillPacked(k, dst)
			return nil
		})
	}
	run := func(want int) cache.Stats {
		t.Helper()
		c, err := cache.Open(opts)
		require.NoError(t, err)
		packs = 0
		require.NoError(t, c.Program("P", func() error {
			for _, k := range ks {
				b, err := get(c, k)
				if err != nil {
					return err
				}
				require.Equal(t, packed(k), b)
			}
			return nil
		}))
		require.Equal(t, want, packs)
		s := c.Stats()
		require.NoError(t, c.Close())
		return s
	}
	run(2)
	require.Equal(t, uint64(2), run(0).Hits)
	ks[1].Source++
	require.Equal(t, uint64(1), run(1).Repacks[cache.RepackSource])
	flipDataByte(t, opts.Path, ks[0])
	require.Equal(t, uint64(1), run(1).Repacks[cache.RepackCorrupt])
	require.Equal(t, uint64(2), run(0).Hits)

	c := open(t, opts)
	boom := errors.New("boom")
	err := c.Program("Q", func() error {
		_, err := c.Get(key("new", 1), 64, func([]byte) error { return boom })
		return err
	})
	require.ErrorIs(t, err, boom)
	require.ErrorContains(t, err, "new")
	require.NotContains(t, c.Names(), "new")
}

// Program finalizes when fn fails too: what was packed is committed.
func TestProgramCommitsWhenFnFails(t *testing.T) {
	opts := cache.Options{Path: tempPath(t)}
	c, err := cache.Open(opts)
	require.NoError(t, err)
	k := key("w", 1)
	err = c.Program("P", func() error {
		if _, err := c.Get(k, sizeOf(k), func(dst []byte) error { fillPacked(k, dst); return nil }); err != nil {
			return err
		}
		return fmt.Errorf("a later layer failed")
	})
	require.ErrorContains(t, err, "a later layer failed")
	require.NoError(t, c.Close(), "Program left a packing uncommitted")
	require.Equal(t, uint64(1), process(t, opts, []spec.Key{k}).Hits)
}

// Stats.String names the load, the counts by reason and every error.
func TestStatsString(t *testing.T) {
	s := process(t, cache.Options{Path: tempPath(t)}, keys(2, 1)).String()
	for _, want := range []string{"load=missing", "format=v3", "hits=0", "misses=2", "repacks=new:2", "commits=1"} {
		require.Contains(t, s, want)
	}
	require.NotContains(t, s, "heap-bytes", "zero counts are left out")
	require.NotContains(t, s, "garbage", "a new file's gap before its index is reclaimable, not garbage")
	require.Contains(t, s, "reclaimable=")
	s = cache.Stats{LoadErr: errors.New("bad\nline")}.String()
	require.Contains(t, s, `load-error="bad\nline"`)
	require.False(t, strings.Contains(s, "\n"), "one line")
}

// BenchmarkNewKey is the cost of deriving Source from a layer's unpacked
// weights (docs/cache.md, "Adopting the cache").
func BenchmarkNewKey(b *testing.B) {
	for _, n := range []int{4 << 10, 1 << 20} { // floats: 16 KiB, 4 MiB
		w, bias := make([]float32, n), make([]float32, 1024)
		b.Run(fmt.Sprintf("%dKiB", 4*n>>10), func(b *testing.B) {
			b.SetBytes(int64(4 * (n + len(bias))))
			for b.Loop() {
				_ = cache.NewKey("fc.weight", "fc.bias", fixedPacker{}, w, bias)
			}
		})
	}
}
