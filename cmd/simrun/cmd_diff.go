package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/xpwc/xpwc/spec"
)

// diffEntry is one entry of a cache file as diff compares it: its key and
// a SHA-256 of its bytes (v2 stores no checksum, so two files can only be
// compared by their content).
type diffEntry struct {
	Key    string `json:"key"`
	Seed   uint32 `json:"seed"`
	Size   uint64 `json:"size"`
	SHA256 string `json:"sha256"`
}

// diffChange is an entry present in both files whose bytes or seed differ.
type diffChange struct {
	Key    string    `json:"key"`
	Before diffEntry `json:"before"`
	After  diffEntry `json:"after"`
	// SeedChanged: the layout seed moved (a kernel switch); else the same
	// layout holds other bytes (a source change, or damage).
	SeedChanged bool `json:"seed_changed"`
}

// diffReport is `simrun diff A B`.
type diffReport struct {
	A, B          string       `json:"-"`
	FormatA       string       `json:"format_a"`
	FormatB       string       `json:"format_b"`
	Added         []diffEntry  `json:"added"`
	Removed       []diffEntry  `json:"removed"`
	Changed       []diffChange `json:"changed"`
	Same          int          `json:"same"`
	GarbageBefore uint64       `json:"garbage_before"`
	GarbageAfter  uint64       `json:"garbage_after"`
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
		return exitProblem
	}
	b, err := loadEntries(rest[1])
	if err != nil {
		fmt.Fprintf(e.stderr, "simrun diff: %v\n", err)
		return exitProblem
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
		lf.entries[key] = diffEntry{Key: key, Seed: en.Key.Seed, Size: en.Size, SHA256: sum}
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

// diffFiles compares by key as ExecuTorch builds it (weight name + bias
// name), which both formats store, so a v2 and a v3 file compare too.
func diffFiles(a, b *loadedFile) diffReport {
	rep := diffReport{FormatA: a.format.String(), FormatB: b.format.String(),
		Added: []diffEntry{}, Removed: []diffEntry{}, Changed: []diffChange{},
		GarbageBefore: a.garbage, GarbageAfter: b.garbage}
	for k, x := range a.entries {
		y, ok := b.entries[k]
		switch {
		case !ok:
			rep.Removed = append(rep.Removed, x)
		case x.SHA256 != y.SHA256 || x.Seed != y.Seed || x.Size != y.Size:
			rep.Changed = append(rep.Changed, diffChange{Key: k, Before: x, After: y, SeedChanged: x.Seed != y.Seed})
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

func printDiff(w io.Writer, r diffReport) {
	fmt.Fprintf(w, "a: %s (%s)\nb: %s (%s)\n", r.A, r.FormatA, r.B, r.FormatB)
	for _, x := range r.Removed {
		fmt.Fprintf(w, "- %s  seed 0x%08x  %d bytes  sha256 %.16s\n", termSafe(x.Key), x.Seed, x.Size, x.SHA256)
	}
	for _, y := range r.Added {
		fmt.Fprintf(w, "+ %s  seed 0x%08x  %d bytes  sha256 %.16s\n", termSafe(y.Key), y.Seed, y.Size, y.SHA256)
	}
	for _, c := range r.Changed {
		what := "bytes"
		if c.SeedChanged {
			what = fmt.Sprintf("seed 0x%08x -> 0x%08x", c.Before.Seed, c.After.Seed)
		}
		fmt.Fprintf(w, "~ %s  %s  %d -> %d bytes  sha256 %.16s -> %.16s\n", termSafe(c.Key), what, c.Before.Size, c.After.Size, c.Before.SHA256, c.After.SHA256)
	}
	fmt.Fprintf(w, "%d same, %d added, %d removed, %d changed; garbage %d -> %d bytes\n",
		r.Same, len(r.Added), len(r.Removed), len(r.Changed), r.GarbageBefore, r.GarbageAfter)
}
