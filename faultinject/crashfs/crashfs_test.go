package crashfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/faultinject/errorfs"
	"github.com/xpwc/xpwc/impl/vfs"
)

const rw = os.O_RDWR | os.O_CREATE

func newFS(t *testing.T) *FS {
	f := New(Options{})
	require.NoError(t, f.MkdirAll("/c"))
	return f
}

func create(t *testing.T, f *FS, name string, data []byte) vfs.File {
	file, err := f.OpenFile(name, rw, 0o644)
	require.NoError(t, err)
	if data != nil {
		_, err = file.WriteAt(data, 0)
		require.NoError(t, err)
	}
	return file
}

func content(t *testing.T, f *FS, name string) (string, bool) {
	b, err := f.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	require.NoError(t, err)
	return string(b), true
}

func lossNone(f *FS) *FS { return f.PowerLossWith(LossConfig{Keep: 0}) }

func TestFsyncSemantics(t *testing.T) {
	f := newFS(t)
	file := create(t, f, "/c/a", []byte("hello"))
	require.NoError(t, f.SyncDir("/c"))
	require.NoError(t, file.Sync())
	_, err := file.WriteAt([]byte("J"), 0)
	require.NoError(t, err)

	pc := f.ProcessCrash()
	got, _ := content(t, pc, "/c/a")
	assert.Equal(t, "Jello", got, "process crash keeps the page cache")

	pl := lossNone(f)
	got, _ = content(t, pl, "/c/a")
	assert.Equal(t, "hello", got, "power loss drops the unsynced write")

	all := f.PowerLossWith(LossConfig{Keep: 1})
	got, _ = content(t, all, "/c/a")
	assert.Equal(t, "Jello", got)
}

func TestSyncDataAndMsyncAreDurable(t *testing.T) {
	f := newFS(t)
	file := create(t, f, "/c/a", make([]byte, 8192))
	require.NoError(t, f.SyncDir("/c"))
	_, err := file.WriteAt([]byte("data"), 100)
	require.NoError(t, err)
	require.NoError(t, file.SyncData())
	m, err := file.Map(4096, 4096, vfs.ProtReadWrite)
	require.NoError(t, err)
	copy(m.Bytes()[10:], "mapped")
	require.NoError(t, m.Sync())
	copy(m.Bytes()[20:], "lost")

	got, _ := content(t, lossNone(f), "/c/a")
	assert.Equal(t, "data", got[100:104])
	assert.Equal(t, "mapped", got[4106:4112])
	assert.Equal(t, "\x00\x00\x00\x00", got[4116:4120], "store after msync is not durable")
}

func TestDirEntryDurability(t *testing.T) {
	cases := []struct {
		name     string
		syncDir  bool
		want     bool
		wantData string
	}{
		{"create without SyncDir is lost", false, false, ""},
		{"create with SyncDir survives", true, true, "x"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFS(t)
			file := create(t, f, "/c/a", []byte("x"))
			require.NoError(t, file.Sync())
			if c.syncDir {
				require.NoError(t, f.SyncDir("/c"))
			}
			got, ok := content(t, lossNone(f), "/c/a")
			assert.Equal(t, c.want, ok)
			assert.Equal(t, c.wantData, got)
		})
	}
}

