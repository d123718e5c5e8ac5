package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/xpwc/xpwc/spec"
)

// inspectReport is what `simrun inspect` finds in one file; --json prints it
// as is. Fingerprints, sources and CRCs are hex strings so JSON readers that
// use float64 do not round them; seeds, offsets and sizes are numbers.
type inspectReport struct {
	Path         string        `json:"path"`
	Valid        bool          `json:"valid"`
	Format       string        `json:"format"`
	Version      uint32        `json:"version"`
	Size         int64         `json:"size"`
	PageSize     int           `json:"page_size,omitempty"`
	Generation   uint64        `json:"generation,omitempty"`
	Error        string        `json:"error"`
	Problems     []problem     `json:"problems"`
	Slots        []slotReport  `json:"slots,omitempty"`
	Entries      []entryReport `json:"entries"`
	LiveBytes    uint64        `json:"live_bytes"`
	GarbageBytes uint64        `json:"garbage_bytes"`
	// PaddingBytes is what alignment alone left unused (spec.Space), apart
	// from the garbage of dropped data. ReclaimableBytes is what a rewrite
	// would not keep (spec.Garbage): the garbage and the padding before an
	// appended index, the cache's own count (launch's garbage_bytes) that
	// decides compaction (G4).
	PaddingBytes     uint64         `json:"padding_bytes"`
	ReclaimableBytes uint64         `json:"reclaimable_bytes"`
	Footer           *spec.V2Footer `json:"v2_footer,omitempty"`
	Index            *indexLocation `json:"index,omitempty"`
	// ExecuTorch is, for a v2 file, what ExecuTorch's own loader would do
	// with it (spec.ExecuTorchLoad): its rules are looser than ParseV2's,
	// and a file it rejects it truncates.
	ExecuTorch *executorchReport `json:"executorch,omitempty"`
	// EntriesBeforeError: the file is invalid and Entries are those its
	// index yielded before the first error (never served by a cache).
	EntriesBeforeError bool `json:"entries_before_error,omitempty"`
	// Map is every byte range of a valid file, in order (--map).
	Map []mapRange `json:"map,omitempty"`
}

// problem is one failed check, by the name of its sentinel in package spec.
type problem struct {
	Name    string `json:"name"`
	Message string `json:"message"`
	Entry   string `json:"entry,omitempty"`
}

type slotReport struct {
	Slot       int    `json:"slot"`
	Generation uint64 `json:"generation"`
	Used       bool   `json:"used"`
	Error      string `json:"error"`
}

type indexLocation struct {
	Offset uint64 `json:"offset"`
	Length uint64 `json:"length"`
	CRC    string `json:"crc,omitempty"`
}

type mapRange struct {
	Offset int64  `json:"offset"`
	Length int64  `json:"length"`
	Kind   string `json:"kind"`
	Name   string `json:"name,omitempty"`
}

func toMap(rs []spec.Range) []mapRange {
	out := make([]mapRange, len(rs))
	for i, r := range rs {
		out[i] = mapRange{Offset: r.Off, Length: r.Len, Kind: string(r.Kind), Name: r.Name}
	}
	return out
}

type executorchReport struct {
	Accepts bool   `json:"accepts"`
	Entries int    `json:"entries"`
	Rule    string `json:"rule,omitempty"`
	Offset  int64  `json:"offset,omitempty"`
}

type entryReport struct {
	Name string `json:"name"`
	// Key is the key as ExecuTorch builds it, weight name then bias name
	// concatenated: all a v2 file stores, so for v2 Weight and Bias are
	// empty (the split is not known); v3 keeps them apart.
	Key         string `json:"key"`
	Weight      string `json:"weight"`
	Bias        string `json:"bias"`
	Offset      uint64 `json:"offset"`
	Size        uint64 `json:"size"`
	Seed        hex32  `json:"seed"`
	Fingerprint string `json:"fingerprint,omitempty"`
	Source      string `json:"source,omitempty"`
	CRC         string `json:"crc,omitempty"`
	// CopyID names this copy of the packing (v3): a re-pack has another
	// one even when its bytes, and so its CRC, equal the copy it replaced.
	CopyID string `json:"copy_id,omitempty"`
	// Checksum is "ok" or "mismatch" for v3 data, "none" for v2, which has
	// no data checksums (what v2 gives up against G1).
	Checksum string `json:"checksum"`
	// SHA256 is the content hash of the entry's bytes (valid files): v2
	// stores no checksum, and this is what compares two files (simrun diff).
	SHA256 string `json:"sha256,omitempty"`
}

