// Package corrupt generates damaged cache files and classifies what a parser
// makes of them: the corruption matrix behind guarantee G7 (any file content
// yields a valid load or a typed error, never a panic, with allocation
// bounded by the file) and the byte-level half of G1 (a corrupted index is
// never served).
//
// Generators yield Cases lazily so a matrix of hundreds of thousands of
// variants never holds more than one copy of the file at a time.
package corrupt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"runtime"

	"github.com/xpwc/xpwc/spec"
)

// Case is one damaged file. File is only valid until the generator
// advances: generators reuse one buffer.
type Case struct {
	// Kind names the damage ("truncate", "flip", "rewrite", ...) and Desc
	// says where, so a failure names the exact variant to replay.
	Kind string
	Desc string
	File []byte
}

func (c Case) String() string { return c.Kind + " " + c.Desc }

// Truncations yields file cut to every length in [from, to).
func Truncations(file []byte, from, to int) iter.Seq[Case] {
	return func(yield func(Case) bool) {
		for n := max(from, 0); n < min(to, len(file)); n++ {
			if !yield(Case{Kind: "truncate", Desc: fmt.Sprintf("len=%d", n), File: file[:n:n]}) {
				return
			}
		}
	}
}

// BitFlips yields file with each bit of [from, to) flipped in turn.
func BitFlips(file []byte, from, to int) iter.Seq[Case] {
	return func(yield func(Case) bool) {
		buf := bytes.Clone(file)
		for off := max(from, 0); off < min(to, len(file)); off++ {
			for bit := range 8 {
				buf[off] ^= 1 << bit
				ok := yield(Case{Kind: "flip", Desc: fmt.Sprintf("off=%d bit=%d", off, bit), File: buf})
				buf[off] ^= 1 << bit
				if !ok {
					return
				}
			}
		}
	}
}

// Field is a little-endian integer field of a file, by offset and width.
type Field struct {
	Name  string
	Off   int
	Width int // 4 or 8
}

// Rewrites yields file with each field set to each of vals (values that do
// not fit the field are skipped). fix, if not nil, runs on every variant
// before it is yielded: spectest.FixV3Checksums, so that a rewrite reaches
// the checks behind the checksums instead of stopping at them.
func Rewrites(file []byte, fields []Field, vals []uint64, fix func([]byte)) iter.Seq[Case] {
	return func(yield func(Case) bool) {
		for _, f := range fields {
			for _, v := range vals {
				if f.Width == 4 && v > 0xFFFFFFFF {
					continue
				}
				buf := bytes.Clone(file)
				if f.Width == 4 {
					binary.LittleEndian.PutUint32(buf[f.Off:], uint32(v))
				} else {
					binary.LittleEndian.PutUint64(buf[f.Off:], v)
				}
				if fix != nil {
					fix(buf)
				}
				if !yield(Case{Kind: "rewrite", Desc: fmt.Sprintf("%s@%d=%#x", f.Name, f.Off, v), File: buf}) {
					return
				}
			}
		}
	}
}

// InterestingValues are the values Rewrites tries for integer fields:
// boundaries around zero, around size (the file size) and near overflow.
func InterestingValues(size uint64) []uint64 {
	return []uint64{0, 1, 2, 7, 8, 511, 512, 4095, 4096, 4097, size - 20, size - 1, size, size + 1,
		1 << 31, 1<<32 - 1, 1 << 32, 1 << 40, 1<<63 - 1, 1 << 63, 1<<64 - 1}
}

// Verdict classifies a parse of a damaged file.
type Verdict int

const (
	// Rejected: a typed error (errors.Is spec.ErrCorrupt).
	Rejected Verdict = iota
	// Accepted: parsed, with entries the caller's oracle allows.
	Accepted
	// AcceptedWrong: parsed, with entries the oracle does not allow: a
	// corruption the format cannot detect (v2 has no checksums).
	AcceptedWrong
	// Untyped: an error that does not match spec.ErrCorrupt (G7 violation).
	Untyped
	// Panicked: the parser panicked (G7 violation).
	Panicked
)

var verdictNames = [...]string{"rejected", "accepted", "accepted-wrong", "untyped-error", "panic"}

func (v Verdict) String() string { return verdictNames[v] }

