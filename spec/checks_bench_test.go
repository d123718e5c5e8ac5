package spec

import (
	"bytes"
	"fmt"
	"testing"
)

// BenchmarkV3LoadChecks prices the checks of a v3 load one by one on an
// index of 1,184 entries (llama-1184's), beside the whole parse in the same
// run ("parse"): the commit slots read and checked ("slots"), the index's
// CRC32C ("index-crc"), the unique-name check ("names"), the no-overlap
// check ("overlap") and each entry's range check ("ranges"). What the parse
// costs beyond their sum is reading and decoding the index and allocating
// its entries. Compare ns/op:
//
//	go test ./spec -run '^$' -bench V3LoadChecks -count 5
func BenchmarkV3LoadChecks(b *testing.B) {
	const n, page = 1184, 4096
	entries := make([]Entry, n)
	for i := range entries {
		k := Key{Weight: fmt.Sprintf("layers.%d.attention.wq.weight", i), Seed: uint32(i), Fingerprint: uint64(i), Source: ^uint64(i)}
		if i%2 == 1 {
			k.Bias = fmt.Sprintf("layers.%d.attention.wq.bias", i)
		}
		entries[i] = Entry{Key: k, Offset: uint64(i+1) * page, Size: 4000, CRC: uint32(i)}
	}
	indexOff := uint64(n+1) * page
	idx := EncodeV3Index(entries)
	file := make([]byte, int(indexOff)+len(idx))
	copy(file, EncodeV3Header(page))
	copy(file[CommitSlotOffset(1):], EncodeCommitSlot(NewCommit(1, page, indexOff, idx)))
	copy(file[indexOff:], idx)
	r, size := bytes.NewReader(file), int64(len(file))
	f, err := ParseV3(r, size)
	if err != nil {
		b.Fatal(err)
	}
	parsed := f.Entries
	bd := v3Bounds{size: uint64(size), header: page, page: page, indexOff: indexOff, indexLen: uint64(len(idx))}

	b.Run("parse", func(b *testing.B) {
		for b.Loop() {
			if _, err := ParseV3(r, size); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("slots", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := ReadCommitSlots(r, size); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("index-crc", func(b *testing.B) {
		for b.Loop() {
			if CRC32C(idx) != f.Commit.IndexCRC {
				b.Fatal("index CRC")
			}
		}
	})
	b.Run("names", func(b *testing.B) {
		for b.Loop() {
			s := newNameSet(n, v3Name)
			for i := range parsed {
				s.add([]byte(parsedV3Name(&parsed[i])))
			}
			if s.firstDup(parsed) >= 0 {
				b.Fatal("duplicate")
			}
		}
	})
	b.Run("overlap", func(b *testing.B) {
		for b.Loop() {
			m := newStartMap(page, uint64(size))
			for i := range parsed {
				m.add(parsed[:i+1], i)
			}
			if a, _ := m.overlap(parsed); a >= 0 {
				b.Fatal("overlap")
			}
		}
	})
	b.Run("ranges", func(b *testing.B) {
		for b.Loop() {
			for i := range parsed {
				if !v3RangeOK(&parsed[i], &bd) {
					b.Fatal(checkV3Range(&parsed[i], bd, 0))
				}
			}
		}
	})
}
