package cache

import (
	"runtime/debug"

	"github.com/xpwc/xpwc/spec"
)

// readMapped runs read, which reads mapped file data, and reports whether
// it ran to its end. Another process may have truncated the file under the
// mapping (nothing in the lock protocol stops a foreign writer); reading
// such pages raises SIGBUS, which would kill the process. Under
// debug.SetPanicOnFault the fault becomes a panic that is recovered here
// and reported as false.
func readMapped(read func()) (ok bool) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if _, isFault := r.(interface{ Addr() uintptr }); !isFault {
				panic(r)
			}
			ok = false
		}
	}()
	read()
	return true
}

// crcMapped computes the data checksum (spec.DataChecksum) of mapped file
// data; ok is false if reading it faulted, so the entry is treated as
// corrupt and re-packed instead (G6, G7).
func crcMapped(b []byte) (crc uint32, ok bool) {
	if !readMapped(func() { crc = spec.DataChecksum(b) }) {
		return 0, false
	}
	return crc, true
}

// touchMapped loads one byte of every page of b (mapped file data), so
// that the page tables the hypervisor keeps for them are filled too, and
// returns their sum (kept by the caller so that the loads are not
// optimized away). A fault ends the touch and reports false; nothing is
// lost but speed.
func touchMapped(b []byte) (sum uint64, ok bool) {
	if !readMapped(func() {
		for i := 0; i < len(b); i += touchStride {
			sum += uint64(b[i])
		}
	}) {
		return 0, false
	}
	return sum, true
}

// touchStride is the smallest page size of the platforms Go runs on: a
// larger page is touched more than once, which costs nothing beside its
// fault.
const touchStride = 4096
