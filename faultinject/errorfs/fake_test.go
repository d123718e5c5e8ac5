package errorfs

import (
	"io"
	"io/fs"
	"os"
	"sort"
	"syscall"

	"github.com/xpwc/xpwc/impl/vfs"
)

// fakeFS is a minimal in-memory vfs.FS that records every call it receives,
// so the tests can check that an injected error replaced the call.
type fakeFS struct {
	files map[string][]byte
	calls []OpKind
}

func newFake() *fakeFS { return &fakeFS{files: map[string][]byte{}} }

func (f *fakeFS) OpenFile(name string, flag int, _ os.FileMode) (vfs.File, error) {
	if flag&os.O_CREATE != 0 {
		f.calls = append(f.calls, OpCreate)
		if _, ok := f.files[name]; !ok {
			f.files[name] = nil
		}
	} else {
		f.calls = append(f.calls, OpOpen)
		if _, ok := f.files[name]; !ok {
			return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.ENOENT}
		}
	}
	return &fakeFile{fs: f, name: name}, nil
}
func (f *fakeFS) Rename(o, n string) error {
	f.calls = append(f.calls, OpRename)
	f.files[n] = f.files[o]
	delete(f.files, o)
	return nil
}
func (f *fakeFS) Remove(n string) error {
	f.calls = append(f.calls, OpRemove)
	delete(f.files, n)
	return nil
}
func (f *fakeFS) Stat(string) (os.FileInfo, error) {
	f.calls = append(f.calls, OpStat)
	return nil, syscall.ENOSYS
}
func (f *fakeFS) Resolve(name string) (string, error) {
	f.calls = append(f.calls, OpResolve)
	return name, nil
}
func (f *fakeFS) Chmod(string, os.FileMode) error {
	f.calls = append(f.calls, OpChmod)
	return nil
}
func (f *fakeFS) ReadDir(string) ([]string, error) {
	f.calls = append(f.calls, OpReadDir)
	var out []string
	for n := range f.files {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}
func (f *fakeFS) SyncDir(string) error { f.calls = append(f.calls, OpSyncDir); return nil }
func (f *fakeFS) PageSize() int        { return 4096 }

type fakeFile struct {
	fs   *fakeFS
	name string
}

func (f *fakeFile) call(k OpKind) { f.fs.calls = append(f.fs.calls, k) }
func (f *fakeFile) ReadAt(p []byte, off int64) (int, error) {
	f.call(OpReadAt)
	d := f.fs.files[f.name]
	if off >= int64(len(d)) {
		return 0, io.EOF
	}
	n := copy(p, d[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}
func (f *fakeFile) WriteAt(p []byte, off int64) (int, error) {
	f.call(OpWriteAt)
	d := f.fs.files[f.name]
	if need := off + int64(len(p)); need > int64(len(d)) {
		d = append(d, make([]byte, need-int64(len(d)))...)
	}
	copy(d[off:], p)
	f.fs.files[f.name] = d
	return len(p), nil
}
func (f *fakeFile) Close() error         { f.call(OpClose); return nil }
func (f *fakeFile) Name() string         { return f.name }
func (f *fakeFile) Size() (int64, error) { f.call(OpSize); return int64(len(f.fs.files[f.name])), nil }
func (f *fakeFile) Truncate(int64) error { f.call(OpTruncate); return nil }
func (f *fakeFile) Stat() (os.FileInfo, error) {
	f.call(OpFstat)
	return nil, nil
}

func (f *fakeFile) Allocate(int64, int64) error {
	f.call(OpAllocate)
	return nil
}
func (f *fakeFile) Sync() error     { f.call(OpSync); return nil }
func (f *fakeFile) SyncData() error { f.call(OpSyncData); return nil }
func (f *fakeFile) Map(off int64, n int, _ vfs.Prot) (vfs.Mapping, error) {
	f.call(OpMap)
	return &fakeMapping{fs: f.fs, off: off, b: make([]byte, n)}, nil
}
func (f *fakeFile) Lock(vfs.LockMode, bool) error { f.call(OpLock); return nil }
func (f *fakeFile) Unlock() error                 { f.call(OpUnlock); return nil }

type fakeMapping struct {
	fs  *fakeFS
	off int64
	b   []byte
}

func (m *fakeMapping) Bytes() []byte { return m.b }
func (m *fakeMapping) Offset() int64 { return m.off }
func (m *fakeMapping) Sync() error   { m.fs.calls = append(m.fs.calls, OpMapSync); return nil }
func (m *fakeMapping) Protect(vfs.Prot) error {
	m.fs.calls = append(m.fs.calls, OpMapProtect)
	return nil
}
func (m *fakeMapping) Close() error { m.fs.calls = append(m.fs.calls, OpMapClose); return nil }
