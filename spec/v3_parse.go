package spec

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

// errNeverCommitted marks a generation-0 slot: a fresh header's, which names
// no index.
var errNeverCommitted = fmt.Errorf("%w: never committed", ErrNoCommit)

// V3File is a parsed, validated v3 file as of its newest loadable commit.
type V3File struct {
	// Size is the file size the file was parsed with.
	Size int64
	// Commit is the commit whose index was loaded; Slot is its position.
	Commit Commit
	Slot   int
	// PageSize is Commit.PageSize as an int: header size and data alignment.
	PageSize int
	// Entries in index order. Names share one backing string.
	Entries []Entry
	// LiveBytes is the sum of the entries' data sizes; GarbageBytes is every
	// other byte after the header and outside the committed index: padding,
	// superseded index blocks, stale and uncommitted data (G4 counts it).
	LiveBytes, GarbageBytes uint64
	// SlotErrors says why a slot was not used: the slot's check error,
	// ErrNoCommit for a generation-0 slot, or the index corruption that made
	// ParseV3 fall back to the other slot. Every one matches ErrCorrupt (an
	// I/O error fails the parse instead). It is nil for the loaded slot and
	// for a valid older slot that was not needed.
	SlotErrors [2]error
}

// ReadCommitSlots reads and checks both commit slots of a v3 file. It is
// ParseV3's first step, exported so that simrun inspect can show why each
// slot was or was not usable. size must be at least 2*V3SlotSize.
func ReadCommitSlots(r io.ReaderAt, size int64) ([2]Commit, [2]error, error) {
	var commits [2]Commit
	var errs [2]error
	if size < 2*V3SlotSize {
		return commits, errs, ferr(0, "file_size", uint64(max(size, 0)), ErrTooSmall)
	}
	var b [2 * V3SlotSize]byte
	if err := readFull(r, 0, b[:], "slot"); err != nil {
		return commits, errs, err
	}
	for pos := range 2 {
		commits[pos], errs[pos] = ParseCommitSlot(b[pos*V3SlotSize:], pos)
		if errs[pos] == nil && commits[pos].Generation == 0 {
			errs[pos] = ferr(int64(pos)*V3SlotSize+slotGenOff, "generation", 0, errNeverCommitted)
		}
	}
	return commits, errs, nil
}

// ParseV3 reads and validates a v3 file of the given size through r. It
// loads the newest commit whose slot and index are valid: normally the
// newest valid slot; if that slot's index is corrupt (which the save
// protocol never causes, but bit rot can) it falls back to the other
// committed slot, whose index and data a save never overwrites. When nothing
// loads it returns ErrNoCommit if no slot holds a commit, else the newest
// commit's index error. Data bytes are not read; see VerifyEntryData.
//
// Only corruption (an error matching ErrCorrupt) justifies the fallback. A
// read error says nothing about the newest commit, and loading the older
// one on a transient error let a writer's next commit or compaction
// rewrite the file from generation g-1, dropping what generation g had
// committed (G2). So an I/O error reading either index is returned at once,
// wrapped with the slot and generation, and still matches the underlying
// error with errors.Is (G8 tells I/O failure from damage).
//
// What it reads and allocates grows with the entries it decodes, never with
// what a slot or index header declares (G7): the name bytes and Entries of
// the entries decoded (at most twice over, as they grow), a read buffer
// (the whole index when it is at most 1 MiB, read with one read; else 64
// KiB), a
// duplicate-name table of at most 20 bytes per entry and a bitmap of one
// bit per page of the file of at most 4 MiB (a larger file is checked by
// sorting instead). The index must lie inside the file and be at most
// p.MaxIndexBytes long. The index CRC takes precedence over a decode error
// only when at most 1 MiB of the index is left unread at the error.
func (p Parser) ParseV3(r io.ReaderAt, size int64) (*V3File, error) {
	f := new(V3File)
	if err := p.ParseV3Into(f, r, size); err != nil {
		return nil, err
	}
	return f, nil
}

