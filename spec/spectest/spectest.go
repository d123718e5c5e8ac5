// Package spectest builds valid cache files of both formats for tests, fuzz
// seeds and benchmarks. It lays files out as the writers do (ExecuTorch for
// v2, the reference cache's save protocol for v3) from the spec encoders
// alone, so a parser test never depends on the cache implementation.
package spectest

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/xpwc/xpwc/spec"
)

var le = binary.LittleEndian

// Weight is one packed weight to place in a file.
type Weight struct {
	Key  spec.Key
	Data []byte
}

// alignUp rounds n up to a multiple of page (a power of two).
func alignUp(n, page uint64) uint64 { return (n + page - 1) &^ (page - 1) }

// BuildV2 writes ws as ExecuTorch does: each region at the next page-aligned
// offset, page-padded with zeros, then the index and footer. Stored names are
// Key.V2Name() (weight and bias concatenated).
func BuildV2(pageSize int, ws []Weight) ([]byte, []spec.Entry) {
	page := uint64(pageSize)
	var file []byte
	entries := make([]spec.Entry, len(ws))
	for i, w := range ws {
		off := alignUp(uint64(len(file)), page)
		file = append(file, make([]byte, off-uint64(len(file)))...)
		file = append(file, w.Data...)
		entries[i] = spec.Entry{
			Key:    spec.Key{Weight: w.Key.V2Name(), Seed: w.Key.Seed},
			Offset: off, Size: uint64(len(w.Data)),
		}
	}
	// ExecuTorch's used pointer is page-rounded after each reserve, so the
	// index starts at a page boundary after the last region's padding.
	indexStart := alignUp(uint64(len(file)), page)
	file = append(file, make([]byte, indexStart-uint64(len(file)))...)
	return append(file, spec.EncodeV2Index(indexStart, entries)...), entries
}

// V3Builder appends saves to a v3 file following the save protocol: data,
// then index, then the slot of the next generation.
type V3Builder struct {
	PageSize int
	File     []byte
	Gen      uint64
	Entries  []spec.Entry
	// LegacyCRC32C writes what v3 writers wrote before the commit slot named
	// the data checksum: entry checksums are CRC32C and the slot's data
	// checksum field is zero. Readers must reject such files (never verify
	// their data with the wrong algorithm).
	LegacyCRC32C bool
}

// NewV3 starts a file with a fresh header.
func NewV3(pageSize int) *V3Builder {
	return &V3Builder{PageSize: pageSize, File: spec.EncodeV3Header(pageSize)}
}

// Save appends ws as new entries (replacing entries of the same name, as a
// re-pack does) and commits the next generation.
func (b *V3Builder) Save(ws []Weight) {
	page := uint64(b.PageSize)
	for _, w := range ws {
		off := alignUp(uint64(len(b.File)), page)
		b.File = append(b.File, make([]byte, off-uint64(len(b.File)))...)
		b.File = append(b.File, w.Data...)
		e := spec.Entry{Key: w.Key, Offset: off, Size: uint64(len(w.Data)), CRC: spec.DataChecksum(w.Data)}
		if b.LegacyCRC32C {
			e.CRC = spec.CRC32C(w.Data)
		}
		replaced := false
		for i := range b.Entries {
			if b.Entries[i].Key.Name() == w.Key.Name() {
				b.Entries[i], replaced = e, true
			}
		}
		if !replaced {
			b.Entries = append(b.Entries, e)
		}
	}
	indexOff := alignUp(uint64(len(b.File)), 8)
	b.File = append(b.File, make([]byte, indexOff-uint64(len(b.File)))...)
	index := spec.EncodeV3Index(b.Entries)
	b.File = append(b.File, index...)
	b.Gen++
	c := spec.NewCommit(b.Gen, b.PageSize, indexOff, index)
	slot := spec.EncodeCommitSlot(c)
	if b.LegacyCRC32C {
		le.PutUint32(slot[44:], spec.DataChecksumCRC32C)
		le.PutUint32(slot[spec.V3SlotSize-4:], spec.CRC32C(slot[:spec.V3SlotSize-4]))
	}
	copy(b.File[spec.CommitSlotOffset(b.Gen):], slot)
}

// BuildV3 is one save of ws into a fresh file.
func BuildV3(pageSize int, ws []Weight) ([]byte, []spec.Entry) {
	b := NewV3(pageSize)
	b.Save(ws)
	return b.File, b.Entries
}

