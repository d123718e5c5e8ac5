package fuzz

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/xpwc/xpwc/spec"
	"github.com/xpwc/xpwc/spec/spectest"
)

// maxSparseSize is the largest file FuzzSparseDeclared makes: 64 TiB, past
// any file system's limit for a real file but not for a sparse view.
const maxSparseSize = 1 << 46

// sparseAllocBound is what a parse of a sparse view may allocate, whatever
// the view declares: a constant for the fixed buffers (read window, overlap
// bitmap of at most 4 MiB, first chunks of entries and names, bucket
// counts) plus a multiple of the bytes that are not holes, since only those
// can decode into entries (holes decode to an empty name, which fails).
func sparseAllocBound(dataLen int) uint64 { return 16<<20 + 512*uint64(dataLen) }

// sparseParseLimit is far beyond any parse bounded by its input (they take
// microseconds to milliseconds) and far below reading a declared gigabyte.
const sparseParseLimit = 10 * time.Second

// FuzzSparseDeclared parses files whose declared sizes and counts are
// independent of the input's length (G7, cost bounded by content): the
// input describes a sparse file of up to 64 TiB (its size, then parts of
// data at chosen offsets, the rest holes), which both parsers read through
// an io.ReaderAt view, with the default index limit and with none. Every
// parse must end in a typed error or a valid index, and allocate at most
// sparseAllocBound of the input's length.
func FuzzSparseDeclared(f *testing.F) {
	for _, s := range sparseSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		file := decodeSparse(in)
		if file == nil {
			return
		}
		for _, p := range []spec.Parser{{}, {MaxIndexBytes: math.MaxUint64}} {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			// A parse that reads what a hole declares instead of what it
			// decoded takes minutes; the fuzzer keeps such an input as a
			// crasher when its worker exits.
			watchdog := time.AfterFunc(sparseParseLimit, func() {
				buf := make([]byte, 1<<20)
				fmt.Fprintf(os.Stderr, "parse of a %d-byte sparse view took over %v:\n%s", file.Size, sparseParseLimit, buf[:runtime.Stack(buf, true)])
				os.Exit(3)
			})
			err := parseSparse(p, file)
			watchdog.Stop()
			runtime.ReadMemStats(&after)
			if err != nil && !errors.Is(err, spec.ErrCorrupt) {
				t.Fatalf("untyped error: %v", err)
			}
			if n := after.TotalAlloc - before.TotalAlloc; n > sparseAllocBound(len(in)) {
				t.Fatalf("parse of a %d-byte sparse file from %d input bytes allocated %d bytes (bound %d)",
					file.Size, len(in), n, sparseAllocBound(len(in)))
			}
		}
	})
}

// sparseSeeds are the forged 64 GiB files of spectest.HostileFiles and the
// valid and rejected files of the other targets, as sparse views.
func sparseSeeds() [][]byte {
	var seeds [][]byte
	for _, h := range spectest.HostileFiles() {
		seeds = append(seeds, encodeSparse(h.File))
	}
	for _, s := range append(v2Seeds(), v3Seeds()...) {
		seeds = append(seeds, encodeSparse(&spectest.SparseFile{Size: int64(len(s)), Parts: []spectest.Part{{Off: 0, Data: s}}}))
	}
	return seeds
}

// parseSparse parses file in the format DetectFormat finds.
func parseSparse(p spec.Parser, file *spectest.SparseFile) error {
	format, err := spec.DetectFormat(file, file.Size)
	if err != nil {
		return err
	}
	if format == spec.FormatV2 {
		_, err = p.ParseV2(file, file.Size)
	} else {
		_, err = p.ParseV3(file, file.Size)
	}
	return err
}

// encodeSparse is decodeSparse's inverse, for seeds: size u64, then per
// part its offset u64, length u16 and bytes.
func encodeSparse(s *spectest.SparseFile) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(s.Size))
	for _, p := range s.Parts {
		for data, off := p.Data, p.Off; len(data) > 0; {
			n := min(len(data), math.MaxUint16)
			b = binary.LittleEndian.AppendUint64(b, uint64(off))
			b = binary.LittleEndian.AppendUint16(b, uint16(n))
			b = append(b, data[:n]...)
			data, off = data[n:], off+int64(n)
		}
	}
	return b
}

// decodeSparse reads a sparse file from fuzz bytes. The size is taken
// modulo maxSparseSize and each part's offset modulo the size; a part that
// would run past the end is cut there. Nil when the input is too short.
func decodeSparse(in []byte) *spectest.SparseFile {
	if len(in) < 8 {
		return nil
	}
	le := binary.LittleEndian
	size := int64(le.Uint64(in) % maxSparseSize)
	if size == 0 {
		return nil
	}
	file := &spectest.SparseFile{Size: size}
	for in = in[8:]; len(in) >= 10; {
		off := int64(le.Uint64(in) % uint64(size))
		n := min(int(le.Uint16(in[8:])), len(in)-10)
		data := in[10 : 10+n]
		in = in[10+n:]
		data = data[:min(int64(len(data)), size-off)]
		file.Parts = append(file.Parts, spectest.Part{Off: off, Data: data})
	}
	return file
}
