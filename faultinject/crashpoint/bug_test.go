package crashpoint

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/faultinject/errorfs"
	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/spec"
)

// An EIO while reading the newest commit's index made spec.ParseV3 fall back
// to the previous commit as if the newest were corrupt. A compaction that
// re-read the file under that fault rewrote it from the previous commit and
// so dropped the entries of the newest one: a save that had returned
// success was lost (G2), by an I/O error, not by damage. Found by the
// error-point enumeration (compact workload, fault at the 19th call).
func TestBugEIOOnNewestIndexRollsBackCommit(t *testing.T) {
	w := Workloads(4)[2] // compact: setup commits k1 then the upgraded k2
	require.Equal(t, "compact", w.Name)
	opts := cache.Options{Path: Path, Format: spec.FormatV3}
	fsys, _, err := prepare(Config{}, w, opts)
	require.NoError(t, err)

	file, err := fsys.ReadFile(Path)
	require.NoError(t, err)
	v, err := spec.ParseV3(bytes.NewReader(file), int64(len(file)))
	require.NoError(t, err)
	newest := int64(v.Commit.IndexOff)

	// Every read of the newest index fails after the first load.
	reads := 0
	inj := errorfs.NewCounter(errorfs.InjectorFunc(func(op errorfs.Op) error {
		if op.Kind == errorfs.OpReadAt && op.Off == newest {
			reads++
			if reads > 1 {
				return errorfs.EIO.MaybeError(op)
			}
		}
		return nil
	}))
	_, _ = Compact(errorfs.Wrap(fsys, inj), opts, w.Keys)
	require.Positive(t, inj.Count(), "the fault must reach the cache")

	r, err := Launch(fsys.ProcessCrash(), opts, w.Keys)
	require.NoError(t, err)
	assert.Empty(t, r.Misses, "entries of the newest commit were lost (G2)")
	assert.Empty(t, r.Wrong)
}
