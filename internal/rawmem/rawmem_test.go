package rawmem

import (
	"bytes"
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
