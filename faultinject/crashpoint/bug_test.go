package crashpoint

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/faultinject/crashfs"
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

// A compaction renamed its new file over the live one and then failed to
// fsync the directory, so the new name was not durable. The next launch
// appended a commit to the renamed file in place and returned success;
// a power loss then brought back the old directory entry, and with it the
// file from before the compaction: the successful save was lost (G2). Found
// by the random-fault runs (TestRandomFaults, long mode). The same state
// follows a process crash between the rename and the directory fsync.
func TestBugAppendToFileWhoseNameIsNotDurable(t *testing.T) {
	// Automatic compaction off, so that the last launch appends in place.
	opts := cache.Options{Path: Path, Format: spec.FormatV3, CompactGarbageRatio: -1}
	k1 := Keys(6, 1)
	k2 := Upgrade(k1)
	k3 := Upgrade(k2)
	fsys := crashfs.New(crashfs.Options{})
	require.NoError(t, fsys.MkdirAll(Dir))
	r, err := Launch(fsys, opts, k1)
	require.NoError(t, err)
	require.True(t, r.Committed)
	r, err = Launch(fsys, opts, k2)
	require.NoError(t, err)
	require.True(t, r.Committed)

	// Compaction whose directory fsync fails after the rename.
	ctr := errorfs.NewCounter(errorfs.If(errorfs.OpKinds(errorfs.OpSyncDir), errorfs.EINTR))
	_, _ = Compact(errorfs.Wrap(fsys, ctr), opts, k2)
	require.Positive(t, ctr.Count(), "the fault must reach the cache")

	// A clean launch re-packs half the weights and commits: success.
	r, err = Launch(fsys, opts, k3)
	require.NoError(t, err)
	require.True(t, r.Committed)
	require.NotEmpty(t, r.Misses)

	after := fsys.PowerLossWith(crashfs.LossConfig{Keep: 0})
	r, err = Launch(after, opts, k3)
	require.NoError(t, err)
	assert.Empty(t, r.Misses, "a save that returned success was lost at a power loss (G2)")
}
