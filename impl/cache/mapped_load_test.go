package cache_test

import (
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
