package spec

import (
	"errors"
	"fmt"
	"strings"
)

// Every error a parser in this package returns for bad file content matches
// ErrCorrupt with errors.Is, so a caller that only needs "rebuild or not"
// (G7: any content yields a valid load or a typed error and a clean rebuild)
// tests one sentinel. The specific sentinels below say which check failed;
// *FormatError adds where and which value.
var ErrCorrupt = errors.New("spec: corrupt cache file")

// corrupt makes a sentinel that wraps ErrCorrupt, so that errors.Is(sentinel,
// ErrCorrupt) holds without every FormatError having to carry both.
func corrupt(msg string) error { return fmt.Errorf("%w: %s", ErrCorrupt, msg) }

// Framing: returned before any index byte is trusted.
var (
	// ErrTooSmall is returned when the file is shorter than the smallest
	// well-formed file of its format (v2: the 20-byte footer; v3: the header
	// page).
	ErrTooSmall = corrupt("file too small")
	// ErrBadMagic is returned when a magic number (v2 footer, v3 commit slot,
	// v3 index block) is not the expected one, and by DetectFormat when no
	// format's magic is present.
	ErrBadMagic = corrupt("bad magic")
	// ErrUnsupportedVersion is returned, wrapped in *VersionError, when the
	// format version field names a version this reader does not parse (for
	// example an ExecuTorch v1 file, whose entries have no seed).
	ErrUnsupportedVersion = corrupt("unsupported format version")
	// ErrBadPageSize is returned when a v3 commit slot records a writer page
	// size that is not a power of two in [MinPageSize, MaxPageSize].
	ErrBadPageSize = corrupt("bad page size")
	// ErrUnsupportedChecksum is returned when a v3 commit slot names a data
	// checksum algorithm this reader does not verify with: zero in a file
	// written before XXH3 replaced CRC32C for data. Such a file is rebuilt,
	// never verified with the wrong algorithm.
	ErrUnsupportedChecksum = corrupt("unsupported data checksum algorithm")
)

// Commit point (v3 only).
var (
	// ErrNoCommit is returned when neither v3 commit slot holds a valid
	// commit: both torn or corrupt, or the file was created and never
	// committed (both slots at generation 0).
	ErrNoCommit = corrupt("no valid commit slot")
	// ErrBadSlot is returned when a v3 commit slot is checksummed correctly
	// but inconsistent: a generation stored in the wrong slot, or non-zero
	// reserved bytes. A correct writer never produces either.
	ErrBadSlot = corrupt("inconsistent commit slot")
)

// Index: returned while locating and decoding the index.
var (
	// ErrIndexOutOfBounds is returned when the index does not lie inside the
	// file: v2 index_start at or past the footer, v3 index offset or length
	// outside the file or overlapping the header page.
	ErrIndexOutOfBounds = corrupt("index out of bounds")
	// ErrEmptyIndex is returned when a v2 footer declares zero entries.
	// ExecuTorch rejects its zero-entry trailer too (index_start equals
	// size-20); v3 can express an empty committed index and does not use it.
	ErrEmptyIndex = corrupt("index declares no entries")
	// ErrCountMismatch is returned when the declared entry count does not
	// match the entries present: too few bytes for the declared count, or
	// the index ends before the count is reached.
	ErrCountMismatch = corrupt("entry count does not match the index")
	// ErrTooManyEntries is returned when a declared entry count fits the
	// index but not this platform's address space (MaxEntries): only a
	// multi-gigabyte index read by a 32-bit process gets here, which would
	// otherwise panic allocating the entries.
	ErrTooManyEntries = corrupt("more entries than this platform can hold")
	// ErrIndexTooLarge is returned when an index is longer than the
	// parser's MaxIndexBytes (DefaultMaxIndexBytes unless the caller set
	// it): the length is checked before any of the index is read.
	ErrIndexTooLarge = corrupt("index longer than the parser's limit")
	// ErrTrailingBytes is returned when bytes remain in the index after the
	// declared number of entries (v2: between the last entry and the footer;
	// v3: at the end of the index block), or v3 padding bytes are non-zero.
	ErrTrailingBytes = corrupt("trailing bytes after the last entry")
	// ErrChecksum is returned when a checksum does not match: a v3 commit
	// slot's or index block's CRC32C, or (from VerifyEntryData) an entry's
	// DataChecksum.
	ErrChecksum = corrupt("checksum mismatch")
)

// Entries: returned while validating one decoded entry against the file and
// against the other entries.
var (
	// ErrEntryOutOfBounds is returned when an entry record runs past the end
	// of the index, or its data range runs outside the data area (past the
	// v2 index_start, past the end of a v3 file, into the v3 header page or
	// into the v3 index block).
	ErrEntryOutOfBounds = corrupt("entry out of bounds")
	// ErrMisaligned is returned when an entry's data offset is not aligned
	// to the page size (v2: 4096, the smallest page ExecuTorch writes with;
	// v3: the recorded writer page size), or a v3 index offset is not
	// 8-byte aligned. Misaligned packed weights would reach SIMD kernels.
	ErrMisaligned = corrupt("misaligned offset")
	// ErrOverlap is returned when two entries' data ranges overlap.
	ErrOverlap = corrupt("overlapping data ranges")
	// ErrDuplicateName is returned when two entries carry the same name.
	// ExecuTorch keeps the last and orphans the first; here it is an error
	// because a correct writer replaces a stale entry instead of adding one.
	ErrDuplicateName = corrupt("duplicate entry name")
	// ErrBadName is returned when an entry name is empty, too long, or (v3)
	// is not exactly weight NUL bias with valid tensor names and a non-empty
	// weight.
	ErrBadName = corrupt("bad entry name")
)

