package cache_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/spec"
)

// A rejected file is replaced by writing a new file and renaming it over,
// never truncated: a process that still maps the old file keeps reading its
// bytes (ExecuTorch's ftruncate(0) under live mappings was a SIGBUS,
// PR 20337; LoadPackedCache_RejectsCorruptTrailer).
func TestCorruptFileReplacedByRename(t *testing.T) {
	opts := cache.Options{Path: tempPath(t)}
	process(t, opts, keys(2, 7))
	junk, err := os.ReadFile(opts.Path)
	require.NoError(t, err)
	// Both commit slots fail their CRC: recognisably a cache file (the slot
	// magic is there), and damaged.
	junk[100] ^= 0xff
	junk[spec.V3SlotSize+100] ^= 0xff
	require.NoError(t, os.WriteFile(opts.Path, junk, 0o644))

	// Another process's mapping of the junk file.
	f, err := vfs.OS().OpenFile(opts.Path, os.O_RDONLY, 0)
	require.NoError(t, err)
	m, err := f.Map(0, len(junk), vfs.ProtRead)
	require.NoError(t, err)
	defer m.Close()
	require.NoError(t, f.Close())
	oldInfo := fileInfo(t, opts.Path)

	ks := keys(3, 1)
	s := process(t, opts, ks)
	require.Equal(t, spec.LoadRejected, s.Load)
	require.ErrorIs(t, s.LoadErr, spec.ErrCorrupt)
	require.Equal(t, uint64(3), s.Repacks[cache.RepackNew])
	require.Empty(t, s.HeapBytes, "the rebuild goes to the new file")

	newInfo := fileInfo(t, opts.Path)
	require.False(t, os.SameFile(oldInfo, newInfo), "replaced, not rewritten in place")
	require.Equal(t, junk, m.Bytes(), "the old mapping still reads the old bytes")
	require.Equal(t, uint64(3), process(t, opts, ks).Hits)
}

// A file of the other format than the one named is carried over, not
// thrown away: its entries are loaded and served without re-packing, and
// the first commit rewrites them into a new file of the named format
// (keeping the file's mode). v3 → v2 carries every entry; v2 → v3 carries
// the entries a look-up named, since a v2 file records only an entry's
// concatenated name and seed and a v3 index needs the full key; the others
// are counted as dropped and re-packed when next needed.
func TestFormatCarriedOver(t *testing.T) {
	ks := keys(3, 1)
	t.Run("v2 to v3", func(t *testing.T) {
		path := tempPath(t)
		process(t, cache.Options{Path: path, Format: spec.FormatV2}, ks)
		require.NoError(t, os.Chmod(path, 0o640))
		v3 := cache.Options{Path: path, Format: spec.FormatV3}
		s := process(t, v3, ks[:2])
		require.Equal(t, spec.LoadOtherFormat, s.Load)
		require.NoError(t, s.LoadErr)
		require.Equal(t, uint64(3), s.CarriedOver)
		require.Equal(t, uint64(2), s.Hits, "no re-pack")
		require.Empty(t, s.Repacks)
		require.Equal(t, uint64(1), s.CarryDropped, "w2: no look-up gave its full key")
		require.Equal(t, os.FileMode(0o640), fileInfo(t, path).Mode().Perm())

		b, err := os.ReadFile(path)
		require.NoError(t, err)
		v, err := spec.ParseV3(bytes.NewReader(b), int64(len(b)))
		require.NoError(t, err, "rewritten as v3")
		require.Len(t, v.Entries, 2)
		for i, e := range v.Entries {
			require.Contains(t, ks[:2], e.Key, "entry %d has its full key", i)
		}
		s = process(t, v3, ks)
		require.Equal(t, spec.LoadOK, s.Load)
		require.Equal(t, uint64(2), s.Hits)
		require.Equal(t, uint64(1), s.Repacks[cache.RepackNew])
	})
	t.Run("read-only", func(t *testing.T) {
		// A read-only cache serves the carried entries and writes nothing.
		path := tempPath(t)
		process(t, cache.Options{Path: path, Format: spec.FormatV3}, ks)
		before, err := os.ReadFile(path)
		require.NoError(t, err)
		s := process(t, cache.Options{Path: path, Format: spec.FormatV2, ReadOnly: true}, ks)
		require.Equal(t, spec.LoadOtherFormat, s.Load)
		require.Equal(t, uint64(3), s.Hits)
		require.Zero(t, s.Commits)
		after, err := os.ReadFile(path)
		require.NoError(t, err)
		require.True(t, bytes.Equal(before, after), "a read-only cache wrote the file")
	})
	t.Run("v3 to v2", func(t *testing.T) {
		path := tempPath(t)
		process(t, cache.Options{Path: path, Format: spec.FormatV3}, ks)
		v2 := cache.Options{Path: path, Format: spec.FormatV2}
		s := process(t, v2, ks[:1])
		require.Equal(t, spec.LoadOtherFormat, s.Load)
		require.Equal(t, uint64(3), s.CarriedOver)
		require.Equal(t, uint64(1), s.Hits)
		require.Zero(t, s.CarryDropped)

		b, err := os.ReadFile(path)
		require.NoError(t, err)
		v, err := spec.ParseV2(bytes.NewReader(b), int64(len(b)))
		require.NoError(t, err, "rewritten as v2")
		require.Len(t, v.Entries, 3, "every entry carried")
		s = process(t, v2, ks)
		require.Equal(t, spec.LoadOK, s.Load)
		require.Equal(t, uint64(3), s.Hits)
	})
}