// cmdInspect checks a cache file copied off a device: which format, whether
// it loads, every entry, and every problem by name. Exit 0 valid, 1 invalid
// or unreadable, 2 usage.
func cmdInspect(e *env, args []string) int {
	fs := newFlagSet(e, "inspect", "simrun inspect FILE [--json] [--map] [--max-index-bytes N]",
		"       simrun inspect FILE --svg > FILE.svg",
		"  --svg draws the byte map (what --map lists) as a picture, to stdout like every other output")
	asJSON := fs.Bool("json", false, "print a JSON report instead of text")
	withMap := fs.Bool("map", false, "also list every byte range of the file, in order, with what it holds")
	asSVG := fs.Bool("svg", false, "draw the file's byte map as an SVG picture on stdout instead of the report (a valid cache file only)")
	maxIndex := fs.Uint64("max-index-bytes", spec.DefaultMaxIndexBytes, "longest index to read, in `bytes`; a longer one is reported as ErrIndexTooLarge unread")
	// Flags may come before or after FILE.
	rest, ok := parseInterspersed(fs, args)
	if !ok {
		return exitUsage
	}
	if len(rest) != 1 {
		fs.Usage()
		if len(rest) == 0 {
			return usageError(e, "inspect", "a FILE is required")
		}
		return usageError(e, "inspect", "one FILE at a time, got %d", len(rest))
	}
	path := rest[0]

	if *maxIndex == 0 {
		return usageError(e, "inspect", "--max-index-bytes 0 is out of range (want at least 1)")
	}
	if *asSVG && (*asJSON || *withMap) {
		return usageError(e, "inspect", "--svg draws the map itself; it takes neither --json nor --map")
	}
	rep, err := inspectPath(path, spec.Parser{MaxIndexBytes: *maxIndex})
	if err != nil {
		fmt.Fprintf(e.stderr, "simrun inspect: %v\n", err)
		return exitFor(err)
	}
	if *asSVG {
		return inspectSVG(e, rep)
	}
	if !*withMap {
		rep.Map = nil
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(e.stderr, "simrun inspect: %v\n", err)
			return exitProblem
		}
	} else if err := printInspect(e.stdout, rep); err != nil {
		fmt.Fprintf(e.stderr, "simrun inspect: %v\n", err)
		return exitProblem
	}
	if !rep.Valid {
		fmt.Fprintf(e.stderr, "simrun inspect: %s: %s\n", path, rep.Error)
		return exitProblem
	}
	return exitOK
}

// inspectSVG draws a valid file's byte map. A file that is no cache file
// at all is input inspect cannot use (exit 2); a cache file that fails its
// checks is a finding (exit 1) whose report, not a picture, says why. Both
// are one line on stderr and nothing on stdout.
func inspectSVG(e *env, rep *inspectReport) int {
	switch {
	case rep.Format == spec.FormatUnknown.String():
		fmt.Fprintf(e.stderr, "simrun inspect: %s: not a cache file (%s); nothing to draw\n", rep.Path, rep.Error)
		return exitUsage
	case !rep.Valid:
		fmt.Fprintf(e.stderr, "simrun inspect: %s: %s; an invalid file has no byte map to draw (simrun inspect %s says why)\n", rep.Path, rep.Error, rep.Path)
		return exitProblem
	}
	if err := writeSVG(e.stdout, rep); err != nil {
		fmt.Fprintf(e.stderr, "simrun inspect: %v\n", err)
		return exitProblem
	}
	return exitOK
}

// inspectPath opens path and inspects it. The error is for a file that
// cannot be read at all; a corrupt file gives a report with Valid false.
func inspectPath(path string, p spec.Parser) (*inspectReport, error) {
	f, size, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return inspect(f, size, path, p)
}

func inspect(r io.ReaderAt, size int64, path string, p spec.Parser) (*inspectReport, error) {
	rep := &inspectReport{Path: path, Size: size, Problems: []problem{}, Entries: []entryReport{}}
	format, err := spec.DetectFormat(r, size)
	rep.Format = format.String()
	if err != nil {
		if !errors.Is(err, spec.ErrCorrupt) {
			return nil, err
		}
		rep.fail(err)
		return rep, nil
	}
	switch format {
	case spec.FormatV2:
		return rep, inspectV2(rep, r, size, p)
	default:
		return rep, inspectV3(rep, r, size, p)
	}
}