// FormatError says where a file failed a check: the byte offset of the
// offending field, its name and value. It unwraps to the specific sentinel
// and thereby to ErrCorrupt, in the manner of debug/elf's FormatError.
type FormatError struct {
	Off   int64  // byte offset of the field in the file
	Field string // name of the field, as in docs/format.md
	Val   uint64 // the offending value (0 when not meaningful)
	Err   error  // the specific sentinel, possibly wrapped
}

func (e *FormatError) Error() string {
	if hexField(e.Field) {
		return fmt.Sprintf("%v: %s = %#x at offset %d", e.Err, e.Field, e.Val, e.Off)
	}
	return fmt.Sprintf("%v: %s = %d at offset %d", e.Err, e.Field, e.Val, e.Off)
}

// hexField reports whether a field's value is a bit pattern (a magic, a
// checksum) rather than a quantity: printed in hex, as docs/format.md and
// simrun's tables write them.
func hexField(field string) bool {
	return field == "magic" || strings.HasSuffix(field, "crc") || strings.HasSuffix(field, "checksum")
}

func (e *FormatError) Unwrap() error { return e.Err }

// VersionError reports a format version this reader does not understand.
// It unwraps to ErrUnsupportedVersion.
type VersionError struct {
	Got, Want uint32
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("%v: got %d, want %d", ErrUnsupportedVersion, e.Got, e.Want)
}

func (e *VersionError) Unwrap() error { return ErrUnsupportedVersion }

// ferr builds a *FormatError; it keeps the call sites in the parsers short.
func ferr(off int64, field string, val uint64, err error) error {
	return &FormatError{Off: off, Field: field, Val: val, Err: err}
}

// problemNames maps every sentinel to its Go name, most specific first, for
// ProblemName.
var problemNames = []struct {
	err  error
	name string
}{
	{ErrTooSmall, "ErrTooSmall"},
	{ErrBadMagic, "ErrBadMagic"},
	{ErrUnsupportedVersion, "ErrUnsupportedVersion"},
	{ErrBadPageSize, "ErrBadPageSize"},
	{ErrUnsupportedChecksum, "ErrUnsupportedChecksum"},
	{ErrBadSlot, "ErrBadSlot"},
	{ErrIndexOutOfBounds, "ErrIndexOutOfBounds"},
	{ErrEmptyIndex, "ErrEmptyIndex"},
	{ErrCountMismatch, "ErrCountMismatch"},
	{ErrTooManyEntries, "ErrTooManyEntries"},
	{ErrIndexTooLarge, "ErrIndexTooLarge"},
	{ErrTrailingBytes, "ErrTrailingBytes"},
	{ErrChecksum, "ErrChecksum"},
	{ErrEntryOutOfBounds, "ErrEntryOutOfBounds"},
	{ErrMisaligned, "ErrMisaligned"},
	{ErrOverlap, "ErrOverlap"},
	{ErrDuplicateName, "ErrDuplicateName"},
	{ErrBadName, "ErrBadName"},
	{ErrNoCommit, "ErrNoCommit"},
	{ErrCorrupt, "ErrCorrupt"},
}

// DecodedError is a parse error of an index that yielded entries before
// its first inconsistency: Decoded lists them, for a diagnosis (simrun
// inspect shows them). They are not checked against each other nor against
// the rest of the index, and must never be served. It unwraps to the error.
type DecodedError struct {
	Err     error
	Decoded []Entry
}

func (e *DecodedError) Error() string { return e.Err.Error() }
func (e *DecodedError) Unwrap() error { return e.Err }

// withDecoded wraps a corruption error with the entries decoded before it.
func withDecoded(err error, decoded []Entry) error {
	if len(decoded) == 0 || !errors.Is(err, ErrCorrupt) {
		return err
	}
	return &DecodedError{Err: err, Decoded: decoded}
}

// ProblemName names the sentinel err matches, for reports (simrun inspect
// lists problems by these names): the specific check if there is one, else
// "ErrCorrupt", else "" for an error that is not a format error. For the
// ErrNoCommit error of ParseV3 it names the first slot's problem after
// ErrNoCommit itself, so callers wanting both use ProblemNames.
func ProblemName(err error) string {
	if names := ProblemNames(err); len(names) > 0 {
		return names[0]
	}
	return ""
}

// ProblemNames lists every sentinel err matches except the ErrCorrupt
// umbrella (which it lists only when nothing more specific matches), with
// ErrNoCommit first when present.
func ProblemNames(err error) []string {
	var names []string
	if errors.Is(err, ErrNoCommit) {
		names = append(names, "ErrNoCommit")
	}
	for _, p := range problemNames {
		if p.err == ErrNoCommit || p.err == ErrCorrupt {
			continue
		}
		if errors.Is(err, p.err) {
			names = append(names, p.name)
		}
	}
	if len(names) == 0 && errors.Is(err, ErrCorrupt) {
		names = append(names, "ErrCorrupt")
	}
	return names
}