// With no format named, the file's format is used: an ExecuTorch v2 file
// is loaded and appended to as v2, never replaced by a v3 file (which
// would drop every entry it holds for ExecuTorch); a new file is v3.
func TestFormatDetectedFromFile(t *testing.T) {
	path := tempPath(t)
	ks := keys(3, 1)
	process(t, cache.Options{Path: path, Format: spec.FormatV2}, ks[:2])
	s := process(t, cache.Options{Path: path}, ks)
	require.Equal(t, spec.LoadOK, s.Load)
	require.Equal(t, spec.FormatV2, s.Format)
	require.Equal(t, uint64(2), s.Hits)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	v, err := spec.ParseV2(bytes.NewReader(b), int64(len(b)))
	require.NoError(t, err, "still an ExecuTorch file")
	require.Len(t, v.Entries, 3)

	fresh := cache.Options{Path: tempPath(t)}
	require.Equal(t, spec.FormatV3, process(t, fresh, ks).Format)
	require.Equal(t, spec.FormatV3, process(t, fresh, ks).Format)
}

// G7 (and G1 for v3): whatever the file holds, a launch yields correct bytes
// (pack checks them), a load outcome, and a file the next launch loads.
func TestG7HostileFileContent(t *testing.T) {
	ks := keys(3, 1)
	good := func(f spec.Format) []byte {
		p := tempPath(t)
		process(t, cache.Options{Path: p, Format: f}, ks)
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		return b
	}
	seeds := map[spec.Format][]byte{spec.FormatV3: good(spec.FormatV3), spec.FormatV2: good(spec.FormatV2)}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 60 {
		f := spec.FormatV3
		if i%2 == 1 {
			f = spec.FormatV2
		}
		content := bytes.Clone(seeds[f])
		switch i % 6 {
		case 0, 1: // flip bytes
			// v3 checks every byte it trusts; v2 has no checksums (G1 is
			// out of its reach: a flipped data byte or a flipped offset is
			// served), so v2 gets flips only in its footer.
			from := 0
			if f == spec.FormatV2 {
				from = len(content) - spec.V2FooterSize
			}
			for range 1 + rng.IntN(8) {
				content[from+rng.IntN(len(content)-from)] ^= byte(1 + rng.IntN(255))
			}
		case 2, 3: // truncate
			content = content[:rng.IntN(len(content))]
		default: // random garbage of random length
			content = make([]byte, rng.IntN(3*4096))
			for j := range content {
				content[j] = byte(rng.Uint32())
			}
		}
		opts := cache.Options{Path: tempPath(t), Format: f, VerifyData: cache.VerifyOnFirstUse}
		require.NoError(t, os.WriteFile(opts.Path, content, 0o644))
		s := process(t, opts, ks)
		require.Contains(t, []spec.LoadOutcome{spec.LoadOK, spec.LoadRejected}, s.Load)
		if errors.Is(s.LoadErr, cache.ErrForeignFile) {
			// Random bytes, or a v2 file cut before its footer: nothing in
			// it says it is a cache file, so it is left alone, and
			// replaced only when the caller opts in.
			got, err := os.ReadFile(opts.Path)
			require.NoError(t, err)
			require.Equal(t, content, got, "case %d: a foreign file was written", i)
			opts.ReplaceForeign = true
			process(t, opts, ks)
		} else if s.Load == spec.LoadRejected {
			require.ErrorIs(t, s.LoadErr, spec.ErrCorrupt)
		}
		require.Equal(t, uint64(3), process(t, opts, ks).Hits, "case %d converges", i)
	}
}

