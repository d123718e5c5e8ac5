package fuzz

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/xpwc/xpwc/spec"
)

// checkErr asserts the G7 contract for a parse of in-memory bytes: the error
// is corruption (a bytes.Reader has no I/O errors) and carries its type.
func checkErr(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, spec.ErrCorrupt) {
		t.Fatalf("error does not match ErrCorrupt: %v", err)
	}
	var fe *spec.FormatError
	var ve *spec.VersionError
	if !errors.As(err, &fe) && !errors.As(err, &ve) {
		t.Fatalf("error is neither *FormatError nor *VersionError: %v", err)
	}
}

// strictReader is a bytes.Reader that fails the test when a parser reads
// outside [0, size): the parsers must never read out of bounds (G7), even
// through a reader that would merely return io.EOF.
type strictReader struct {
	t    *testing.T
	data []byte
}

func (r strictReader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off > int64(len(r.data)) || int64(len(p)) > int64(len(r.data))-off {
		r.t.Fatalf("read of %d bytes at %d outside a %d-byte file", len(p), off, len(r.data))
	}
	return copy(p, r.data[off:]), nil
}

// checkEntries asserts what every accepted index guarantees its users:
// ranges inside [lo, hi), no two overlapping, names unique.
func checkEntries(t *testing.T, entries []spec.Entry, lo, hi uint64, name func(spec.Entry) string) {
	t.Helper()
	seen := make(map[string]bool, len(entries))
	for i, e := range entries {
		if e.Offset < lo || e.Offset > hi || e.Size > hi-e.Offset {
			t.Fatalf("entry %d [%d,+%d) outside [%d,%d)", i, e.Offset, e.Size, lo, hi)
		}
		if seen[name(e)] {
			t.Fatalf("duplicate name %q accepted", name(e))
		}
		seen[name(e)] = true
	}
	// Quadratic, but accepted inputs are small under the fuzzer.
	if len(entries) > 2000 {
		return
	}
	for i, a := range entries {
		for j, b := range entries[:i] {
			if a.Size > 0 && b.Size > 0 && a.Offset < b.End() && b.Offset < a.End() {
				t.Fatalf("entries %d and %d overlap", j, i)
			}
		}
	}
}

// checkV2 parses data as v2 and checks an accepted file re-encodes to its
// own index bytes and parses again to the same index.
func checkV2(t *testing.T, data []byte) *spec.V2File {
	t.Helper()
	r := strictReader{t, data}
	v, err := spec.ParseV2(r, int64(len(data)))
	m, mErr := spec.ParseV2(spec.Mapped{ReaderAt: r, Mem: data}, int64(len(data)))
	sameVerdict(t, err, mErr, func() bool { return equalEntries(v.Entries, m.Entries) })
	if err != nil {
		checkErr(t, err)
		return nil
	}
	if len(v.Entries) == 0 {
		t.Fatal("accepted a v2 file with no entries")
	}
	checkEntries(t, v.Entries, 0, v.IndexStart, func(e spec.Entry) string { return e.Key.Weight })
	for _, e := range v.Entries {
		if e.Offset%spec.V2Alignment != 0 || e.Key.Bias != "" || e.Key.Weight == "" {
			t.Fatalf("accepted entry %+v", e)
		}
	}
	if v.LiveBytes+v.GarbageBytes != v.IndexStart {
		t.Fatalf("live %d + garbage %d != index_start %d", v.LiveBytes, v.GarbageBytes, v.IndexStart)
	}
	// ParseV2 is ExecuTorch's loader made stricter: whatever it accepts,
	// ExecuTorch loads too, every entry (else handing it the file would
	// make ExecuTorch truncate it).
	et, err := spec.ExecuTorchLoad(strictReader{t, data}, int64(len(data)))
	if err != nil || !et.Accepts || et.Entries != len(v.Entries) {
		t.Fatalf("ParseV2 accepts %d entries, ExecuTorch's rules give %+v (%v)", len(v.Entries), et, err)
	}
	checkMap(t, spec.MapV2(v), strictReader{t, data}, spec.FormatV2, v.Size)
	enc := spec.EncodeV2Index(v.IndexStart, v.Entries)
	if !bytes.Equal(enc, data[v.IndexStart:]) {
		t.Fatal("accepted v2 index does not re-encode to its own bytes")
	}
	again := append(append([]byte(nil), data[:v.IndexStart]...), enc...)
	w, err := spec.ParseV2(bytes.NewReader(again), int64(len(again)))
	if err != nil {
		t.Fatalf("re-encoded v2 file rejected: %v", err)
	}
	if !equalEntries(v.Entries, w.Entries) {
		t.Fatal("re-encoded v2 file parses to a different index")
	}
	return v
}