// Weights returns n deterministic weights named like a transformer's layers
// (every other one with a bias), with dataSize bytes of data each derived
// from seed.
func Weights(n, dataSize int, seed uint32) []Weight {
	ws := make([]Weight, n)
	x := seed | 1
	for i := range ws {
		k := spec.Key{
			Weight:      fmt.Sprintf("layers.%d.attention.wq.weight", i),
			Seed:        0x9E3779B9 ^ uint32(i) ^ seed,
			Fingerprint: uint64(seed)<<32 | uint64(i),
			Source:      0xABCDEF0000000000 | uint64(i),
		}
		if i%2 == 1 {
			k.Bias = fmt.Sprintf("layers.%d.attention.wq.bias", i)
		}
		d := make([]byte, dataSize)
		for j := range d {
			x ^= x << 13
			x ^= x >> 17
			x ^= x << 5
			d[j] = byte(x)
		}
		ws[i] = Weight{Key: k, Data: d}
	}
	return ws
}

// FixV3Checksums recomputes, in place, the index CRC and the slot CRC of
// every slot of file that carries the slot magic and whose index lies inside
// the file. Fuzz targets call it after mutating a valid file so that the
// mutations reach the checks behind the checksums.
func FixV3Checksums(file []byte) {
	for pos := range 2 {
		base := pos * spec.V3SlotSize
		if len(file) < base+spec.V3SlotSize {
			return
		}
		slot := file[base : base+spec.V3SlotSize]
		if string(slot[:8]) != spec.V3SlotMagic {
			continue
		}
		off := le.Uint64(slot[24:])
		n := le.Uint64(slot[32:])
		if off <= uint64(len(file)) && n <= uint64(len(file))-off {
			le.PutUint32(slot[40:], spec.CRC32C(file[off:off+n]))
		}
		le.PutUint32(slot[spec.V3SlotSize-4:], spec.CRC32C(slot[:spec.V3SlotSize-4]))
	}
}

// SparseFile is an io.ReaderAt over a file that is zero except for a few
// parts, so benchmarks can parse a million-entry index whose data regions
// (gigabytes of pages) are never read.
type SparseFile struct {
	Size  int64
	Parts []Part
}

// Part is a run of bytes at an offset of a SparseFile.
type Part struct {
	Off  int64
	Data []byte
}

