package cache

import (
	"runtime/debug"

	"github.com/xpwc/xpwc/spec"
)

// crcMapped computes the data checksum (spec.DataChecksum) of mapped file
// data. Another process may
// have truncated the file under the mapping (nothing in the lock protocol
// stops a foreign writer); reading such pages raises SIGBUS, which would
// kill the process. Under debug.SetPanicOnFault the fault becomes a panic
// that is recovered here and reported as ok == false, so the entry is
// treated as corrupt and re-packed instead (G6, G7).
func crcMapped(b []byte) (crc uint32, ok bool) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if _, isFault := r.(interface{ Addr() uintptr }); !isFault {
				panic(r)
			}
			crc, ok = 0, false
		}
	}()
	return spec.DataChecksum(b), true
}