// checkV3 is checkV2 for v3, plus data verification on every entry.
func checkV3(t *testing.T, data []byte) *spec.V3File {
	t.Helper()
	r := strictReader{t, data}
	v, err := spec.ParseV3(r, int64(len(data)))
	m, mErr := spec.ParseV3(spec.Mapped{ReaderAt: r, Mem: data}, int64(len(data)))
	sameVerdict(t, err, mErr, func() bool { return v.Commit == m.Commit && equalEntries(v.Entries, m.Entries) })
	if err != nil {
		checkErr(t, err)
		return nil
	}
	c := v.Commit
	size := uint64(len(data))
	if c.Generation == 0 || c.IndexOff < uint64(v.PageSize) || c.IndexLen > size-c.IndexOff {
		t.Fatalf("accepted commit %+v in a %d-byte file", c, size)
	}
	checkEntries(t, v.Entries, uint64(v.PageSize), size, func(e spec.Entry) string { return e.Key.Name() })
	for i, e := range v.Entries {
		if e.Offset%uint64(v.PageSize) != 0 || e.Key.Weight == "" {
			t.Fatalf("accepted entry %d %+v", i, e)
		}
		if e.Size > 0 && e.Offset < c.IndexOff+c.IndexLen && c.IndexOff < e.End() {
			t.Fatalf("entry %d overlaps the index", i)
		}
		if err := spec.VerifyEntryData(r, e); err != nil && !errors.Is(err, spec.ErrChecksum) {
			t.Fatalf("VerifyEntryData on an accepted entry: %v", err)
		}
	}
	if v.LiveBytes+v.GarbageBytes+c.IndexLen+uint64(v.PageSize) != size {
		t.Fatalf("byte accounting: live %d garbage %d index %d page %d size %d", v.LiveBytes, v.GarbageBytes, c.IndexLen, v.PageSize, size)
	}
	checkMap(t, spec.MapV3(v), r, spec.FormatV3, v.Size)
	idx := spec.EncodeV3Index(v.Entries)
	if !bytes.Equal(idx, data[c.IndexOff:c.IndexOff+c.IndexLen]) {
		t.Fatal("accepted v3 index does not re-encode to its own bytes")
	}
	if f, err := spec.DetectFormat(r, int64(len(data))); err != nil || f != spec.FormatV3 {
		t.Fatalf("accepted v3 file detected as %v, %v", f, err)
	}
	return v
}

// checkMap holds the byte map of an accepted file, and the same map with
// its dead ranges explained, to being a partition of the file in order; the
// explanation keeps the garbage.
func checkMap(t *testing.T, rs []spec.Range, r io.ReaderAt, format spec.Format, size int64) {
	t.Helper()
	ex, err := spec.ExplainDead(rs, r, format)
	if err != nil {
		t.Fatalf("ExplainDead: %v", err)
	}
	for _, m := range [][]spec.Range{rs, ex} {
		pos := int64(0)
		for _, x := range m {
			if x.Off != pos || x.Len <= 0 {
				t.Fatalf("byte map not a partition at %d: %+v", pos, x)
			}
			pos += x.Len
		}
		if pos != size {
			t.Fatalf("byte map covers %d of %d bytes", pos, size)
		}
	}
	if spec.Garbage(rs) != spec.Garbage(ex) {
		t.Fatalf("ExplainDead changed the garbage: %d, %d", spec.Garbage(rs), spec.Garbage(ex))
	}
}

func equalEntries(a, b []spec.Entry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// sameVerdict requires a parse from memory (spec.Mapped: decoded in place,
// as a load from a mapping is) to give what the parse through a reader
// gave: the same error, or the same result (same).
func sameVerdict(t *testing.T, err, memErr error, same func() bool) {
	t.Helper()
	switch {
	case (err == nil) != (memErr == nil):
		t.Fatalf("from a reader: %v; from memory: %v", err, memErr)
	case err != nil && err.Error() != memErr.Error():
		t.Fatalf("from a reader: %v; from memory: %v", err, memErr)
	case err == nil && !same():
		t.Fatal("from memory, the file parses to a different index")
	}
}