// fail records the parse error as the report's error and its problems.
func (rep *inspectReport) fail(err error) {
	rep.Valid = false
	rep.Error = err.Error()
	for _, n := range spec.ProblemNames(err) {
		rep.Problems = append(rep.Problems, problem{Name: n, Message: err.Error()})
	}
	// A damaged index lists what it yielded before its first inconsistency:
	// what an engineer needs to see which entry broke it.
	var de *spec.DecodedError
	if errors.As(err, &de) {
		rep.EntriesBeforeError = true
		for _, en := range de.Decoded {
			er := entryReport{
				Name: en.Key.Name(), Key: en.Key.V2Name(), Weight: en.Key.Weight, Bias: en.Key.Bias,
				Offset: en.Offset, Size: en.Size, Seed: hex32(en.Key.Seed), Checksum: "unchecked",
			}
			if rep.Format == spec.FormatV2.String() {
				// As for a valid v2 file: the stored key, no split.
				er.Name, er.Weight, er.Bias = en.Key.Weight, "", ""
			}
			rep.Entries = append(rep.Entries, er)
		}
	}
}

func inspectV2(rep *inspectReport, r io.ReaderAt, size int64, p spec.Parser) error {
	var fb [spec.V2FooterSize]byte
	if _, err := r.ReadAt(fb[:], size-spec.V2FooterSize); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	foot := spec.DecodeV2Footer(fb)
	rep.Footer = &foot
	rep.Version = foot.Version
	// An index too long to walk gets no verdict; any other error is I/O.
	et, err := spec.ExecuTorchLoad(r, size)
	if err != nil && !errors.Is(err, spec.ErrIndexTooLarge) {
		return err
	}
	if err == nil {
		rep.ExecuTorch = &executorchReport{Accepts: et.Accepts, Entries: et.Entries, Rule: et.Rule, Offset: et.Off}
	}
	v, err := p.ParseV2(r, size)
	if err != nil {
		if !errors.Is(err, spec.ErrCorrupt) {
			return err
		}
		rep.fail(err)
		return nil
	}
	rep.Valid = true
	m, err := spec.ExplainDead(spec.MapV2(v), r, spec.FormatV2)
	if err != nil {
		return err
	}
	rep.Index = &indexLocation{Offset: v.IndexStart, Length: uint64(size) - spec.V2FooterSize - v.IndexStart}
	rep.LiveBytes = v.LiveBytes
	rep.space(m, spec.V2Alignment)
	for _, en := range v.Entries {
		sum, err := entrySHA256(r, en)
		if err != nil {
			return err
		}
		rep.Entries = append(rep.Entries, entryReport{
			Name: en.Key.Weight, Key: en.Key.Weight,
			Offset: en.Offset, Size: en.Size, Seed: hex32(en.Key.Seed),
			Checksum: "none", SHA256: sum,
		})
	}
	return nil
}

