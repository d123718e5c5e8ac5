package spec

import (
	"strings"
	"testing"
)

// Bit patterns (magics, checksums) print in hex, quantities in decimal.
func TestFormatErrorPrintsBitPatternsInHex(t *testing.T) {
	for _, c := range []struct {
		field string
		val   uint64
		want  string
	}{
		{"magic", 1248664238, "magic = 0x4a6d1aae at offset 8"},
		{"slot_crc", 0xdeadbeef, "slot_crc = 0xdeadbeef at offset 8"},
		{"data_checksum", 255, "data_checksum = 0xff at offset 8"},
		{"entry_count", 1000, "entry_count = 1000 at offset 8"},
	} {
		err := &FormatError{Off: 8, Field: c.field, Val: c.val, Err: ErrBadMagic}
		if got := err.Error(); !strings.HasSuffix(got, c.want) {
			t.Errorf("%s: %q, want suffix %q", c.field, got, c.want)
		}
	}
}
