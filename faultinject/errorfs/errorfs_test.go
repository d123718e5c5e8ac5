package errorfs

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/vfs"
)

// callEveryOp performs one call of every OpKind through fsys, in enum order,
// and returns the error of each.
func callEveryOp(fsys vfs.FS, base *fakeFS) map[OpKind]error {
	errs := map[OpKind]error{}
	base.files["/d/a"] = []byte("hello")
	base.files["/d/b"] = []byte("world")
	_, errs[OpOpen] = fsys.OpenFile("/d/a", os.O_RDWR, 0)
	f, err := fsys.OpenFile("/d/b", os.O_RDWR|os.O_CREATE, 0o644)
	errs[OpCreate] = err
	if f == nil {
		// Create was the injected op; use a clean handle for the rest.
		f = &File{f: &fakeFile{fs: base, name: "/d/b"}, fs: fsys.(*FS)}
	}
	errs[OpRename] = fsys.Rename("/d/x", "/d/y")
	errs[OpRemove] = fsys.Remove("/d/y")
	_, errs[OpStat] = fsys.Stat("/d/a")
	if errors.Is(errs[OpStat], syscall.ENOSYS) {
		errs[OpStat] = nil
	}
	_, errs[OpResolve] = fsys.Resolve("/d/a")
	_, errs[OpReadDir] = fsys.ReadDir("/d")
	errs[OpSyncDir] = fsys.SyncDir("/d")
	_, errs[OpWriteAt] = f.WriteAt([]byte("abc"), 0)
	_, errs[OpReadAt] = f.ReadAt(make([]byte, 3), 0)
	_, errs[OpSize] = f.Size()
	_, errs[OpFstat] = f.Stat()
	errs[OpChmod] = fsys.Chmod("/d/a", 0o600)
	errs[OpTruncate] = f.Truncate(3)
	errs[OpAllocate] = f.Allocate(0, 4096)
	errs[OpSync] = f.Sync()
	errs[OpSyncData] = f.SyncData()
	m, err := f.Map(0, 4096, vfs.ProtReadWrite)
	errs[OpMap] = err
	if m == nil {
		m = &Mapping{m: &fakeMapping{fs: base, b: make([]byte, 1)}, fs: fsys.(*FS), name: f.Name()}
	}
	errs[OpLock] = f.Lock(vfs.LockExclusive, false)
	errs[OpUnlock] = f.Unlock()
	errs[OpMapSync] = m.Sync()
	errs[OpMapProtect] = m.Protect(vfs.ProtRead)
	errs[OpMapClose] = m.Close()
	errs[OpClose] = f.Close()
	return errs
}

// Every kind can be injected, and only the selected kind fails; the
// injected call never reaches the wrapped FS.
func TestEveryOpKindInjectable(t *testing.T) {
	for _, kind := range AllOpKinds() {
		t.Run(kind.String(), func(t *testing.T) {
			base := newFake()
			c := NewCounter(If(OpKinds(kind), EIO))
			errs := callEveryOp(Wrap(base, c), base)
			require.Len(t, errs, len(AllOpKinds()))
			for k, err := range errs {
				if k == kind {
					require.Error(t, err, k)
					assert.ErrorIs(t, err, ErrInjected)
					assert.ErrorIs(t, err, syscall.EIO)
				} else {
					assert.NoError(t, err, k)
				}
			}
			assert.Equal(t, int64(1), c.Count())
			assert.NotContains(t, base.calls, kind, "injected call reached the wrapped FS")
		})
	}
}

func TestEveryKindIsReadOrWrite(t *testing.T) {
	for _, k := range AllOpKinds() {
		assert.NotEqual(t, Reads.Evaluate(Op{Kind: k}), Writes.Evaluate(Op{Kind: k}), k)
		back, err := ParseOpKind(k.String())
		require.NoError(t, err)
		assert.Equal(t, k, back)
	}
	_, err := ParseOpKind("frobnicate")
	assert.ErrorIs(t, err, ErrSyntax)
}