// ReadAt implements io.ReaderAt.
func (s *SparseFile) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("spectest: negative offset %d", off)
	}
	if off >= s.Size {
		return 0, io.EOF
	}
	n := len(p)
	if rest := s.Size - off; int64(n) > rest {
		n = int(rest)
	}
	// A read inside one part is a plain copy, like a file's or a mapping's;
	// only reads that touch the holes pay for zeroing.
	for _, pt := range s.Parts {
		if off >= pt.Off && off+int64(n) <= pt.Off+int64(len(pt.Data)) {
			copy(p[:n], pt.Data[off-pt.Off:])
			if n < len(p) {
				return n, io.EOF
			}
			return n, nil
		}
	}
	clear(p[:n])
	for _, pt := range s.Parts {
		lo, hi := max(off, pt.Off), min(off+int64(n), pt.Off+int64(len(pt.Data)))
		if lo < hi {
			copy(p[lo-off:hi-off], pt.Data[lo-pt.Off:hi-pt.Off])
		}
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// SparseV2 is a v2 file of n entries of dataSize bytes each, one per page of
// pageSize, in offset order, of which only the index and footer are stored.
func SparseV2(n, pageSize, dataSize int) (*SparseFile, []spec.Entry) {
	entries := make([]spec.Entry, n)
	for i := range entries {
		k := benchKey(i)
		entries[i] = spec.Entry{Key: spec.Key{Weight: k.V2Name(), Seed: k.Seed}, Offset: uint64(i) * uint64(pageSize), Size: uint64(dataSize)}
	}
	indexStart := uint64(n) * uint64(pageSize)
	idx := spec.EncodeV2Index(indexStart, entries)
	return &SparseFile{Size: int64(indexStart) + int64(len(idx)), Parts: []Part{{int64(indexStart), idx}}}, entries
}

// SparseV3 is the v3 counterpart of SparseV2: header, n one-page regions,
// index at the end, committed as generation 1.
func SparseV3(n, pageSize, dataSize int) (*SparseFile, []spec.Entry) {
	entries := make([]spec.Entry, n)
	for i := range entries {
		entries[i] = spec.Entry{Key: benchKey(i), Offset: uint64(i+1) * uint64(pageSize), Size: uint64(dataSize), CRC: uint32(i)}
	}
	indexOff := uint64(n+1) * uint64(pageSize)
	idx := spec.EncodeV3Index(entries)
	hdr := spec.EncodeV3Header(pageSize)
	copy(hdr[spec.CommitSlotOffset(1):], spec.EncodeCommitSlot(spec.NewCommit(1, pageSize, indexOff, idx)))
	return &SparseFile{Size: int64(indexOff) + int64(len(idx)), Parts: []Part{{0, hdr}, {int64(indexOff), idx}}}, entries
}

// benchKey names entry i like a transformer layer, every other with a bias.
func benchKey(i int) spec.Key {
	k := spec.Key{Weight: fmt.Sprintf("layers.%d.attention.wq.weight", i), Seed: uint32(i) * 2654435761, Fingerprint: uint64(i) << 7, Source: ^uint64(i)}
	if i%2 == 1 {
		k.Bias = fmt.Sprintf("layers.%d.attention.wq.bias", i)
	}
	return k
}

// ExecuTorchV2 lays a v2 file out save by save as ExecuTorch's own cache
// does (measured on its code, Linux x86_64): each save appends its regions
// page-aligned after whatever the file holds, the previous trailer
// included, which stays behind as dead bytes between data regions; the
// new trailer starts at the next page boundary and lists every entry, in
// its hash map's order (observed: reverse insertion order). A re-pack of a
// name (a seed mismatch) leaves the old region dead and points the name at
// the new one.
type ExecuTorchV2 struct {
	PageSize int
	File     []byte
	// Entries in the order the last trailer lists them.
	Entries []spec.Entry
}

// Save appends ws and writes the trailer, as a finalize with auto-save does.
func (b *ExecuTorchV2) Save(ws []Weight) {
	page := uint64(b.PageSize)
	for _, w := range ws {
		off := alignUp(uint64(len(b.File)), page)
		b.File = append(b.File, make([]byte, off-uint64(len(b.File)))...)
		b.File = append(b.File, w.Data...)
		e := spec.Entry{Key: spec.Key{Weight: w.Key.V2Name(), Seed: w.Key.Seed}, Offset: off, Size: uint64(len(w.Data))}
		b.Entries = slicesDeleteName(b.Entries, e.Key.Weight)
		b.Entries = append([]spec.Entry{e}, b.Entries...)
	}
	indexStart := alignUp(uint64(len(b.File)), page)
	b.File = append(b.File, make([]byte, indexStart-uint64(len(b.File)))...)
	b.File = append(b.File, spec.EncodeV2Index(indexStart, b.Entries)...)
}

func slicesDeleteName(es []spec.Entry, name string) []spec.Entry {
	out := es[:0:0]
	for _, e := range es {
		if e.Key.Weight != name {
			out = append(out, e)
		}
	}
	return out
}

// ExecuTorchFile is a v2 file as ExecuTorch's cache leaves it after a
// named sequence of launches.
type ExecuTorchFile struct {
	Name    string
	File    []byte
	Entries []spec.Entry
}

// ExecuTorchFiles are the layouts ExecuTorch's own cache writes, with
// 4 KiB pages, named after the launches that made them:
//
//   - one.bin: one program packs one weight ("weight"+"bias", the key of
//     ExecuTorch's cache tests) and saves.
//   - three.bin: one program packs three weights and saves.
//   - twosaves.bin: one instance saves a first program, then a second:
//     the first trailer stays between the data regions.
//   - reloaded.bin: twosaves.bin reloaded in a fresh process whose seed of
//     one weight changed (a kernel upgrade): the re-packed weight is
//     appended and persisted, its old region left dead.
func ExecuTorchFiles() []ExecuTorchFile {
	const page = 4096
	w := func(weight, bias string, seed uint32, fill byte, n int) Weight {
		d := make([]byte, n)
		for i := range d {
			d[i] = fill + byte(i)
		}
		return Weight{Key: spec.Key{Weight: weight, Bias: bias, Seed: seed}, Data: d}
	}
	first := w("weight", "bias", 0x5eed, 1, 4096)
	more := []Weight{w("conv1.weight", "conv1.bias", 0x5eed, 2, 3000), w("fc.weight", "", 0x5eed, 3, 9000)}
	second := []Weight{w("classifier.weight", "classifier.bias", 0x7777, 4, 5000)}

	var files []ExecuTorchFile
	add := func(name string, b *ExecuTorchV2) {
		files = append(files, ExecuTorchFile{Name: name, File: append([]byte(nil), b.File...), Entries: append([]spec.Entry(nil), b.Entries...)})
	}
	one := &ExecuTorchV2{PageSize: page}
	one.Save([]Weight{first})
	add("one.bin", one)
	three := &ExecuTorchV2{PageSize: page}
	three.Save(append([]Weight{first}, more...))
	add("three.bin", three)
	two := &ExecuTorchV2{PageSize: page}
	two.Save(append([]Weight{first}, more...))
	two.Save(second)
	add("twosaves.bin", two)
	repacked := first
	repacked.Key.Seed = 0xbeef
	two.Save([]Weight{repacked})
	add("reloaded.bin", two)
	return files
}
