package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/spec"
	"github.com/xpwc/xpwc/spec/spectest"
)

func runInspect(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(&env{stdout: &out, stderr: &errOut}, append([]string{"inspect"}, args...))
	return code, out.String(), errOut.String()
}

func writeFile(t *testing.T, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "weights.packed_cache")
	require.NoError(t, os.WriteFile(p, b, 0o600))
	return p
}

func decodeReport(t *testing.T, s string) inspectReport {
	t.Helper()
	var rep inspectReport
	require.NoError(t, json.Unmarshal([]byte(s), &rep), s)
	return rep
}

func TestInspectV3Valid(t *testing.T) {
	b := spectest.NewV3(16384)
	b.Save(spectest.Weights(3, 1000, 1))
	b.Save(spectest.Weights(2, 500, 2)) // replaces two entries: garbage
	path := writeFile(t, b.File)

	code, out, errOut := runInspect(t, path)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "format:   v3 (version 4)")
	assert.Contains(t, out, "page:     16384 bytes")
	assert.Contains(t, out, "layers.1.attention.wq.weight")
	assert.Contains(t, out, "result:   valid")

	// The flag goes before or after the file.
	for _, args := range [][]string{{path, "--json"}, {"--json", path}, {"-json", path}} {
		code, out, _ := runInspect(t, args...)
		require.Equal(t, exitOK, code, args)
		rep := decodeReport(t, out)
		assert.True(t, rep.Valid)
		assert.Equal(t, "v3", rep.Format)
		assert.Equal(t, uint32(4), rep.Version)
		assert.Equal(t, 16384, rep.PageSize)
		assert.Equal(t, uint64(2), rep.Generation)
		assert.Empty(t, rep.Error)
		assert.Empty(t, rep.Problems)
		require.Len(t, rep.Entries, 3)
		for i, en := range rep.Entries {
			assert.Equal(t, b.Entries[i].Key.Name(), en.Name)
			assert.Equal(t, b.Entries[i].Offset, en.Offset)
			assert.Equal(t, b.Entries[i].Size, en.Size)
			assert.Equal(t, b.Entries[i].Key.Seed, uint32(en.Seed))
			assert.Equal(t, "ok", en.Checksum)
		}
		assert.Equal(t, uint64(1000+500+500), rep.LiveBytes)
		assert.GreaterOrEqual(t, rep.GarbageBytes, uint64(2*16384), "replaced regions and the old index are garbage")
	}
	// The map's dead ranges are the garbage and its padding ranges the
	// padding (spec.SpaceMap); together they are everything outside the
	// header, the index and the live data.
	code, out, _ = runInspect(t, path, "--json", "--map")
	require.Equal(t, exitOK, code)
	rep := decodeReport(t, out)
	var dead, padding uint64
	for _, m := range rep.Map {
		switch m.Kind {
		case string(spec.RangeDead):
			dead += uint64(m.Length)
		case string(spec.RangePadding):
			padding += uint64(m.Length)
		}
	}
	assert.Equal(t, dead, rep.GarbageBytes, "the map's dead ranges are the garbage")
	assert.Equal(t, padding, rep.PaddingBytes, "the map's padding ranges are the padding, the gap before the index included")
	assert.LessOrEqual(t, rep.GarbageBytes, rep.ReclaimableBytes, "a rewrite also frees any gap before an appended index")
	assert.Equal(t, uint64(len(b.File))-16384-rep.Index.Length-rep.LiveBytes, rep.GarbageBytes+rep.PaddingBytes)
}