func inspectV3(rep *inspectReport, r io.ReaderAt, size int64, p spec.Parser) error {
	rep.Version = spec.V3Version
	commits, slotErrs, err := spec.ReadCommitSlots(r, size)
	if err != nil && !errors.Is(err, spec.ErrCorrupt) {
		return err
	}
	v, perr := p.ParseV3(r, size)
	if perr != nil && !errors.Is(perr, spec.ErrCorrupt) {
		return perr
	}
	if err == nil && v == nil && perr != nil && !errors.Is(perr, spec.ErrNoCommit) {
		// ParseV3 returns the newest commit's index error: show it on that
		// slot, which passed its own checks.
		newest := -1
		for pos := range 2 {
			if slotErrs[pos] == nil && (newest < 0 || commits[pos].Generation > commits[newest].Generation) {
				newest = pos
			}
		}
		if newest >= 0 {
			slotErrs[newest] = perr
		}
	}
	if err == nil {
		for pos := range 2 {
			s := slotReport{Slot: pos, Generation: commits[pos].Generation}
			if v != nil {
				slotErrs[pos] = v.SlotErrors[pos]
				s.Used = v.Slot == pos
			}
			if slotErrs[pos] != nil {
				s.Error = slotErrs[pos].Error()
				if commits[pos].Generation == 0 && errors.Is(slotErrs[pos], spec.ErrNoCommit) {
					s.Error = "never committed"
				}
				var ve *spec.VersionError
				if errors.As(slotErrs[pos], &ve) {
					rep.Version = ve.Got
				}
			}
			if commits[pos].PageSize != 0 && rep.PageSize == 0 {
				rep.PageSize = int(commits[pos].PageSize)
			}
			rep.Slots = append(rep.Slots, s)
		}
	}
	if perr != nil {
		rep.fail(perr)
		return nil
	}
	rep.Valid = true
	m, err := spec.ExplainDead(spec.MapV3(v), r, spec.FormatV3)
	if err != nil {
		return err
	}
	rep.PageSize = v.PageSize
	rep.Generation = v.Commit.Generation
	rep.Index = &indexLocation{Offset: v.Commit.IndexOff, Length: v.Commit.IndexLen, CRC: fmt.Sprintf("0x%08x", v.Commit.IndexCRC)}
	rep.LiveBytes = v.LiveBytes
	rep.space(m, int64(v.PageSize))
	// A slot passed over for a newer one is a problem worth naming only
	// when it failed a check, not when it is merely older.
	for pos, se := range v.SlotErrors {
		if se != nil && !errors.Is(se, spec.ErrNoCommit) {
			for _, n := range spec.ProblemNames(se) {
				rep.Problems = append(rep.Problems, problem{Name: n, Message: fmt.Sprintf("slot %d: %v", pos, se)})
			}
		}
	}
	for _, en := range v.Entries {
		er := entryReport{
			Name: en.Key.Name(), Key: en.Key.V2Name(), Weight: en.Key.Weight, Bias: en.Key.Bias,
			Offset: en.Offset, Size: en.Size, Seed: hex32(en.Key.Seed),
			Fingerprint: fmt.Sprintf("0x%016x", en.Key.Fingerprint),
			Source:      fmt.Sprintf("0x%016x", en.Key.Source),
			CRC:         fmt.Sprintf("0x%08x", en.CRC),
			CopyID:      fmt.Sprintf("0x%016x", en.CopyID),
			Checksum:    "ok",
		}
		if err := spec.VerifyEntryData(r, en); err != nil {
			if !errors.Is(err, spec.ErrCorrupt) {
				return err
			}
			// Bad data makes the file invalid: the cache would reject the
			// entry under any verifying policy (G1).
			er.Checksum = "mismatch"
			rep.Valid = false
			if rep.Error == "" {
				rep.Error = fmt.Sprintf("entry %s: %v", displayName(en.Key), err)
			}
			rep.Problems = append(rep.Problems, problem{Name: spec.ProblemName(err), Message: err.Error(), Entry: displayName(en.Key)})
		}
		if er.SHA256, err = entrySHA256(r, en); err != nil {
			return err
		}
		rep.Entries = append(rep.Entries, er)
	}
	return nil
}

// termSafe is s as text output shows it: as is when every rune is
// printable, else quoted, so that bytes a file holds (an escape sequence in
// a forged name) never reach a terminal raw. JSON output escapes by itself.
func termSafe(s string) string {
	if utf8.ValidString(s) && strings.IndexFunc(s, func(r rune) bool { return !strconv.IsPrint(r) }) < 0 {
		return s
	}
	return strconv.Quote(s)
}

// displayName shows a key's name without the NUL separator.
func displayName(k spec.Key) string {
	if k.Bias == "" {
		return k.Weight
	}
	return k.Weight + " + " + k.Bias
}

