package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/xpwc/xpwc/spec"
)

// diffEntry is one entry of a cache file as diff compares it: its whole
// key and a SHA-256 of its bytes (v2 stores no checksum, so two files can
// only be compared by their content).
type diffEntry struct {
	Key         string `json:"key"`
	Weight      string `json:"weight"`
	Bias        string `json:"bias"`
	Seed        hex32  `json:"seed"`
	Fingerprint string `json:"fingerprint"`
	Source      string `json:"source"`
	Size        uint64 `json:"size"`
	SHA256      string `json:"sha256"`
}

// diffChange is an entry present in both files whose key or bytes differ.
type diffChange struct {
	Key    string    `json:"key"`
	Before diffEntry `json:"before"`
	After  diffEntry `json:"after"`
	// SeedChanged: the layout seed moved (a kernel switch). Fields names
	// every part that differs: seed, fingerprint, source, size, bytes; a
	// look-up with the key of one misses in the other unless only the
	// bytes changed.
	SeedChanged bool     `json:"seed_changed"`
	Fields      []string `json:"fields"`
}

// diffReport is `simrun diff A B`.
type diffReport struct {
	A, B    string       `json:"-"`
	FormatA string       `json:"format_a"`
	FormatB string       `json:"format_b"`
	Added   []diffEntry  `json:"added"`
	Removed []diffEntry  `json:"removed"`
	Changed []diffChange `json:"changed"`
	Same    int          `json:"same"`
	// GarbageBefore and GarbageAfter are each file's reclaimable bytes
	// (inspect's reclaimable_bytes), kept under their first name for
	// readers of the JSON; ReclaimableBefore and ReclaimableAfter are the
	// same figures under the name the text uses.
	GarbageBefore     uint64 `json:"garbage_before"`
	GarbageAfter      uint64 `json:"garbage_after"`
	ReclaimableBefore uint64 `json:"reclaimable_before"`
	ReclaimableAfter  uint64 `json:"reclaimable_after"`
}

// cmdDiff compares two cache files entry by entry. Exit 0 when they hold
// the same entries with the same bytes, 1 when they differ or one does not
// load, 2 usage.
func cmdDiff(e *env, args []string) int {
	fs := newFlagSet(e, "diff", "simrun diff A B [--json]")
	asJSON := fs.Bool("json", false, "print a JSON report instead of text")
	rest, ok := parseInterspersed(fs, args)
	if !ok {
		return exitUsage
	}
	if len(rest) != 2 {
		fs.Usage()
		return usageError(e, "diff", "two files are required, got %d", len(rest))
	}
	a, err := loadEntries(rest[0])
	if err != nil {
		fmt.Fprintf(e.stderr, "simrun diff: %v\n", err)
		return exitFor(err)
	}
	b, err := loadEntries(rest[1])
	if err != nil {
		fmt.Fprintf(e.stderr, "simrun diff: %v\n", err)
		return exitFor(err)
	}
	rep := diffFiles(a, b)
	rep.A, rep.B = rest[0], rest[1]
	if *asJSON {
		if err := writeJSON(e.stdout, rep); err != nil {
			fmt.Fprintf(e.stderr, "simrun diff: %v\n", err)
			return exitProblem
		}
	} else {
		printDiff(e.stdout, rep)
	}
	if len(rep.Added)+len(rep.Removed)+len(rep.Changed) > 0 {
		return exitProblem
	}
	return exitOK
}

// loadedFile is a parsed cache file's entries with their content hashes.
type loadedFile struct {
	format  spec.Format
	entries map[string]diffEntry
	garbage uint64 // spec.Garbage of its byte map, as inspect reports it
}

func loadEntries(path string) (*loadedFile, error) {
	f, size, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	format, err := spec.DetectFormat(f, size)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	lf := &loadedFile{format: format, entries: map[string]diffEntry{}}
	var entries []spec.Entry
	switch format {
	case spec.FormatV2:
		v, err := spec.ParseV2(f, size)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		entries, lf.garbage = v.Entries, uint64(spec.Garbage(spec.MapV2(v)))
	default:
		v, err := spec.ParseV3(f, size)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		entries, lf.garbage = v.Entries, uint64(spec.Garbage(spec.MapV3(v)))
	}
	for _, en := range entries {
		sum, err := entrySHA256(f, en)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		key := en.Key.V2Name()
		lf.entries[key] = diffEntry{Key: key, Weight: en.Key.Weight, Bias: en.Key.Bias, Seed: hex32(en.Key.Seed),
			Fingerprint: fmt.Sprintf("0x%016x", en.Key.Fingerprint), Source: fmt.Sprintf("0x%016x", en.Key.Source),
			Size: en.Size, SHA256: sum}
	}
	return lf, nil
}

