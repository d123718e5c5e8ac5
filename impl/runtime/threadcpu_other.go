//go:build !linux

package runtime

import "time"

// threadCPU is measured only on Linux.
func threadCPU() (time.Duration, bool) { return 0, false }