// TestInspectPaddingIsNotGarbage: a file a launch just created, which
// nothing was ever dropped from, has no garbage, only page padding (the gap
// before its page-aligned index included); what a rewrite would free is
// still the cache's own count, launch's garbage_bytes. A file whose entries
// were replaced has garbage.
func TestInspectPaddingIsNotGarbage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new.cache")
	var out, errOut bytes.Buffer
	code := run(&env{stdout: &out, stderr: &errOut}, []string{"launch", "--cache", path, "--json"})
	require.Equal(t, exitOK, code, errOut.String())
	var launch struct {
		GarbageBytes int64 `json:"garbage_bytes"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &launch))

	code, js, errStr := runInspect(t, path, "--json")
	require.Equal(t, exitOK, code, errStr)
	rep := decodeReport(t, js)
	assert.Zero(t, rep.GarbageBytes, "nothing was dropped from a new file")
	assert.Positive(t, rep.PaddingBytes, "entries are page-aligned")
	assert.Positive(t, rep.ReclaimableBytes, "a rewrite puts the index right after the last entry")
	assert.Equal(t, uint64(launch.GarbageBytes), rep.ReclaimableBytes, "inspect's reclaimable bytes are the cache's garbage count")
	// --map shows the same split: no dead range in a new file, the gap
	// before the index a padding range of the last entry.
	code, js, _ = runInspect(t, path, "--json", "--map")
	require.Equal(t, exitOK, code)
	var padding uint64
	for _, m := range decodeReport(t, js).Map {
		assert.NotEqual(t, string(spec.RangeDead), m.Kind, "range %+v of a new file", m)
		if m.Kind == string(spec.RangePadding) {
			assert.NotEmpty(t, m.Name, "padding is named after its entry")
			padding += uint64(m.Length)
		}
	}
	assert.Equal(t, rep.PaddingBytes, padding)
	code, text, _ := runInspect(t, path)
	require.Equal(t, exitOK, code)
	assert.Contains(t, text, "garbage:  0 bytes\n")
	assert.Contains(t, text, fmt.Sprintf("padding:  %d bytes\n", rep.PaddingBytes))

	b := spectest.NewV3(4096)
	b.Save(spectest.Weights(3, 1000, 1))
	b.Save(spectest.Weights(2, 500, 2)) // replaces two entries
	code, js, _ = runInspect(t, writeFile(t, b.File), "--json")
	require.Equal(t, exitOK, code)
	rep = decodeReport(t, js)
	assert.GreaterOrEqual(t, rep.GarbageBytes, uint64(2*1000), "the replaced entries are garbage")
}

func TestInspectV2Valid(t *testing.T) {
	file, entries := spectest.BuildV2(4096, spectest.Weights(2, 100, 1))
	code, out, errOut := runInspect(t, "--json", writeFile(t, file))
	require.Equal(t, exitOK, code, errOut)
	rep := decodeReport(t, out)
	assert.True(t, rep.Valid)
	assert.Equal(t, "v2", rep.Format)
	assert.Equal(t, uint32(2), rep.Version)
	require.Len(t, rep.Entries, 2)
	assert.Equal(t, entries[1].Key.Weight, rep.Entries[1].Name)
	assert.Equal(t, "none", rep.Entries[1].Checksum)
	assert.Equal(t, uint64(200), rep.LiveBytes)
}

func TestInspectInvalid(t *testing.T) {
	v3, entries := spectest.BuildV3(4096, spectest.Weights(2, 100, 1))
	rotted := append([]byte(nil), v3...)
	rotted[entries[1].Offset+5] ^= 1
	indexRot := append([]byte(nil), v3...)
	indexRot[len(indexRot)-3] ^= 1
	v1 := append(make([]byte, 4096), 1, 0, 0, 0, 'w', 0, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0)
	v1 = append(v1, 0, 16, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0x43, 0x57, 0x50, 0x58, 1, 0, 0, 0)
	cases := []struct {
		name, format string
		file         []byte
		problems     []string
		version      uint32
	}{
		{"0xCC", "unknown", bytes.Repeat([]byte{0xCC}, 1024), []string{"ErrBadMagic"}, 0},
		{"empty", "unknown", nil, []string{"ErrTooSmall"}, 0},
		{"v1", "v2", v1, []string{"ErrUnsupportedVersion"}, 1},
		{"never committed", "v3", spec.EncodeV3Header(4096), []string{"ErrNoCommit"}, 4},
		{"data rot", "v3", rotted, []string{"ErrChecksum"}, 4},
		{"index rot", "v3", indexRot, []string{"ErrChecksum"}, 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, tc.file)
			code, out, errOut := runInspect(t, path, "--json")
			require.Equal(t, exitProblem, code)
			rep := decodeReport(t, out)
			assert.False(t, rep.Valid)
			assert.Equal(t, tc.format, rep.Format)
			assert.Equal(t, tc.version, rep.Version)
			assert.NotEmpty(t, rep.Error)
			assert.Contains(t, errOut, rep.Error)
			var names []string
			for _, p := range rep.Problems {
				names = append(names, p.Name)
			}
			assert.Equal(t, tc.problems, names)

			if tc.name == "never committed" {
				require.Len(t, rep.Slots, 2)
				assert.Equal(t, "never committed", rep.Slots[0].Error)
				assert.Equal(t, 4096, rep.PageSize)
			}
			if tc.name == "index rot" {
				require.Len(t, rep.Slots, 2)
				assert.Contains(t, rep.Slots[1].Error, "checksum mismatch")
			}
			code, out, _ = runInspect(t, path)
			require.Equal(t, exitProblem, code)
			assert.Contains(t, out, "result:   INVALID")
			assert.Contains(t, out, "problem:  "+tc.problems[0])
		})
	}
}

func TestInspectUsage(t *testing.T) {
	for _, args := range [][]string{nil, {"a", "b"}, {"--nope", "a"}, {"a", "--nope"}} {
		code, _, errOut := runInspect(t, args...)
		assert.Equal(t, exitUsage, code, args)
		assert.Contains(t, errOut, "usage: simrun inspect", args)
	}
	code, _, errOut := runInspect(t, filepath.Join(t.TempDir(), "missing"))
	assert.Equal(t, exitUsage, code, "a file that cannot be read is bad input")
	assert.Contains(t, errOut, "no such file")
}

// TestInspectExecuTorchVerdict: the executorch line of a v2 file that
// ExecuTorch's loader rejects (a footer-only file, what its save writes
// when nothing was file-backed) names the rule and offset and warns of the
// truncation; a file only xpwc rejects (more entries declared than present)
// still loads in ExecuTorch.
func TestInspectExecuTorchVerdict(t *testing.T) {
	footerOnly := spec.EncodeV2Index(0, nil)
	rep, err := inspect(bytes.NewReader(footerOnly), int64(len(footerOnly)), "footer-only", spec.Parser{})
	require.NoError(t, err)
	require.False(t, rep.Valid)
	require.Equal(t, &executorchReport{Rule: "index_start < size-20"}, rep.ExecuTorch)
	var out bytes.Buffer
	require.NoError(t, printInspect(&out, rep))
	require.Contains(t, out.String(), "executorch: its loader rejects the file at offset 0 (index_start < size-20), then truncates it to 0 bytes")

	file, _ := spectest.BuildV2(4096, spectest.Weights(2, 100, 1))
	file[len(file)-spec.V2FooterSize+8]++ // one entry more than present
	rep, err = inspect(bytes.NewReader(file), int64(len(file)), "count", spec.Parser{})
	require.NoError(t, err)
	require.False(t, rep.Valid, "xpwc rejects a count mismatch")
	require.Equal(t, &executorchReport{Accepts: true, Entries: 2}, rep.ExecuTorch)
}

// TestInspectListsEntriesBeforeTheError: an invalid file lists the entries
// its index yielded before the first error, and the error names its offset.
func TestInspectListsEntriesBeforeTheError(t *testing.T) {
	ws := spectest.Weights(3, 100, 1)
	file, entries := spectest.BuildV2(4096, ws)
	// Misalign the third entry's offset: two entries decode, then the error.
	bad := append([]spec.Entry(nil), entries...)
	bad[2].Offset++
	indexStart := uint64(len(file)) - uint64(len(spec.EncodeV2Index(0, entries)))
	file = append(file[:indexStart], spec.EncodeV2Index(indexStart, bad)...)
	rep, err := inspect(bytes.NewReader(file), int64(len(file)), "bad", spec.Parser{})
	require.NoError(t, err)
	require.False(t, rep.Valid)
	require.True(t, rep.EntriesBeforeError)
	require.Len(t, rep.Entries, 2)
	require.Equal(t, entries[1].Key.Weight, rep.Entries[1].Key)
	var out bytes.Buffer
	require.NoError(t, printInspect(&out, rep))
	require.Contains(t, out.String(), "entries:  2 decoded before the error")
	require.Contains(t, out.String(), "ErrMisaligned")
	require.Regexp(t, `at offset [0-9]+`, out.String())
	require.NotContains(t, out.String(), "live:")
}

// TestInspectQuotesBinaryNames: a name holding control bytes (an escape
// sequence in a forged v2 file, which ParseV2 accepts: only NUL is
// refused) reaches the text output quoted, never raw.
func TestInspectQuotesBinaryNames(t *testing.T) {
	ws := []spectest.Weight{{Key: spec.Key{Weight: "w\x1b[31mred", Seed: 1}, Data: []byte("packed")}}
	file, _ := spectest.BuildV2(4096, ws)
	rep, err := inspect(bytes.NewReader(file), int64(len(file)), "esc", spec.Parser{})
	require.NoError(t, err)
	require.True(t, rep.Valid)
	rep.Map = nil
	var out bytes.Buffer
	require.NoError(t, printInspect(&out, rep))
	require.NotContains(t, out.String(), "\x1b")
	require.Contains(t, out.String(), `"w\x1b[31mred"`)
}