// entrySHA256 is the content hash of an entry's bytes, in hex: what lets two
// files be compared entry by entry, v2 ones too, which store no checksum.
// Entries of a parsed file lie inside it (the parsers check), so the read
// is bounded by the file.
func entrySHA256(r io.ReaderAt, en spec.Entry) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(r, int64(en.Offset), int64(en.Size))); err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("entry %s: %w", en.Key.V2Name(), err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// diffFiles matches entries by name as ExecuTorch builds it (weight name
// + bias name), which both formats store, so a v2 and a v3 file compare
// too, and compares their whole keys and bytes: an entry whose source
// changed is changed even with equal bytes, since a look-up with either
// key misses in the other file.
func diffFiles(a, b *loadedFile) diffReport {
	rep := diffReport{FormatA: a.format.String(), FormatB: b.format.String(),
		Added: []diffEntry{}, Removed: []diffEntry{}, Changed: []diffChange{},
		GarbageBefore: a.garbage, GarbageAfter: b.garbage, ReclaimableBefore: a.garbage, ReclaimableAfter: b.garbage}
	// A v2 file stores no fingerprint or source: against one, only what
	// both store is compared.
	v2 := a.format == spec.FormatV2 || b.format == spec.FormatV2
	for k, x := range a.entries {
		y, ok := b.entries[k]
		switch {
		case !ok:
			rep.Removed = append(rep.Removed, x)
		case len(changedFields(x, y, v2)) > 0:
			rep.Changed = append(rep.Changed, diffChange{Key: k, Before: x, After: y, SeedChanged: x.Seed != y.Seed, Fields: changedFields(x, y, v2)})
		default:
			rep.Same++
		}
	}
	for k, y := range b.entries {
		if _, ok := a.entries[k]; !ok {
			rep.Added = append(rep.Added, y)
		}
	}
	sort.Slice(rep.Added, func(i, j int) bool { return rep.Added[i].Key < rep.Added[j].Key })
	sort.Slice(rep.Removed, func(i, j int) bool { return rep.Removed[i].Key < rep.Removed[j].Key })
	sort.Slice(rep.Changed, func(i, j int) bool { return rep.Changed[i].Key < rep.Changed[j].Key })
	return rep
}

// changedFields names what differs between two entries of one name (with
// v2, of what a v2 file stores).
func changedFields(x, y diffEntry, v2 bool) []string {
	var out []string
	for _, f := range []struct {
		name string
		diff bool
	}{
		{"seed", x.Seed != y.Seed}, {"fingerprint", !v2 && x.Fingerprint != y.Fingerprint}, {"source", !v2 && x.Source != y.Source},
		{"size", x.Size != y.Size}, {"bytes", x.SHA256 != y.SHA256},
	} {
		if f.diff {
			out = append(out, f.name)
		}
	}
	return out
}

func printDiff(w io.Writer, r diffReport) {
	fmt.Fprintf(w, "a: %s (%s)\nb: %s (%s)\n", r.A, r.FormatA, r.B, r.FormatB)
	key := func(x diffEntry) string {
		return fmt.Sprintf("seed 0x%08x  fingerprint %s  source %s  %d bytes  sha256 %.16s",
			uint32(x.Seed), x.Fingerprint, x.Source, x.Size, x.SHA256)
	}
	name := func(x diffEntry) string { return termSafe(x.Weight) + "  " + dash(termSafe(x.Bias)) }
	for _, x := range r.Removed {
		fmt.Fprintf(w, "- %s  %s\n", name(x), key(x))
	}
	for _, y := range r.Added {
		fmt.Fprintf(w, "+ %s  %s\n", name(y), key(y))
	}
	for _, c := range r.Changed {
		fmt.Fprintf(w, "~ %s  %s differ\n    a: %s\n    b: %s\n", name(c.Before), strings.Join(c.Fields, ", "), key(c.Before), key(c.After))
	}
	fmt.Fprintf(w, "%d same, %d added, %d removed, %d changed; reclaimable %d -> %d bytes\n",
		r.Same, len(r.Added), len(r.Removed), len(r.Changed), r.ReclaimableBefore, r.ReclaimableAfter)
}

// hex32 is a 32-bit bit pattern (a layout seed): hex in JSON as in text,
// like the 64-bit fingerprints and digests beside it.
type hex32 uint32

func (h hex32) MarshalJSON() ([]byte, error) { return fmt.Appendf(nil, `"0x%08x"`, uint32(h)), nil }

func (h *hex32) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 32)
	*h = hex32(v)
	return err
}
