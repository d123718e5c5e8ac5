package model

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/spec"
)

// Under a writer lock held from init to destroy (LockInitToDestroy), an
// instance that loaded the file keeps a shared lock while it maps it, so
// no process takes the writer lock meanwhile (Design.LockInitToDestroy):
// here B loaded the file, a foreign write broke its index, and A's init
// finds no index. A packs to the heap; it neither takes the lock nor
// truncates the file under B's mapping (I8).
func TestLockInitWaitsForALoadedInstancesSharedLock(t *testing.T) {
	b := Bounds{Procs: 2, Names: 1, Programs: 1, Kernels: 1, Sources: 1, Foreign: true}
	text := launch("A", "P1", "w0") + "destroy proc=A\n" + warmLaunch("B", "P1", "w0") + "foreign kind=index\n"
	for _, name := range []string{"executorch", "lock-init-to-destroy"} {
		d := design(t, "executorch")
		if name != "executorch" {
			d = &Design{Name: name, LockInitToDestroy: true}
		}
		outs := run(t, d, b, text+"init proc=A program=P1\n")
		o := outs[len(outs)-1]
		require.True(t, o.Next.Procs[1].LoadFlag, name)
		require.Equal(t, spec.LoadLocked, o.Result.Load, name)
		require.True(t, o.Next.Procs[0].Blocked, name)
		require.Zero(t, o.Next.Disk.Lock, name)
		require.Zero(t, o.Events&EvtTruncate, name)
		require.False(t, o.Next.Procs[1].Broken, name)

		// Once B's instance is gone, A's next init takes the lock.
		outs = run(t, d, b, text+"destroy proc=B\ninit proc=A program=P1\n")
		require.Equal(t, uint8(1), outs[len(outs)-1].Next.Disk.Lock, name)
	}
}

// Where the lock is taken changes nothing for a reader: an instance that
// holds what it loaded re-reads the file at its next init (a refresh) as
// it does under the reference's lock from reservation to commit.
func TestLockInitReinitRefreshesAsTheReference(t *testing.T) {
	b := Bounds{Procs: 2, Names: 2, Programs: 2, Kernels: 1, Sources: 1}
	text := launch("A", "P1", "w0", "w1") + "destroy proc=A\n" + warmLaunch("B", "P1", "w0", "w1") +
		"init proc=B program=P2\n"
	want := run(t, ref(t), b, text)
	got := run(t, &Design{Name: "lock-init-to-destroy", LockInitToDestroy: true}, b, text)
	w, g := want[len(want)-1], got[len(got)-1]
	require.Equal(t, w.Result, g.Result)
	require.Equal(t, w.Next.Procs[1].Ents, g.Next.Procs[1].Ents)
}
