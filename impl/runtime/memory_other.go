//go:build !linux

package runtime

import "time"

// mappedMemory is measured only on Linux (/proc/self/smaps).
func mappedMemory(string) (rss, dirty int64, ok bool) { return 0, 0, false }

// threadCPU is measured only on Linux.
func threadCPU() (time.Duration, bool) { return 0, false }
