// Package spectest builds valid cache files of both formats for tests, fuzz
// seeds and benchmarks. It lays files out as the writers do (ExecuTorch for
// v2, the reference cache's save protocol for v3) from the spec encoders
// alone, so a parser test never depends on the cache implementation.
package spectest

import (
	"fmt"

	"github.com/xpwc/xpwc/spec"
)

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
		e := spec.Entry{Key: w.Key, Offset: off, Size: uint64(len(w.Data)), CRC: spec.CRC32C(w.Data)}
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
	copy(b.File[spec.CommitSlotOffset(b.Gen):], spec.EncodeCommitSlot(c))
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
