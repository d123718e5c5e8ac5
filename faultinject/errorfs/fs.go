package errorfs

import (
	"errors"
	"os"

	"github.com/xpwc/xpwc/impl/vfs"
)

// FS wraps a vfs.FS and asks an Injector before every call of it and of the
// Files and Mappings it returns. An injected error replaces the call: the
// underlying FS is not touched, so the failure leaves no trace — except for
// a ShortWrite, which performs a prefix of the write first.
type FS struct {
	fs  vfs.FS
	inj Injector
}

var (
	_ vfs.FS      = (*FS)(nil)
	_ vfs.File    = (*File)(nil)
	_ vfs.Mapping = (*Mapping)(nil)
)

// Wrap returns fs with errors injected by inj.
func Wrap(fs vfs.FS, inj Injector) *FS { return &FS{fs: fs, inj: inj} }

// Unwrap returns the wrapped FS.
func (f *FS) Unwrap() vfs.FS { return f.fs }

// Injector returns the injector in use.
func (f *FS) Injector() Injector { return f.inj }

func (f *FS) maybe(op Op) error { return f.inj.MaybeError(op) }

// OpenFile implements vfs.FS; opens with os.O_CREATE are OpCreate.
func (f *FS) OpenFile(name string, flag int, perm os.FileMode) (vfs.File, error) {
	kind := OpOpen
	if flag&os.O_CREATE != 0 {
		kind = OpCreate
	}
	if err := f.maybe(Op{Kind: kind, Path: name}); err != nil {
		return nil, err
	}
	file, err := f.fs.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &File{f: file, fs: f}, nil
}

// Rename implements vfs.FS.
func (f *FS) Rename(oldname, newname string) error {
	if err := f.maybe(Op{Kind: OpRename, Path: oldname, NewPath: newname}); err != nil {
		return err
	}
	return f.fs.Rename(oldname, newname)
}

// Remove implements vfs.FS.
func (f *FS) Remove(name string) error {
	if err := f.maybe(Op{Kind: OpRemove, Path: name}); err != nil {
		return err
	}
	return f.fs.Remove(name)
}

// Resolve implements vfs.FS.
func (f *FS) Resolve(name string) (string, error) {
	if err := f.maybe(Op{Kind: OpResolve, Path: name}); err != nil {
		return "", err
	}
	return f.fs.Resolve(name)
}

// Chmod implements vfs.FS.
func (f *FS) Chmod(name string, mode os.FileMode) error {
	if err := f.maybe(Op{Kind: OpChmod, Path: name}); err != nil {
		return err
	}
	return f.fs.Chmod(name, mode)
}

// Stat implements vfs.FS.
func (f *FS) Stat(name string) (os.FileInfo, error) {
	if err := f.maybe(Op{Kind: OpStat, Path: name}); err != nil {
		return nil, err
	}
	return f.fs.Stat(name)
}

// ReadDir implements vfs.FS.
func (f *FS) ReadDir(dir string) ([]string, error) {
	if err := f.maybe(Op{Kind: OpReadDir, Path: dir}); err != nil {
		return nil, err
	}
	return f.fs.ReadDir(dir)
}

// SyncDir implements vfs.FS.
func (f *FS) SyncDir(dir string) error {
	return flushed(f.maybe(Op{Kind: OpSyncDir, Path: dir}), func() error { return f.fs.SyncDir(dir) })
}

// PageSize implements vfs.FS. It cannot fail, so nothing is injected.
func (f *FS) PageSize() int { return f.fs.PageSize() }

// File is a vfs.File with injected errors.
type File struct {
	f  vfs.File
	fs *FS
}

// Unwrap returns the wrapped File.
func (w *File) Unwrap() vfs.File { return w.f }

func (w *File) maybe(kind OpKind, off, n int64) error {
	return w.fs.maybe(Op{Kind: kind, Path: w.f.Name(), Off: off, Len: n})
}

// ReadAt implements vfs.File.
func (w *File) ReadAt(p []byte, off int64) (int, error) {
	if err := w.maybe(OpReadAt, off, int64(len(p))); err != nil {
		return 0, err
	}
	return w.f.ReadAt(p, off)
}

