package runtime

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"github.com/xpwc/xpwc/spec"
	"hash/crc32"
	"io"
	"math"
	"os"
)

// Program file format (little-endian), version 1:
//
//	magic     [8]byte "XPWCPRG\x00"
//	version   u32
//	name      u16 length + bytes
//	count     u32 layers
//	count × { name u16+bytes, input u16+bytes, n u32, k u32, flags u32 (bit 0: bias) }
//	data      per layer: n·k f32 weights, then n f32 biases if flagged
//	crc       u32 CRC32C of every preceding byte
//
// Every count and length is checked against the bytes that remain before
// anything is allocated, so a hostile file costs at most its own size.
const (
	programMagic       = "XPWCPRG\x00"
	programFileVersion = 1
	// MaxProgramFileSize bounds what ReadProgramFile reads (4 GiB).
	MaxProgramFileSize = 1 << 32
	minLayerRecord     = 2 + 2 + 4 + 4 + 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// sourceDigest is the spec.Key.Source of a layer read from a file, the
// digest of its bytes (spec.SourceDigest; BenchmarkSourceDigest).
func sourceDigest(b []byte) uint64 { return spec.SourceDigest(b) }

// fileSource holds the weights read from a program file and their digests.
type fileSource struct {
	w, b    [][]float32
	digests []uint64
}

func (s *fileSource) digest(i int) uint64 { return s.digests[i] }

func (s *fileSource) fill(i int, w, b []float32) {
	copy(w, s.w[i])
	copy(b, s.b[i])
}

// EncodeProgram writes p, weights included, in the program file format.
func EncodeProgram(w io.Writer, p *Program) error {
	var buf bytes.Buffer
	buf.WriteString(programMagic)
	le := binary.LittleEndian
	buf.Write(le.AppendUint32(nil, programFileVersion))
	putStr := func(s string) {
		buf.Write(le.AppendUint16(nil, uint16(len(s))))
		buf.WriteString(s)
	}
	putStr(p.name)
	buf.Write(le.AppendUint32(nil, uint32(len(p.layers))))
	for _, l := range p.layers {
		putStr(l.Name)
		putStr(l.Input)
		buf.Write(le.AppendUint32(nil, uint32(l.N)))
		buf.Write(le.AppendUint32(nil, uint32(l.K)))
		var flags uint32
		if l.Bias {
			flags = 1
		}
		buf.Write(le.AppendUint32(nil, flags))
	}
	for i, l := range p.layers {
		wt := make([]float32, l.N*l.K)
		b := make([]float32, l.N)
		p.Weights(i, wt, b)
		if !l.Bias {
			b = nil
		}
		for _, v := range append(wt, b...) {
			buf.Write(le.AppendUint32(nil, math.Float32bits(v)))
		}
	}
	buf.Write(le.AppendUint32(nil, crc32.Checksum(buf.Bytes(), castagnoli)))
	_, err := w.Write(buf.Bytes())
	return err
}

// ReadProgramFile reads and parses a program file.
func ReadProgramFile(path string) (*Program, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxProgramFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxProgramFileSize {
		return nil, &FileError{Off: MaxProgramFileSize, Field: "size", Val: uint64(len(data)), Msg: "file too large"}
	}
	return ParseProgram(data)
}

// WriteProgramFile writes p to path.
func WriteProgramFile(path string, p *Program) error {
	var buf bytes.Buffer
	if err := EncodeProgram(&buf, p); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// ParseProgram parses a program file held in data. Errors are *FileError
// (errors.Is ErrBadProgramFile) or *ProgramError for a well-formed file
// that describes an invalid graph.
func ParseProgram(data []byte) (*Program, error) {
	r := reader{data: data}
	if len(data) < len(programMagic)+4+4 {
		return nil, r.errf("size", uint64(len(data)), "shorter than header and checksum")
	}
	body := data[:len(data)-4]
	want := binary.LittleEndian.Uint32(data[len(data)-4:])
	if got := crc32.Checksum(body, castagnoli); got != want {
		return nil, &FileError{Off: int64(len(body)), Field: "crc", Val: uint64(want), Msg: fmt.Sprintf("computed %#x", got)}
	}
	r.data = body
	if string(r.bytes(len(programMagic))) != programMagic {
		return nil, &FileError{Off: 0, Field: "magic", Msg: "not a program file"}
	}
	if v := r.u32(); v != programFileVersion {
		return nil, &FileError{Off: 8, Field: "version", Val: uint64(v), Msg: "unsupported"}
	}
	name := r.str()
	count := r.u32()
	if r.err != nil {
		return nil, r.err
	}
	if uint64(count)*minLayerRecord > uint64(r.remaining()) {
		return nil, r.errf("layer count", uint64(count), "more records than the file can hold")
	}
	layers := make([]Layer, count)
	var elems uint64
	for i := range layers {
		l := &layers[i]
		l.Name, l.Input = r.str(), r.str()
		n, k, flags := r.u32(), r.u32(), r.u32()
		if r.err != nil {
			return nil, r.err
		}
		if n == 0 || k == 0 || uint64(n)*uint64(k) > MaxLayerElems {
			return nil, r.errf("shape", uint64(n)*uint64(k), "not within (0, MaxLayerElems]")
		}
		if flags > 1 {
			return nil, r.errf("flags", uint64(flags), "unknown bits")
		}
		l.N, l.K, l.Bias = int(n), int(k), flags == 1
		elems += uint64(n) * uint64(k)
		if l.Bias {
			elems += uint64(n)
		}
	}
	if elems*4 != uint64(r.remaining()) {
		return nil, r.errf("data size", uint64(r.remaining()), fmt.Sprintf("layers need %d bytes", elems*4))
	}
	src := &fileSource{w: make([][]float32, count), b: make([][]float32, count), digests: make([]uint64, count)}
	for i, l := range layers {
		start := r.off
		src.w[i] = r.f32s(l.N * l.K)
		if l.Bias {
			src.b[i] = r.f32s(l.N)
		}
		src.digests[i] = sourceDigest(data[start:r.off])
	}
	return newProgram(name, layers, src)
}

// reader is a bounds-checked little-endian cursor; the first short read
// sets err and every later read returns zero values.
type reader struct {
	data []byte
	off  int
	err  error
}

func (r *reader) remaining() int { return len(r.data) - r.off }

func (r *reader) errf(field string, val uint64, msg string) error {
	return &FileError{Off: int64(r.off), Field: field, Val: val, Msg: msg}
}

func (r *reader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n > r.remaining() {
		r.err = r.errf("length", uint64(n), "past end of file")
		return nil
	}
	b := r.data[r.off : r.off+n]
	r.off += n
	return b
}

func (r *reader) u16() uint16 {
	if b := r.bytes(2); b != nil {
		return binary.LittleEndian.Uint16(b)
	}
	return 0
}

func (r *reader) u32() uint32 {
	if b := r.bytes(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (r *reader) str() string { return string(r.bytes(int(r.u16()))) }

func (r *reader) f32s(n int) []float32 {
	b := r.bytes(4 * n)
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}
