package corrupt

import (
	"bytes"
	"errors"
	"fmt"
	"iter"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/faultinject/crashfs"
	"github.com/xpwc/xpwc/faultinject/crashpoint"
	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/spec"
	"github.com/xpwc/xpwc/spec/spectest"
)

// The corruption matrix through the cache: a damaged file at the cache path
// must give a launch that packs what it cannot trust, never hands out bytes
// other than the current packing (G1), never fails (G7, G8), and leaves a
// file the next launch hits entirely (G3).

func long() bool { return os.Getenv("XPWC_LONG") == "1" }

// cacheFile builds a file whose data are the reference packings of ks, so
// that a correct load of it hits.
func cacheFile(format spec.Format, ks []spec.Key) []byte {
	ws := make([]spectest.Weight, len(ks))
	for i, k := range ks {
		ws[i] = spectest.Weight{Key: k, Data: crashpoint.Pack(k)}
	}
	if format == spec.FormatV2 {
		f, _ := spectest.BuildV2(page, ws)
		return f
	}
	f, _ := spectest.BuildV3(page, ws)
	return f
}

type cacheTally struct {
	cases, hitAll, rebuilt, foreign, wrong, failed int
	firstWrong                                     string
}

// launchOn writes file at the cache path of a fresh filesystem and runs
// two launches over ks.
func launchOn(t *testing.T, format spec.Format, file []byte, ks []spec.Key, tl *cacheTally, c Case) {
	t.Helper()
	tl.cases++
	fsys := crashfs.New(crashfs.Options{})
	require.NoError(t, fsys.MkdirAll(crashpoint.Dir))
	f, err := fsys.OpenFile(crashpoint.Path, os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	_, err = f.WriteAt(file, 0)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	// The check at the look-up: a damaged entry is a miss, re-packed.
	opts := cache.Options{Path: crashpoint.Path, Format: format, VerifyData: cache.VerifyOnFirstUse}
	var r1, r2 crashpoint.LaunchResult
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("%s: launch panicked: %v (G7)", c, p)
			}
		}()
		r1, err = crashpoint.Launch(fsys, opts, ks)
		require.NoError(t, err, c.String())
		r2, err = crashpoint.Launch(fsys, opts, ks)
		require.NoError(t, err, c.String())
	}()
	if errors.Is(r1.Stats.LoadErr, cache.ErrForeignFile) {
		// Cut before every mark of its format (a v2 file before its
		// footer's magic): not recognisably a cache file, so left alone
		// (docs/paths.md), byte for byte, by both launches.
		g, err := fsys.OpenFile(crashpoint.Path, os.O_RDONLY, 0)
		require.NoError(t, err)
		got := make([]byte, len(file)+1)
		n, _ := g.ReadAt(got, 0)
		require.NoError(t, g.Close())
		require.Equal(t, file, got[:n], "%s: a foreign file was written", c)
		tl.foreign++
		return
	}
	if len(r1.Wrong)+len(r2.Wrong) > 0 {
		tl.wrong++
		if tl.firstWrong == "" {
			tl.firstWrong = c.String()
		}
		return
	}
	if len(r2.Misses) > 0 || r1.CheckErr != nil || r2.CheckErr != nil {
		tl.failed++
		t.Errorf("%s: second launch missed %d (G3); checks %v / %v", c, len(r2.Misses), r1.CheckErr, r2.CheckErr)
		return
	}
	if len(r1.Misses) == 0 {
		tl.hitAll++
	} else {
		tl.rebuilt++
	}
}

func (tl *cacheTally) String() string {
	return fmt.Sprintf("%d files: %d loaded and hit, %d rebuilt, %d left as foreign, %d served wrong bytes, %d failed",
		tl.cases, tl.hitAll, tl.rebuilt, tl.foreign, tl.wrong, tl.failed)
}

func TestCorruptionMatrixThroughCache(t *testing.T) {
	ks := crashpoint.Keys(4, 1)
	total := 0
	for _, format := range []spec.Format{spec.FormatV3, spec.FormatV2} {
		t.Run(format.String(), func(t *testing.T) {
			file := cacheFile(format, ks)
			var indexStart, hdrEnd int
			var entries []spec.Entry
			if format == spec.FormatV2 {
				v, err := spec.ParseV2(bytes.NewReader(file), int64(len(file)))
				require.NoError(t, err)
				indexStart, entries = int(v.IndexStart), v.Entries
			} else {
				v, err := spec.ParseV3(bytes.NewReader(file), int64(len(file)))
				require.NoError(t, err)
				indexStart, entries = int(v.Commit.IndexOff), v.Entries
				hdrEnd = 2 * spec.V3SlotSize // the rest of the header page is padding
				if long() {
					hdrEnd = page
				}
			}
			e := entries[0]
			dataEnd := int(e.Offset) + 64
			if long() {
				dataEnd = int(e.End())
			}
			parts := []struct {
				name  string
				cases iter.Seq[Case]
			}{
				{"truncate index+footer", Truncations(file, indexStart, len(file))},
				{"flip index+footer", BitFlips(file, indexStart, len(file))},
				{"truncate header", Truncations(file, 0, hdrEnd)},
				{"flip header", BitFlips(file, 0, hdrEnd)},
				{"flip data", BitFlips(file, int(e.Offset), dataEnd)},
			}
			for _, p := range parts {
				var tl cacheTally
				for c := range p.cases {
					launchOn(t, format, c.File, ks, &tl, c)
				}
				total += tl.cases
				t.Logf("%s %-22s %s", format, p.name, &tl)
				if format == spec.FormatV3 {
					assert.Zero(t, tl.wrong, "v3 served corrupted bytes (G1), first: %s", tl.firstWrong)
				} else if tl.wrong > 0 {
					t.Logf("v2 serves corrupted bytes (no checksums), first: %s", tl.firstWrong)
				}
			}
		})
	}
	t.Logf("corruption matrix through the cache: %d damaged files launched", total)
}
