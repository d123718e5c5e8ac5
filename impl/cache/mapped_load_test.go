package cache_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/faultinject/errorfs"
	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/spec"
)

// onWholeMap calls do on every mapping of a whole file of size bytes (the
// load's, which the index is decoded from) and fails it with do's error.
type onWholeMap struct {
	size int64
	do   func() error
	n    int
}

func (w *onWholeMap) MaybeError(op errorfs.Op) error {
	if op.Kind != errorfs.OpMap || op.Off != 0 || op.Len != w.size {
		return nil
	}
	w.n++
	if err := w.do(); err != nil {
		return &errorfs.Error{Op: op, Err: err}
	}
	return nil
}

func (w *onWholeMap) String() string { return "onWholeMap" }

// A load decodes the index from a mapping of the whole file; where the file
// cannot be mapped it reads it, and loses nothing.
func TestLoadReadsWhenTheFileCannotBeMapped(t *testing.T) {
	for _, f := range []spec.Format{spec.FormatV2, spec.FormatV3} {
		t.Run(f.String(), func(t *testing.T) {
			path := tempPath(t)
			ks := keys(5, 1)
			process(t, cache.Options{Path: path, Format: f}, ks)
			inj := &onWholeMap{size: fileInfo(t, path).Size(), do: func() error { return errorfs.ErrInjected }}
			s := process(t, cache.Options{Path: path, Format: f, FS: errorfs.Wrap(vfs.OS(), inj)}, ks)
			require.Equal(t, 1, inj.n, "the load mapped the whole file")
			require.Equal(t, spec.LoadOK, s.Load, "%v", s.LoadErr)
			require.Equal(t, uint64(len(ks)), s.Hits)
		})
	}
}

// A file truncated under the load's mapping (nothing stops a foreign
// writer) makes reading the index through it fault; the fault is caught
// and the file read instead, whose 100 bytes are no cache file: rejected
// with a typed error, not a crash (G7, G8). A v2 file's footer is at its
// end, past the truncation.
func TestLoadOfAFileTruncatedUnderItsMapping(t *testing.T) {
	path := tempPath(t)
	ks := keys(5, 1)
	process(t, cache.Options{Path: path, Format: spec.FormatV2}, ks)
	inj := &onWholeMap{size: fileInfo(t, path).Size(), do: func() error { return os.Truncate(path, 100) }}
	s := process(t, cache.Options{Path: path, Format: spec.FormatV2, FS: errorfs.Wrap(vfs.OS(), inj)}, ks)
	require.Equal(t, 1, inj.n)
	require.Equal(t, spec.LoadRejected, s.Load, "%v", s.LoadErr)
	require.ErrorIs(t, s.LoadErr, cache.ErrForeignFile)
	require.Zero(t, s.Hits)
}

// indexRange is the file range [lo, hi) of the index of the cache file at
// path, which a load decodes.
func indexRange(t testing.TB, path string) (lo, hi int) {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	size := int64(len(b))
	f, err := spec.DetectFormat(bytes.NewReader(b), size)
	require.NoError(t, err)
	if f == spec.FormatV2 {
		v, err := spec.ParseV2(bytes.NewReader(b), size)
		require.NoError(t, err)
		return int(v.IndexStart), int(size) - spec.V2FooterSize
	}
	v, err := spec.ParseV3(bytes.NewReader(b), size)
	require.NoError(t, err)
	return int(v.Commit.IndexOff), int(v.Commit.IndexOff + v.Commit.IndexLen)
}

// indexPage is the offset of the page holding the start of the index of
// the cache file at path.
func indexPage(t testing.TB, path string) int {
	lo, _ := indexRange(t, path)
	return lo / os.Getpagesize() * os.Getpagesize()
}

// A load populates the index range of its mapping in one call before it
// decodes it (a process loading again maps the file anew, and faulted the
// index in a fault-around block at a time); a refused populate changes no
// verdict of the load.
func TestLoadPopulatesTheIndexItDecodes(t *testing.T) {
	if _, ok := mustMap(t).(vfs.Populater); !ok {
		t.Skip("mappings of this OS cannot be populated")
	}
	for _, f := range []spec.Format{spec.FormatV2, spec.FormatV3} {
		t.Run(f.String(), func(t *testing.T) {
			path := tempPath(t)
			ks := keys(300, 1)
			process(t, cache.Options{Path: path, Format: f}, ks)
			lo, hi := indexRange(t, path)
			fs := &popFS{FS: vfs.OS(), index: indexPage(t, path)}
			s := process(t, cache.Options{Path: path, Format: f, FS: fs, DisablePrefault: true}, ks)
			require.Equal(t, spec.LoadOK, s.Load, "%v", s.LoadErr)
			require.Equal(t, uint64(len(ks)), s.Hits)
			require.Len(t, fs.indexCalls, 1)
			c := fs.indexCalls[0]
			require.LessOrEqual(t, c[0], lo)
			require.GreaterOrEqual(t, c[0]+c[1], hi, "index [%d,%d)", lo, hi)

			refused := &popFS{FS: vfs.OS(), refuse: vfs.ErrNotSupported}
			s = process(t, cache.Options{Path: path, Format: f, FS: refused, DisablePrefault: true}, ks)
			require.Equal(t, int32(1), refused.refused.Load())
			require.Equal(t, spec.LoadOK, s.Load, "%v", s.LoadErr)
			require.NoError(t, s.LoadErr)
			require.Equal(t, uint64(len(ks)), s.Hits)
			require.Zero(t, s.Misses)
		})
	}
}

// readsUnder records the ReadAt calls that start below off.
type readsUnder struct {
	off   int64
	reads [][2]int64
}

func (r *readsUnder) MaybeError(op errorfs.Op) error {
	if op.Kind == errorfs.OpReadAt && op.Off < r.off {
		r.reads = append(r.reads, [2]int64{op.Off, op.Len})
	}
	return nil
}

func (r *readsUnder) String() string { return "readsUnder" }

// A v3 load reads the file's first 1 KiB, where the format check finds the
// magic and the parse the commit slots, with one read.
func TestV3LoadReadsTheCommitSlotsOnce(t *testing.T) {
	path := tempPath(t)
	ks := keys(5, 1)
	process(t, cache.Options{Path: path}, ks)
	rec := &readsUnder{off: 2 * spec.V3SlotSize}
	c, err := cache.Open(cache.Options{Path: path, FS: errorfs.Wrap(vfs.OS(), rec)})
	require.NoError(t, err)
	require.NoError(t, c.InitializeForProgram("P"))
	require.Equal(t, spec.LoadOK, c.Stats().Load, "%v", c.Stats().LoadErr)
	require.Equal(t, [][2]int64{{0, 2 * spec.V3SlotSize}}, rec.reads)
	require.NoError(t, c.Finalize())
	require.NoError(t, c.Close())
}
