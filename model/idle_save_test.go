package model

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// An idle save on a file with no commit writes an empty trailer where the
// design does so (IdleSaveWrites, the executorch design: refused by the
// next load), when the instance may write: it holds the writer lock or
// nobody does. With another process holding the lock, or a commit in the
// file, it writes nothing.
func TestIdleSaveWritesAnEmptyTrailerOnlyOnANewFile(t *testing.T) {
	b := Bounds{Procs: 2, Names: 1, Programs: 1, Kernels: 1, Sources: 1}
	d := design(t, "executorch")
	for _, tc := range []struct {
		text  string
		wrote bool
	}{
		{"init proc=A program=P1\nsave proc=A\n", true},
		{"init proc=A program=P1\ninit proc=B program=P1\nsave proc=B\n", false},
		{"init proc=A program=P1\ninit proc=B program=P1\ncrash kind=process proc=A branch=idle\nsave proc=B\n", true},
		{launch("A", "P1", "w0") + "save proc=A\n", false},
	} {
		outs := run(t, d, b, tc.text)
		last := outs[len(outs)-1]
		require.Equal(t, tc.wrote, last.Result.Wrote, tc.text)
		if tc.wrote {
			require.Equal(t, DiskCorrupt, last.Next.Disk.State, tc.text)
		} else {
			require.Equal(t, outs[len(outs)-2].Next.Disk, last.Next.Disk, tc.text)
		}
	}
}