func TestRenameDurability(t *testing.T) {
	setup := func(t *testing.T) *FS {
		f := newFS(t)
		old := create(t, f, "/c/cache", []byte("old"))
		require.NoError(t, old.Sync())
		require.NoError(t, f.SyncDir("/c"))
		tmp := create(t, f, "/c/cache.tmp", []byte("new"))
		require.NoError(t, tmp.Sync())
		require.NoError(t, f.Rename("/c/cache.tmp", "/c/cache"))
		return f
	}
	t.Run("without SyncDir the old file stays", func(t *testing.T) {
		f := setup(t)
		pl := lossNone(f)
		got, _ := content(t, pl, "/c/cache")
		assert.Equal(t, "old", got)
		_, ok := content(t, pl, "/c/cache.tmp")
		assert.False(t, ok, "the temporary was never durable")
		got, _ = content(t, f.ProcessCrash(), "/c/cache")
		assert.Equal(t, "new", got)
	})
	t.Run("with SyncDir the new file is durable", func(t *testing.T) {
		f := setup(t)
		require.NoError(t, f.SyncDir("/c"))
		got, _ := content(t, lossNone(f), "/c/cache")
		assert.Equal(t, "new", got)
	})
	t.Run("every outcome has old or new, never a mix", func(t *testing.T) {
		f := setup(t)
		n := 0
		for out := range f.PowerLossOutcomes(1<<10, 1) {
			n++
			got, ok := content(t, out, "/c/cache")
			require.True(t, ok)
			assert.Contains(t, []string{"old", "new"}, got)
		}
		assert.Equal(t, 2, n, "one unsynced entry: cache (cache.tmp was never durable and is gone)")
	})
}

func TestRemoveDurability(t *testing.T) {
	f := newFS(t)
	file := create(t, f, "/c/a", []byte("x"))
	require.NoError(t, file.Sync())
	require.NoError(t, f.SyncDir("/c"))
	require.NoError(t, f.Remove("/c/a"))
	_, ok := content(t, f.ProcessCrash(), "/c/a")
	assert.False(t, ok)
	f2 := newFS(t)
	file = create(t, f2, "/c/a", []byte("x"))
	require.NoError(t, file.Sync())
	require.NoError(t, f2.SyncDir("/c"))
	require.NoError(t, f2.Remove("/c/a"))
	_, ok = content(t, lossNone(f2), "/c/a")
	assert.True(t, ok, "an unsynced remove is undone by power loss")
}

func TestMappedWritesCoherent(t *testing.T) {
	f := newFS(t)
	file := create(t, f, "/c/a", make([]byte, 3*4096))
	m, err := file.Map(4096, 8192, vfs.ProtReadWrite)
	require.NoError(t, err)
	assert.Equal(t, int64(4096), m.Offset())

	copy(m.Bytes()[0:], "store")
	buf := make([]byte, 5)
	_, err = file.ReadAt(buf, 4096)
	require.NoError(t, err)
	assert.Equal(t, "store", string(buf), "ReadAt sees a mapped store")

	_, err = file.WriteAt([]byte("pwrite"), 4096+100)
	require.NoError(t, err)
	assert.Equal(t, "pwrite", string(m.Bytes()[100:106]), "the mapping sees WriteAt")

	m2, err := file.Map(0, 8192, vfs.ProtReadWrite)
	require.NoError(t, err)
	copy(m2.Bytes()[4096+200:], "other")
	_, err = file.ReadAt(make([]byte, 1), 0) // reading the page cache synchronises
	require.NoError(t, err)
	buf = make([]byte, 5)
	_, err = file.ReadAt(buf, 4096+200)
	require.NoError(t, err)
	assert.Equal(t, "other", string(m.Bytes()[200:205]), "overlapping mappings agree")

	// The mapping outlives Close of the file and the file's name.
	require.NoError(t, file.Close())
	copy(m.Bytes()[300:], "after close")
	require.NoError(t, m.Close())
	got, _ := content(t, f, "/c/a")
	assert.Equal(t, "after close", got[4096+300:4096+311])

	got, _ = content(t, f.ProcessCrash(), "/c/a")
	assert.Equal(t, "store", got[4096:4101], "process crash keeps mapped stores")
	assert.Equal(t, "after close", got[4096+300:4096+311])
}

func TestMapContract(t *testing.T) {
	f := newFS(t)
	file := create(t, f, "/c/a", make([]byte, 4096))
	_, err := file.Map(100, 10, vfs.ProtRead)
	assert.Error(t, err, "unaligned offset")
	_, err = file.Map(0, 8192, vfs.ProtRead)
	assert.Error(t, err, "beyond end of file")
	ro, err := f.OpenFile("/c/a", os.O_RDONLY, 0)
	require.NoError(t, err)
	_, err = ro.Map(0, 4096, vfs.ProtReadWrite)
	assert.Error(t, err, "writable mapping of a read-only descriptor")
	_, err = ro.WriteAt([]byte("x"), 0)
	assert.Error(t, err)
}