// ParseV3Into is ParseV3 into *f, which it overwrites; on an error *f is
// left as it was. A caller with f on its stack allocates no V3File: in a
// fresh process that object was the first of its size, a new span whose
// first pages faulted, 3-4 us of a warm v3 load's core.
func (p Parser) ParseV3Into(f *V3File, r io.ReaderAt, size int64) error {
	commits, slotErrs, err := ReadCommitSlots(r, size)
	if err != nil {
		return err
	}
	order := [2]int{0, 1}
	if commits[1].Generation > commits[0].Generation {
		order = [2]int{1, 0}
	}
	var firstErr error
	for _, pos := range order {
		if slotErrs[pos] != nil {
			continue
		}
		err := p.parseV3Commit(f, r, size, commits[pos])
		if err != nil && !errors.Is(err, ErrCorrupt) {
			return fmt.Errorf("spec: v3 commit slot %d, generation %d: %w", pos, commits[pos].Generation, err)
		}
		if err != nil {
			slotErrs[pos] = err
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		f.Slot = pos
		f.SlotErrors = slotErrs
		return nil
	}
	if firstErr != nil {
		return firstErr
	}
	return &noCommitError{slots: slotErrs}
}

// noCommitError is ParseV3's error when neither slot holds a commit. Both
// slot errors stay in the chain: errors.As finds a *VersionError when a
// newer writer made the file, errors.Is finds ErrChecksum for a torn slot.
type noCommitError struct {
	slots [2]error
}

func (e *noCommitError) Error() string {
	short := func(err error) string {
		return strings.TrimPrefix(err.Error(), ErrCorrupt.Error()+": ")
	}
	return fmt.Sprintf("%v: slot 0: %s; slot 1: %s", ErrNoCommit, short(e.slots[0]), short(e.slots[1]))
}

func (e *noCommitError) Unwrap() []error { return []error{ErrNoCommit, e.slots[0], e.slots[1]} }

// parseV3Commit loads the index named by c into *f.
func (p Parser) parseV3Commit(f *V3File, r io.ReaderAt, size int64, c Commit) error {
	page := uint64(c.PageSize)
	usize := uint64(size)
	if usize < page {
		return ferr(0, "file_size", usize, ErrTooSmall)
	}
	slotAt := CommitSlotOffset(c.Generation)
	if c.IndexOff%8 != 0 {
		return ferr(slotAt+slotIndexOffOff, "index_off", c.IndexOff, ErrMisaligned)
	}
	// The error names the field that is wrong: where the index starts,
	// or how long it is.
	if c.IndexOff < page || c.IndexOff > usize {
		return ferr(slotAt+slotIndexOffOff, "index_off", c.IndexOff, ErrIndexOutOfBounds)
	}
	if c.IndexLen > usize-c.IndexOff || c.IndexLen < V3IndexHeaderSize {
		return ferr(slotAt+slotIndexLenOff, "index_len", c.IndexLen, ErrIndexOutOfBounds)
	}
	if c.IndexLen > p.maxIndex() {
		return ferr(slotAt+slotIndexLenOff, "index_len", c.IndexLen, ErrIndexTooLarge)
	}
	p.prefetch(int64(c.IndexOff), int64(c.IndexOff+c.IndexLen))
	w := newWindow(r, int64(c.IndexOff), int64(c.IndexOff+c.IndexLen))
	// The CRC takes precedence over every check of the index's content, so
	// a torn or rotted index reports ErrChecksum rather than whichever field
	// the damage happened to hit. It is computed on the bytes the decoder
	// reads, in the same pass (a separate pass cost a second read and copy
	// of the whole index; from memory, where nothing is copied, it is one
	// call at the end, see window.at), and a decode error is reported only
	// once the CRC has matched. Decoding bytes not yet known to be intact is safe:
	// the decoder trusts nothing, and what it allocates is bounded by the
	// index length before any count is used (G7).
	w.startSum()
	entries, live, decErr := decodeV3Index(w, v3Bounds{
		size: usize, header: page, page: page, indexOff: c.IndexOff, indexLen: c.IndexLen,
	}, newFresh(p.Populate))
	if decErr != nil && !errors.Is(decErr, ErrCorrupt) {
		return decErr // I/O error: the CRC cannot be known
	}
	if decErr != nil && w.unread() > crcAfterError {
		// Reading the rest to check the CRC would cost what the slot
		// declares, not what was decoded (G7).
		return withDecoded(decErr, entries)
	}
	got, err := w.sumRest("index")
	if err != nil {
		return err
	}
	if got != c.IndexCRC {
		return ferr(int64(c.IndexOff), "index_crc", uint64(got), ErrChecksum)
	}
	if decErr != nil {
		return withDecoded(decErr, entries)
	}
	*f = V3File{Size: size, Commit: c, PageSize: int(c.PageSize), Entries: entries, LiveBytes: live}
	f.GarbageBytes = usize - page - c.IndexLen - f.LiveBytes
	return nil
}