func printInspect(w io.Writer, rep *inspectReport) error {
	var b strings.Builder
	fmt.Fprintf(&b, "file:     %s (%d bytes)\n", rep.Path, rep.Size)
	fmt.Fprintf(&b, "format:   %s", rep.Format)
	if rep.Version != 0 {
		fmt.Fprintf(&b, " (version %d)", rep.Version)
	}
	b.WriteString("\n")
	if rep.PageSize != 0 {
		fmt.Fprintf(&b, "page:     %d bytes\n", rep.PageSize)
	}
	for _, s := range rep.Slots {
		state := "ok"
		if s.Error != "" {
			state = s.Error
		}
		used := ""
		if s.Used {
			used = " (loaded)"
		}
		fmt.Fprintf(&b, "slot %d:   generation %d%s: %s\n", s.Slot, s.Generation, used, state)
	}
	if rep.Index != nil {
		fmt.Fprintf(&b, "index:    offset %d, %d bytes", rep.Index.Offset, rep.Index.Length)
		if rep.Index.CRC != "" {
			fmt.Fprintf(&b, ", crc %s", rep.Index.CRC)
		}
		b.WriteString("\n")
	}
	if rep.Footer != nil && !rep.Valid {
		f := rep.Footer
		fmt.Fprintf(&b, "footer:   index_start %d, entry_count %d, magic 0x%08x, version %d\n", f.IndexStart, f.Count, f.Magic, f.Version)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	if len(rep.Entries) > 0 {
		if rep.EntriesBeforeError {
			fmt.Fprintf(w, "entries:  %d decoded before the error (not checked against each other; no cache serves them)\n", len(rep.Entries))
		} else {
			fmt.Fprintf(w, "entries:  %d\n", len(rep.Entries))
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		// Weight and bias in columns of their own; a v2 file stores only
		// the two names glued together, shown as one column.
		glued := rep.Format == spec.FormatV2.String()
		if glued {
			fmt.Fprintln(tw, "  NAME (WEIGHT+BIAS, v2)\tOFFSET\tSIZE\tSEED\tFINGERPRINT\tSOURCE\tCHECKSUM")
		} else {
			fmt.Fprintln(tw, "  WEIGHT\tBIAS\tOFFSET\tSIZE\tSEED\tFINGERPRINT\tSOURCE\tCHECKSUM")
		}
		for _, en := range rep.Entries {
			name := dash(termSafe(en.Weight)) + "\t" + dash(termSafe(en.Bias))
			if glued {
				name = termSafe(en.Key)
			}
			fmt.Fprintf(tw, "  %s\t%d\t%d\t0x%08x\t%s\t%s\t%s\n",
				name, en.Offset, en.Size, uint32(en.Seed), dash(en.Fingerprint), dash(en.Source), en.Checksum)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if !rep.EntriesBeforeError {
			fmt.Fprintf(w, "live:     %d bytes\ngarbage:  %d bytes\npadding:  %d bytes\nrewrite:  frees %d bytes\n",
				rep.LiveBytes, rep.GarbageBytes, rep.PaddingBytes, rep.ReclaimableBytes)
		}
	}
	for _, p := range rep.Problems {
		if p.Entry != "" {
			fmt.Fprintf(w, "problem:  %s (entry %s): %s\n", p.Name, termSafe(p.Entry), p.Message)
		} else {
			fmt.Fprintf(w, "problem:  %s: %s\n", p.Name, p.Message)
		}
	}
	if len(rep.Map) > 0 {
		fmt.Fprintf(w, "map:      %d ranges (offset, length, what)\n", len(rep.Map))
		for _, m := range rep.Map {
			fmt.Fprintf(w, "  %12d %12d  %-8s %s\n", m.Offset, m.Length, m.Kind, termSafe(m.Name))
		}
	}
	if et := rep.ExecuTorch; et != nil {
		if et.Accepts {
			fmt.Fprintf(w, "executorch: its loader loads %d entries\n", et.Entries)
		} else {
			fmt.Fprintf(w, "executorch: its loader rejects the file at offset %d (%s), then truncates it to 0 bytes\n", et.Offset, et.Rule)
		}
	}
	if rep.Valid && rep.Format == spec.FormatV2.String() {
		// What a user must know before handing an ExecuTorch file to a
		// launch: only a named format converts it, and what that loses.
		fmt.Fprintln(w, "launch:   stays v2 unless --format v3 is named, which converts it and drops the entries that launch does not look up")
	}
	verdict := "valid"
	if !rep.Valid {
		verdict = "INVALID"
	}
	_, err := fmt.Fprintf(w, "result:   %s\n", verdict)
	return err
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// space fills the report's map, garbage, padding and reclaimable bytes
// from the file's byte map, dead ranges explained, and its page size. The
// map shown is spec.SpaceMap's, so its dead ranges are the garbage and its
// padding ranges the padding; what a rewrite frees is counted on the map
// as the parser laid it out (spec.Garbage), where the gap before an
// appended index is dead.
func (rep *inspectReport) space(m []spec.Range, align int64) {
	shown := spec.SpaceMap(m, align)
	rep.Map = toMap(shown)
	g, p := spec.Space(m, align)
	rep.GarbageBytes, rep.PaddingBytes, rep.ReclaimableBytes = uint64(g), uint64(p), uint64(spec.Garbage(m))
}