// Result is a parse outcome.
type Result struct {
	Format  spec.Format
	Entries []spec.Entry
	Err     error
	Panic   any
	// Alloc is the bytes allocated by the parse (ParseMeasured only; a
	// runtime.MemStats.TotalAlloc difference, so approximate if other
	// goroutines allocate meanwhile).
	Alloc uint64
}

// ParseMeasured is Parse with Result.Alloc filled in. It stops the world
// twice (runtime.ReadMemStats), so matrices use Parse and keep this for the
// allocation-bound cases.
func ParseMeasured(file []byte) Result {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res := Parse(file)
	runtime.ReadMemStats(&after)
	res.Alloc = after.TotalAlloc - before.TotalAlloc
	return res
}

// Parse detects the format of file and parses it with the matching spec
// parser, turning a panic into Result.Panic.
func Parse(file []byte) (res Result) {
	defer func() {
		if r := recover(); r != nil {
			res.Panic = r
		}
	}()
	r := bytes.NewReader(file)
	res.Format, res.Err = spec.DetectFormat(r, int64(len(file)))
	if res.Err != nil {
		return res
	}
	switch res.Format {
	case spec.FormatV2:
		var f *spec.V2File
		if f, res.Err = spec.ParseV2(r, int64(len(file))); f != nil {
			res.Entries = f.Entries
		}
	case spec.FormatV3:
		var f *spec.V3File
		if f, res.Err = spec.ParseV3(r, int64(len(file))); f != nil {
			res.Entries = f.Entries
		}
	}
	return res
}

// Classify turns a Result into a Verdict. allowed reports whether accepted
// entries are a correct reading of the file (for example: equal to one of
// its committed generations); nil allows any.
func Classify(res Result, allowed func([]spec.Entry) bool) Verdict {
	switch {
	case res.Panic != nil:
		return Panicked
	case res.Err != nil && errors.Is(res.Err, spec.ErrCorrupt):
		return Rejected
	case res.Err != nil:
		return Untyped
	case allowed != nil && !allowed(res.Entries):
		return AcceptedWrong
	}
	return Accepted
}

// Tally counts verdicts, with the first example of each.
type Tally struct {
	Counts  [len(verdictNames)]int
	Example [len(verdictNames)]string
}

// Add records one verdict for c.
func (t *Tally) Add(v Verdict, c Case, res Result) {
	t.Counts[v]++
	if t.Example[v] == "" {
		detail := ""
		switch {
		case res.Panic != nil:
			detail = fmt.Sprint(res.Panic)
		case res.Err != nil:
			detail = res.Err.Error()
		}
		t.Example[v] = c.String() + ": " + detail
	}
}

// Total is the number of cases tallied.
func (t *Tally) Total() int {
	n := 0
	for _, c := range t.Counts {
		n += c
	}
	return n
}

func (t *Tally) String() string {
	return fmt.Sprintf("%d tried: %d rejected, %d accepted, %d accepted-wrong, %d untyped, %d panics",
		t.Total(), t.Counts[Rejected], t.Counts[Accepted], t.Counts[AcceptedWrong], t.Counts[Untyped], t.Counts[Panicked])
}

// SameEntries reports whether a and b hold the same entries in any order.
func SameEntries(a, b []spec.Entry) bool {
	if len(a) != len(b) {
		return false
	}
	m := make(map[spec.Entry]int, len(a))
	for _, e := range a {
		m[e]++
	}
	for _, e := range b {
		if m[e] == 0 {
			return false
		}
		m[e]--
	}
	return true
}

// SoundEntries checks, independently of the parser, what any accepted index
// must satisfy whatever its content (G7): every range inside [lo, size),
// no two ranges overlapping, offsets aligned to align.
func SoundEntries(entries []spec.Entry, lo, size, align uint64) error {
	for i, e := range entries {
		if e.Offset < lo || e.Offset > size || e.Size > size-e.Offset {
			return fmt.Errorf("entry %d [%d,+%d) outside [%d,%d)", i, e.Offset, e.Size, lo, size)
		}
		if align > 0 && e.Offset%align != 0 {
			return fmt.Errorf("entry %d offset %d not aligned to %d", i, e.Offset, align)
		}
		for j := range i {
			o := entries[j]
			if e.Size > 0 && o.Size > 0 && e.Offset < o.End() && o.Offset < e.End() {
				return fmt.Errorf("entries %d and %d overlap", j, i)
			}
		}
	}
	return nil
}
