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

// touchMapped loads one byte of every page of b (mapped file data), so
// that the page tables the hypervisor keeps for them are filled too. A
// fault (the file truncated under the mapping) ends the touch and reports
// false; nothing is lost but speed.
func touchMapped(b []byte) (sum uint64, ok bool) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if _, isFault := r.(interface{ Addr() uintptr }); !isFault {
				panic(r)
			}
			sum, ok = 0, false
		}
	}()
	for i := 0; i < len(b); i += touchStride {
		sum += uint64(b[i])
	}
	return sum, true
}

// touchStride is the smallest page size of the platforms Go runs on: a
// larger page is touched more than once, which costs nothing beside its
// fault.
const touchStride = 4096
