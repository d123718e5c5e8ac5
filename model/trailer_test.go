package model

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// With the trailer at the file's end as the only commit point
// (ReserveBreaksIndex, the executorch design), a reservation in a file
// that has a commit appends after the trailer, so the file no longer has
// a loadable index; one in a file with no commit yet leaves it as it is.
// The reference's index survives the same reservation.
func TestReserveAfterTheTrailerBreaksTheIndex(t *testing.T) {
	b := Bounds{Procs: 2, Names: 3, Programs: 2, Kernels: 1, Sources: 1}
	text := launch("A", "P1", "w0", "w1") + "init proc=A program=P2\nlookup proc=A name=w1\nlookup proc=A name=w2\nreserve proc=A name=w2\n"
	for _, tc := range []struct {
		design string
		after  DiskState
	}{{"executorch", DiskCorrupt}, {"reference", DiskValid}} {
		outs := run(t, design(t, tc.design), b, text)
		require.Equal(t, DiskEmpty, outs[2].Next.Disk.State, "%s: %v", tc.design, outs[2].Op)
		before, last := outs[len(outs)-2], outs[len(outs)-1]
		require.Equal(t, DiskValid, before.Next.Disk.State, tc.design)
		require.Equal(t, tc.after, last.Next.Disk.State, tc.design)
	}
}