// WriteAt implements vfs.File. A ShortWriteError stores the first N bytes
// (at most len(p)-1, so the write is really short) before failing.
func (w *File) WriteAt(p []byte, off int64) (int, error) {
	err := w.maybe(OpWriteAt, off, int64(len(p)))
	if err == nil {
		return w.f.WriteAt(p, off)
	}
	var sw *ShortWriteError
	if !errors.As(err, &sw) || len(p) == 0 {
		return 0, err
	}
	n := min(sw.N, int64(len(p)-1))
	done, werr := w.f.WriteAt(p[:n], off)
	if werr != nil {
		return done, errors.Join(err, werr)
	}
	return done, err
}

// Close implements vfs.File. An injected error leaves the file open, as a
// failed close(2) with EINTR/EIO may; callers must not rely on either.
func (w *File) Close() error {
	if err := w.maybe(OpClose, 0, 0); err != nil {
		return err
	}
	return w.f.Close()
}

// Name implements vfs.File.
func (w *File) Name() string { return w.f.Name() }

// Size implements vfs.File.
func (w *File) Size() (int64, error) {
	if err := w.maybe(OpSize, 0, 0); err != nil {
		return 0, err
	}
	return w.f.Size()
}

// Stat implements vfs.File.
func (w *File) Stat() (os.FileInfo, error) {
	if err := w.maybe(OpFstat, 0, 0); err != nil {
		return nil, err
	}
	return w.f.Stat()
}

// Truncate implements vfs.File.
func (w *File) Truncate(size int64) error {
	if err := w.maybe(OpTruncate, size, 0); err != nil {
		return err
	}
	return w.f.Truncate(size)
}

// Allocate implements vfs.File.
func (w *File) Allocate(off, length int64) error {
	if err := w.maybe(OpAllocate, off, length); err != nil {
		return err
	}
	return w.f.Allocate(off, length)
}

// Sync implements vfs.File; an injected LieError skips the flush and
// reports success.
func (w *File) Sync() error {
	return flushed(w.maybe(OpSync, 0, 0), w.f.Sync)
}

// SyncData implements vfs.File.
func (w *File) SyncData() error {
	return flushed(w.maybe(OpSyncData, 0, 0), w.f.SyncData)
}

// Map implements vfs.File.
func (w *File) Map(off int64, length int, prot vfs.Prot) (vfs.Mapping, error) {
	if err := w.maybe(OpMap, off, int64(length)); err != nil {
		return nil, err
	}
	m, err := w.f.Map(off, length, prot)
	if err != nil {
		return nil, err
	}
	return &Mapping{m: m, fs: w.fs, name: w.f.Name(), length: int64(length)}, nil
}

// Lock implements vfs.File.
func (w *File) Lock(mode vfs.LockMode, wait bool) error {
	if err := w.maybe(OpLock, 0, 0); err != nil {
		return err
	}
	return w.f.Lock(mode, wait)
}

// Unlock implements vfs.File.
func (w *File) Unlock() error {
	if err := w.maybe(OpUnlock, 0, 0); err != nil {
		return err
	}
	return w.f.Unlock()
}

// Mapping is a vfs.Mapping with injected errors on Sync, Protect and Close.
type Mapping struct {
	m      vfs.Mapping
	fs     *FS
	name   string
	length int64 // kept so that building an Op never touches the memory
}

// Unwrap returns the wrapped Mapping.
func (w *Mapping) Unwrap() vfs.Mapping { return w.m }

func (w *Mapping) maybe(kind OpKind) error {
	return w.fs.maybe(Op{Kind: kind, Path: w.name, Off: w.m.Offset(), Len: w.length})
}

// Bytes implements vfs.Mapping.
func (w *Mapping) Bytes() []byte { return w.m.Bytes() }

// Offset implements vfs.Mapping.
func (w *Mapping) Offset() int64 { return w.m.Offset() }

// Sync implements vfs.Mapping.
func (w *Mapping) Sync() error {
	return flushed(w.maybe(OpMapSync), w.m.Sync)
}

// Protect implements vfs.Mapping.
func (w *Mapping) Protect(prot vfs.Prot) error {
	if err := w.maybe(OpMapProtect); err != nil {
		return err
	}
	return w.m.Protect(prot)
}

// Close implements vfs.Mapping.
func (w *Mapping) Close() error {
	if err := w.maybe(OpMapClose); err != nil {
		return err
	}
	return w.m.Close()
}