func TestErrnosMatchOSSentinels(t *testing.T) {
	op := Op{Kind: OpCreate, Path: "/ro/x"}
	cases := []struct {
		inj    *Errno
		target error
	}{
		{ENOSPC, syscall.ENOSPC},
		{EIO, syscall.EIO},
		{EINTR, syscall.EINTR},
		{ENOMEM, syscall.ENOMEM},
		{EROFS, syscall.EROFS},
		{EACCES, fs.ErrPermission},
		{NotExist, fs.ErrNotExist},
		{WouldBlock, vfs.ErrWouldBlock},
	}
	for _, c := range cases {
		err := c.inj.MaybeError(op)
		assert.ErrorIs(t, err, c.target, c.inj)
		assert.ErrorIs(t, err, ErrInjected, c.inj)
		var ie *Error
		require.ErrorAs(t, err, &ie)
		assert.Equal(t, op, ie.Op)
	}
}

func TestShortWriteStoresPrefix(t *testing.T) {
	base := newFake()
	fsys := Wrap(base, If(OpKinds(OpWriteAt), &ShortWrite{N: 3, Cause: ENOSPC}))
	f, err := fsys.OpenFile("/f", os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	n, err := f.WriteAt([]byte("abcdefgh"), 2)
	assert.Equal(t, 3, n)
	assert.ErrorIs(t, err, syscall.ENOSPC)
	assert.ErrorIs(t, err, ErrInjected)
	assert.Equal(t, []byte("\x00\x00abc"), base.files["/f"])

	// A prefix as long as the write is capped: a short write is never whole.
	n, err = f.WriteAt([]byte("xy"), 0)
	assert.Equal(t, 1, n)
	assert.Error(t, err)
}

// A lie skips the flush and reports success on sync, syncdata and syncdir;
// on any other op it is an injected EIO that never reaches the filesystem.
func TestLieSkipsFlushes(t *testing.T) {
	base := newFake()
	fsys := Wrap(base, Lie)
	f, err := base.OpenFile("/f", os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	wf := &File{f: f, fs: fsys}
	base.calls = nil
	require.NoError(t, wf.Sync())
	require.NoError(t, wf.SyncData())
	require.NoError(t, fsys.SyncDir("/"))
	assert.Empty(t, base.calls, "a lied flush reached the filesystem")
	_, err = wf.WriteAt([]byte("a"), 0)
	assert.ErrorIs(t, err, syscall.EIO)
	assert.ErrorIs(t, err, ErrInjected)
	assert.Empty(t, base.calls)
}

func TestOnIndexCountsMatchingOpsOnly(t *testing.T) {
	base := newFake()
	inj := InjectOnIndex(1, OpKinds(OpWriteAt, OpAllocate), ENOSPC)
	fsys := Wrap(base, inj)
	f, err := fsys.OpenFile("/f", os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	_, err = f.ReadAt(make([]byte, 1), 0) // not matching: not counted
	require.Error(t, err)                 // EOF from the fake, not injected
	assert.NotErrorIs(t, err, ErrInjected)
	_, err = f.WriteAt([]byte("a"), 0) // index 0
	require.NoError(t, err)
	err = f.Allocate(0, 10) // index 1: fails
	require.ErrorIs(t, err, syscall.ENOSPC)
	_, err = f.WriteAt([]byte("b"), 0) // index 2: passes
	require.NoError(t, err)
}

func TestRandomlyIsDeterministicPerPath(t *testing.T) {
	run := func(order []string) map[string][]bool {
		r := Randomly(0.5, 7)
		out := map[string][]bool{}
		for _, p := range order {
			out[p] = append(out[p], r.Evaluate(Op{Kind: OpWriteAt, Path: p}))
		}
		return out
	}
	a := run([]string{"a", "a", "b", "a", "b", "b", "a", "a", "a", "a"})
	b := run([]string{"b", "b", "b", "a", "a", "a", "a", "a", "a", "a"})
	assert.Equal(t, a, b, "interleaving with other paths changed the decisions")
	fired := 0
	r := Randomly(0.1, 42)
	for range 10000 {
		if r.Evaluate(Op{Path: "x"}) {
			fired++
		}
	}
	assert.InDelta(t, 1000, fired, 150)
	// One generator for all calls: the decisions follow the call order,
	// whatever the paths are called.
	seq := func(paths ...string) []bool {
		r := RandomCalls(0.5, 7)
		var out []bool
		for _, p := range paths {
			out = append(out, r.Evaluate(Op{Path: p}))
		}
		return out
	}
	assert.Equal(t, seq("a", "b", "c", "d", "e", "f", "g", "h"), seq("x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8"))
	assert.False(t, Randomly(0, 1).Evaluate(Op{}))
	assert.True(t, Randomly(1, 1).Evaluate(Op{}))
}

func TestPredicates(t *testing.T) {
	op := Op{Kind: OpRename, Path: "/c/cache.tmp.1", NewPath: "/c/cache.xpwc"}
	assert.True(t, PathMatch("*.tmp.*").Evaluate(op))
	assert.True(t, PathMatch("/c/cache.xpwc").Evaluate(op), "rename destination")
	assert.False(t, PathMatch("*.lock").Evaluate(op))
	assert.True(t, And(Writes, PathMatch("*.xpwc")).Evaluate(op))
	assert.False(t, And(Reads, PathMatch("*.xpwc")).Evaluate(op))
	assert.True(t, Or(Reads, OpKinds(OpRename)).Evaluate(op))
	assert.True(t, Not(Reads).Evaluate(op))
}

func TestAnyToggleCounter(t *testing.T) {
	c := NewCounter(If(OpKinds(OpSync), EIO))
	tg := NewToggle(Any(c, If(OpKinds(OpLock), WouldBlock)))
	op := Op{Kind: OpSync}
	assert.ErrorIs(t, tg.MaybeError(op), syscall.EIO)
	assert.ErrorIs(t, tg.MaybeError(Op{Kind: OpLock}), vfs.ErrWouldBlock)
	tg.Off()
	assert.NoError(t, tg.MaybeError(op))
	tg.On()
	assert.Error(t, tg.MaybeError(op))
	assert.Equal(t, int64(2), c.Count())
}

// The scenarios of guarantee G8, as a wrapped FS shows them to a caller.
func TestG8FaultShapes(t *testing.T) {
	t.Run("read-only directory", func(t *testing.T) {
		base := newFake()
		base.files["/ro/existing"] = []byte("x")
		fsys := Wrap(base, If(And(OpKinds(OpCreate), PathMatch("/ro/*")), EROFS))
		_, err := fsys.OpenFile("/ro/new", os.O_RDWR|os.O_CREATE, 0o644)
		assert.ErrorIs(t, err, syscall.EROFS)
		_, err = fsys.OpenFile("/ro/existing", os.O_RDONLY, 0)
		assert.NoError(t, err, "opening an existing file read-only still works")
	})
	t.Run("missing directory", func(t *testing.T) {
		fsys := Wrap(newFake(), If(PathMatch("/gone/*"), NotExist))
		_, err := fsys.OpenFile("/gone/c", os.O_RDWR|os.O_CREATE, 0o644)
		assert.ErrorIs(t, err, fs.ErrNotExist)
	})
	t.Run("mmap failure", func(t *testing.T) {
		fsys := Wrap(newFake(), If(OpKinds(OpMap), ENOMEM))
		f, err := fsys.OpenFile("/c", os.O_RDWR|os.O_CREATE, 0o644)
		require.NoError(t, err)
		_, err = f.Map(0, 4096, vfs.ProtRead)
		assert.ErrorIs(t, err, syscall.ENOMEM)
	})
	t.Run("lock busy", func(t *testing.T) {
		fsys := Wrap(newFake(), If(OpKinds(OpLock), WouldBlock))
		f, err := fsys.OpenFile("/c.lock", os.O_RDWR|os.O_CREATE, 0o644)
		require.NoError(t, err)
		assert.ErrorIs(t, f.Lock(vfs.LockExclusive, false), vfs.ErrWouldBlock)
	})
}

func TestUnwrap(t *testing.T) {
	base := newFake()
	w := Wrap(base, None)
	assert.Same(t, base, w.Unwrap())
	f, err := w.OpenFile("/a", os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	assert.IsType(t, &fakeFile{}, f.(*File).Unwrap())
}
