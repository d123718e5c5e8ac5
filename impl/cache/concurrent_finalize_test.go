package cache_test

import (
	"fmt"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
)

// Two threads launching the same program through one cache (one Manager)
// both get InitializeForProgram; when one finalizes while the other is
// still packing into a reservation, the reserved pages must stay writable:
// protecting them turned the packer's next store into a SIGSEGV (G6; found
// by impl/runtime TestConcurrentLaunchesShareOneCache under -race). The
// abandoned reservation is garbage, and inserting it falls back to the
// heap without an error the packer must handle specially (G8).
// A staged reservation (the default) is heap memory and writable anyway;
// the mapped one is the case that faulted.
func TestFinalizeLeavesOutstandingReservationsWritable(t *testing.T) {
	for _, mapped := range []bool{true, false} {
		finalizeLeavesOutstandingWritable(t, mapped)
	}
}

func finalizeLeavesOutstandingWritable(t *testing.T, mapped bool) {
	c := open(t, cache.Options{Path: tempPath(t), MappedWrites: mapped})
	require.NoError(t, c.InitializeForProgram("P"))
	packer := key("late", 1)
	buf, err := c.ReserveSpace(len(packed(packer)))
	require.NoError(t, err)

	require.NoError(t, c.InitializeForProgram("P")) // the second thread
	pack(t, c, key("early", 1))
	require.NoError(t, c.Finalize())

	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	store := func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("store into the reservation faulted: %v", r)
			}
		}()
		fillPacked(packer, buf)
		return nil
	}
	require.NoError(t, store())
	_, err = c.LookUpOrInsert(packer, buf)
	require.ErrorIs(t, err, cache.ErrNotReserved, "the reservation ended with the finalize")
}
