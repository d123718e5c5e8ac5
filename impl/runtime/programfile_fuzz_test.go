package runtime

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"
)

// FuzzParseProgram: any bytes give a program or a typed error, never a
// panic; and a file that parses re-encodes to the same bytes, so the parser
// accepts nothing the encoder would not write.
//
//	go test ./impl/runtime -run '^$' -fuzz '^FuzzParseProgram$' -fuzztime 60s \\
//		-fuzzminimizetime 5s -parallel 2
func FuzzParseProgram(f *testing.F) {
	tiny, err := NewSynthetic("tiny", 1, []Layer{
		{Name: "a", N: 3, K: 2, Bias: true},
		{Name: "b", Input: "a", N: 2, K: 3},
	})
	if err != nil {
		f.Fatal(err)
	}
	var buf bytes.Buffer
	if err := EncodeProgram(&buf, tiny); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add(buf.Bytes()[:buf.Len()-4])
	f.Add([]byte(programMagic))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		checkParse(t, data)
		// The same bytes with a valid checksum appended, so that mutations
		// reach the layer table and data checks behind the CRC.
		fixed := binary.LittleEndian.AppendUint32(append([]byte(nil), data...), crc32.Checksum(data, castagnoli))
		checkParse(t, fixed)
	})
}

func checkParse(t *testing.T, data []byte) {
	p, err := ParseProgram(data)
	if err != nil {
		if !errors.Is(err, ErrBadProgramFile) && !errors.Is(err, ErrInvalidProgram) {
			t.Fatalf("untyped error: %v", err)
		}
		return
	}
	var out bytes.Buffer
	if err := EncodeProgram(&out, p); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), data) {
		t.Fatalf("accepted a non-canonical file: %d bytes re-encode to %d", len(data), out.Len())
	}
}