func TestTruncateUnderMappingFaults(t *testing.T) {
	f := newFS(t)
	file := create(t, f, "/c/a", []byte(string(make([]byte, 3*4096))))
	m, err := file.Map(0, 3*4096, vfs.ProtRead)
	require.NoError(t, err)
	held := m.Bytes()
	require.NoError(t, file.Truncate(4096))

	fault := func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err, _ = r.(error)
			}
		}()
		_ = m.Bytes()
		return nil
	}()
	require.ErrorIs(t, fault, ErrBusFault)
	var fe *FaultError
	require.ErrorAs(t, fault, &fe)
	assert.Equal(t, uintptr(4096), fe.Addr())
	var rt interface{ RuntimeError() }
	assert.ErrorAs(t, fault, &rt, "looks like a runtime fault to recover handlers")
	assert.Equal(t, byte(poison), held[2*4096], "a slice taken before never reads plausible data")
	assert.Equal(t, byte(0), held[100])

	// Growing the file back makes the pages valid again (zeros), as on Linux.
	require.NoError(t, file.Truncate(3*4096))
	assert.Equal(t, byte(0), m.Bytes()[2*4096])
}

func TestStoreIntoReadOnlyMappingFaults(t *testing.T) {
	f := newFS(t)
	file := create(t, f, "/c/a", make([]byte, 4096))
	m, err := file.Map(0, 4096, vfs.ProtReadWrite)
	require.NoError(t, err)
	copy(m.Bytes(), "ok")
	require.NoError(t, m.Protect(vfs.ProtRead), "stores before mprotect are legal")
	m.Bytes()[10] = 1
	assert.PanicsWithError(t, (&FaultError{Err: ErrProtectionFault, Path: "/c/a", Off: 10}).Error(), func() {
		_, _ = file.ReadAt(make([]byte, 4096), 0)
	})
}

func TestRenameOverOpenAndMappedFileKeepsOldInode(t *testing.T) {
	f := newFS(t)
	old := create(t, f, "/c/cache", []byte("old-content-"+string(make([]byte, 4096))))
	m, err := old.Map(0, 4096, vfs.ProtRead)
	require.NoError(t, err)
	create(t, f, "/c/cache.tmp", []byte("new"))
	require.NoError(t, f.Rename("/c/cache.tmp", "/c/cache"))

	assert.Equal(t, "old-content-", string(m.Bytes()[:12]))
	buf := make([]byte, 12)
	_, err = old.ReadAt(buf, 0)
	require.NoError(t, err)
	assert.Equal(t, "old-content-", string(buf))
	got, _ := content(t, f, "/c/cache")
	assert.Equal(t, "new", got)
}

func TestLocks(t *testing.T) {
	f := newFS(t)
	a := create(t, f, "/c/lock", nil)
	b, err := f.OpenFile("/c/lock", os.O_RDWR, 0)
	require.NoError(t, err)

	require.NoError(t, a.Lock(vfs.LockShared, false))
	require.NoError(t, b.Lock(vfs.LockShared, false), "shared locks coexist")
	assert.ErrorIs(t, a.Lock(vfs.LockExclusive, false), vfs.ErrWouldBlock, "conversion conflicts with b")
	require.NoError(t, b.Unlock())
	require.NoError(t, a.Lock(vfs.LockExclusive, false), "conversion once alone")
	assert.ErrorIs(t, b.Lock(vfs.LockShared, false), vfs.ErrWouldBlock)

	done := make(chan error)
	go func() { done <- b.Lock(vfs.LockExclusive, true) }()
	require.NoError(t, a.Close(), "close releases the lock")
	require.NoError(t, <-done, "a waiting lock is granted on release")

	// A crash releases every lock: the next process can lock at once.
	n := f.ProcessCrash()
	c, err := n.OpenFile("/c/lock", os.O_RDWR, 0)
	require.NoError(t, err)
	require.NoError(t, c.Lock(vfs.LockExclusive, false))
	assert.ErrorIs(t, b.Lock(vfs.LockExclusive, false), ErrCrashed)
}