// Two processes load a file of the other format. The first to commit
// rewrites it in the configured format; the other then finds those entries
// committed in its format and takes them instead of its carried copies, so
// its own commit appends to that file rather than rewriting the whole file
// again with the same entries (and new copy identities, which make every
// instance mapping the first one's copies drop them at its next refresh).
// v2 to v3 the carried copies must have their full keys (a look-up gave
// them) to be named like the committed ones; v3 to v2 every entry is.
func TestCarriedCopiesYieldToAnotherWritersConversion(t *testing.T) {
	ks := keys(3, 1)
	for _, tc := range []struct{ from, to spec.Format }{
		{spec.FormatV2, spec.FormatV3},
		{spec.FormatV3, spec.FormatV2},
	} {
		t.Run(tc.from.String()+" to "+tc.to.String(), func(t *testing.T) {
			path := tempPath(t)
			process(t, cache.Options{Path: path, Format: tc.from}, ks)
			opts := cache.Options{Path: path, Format: tc.to}
			a := open(t, opts)
			require.NoError(t, a.InitializeForProgram("P"))
			for _, k := range ks {
				_, hit := a.LookUp(k)
				require.True(t, hit, "carried %s", k.Weight)
			}

			b := process(t, opts, ks)
			require.Equal(t, uint64(1), b.Compactions, "the conversion")
			converted := fileEntries(t, path)
			require.Len(t, converted, len(ks))

			z := key("z", 1)
			pack(t, a, z)
			require.NoError(t, a.Finalize())
			s := a.Stats()
			require.Equal(t, uint64(1), s.Commits)
			require.Zero(t, s.Compactions, "appended to the converted file")
			after := fileEntries(t, path)
			for _, e := range converted {
				require.Contains(t, after, e, "the converted copy of %s stays", e.Key.Weight)
			}
			require.Equal(t, uint64(len(ks)+1), process(t, opts, append(ks, z)).Hits)
		})
	}
}

// fileEntries returns the entries the index of the cache file at path
// lists, in either format.
func fileEntries(t *testing.T, path string) []spec.Entry {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	r := bytes.NewReader(b)
	f, err := spec.DetectFormat(r, int64(len(b)))
	require.NoError(t, err)
	if f == spec.FormatV2 {
		v, err := spec.ParseV2(r, int64(len(b)))
		require.NoError(t, err)
		return v.Entries
	}
	v, err := spec.ParseV3(r, int64(len(b)))
	require.NoError(t, err)
	return v.Entries
}
