package rawmem

import (
	"bytes"
	"encoding/binary"
	"math"
	"strings"
	"testing"
	"unsafe"
)

func TestStringBytes(t *testing.T) {
	for _, s := range []string{"", "a", "layers.0.attention.wq.weight"} {
		if got := StringBytes(s); !bytes.Equal(got, []byte(s)) {
			t.Errorf("StringBytes(%q) = %q", s, got)
		}
	}
}

func TestBytesString(t *testing.T) {
	b := []byte("layers.0.weight")
	s := BytesString(b[7:])
	if s != "0.weight" || unsafe.StringData(s) != &b[7] {
		t.Errorf("BytesString = %q, not the bytes at b[7:]", s)
	}
}

func TestExtendString(t *testing.T) {
	whole := strings.Clone("weight\x00bias")
	w := whole[:6]
	if got := ExtendString(w, len(whole)); got != whole {
		t.Errorf("ExtendString = %q, want %q", got, whole)
	}
	if got := ExtendString(w, 3); got != "wei" {
		t.Errorf("ExtendString(3) = %q", got)
	}
}

func TestAligned(t *testing.T) {
	for _, n := range []int{1, 63, 64, 4097} {
		b := Aligned(n, 64)
		if len(b) != n || cap(b) != n {
			t.Fatalf("Aligned(%d): len %d cap %d", n, len(b), cap(b))
		}
		if addr := uintptr(unsafe.Pointer(&b[0])); addr%64 != 0 {
			t.Errorf("Aligned(%d) at %#x", n, addr)
		}
	}
}

// The 32-bit views read and write the same memory a copy through
// encoding/binary would (native order is little-endian on every platform
// xpwc builds for), and cover len/4 values.
func TestWordViews(t *testing.T) {
	b := Aligned(4*5+3, 64)
	for i := range b {
		b[i] = byte(i*7 + 1)
	}
	f, u := Float32s(b), Uint32s(b)
	if len(f) != 5 || len(u) != 5 {
		t.Fatalf("len %d, %d; want 5", len(f), len(u))
	}
	for i := range u {
		want := binary.LittleEndian.Uint32(b[4*i:])
		if u[i] != want || math.Float32bits(f[i]) != want {
			t.Errorf("value %d: %#x, %#x; want %#x", i, u[i], math.Float32bits(f[i]), want)
		}
	}
	u[2] = 0xdeadbeef
	if got := binary.LittleEndian.Uint32(b[8:]); got != 0xdeadbeef {
		t.Errorf("a store through the view reached %#x", got)
	}
	if Float32s(b[:3]) != nil || Uint32s(nil) != nil {
		t.Error("a view of fewer than 4 bytes is not empty")
	}
}

func TestFloat32ViewsRoundTrip(t *testing.T) {
	f := []float32{1, -2.5, float32(math.Inf(1)), 0}
	bits, raw := Float32Bits(f), Float32Bytes(f)
	if len(bits) != len(f) || len(raw) != 4*len(f) {
		t.Fatalf("len %d, %d", len(bits), len(raw))
	}
	for i, v := range f {
		if bits[i] != math.Float32bits(v) || binary.LittleEndian.Uint32(raw[4*i:]) != math.Float32bits(v) {
			t.Errorf("value %d: bits %#x, bytes % x", i, bits[i], raw[4*i:4*i+4])
		}
	}
	if Float32Bits(nil) != nil || Float32Bytes(nil) != nil {
		t.Error("a view of nothing is not empty")
	}
	if Addr(raw) != uintptr(unsafe.Pointer(&f[0])) {
		t.Error("Float32Bytes is not a view of f")
	}
}

func TestInt8s(t *testing.T) {
	b := []byte{0, 1, 0x7f, 0x80, 0xff}
	got := Int8s(b)
	want := []int8{0, 1, 127, -128, -1}
	if len(got) != len(want) {
		t.Fatalf("len %d", len(got))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("Int8s[%d] = %d, want %d", i, got[i], want[i])
		}
	}
	if Int8s(nil) != nil {
		t.Error("a view of nothing is not empty")
	}
}
