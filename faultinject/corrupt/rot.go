package corrupt

import (
	"fmt"
	"os"

	"github.com/xpwc/xpwc/spec"
)

// RotEntry changes one byte in the middle of the data of the committed
// entry of the v3 file at path that match selects, in place, as bit rot or
// a writer outside the protocol would: the index still holds the intact
// bytes' checksum, so only a data check can tell.
func RotEntry(path string, match func(spec.Key) bool) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	v, err := spec.ParseV3(f, fi.Size())
	if err != nil {
		return err
	}
	for _, e := range v.Entries {
		if !match(e.Key) || e.Size == 0 {
			continue
		}
		var b [1]byte
		off := int64(e.Offset + e.Size/2)
		if _, err := f.ReadAt(b[:], off); err != nil {
			return err
		}
		b[0] ^= 0x40
		if _, err := f.WriteAt(b[:], off); err != nil {
			return err
		}
		return f.Close()
	}
	return fmt.Errorf("corrupt: no matching entry in %s", path)
}
