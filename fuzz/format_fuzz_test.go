package fuzz

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/xpwc/xpwc/spec"
	"github.com/xpwc/xpwc/spec/spectest"
)

// FuzzParseV2 feeds arbitrary bytes to the v2 parser (G7): no panic, a typed
// corruption error or an index that is in bounds, free of overlaps and
// duplicates, and canonical.
func FuzzParseV2(f *testing.F) {
	for _, s := range v2Seeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkV2(t, data) })
}

// FuzzParseV3 feeds arbitrary bytes to the v3 parser. Mutations rarely get
// past the slot and index CRCs; FuzzV3Mutated covers what lies behind them.
func FuzzParseV3(f *testing.F) {
	for _, s := range v3Seeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkV3(t, data) })
}

// FuzzV3Mutated takes a (mutated) v3 file, recomputes its slot and index
// checksums, and parses it, so the fuzzer explores the index checks rather
// than the CRC comparisons.
func FuzzV3Mutated(f *testing.F) {
	for _, s := range v3Seeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		data = append([]byte(nil), data...)
		spectest.FixV3Checksums(data)
		checkV3(t, data)
	})
}

// FuzzRoundTrip decodes the input into a list of weights, writes it in both
// formats, and checks encode -> parse -> encode gives the same bytes and
// parse -> encode -> parse the same index. It also runs the parse -> encode
// -> parse direction on the raw input.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x02ab\x01c\x00\x00\x00\x01\x10\x00\x01a\x02bc\x12\x34\x56\x78\x00\x01"))
	f.Add([]byte("\x01w\x00\x01\x02\x03\x04\xff\x0f\x01w\x00\x05\x06\x07\x08\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkV2(t, data)
		checkV3(t, data)

		ws := decodeWeights(data)
		if len(ws) == 0 {
			return
		}
		for _, page := range []int{4096, 16384} {
			v2file, v2entries := spectest.BuildV2(page, dedupV2(ws))
			v := checkV2(t, v2file)
			if v == nil {
				_, err := spec.ParseV2(bytes.NewReader(v2file), int64(len(v2file)))
				t.Fatalf("valid v2 file rejected: %v", err)
			}
			if !equalEntries(v.Entries, v2entries) {
				t.Fatal("v2 parse differs from what was encoded")
			}
			b := spectest.NewV3(page)
			half := len(ws) / 2
			b.Save(ws[:half]) // two generations: replaced names, old index as garbage
			b.Save(ws[half:])
			w := checkV3(t, b.File)
			if w == nil {
				_, err := spec.ParseV3(bytes.NewReader(b.File), int64(len(b.File)))
				t.Fatalf("valid v3 file rejected: %v", err)
			}
			if !equalEntries(w.Entries, b.Entries) {
				t.Fatal("v3 parse differs from what was encoded")
			}
			for _, e := range w.Entries {
				if err := spec.VerifyEntryData(bytes.NewReader(b.File), e); err != nil {
					t.Fatalf("data of a freshly written entry fails verification: %v", err)
				}
			}
		}
	})
}

// decodeWeights reads weights from fuzz bytes: weight name length and bytes,
// bias name length and bytes, seed u32, data length u16. NULs in names become
// '_' and empty weight names 'w', so every decoded weight is valid.
func decodeWeights(data []byte) []spectest.Weight {
	var ws []spectest.Weight
	take := func(n int) []byte {
		n = min(n, len(data))
		b := data[:n]
		data = data[n:]
		return b
	}
	name := func() string {
		l := take(1)
		if len(l) == 0 {
			return ""
		}
		return string(bytes.ReplaceAll(take(int(l[0])%32), []byte{0}, []byte{'_'}))
	}
	for len(data) > 0 && len(ws) < 64 {
		k := spec.Key{Weight: name(), Bias: name()}
		if k.Weight == "" {
			k.Weight = "w"
		}
		var seed [4]byte
		copy(seed[:], take(4))
		k.Seed = binary.LittleEndian.Uint32(seed[:])
		k.Fingerprint = uint64(k.Seed) * 0x9E3779B97F4A7C15
		var n [2]byte
		copy(n[:], take(2))
		d := make([]byte, 1+binary.LittleEndian.Uint16(n[:])%5000) // XNNPACK never packs zero bytes
		for i := range d {
			d[i] = byte(i) ^ byte(k.Seed)
		}
		ws = append(ws, spectest.Weight{Key: k, Data: d})
	}
	return ws
}

// dedupV2 drops weights whose concatenated v2 name repeats an earlier one:
// v2 cannot store them, which is the ambiguity v3's separator removes.
func dedupV2(ws []spectest.Weight) []spectest.Weight {
	seen := map[string]bool{}
	var out []spectest.Weight
	for _, w := range ws {
		if !seen[w.Key.V2Name()] {
			seen[w.Key.V2Name()] = true
			out = append(out, w)
		}
	}
	return out
}

// v2Seeds are valid v2 files plus ExecuTorch's rejected cases.
func v2Seeds() [][]byte {
	a, _ := spectest.BuildV2(4096, spectest.Weights(3, 100, 1))
	b, _ := spectest.BuildV2(4096, spectest.Weights(1, 4096, 2))
	one := make([]byte, 16)
	one = binary.LittleEndian.AppendUint32(one, 1)
	one = append(one, 'w')
	one = binary.LittleEndian.AppendUint64(one, 0)
	one = binary.LittleEndian.AppendUint64(one, 8)
	one = binary.LittleEndian.AppendUint32(one, 0x12345678)
	pr20562 := append(append([]byte(nil), one...), 0xAB, 0xCD)
	pr20562 = append(pr20562, footer(16, 2, 2)...)
	valid16 := append(append([]byte(nil), one...), footer(16, 1, 2)...)
	return [][]byte{a, b, valid16, pr20562, bytes.Repeat([]byte{0xCC}, 1024), footer(0, 0, 2), append(make([]byte, 64), footer(64, 1, 1)...)}
}

func footer(indexStart uint64, count, version uint32) []byte {
	b := binary.LittleEndian.AppendUint64(nil, indexStart)
	b = binary.LittleEndian.AppendUint32(b, count)
	b = binary.LittleEndian.AppendUint32(b, spec.V2Magic)
	return binary.LittleEndian.AppendUint32(b, version)
}

// v3Seeds are valid v3 files: one and two generations, a fresh header.
func v3Seeds() [][]byte {
	one, _ := spectest.BuildV3(4096, spectest.Weights(3, 100, 1))
	b := spectest.NewV3(4096)
	b.Save(spectest.Weights(2, 50, 2))
	b.Save(spectest.Weights(3, 70, 3))
	return [][]byte{one, b.File, spec.EncodeV3Header(4096)}
}