func TestCrashedHandlesFail(t *testing.T) {
	f := newFS(t)
	file := create(t, f, "/c/a", make([]byte, 4096))
	m, err := file.Map(0, 4096, vfs.ProtReadWrite)
	require.NoError(t, err)
	_ = f.PowerLoss(1)
	_, err = file.WriteAt([]byte("x"), 0)
	assert.ErrorIs(t, err, ErrCrashed)
	_, err = file.ReadAt(make([]byte, 1), 0)
	assert.ErrorIs(t, err, ErrCrashed)
	assert.ErrorIs(t, file.Sync(), ErrCrashed)
	assert.ErrorIs(t, m.Sync(), ErrCrashed)
	assert.ErrorIs(t, m.Close(), ErrCrashed)
	_, err = f.OpenFile("/c/a", os.O_RDONLY, 0)
	assert.ErrorIs(t, err, ErrCrashed)
	assert.ErrorIs(t, f.SyncDir("/c"), ErrCrashed)
}

func TestCrashAfterAndLog(t *testing.T) {
	workload := func(f *FS) error {
		file, err := f.OpenFile("/c/a", rw, 0o644) // 1 create
		if err != nil {
			return err
		}
		if _, err := file.WriteAt([]byte("one"), 0); err != nil { // 2
			return err
		}
		if err := file.Sync(); err != nil { // 3
			return err
		}
		if err := f.SyncDir("/c"); err != nil { // 4
			return err
		}
		_, err = file.WriteAt([]byte("two"), 0) // 5
		return err
	}
	f := newFS(t)
	require.NoError(t, workload(f))
	log := f.Log()
	require.Len(t, log, 5)
	assert.Equal(t, "1 create /c/a", log[0].String())
	assert.Equal(t, errorfs.OpSyncDir, log[3].Op.Kind)
	assert.Equal(t, 5, f.Ops())

	wantPC := []string{"", "", "one", "one", "one", "two"}
	wantPL := []string{"-", "-", "-", "-", "one", "one"}
	for n := 0; n <= 5; n++ {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			f := newFS(t)
			f.SetCrashAfter(n)
			err := workload(f)
			if n < 5 {
				assert.ErrorIs(t, err, ErrCrashed)
			}
			assert.True(t, f.CrashPointReached())
			assert.Len(t, f.Log(), n)
			got, ok := content(t, f.ProcessCrash(), "/c/a")
			if n == 0 {
				assert.False(t, ok)
			} else {
				assert.Equal(t, wantPC[n], got)
			}
			got, ok = content(t, lossNone(f), "/c/a")
			if !ok {
				got = "-"
			}
			assert.Equal(t, wantPL[n], got)
		})
	}
}

// Mapped stores made after the crash point are not part of the crash state.
func TestCrashAfterFreezesMappedStores(t *testing.T) {
	f := newFS(t)
	file := create(t, f, "/c/a", make([]byte, 4096)) // ops 1, 2
	m, err := file.Map(0, 4096, vfs.ProtReadWrite)
	require.NoError(t, err)
	f.SetCrashAfter(3)
	copy(m.Bytes(), "before")
	require.NoError(t, m.Sync()) // op 3, last to take effect
	copy(m.Bytes(), "AFTER!")
	assert.ErrorIs(t, m.Sync(), ErrCrashed)
	got, _ := content(t, f.ProcessCrash(), "/c/a")
	assert.Equal(t, "before", got[:6])
}

func TestTornWriteInFlight(t *testing.T) {
	f := newFS(t)
	file := create(t, f, "/c/a", make([]byte, 2048)) // ops 1,2
	require.NoError(t, file.Sync())                  // 3
	require.NoError(t, f.SyncDir("/c"))              // 4
	f.SetCrashAfter(4)
	in := make([]byte, 2048)
	for i := range in {
		in[i] = 0xAA
	}
	_, err := file.WriteAt(in, 0) // in flight: 4 sectors
	require.ErrorIs(t, err, ErrCrashed)
	assert.Equal(t, 4, f.LossUnits())

	seen := map[string]bool{}
	for out := range f.PowerLossOutcomes(16, 0) {
		got, ok := content(t, out, "/c/a")
		require.True(t, ok)
		require.Len(t, got, 2048)
		pattern := ""
		for s := 0; s < 4; s++ {
			sector := got[s*512 : (s+1)*512]
			switch sector {
			case string(in[:512]):
				pattern += "N"
			case string(make([]byte, 512)):
				pattern += "o"
			default:
				t.Fatalf("sector %d torn inside 512 bytes", s)
			}
		}
		seen[pattern] = true
	}
	assert.Len(t, seen, 16, "every subset of the in-flight sectors is an outcome")
	// A process crash does not tear: the write never happened.
	got, _ := content(t, f.ProcessCrash(), "/c/a")
	assert.Equal(t, string(make([]byte, 2048)), got)
}

func TestPowerLossKeepsSeededSubsetDeterministically(t *testing.T) {
	build := func() *FS {
		f := newFS(t)
		file := create(t, f, "/c/a", make([]byte, 16*512))
		require.NoError(t, file.Sync())
		require.NoError(t, f.SyncDir("/c"))
		for s := 0; s < 16; s++ {
			_, err := file.WriteAt([]byte{byte(s + 1)}, int64(s*512))
			require.NoError(t, err)
		}
		return f
	}
	a := build().PowerLoss(42).Files()
	b := build().PowerLoss(42).Files()
	assert.Equal(t, a, b)
	kept := 0
	for s := 0; s < 16; s++ {
		if a["/c/a"][s*512] != 0 {
			kept++
		}
	}
	assert.Greater(t, kept, 0)
	assert.Less(t, kept, 16)
	assert.NotEqual(t, a, build().PowerLoss(43).Files(), "another seed, another outcome")

	f := build()
	assert.Equal(t, 16, f.LossUnits())
	assert.Equal(t, f.Files(), f.PowerLossWith(LossConfig{Keep: 1}).Files(), "keep all = page cache")

	page := New(Options{LossUnit: 4096})
	require.NoError(t, page.MkdirAll("/c"))
	file := create(t, page, "/c/a", make([]byte, 16*512))
	require.NoError(t, file.Sync())
	require.NoError(t, page.SyncDir("/c"))
	for s := 0; s < 16; s++ {
		_, err := file.WriteAt([]byte{1}, int64(s*512))
		require.NoError(t, err)
	}
	assert.Equal(t, 2, page.LossUnits(), "4 KiB loss unit")
}

// At 0% survival the result is exactly the durable state, whatever happened
// after the last syncs.
func TestZeroSurvivalIsDurableState(t *testing.T) {
	f := newFS(t)
	a := create(t, f, "/c/a", []byte("durable-a"))
	require.NoError(t, a.Sync())
	require.NoError(t, f.SyncDir("/c"))
	_, err := a.WriteAt([]byte("XXXXXXXXXXXXXXXXXXXX"), 0)
	require.NoError(t, err)
	require.NoError(t, a.Truncate(3))
	b := create(t, f, "/c/b", []byte("volatile-b"))
	require.NoError(t, b.Sync())
	require.NoError(t, f.Rename("/c/a", "/c/z"))
	require.NoError(t, f.MkdirAll("/c/sub"))

	durA, ok := f.DurableFile("/c/a")
	require.True(t, ok)
	out := lossNone(f)
	assert.Equal(t, map[string][]byte{"/c/a": durA}, out.Files())
	assert.Equal(t, "durable-a", string(durA))
	names, err := out.ReadDir("/c")
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "sub"}, names)
}

func TestStatAndReadDir(t *testing.T) {
	f := newFS(t)
	file := create(t, f, "/c/b", []byte("12345"))
	create(t, f, "/c/a", nil)
	st, err := f.Stat("/c/b")
	require.NoError(t, err)
	assert.Equal(t, int64(5), st.Size())
	mt := st.ModTime()
	st2, err := f.Stat("/c/b")
	require.NoError(t, err)
	assert.Equal(t, mt, st2.ModTime(), "no write, same mtime")
	_, err = file.WriteAt([]byte("x"), 0)
	require.NoError(t, err)
	st3, err := f.Stat("/c/b")
	require.NoError(t, err)
	assert.True(t, st3.ModTime().After(mt))
	names, err := f.ReadDir("/c")
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, names)
	_, err = f.Stat("/c/nope")
	assert.ErrorIs(t, err, fs.ErrNotExist)
	_, err = f.OpenFile("/missing/x", rw, 0o644)
	assert.ErrorIs(t, err, fs.ErrNotExist, "no parent directory")
	_, err = f.OpenFile("/c/b", rw|os.O_EXCL, 0o644)
	assert.ErrorIs(t, err, fs.ErrExist)
	sz, err := file.Size()
	require.NoError(t, err)
	_, err = file.ReadAt(make([]byte, 10), sz-2)
	assert.ErrorIs(t, err, io.EOF)
	tr, err := f.OpenFile("/c/b", os.O_RDWR|os.O_TRUNC, 0)
	require.NoError(t, err)
	sz, err = tr.Size()
	require.NoError(t, err)
	assert.Zero(t, sz)
}

func TestErrorfsOverCrashfs(t *testing.T) {
	f := newFS(t)
	c := errorfs.NewCounter(errorfs.InjectOnIndex(0, errorfs.OpKinds(errorfs.OpWriteAt), &errorfs.ShortWrite{N: 700, Cause: errorfs.ENOSPC}))
	w := errorfs.Wrap(f, c)
	file, err := w.OpenFile("/c/a", rw, 0o644)
	require.NoError(t, err)
	n, err := file.WriteAt(make([]byte, 2000), 0)
	assert.Equal(t, 700, n)
	assert.ErrorIs(t, err, errorfs.ErrInjected)
	sz, err := file.Size()
	require.NoError(t, err)
	assert.Equal(t, int64(700), sz)
	assert.Equal(t, int64(1), c.Count())
}

// Unmapping a mapping whose file was truncated is legal (munmap does not
// touch the pages); through errorfs it must not fault either.
func TestErrorfsUnmapTruncatedMapping(t *testing.T) {
	f := newFS(t)
	w := errorfs.Wrap(f, errorfs.None)
	file, err := w.OpenFile("/c/a", rw, 0o644)
	require.NoError(t, err)
	require.NoError(t, file.Truncate(2*4096))
	m, err := file.Map(0, 2*4096, vfs.ProtRead)
	require.NoError(t, err)
	require.NoError(t, file.Truncate(0))
	assert.NotPanics(t, func() {
		assert.NoError(t, m.Sync())
		assert.NoError(t, m.Close())
	})
}

func TestCapacity(t *testing.T) {
	f := New(Options{Capacity: 10000})
	require.NoError(t, f.MkdirAll("/c"))
	a := create(t, f, "/c/a", make([]byte, 6000))
	b := create(t, f, "/c/b", nil)
	err := b.Allocate(0, 5000)
	assert.ErrorIs(t, err, syscall.ENOSPC)
	sz, err := b.Size()
	require.NoError(t, err)
	assert.Zero(t, sz, "a failed allocate changes nothing")
	_, err = b.WriteAt(make([]byte, 4001), 0)
	assert.ErrorIs(t, err, syscall.ENOSPC)
	_, err = b.WriteAt(make([]byte, 4000), 0)
	assert.NoError(t, err, "exactly full")
	_, err = a.WriteAt([]byte("rewrite in place needs no space"), 0)
	assert.NoError(t, err)
	require.NoError(t, f.Remove("/c/a"))
	assert.NoError(t, b.Allocate(0, 9000), "removing a file frees its space")
	n := f.ProcessCrash()
	n.SetCapacity(0)
	nb, err := n.OpenFile("/c/b", os.O_RDWR, 0)
	require.NoError(t, err)
	assert.NoError(t, nb.Allocate(0, 1<<20), "unlimited")
}
