package vfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"syscall"
)

// OS returns the filesystem of the operating system. The platform-specific
// calls (mmap, flock, fallocate, fdatasync) live in the osfs_*.go files; this
// file holds what package os already does portably.
func OS() FS { return osFS{} }

type osFS struct{}

var _ FS = osFS{}

func (osFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	// os.OpenFile already passes O_CLOEXEC on every platform that has it; we
	// rely on that instead of OR-ing a platform constant in here, so forked
	// children never inherit a descriptor or the lock it carries.
	// O_NONBLOCK: a FIFO put at the cache path must not hang the open
	// waiting for a writer; on regular files it changes nothing.
	f, err := os.OpenFile(name, flag|openNonblock, perm)
	if err != nil {
		return nil, err
	}
	return &osFile{f: f}, nil
}

func (osFS) Rename(oldname, newname string) error { return os.Rename(oldname, newname) }

func (osFS) Remove(name string) error { return os.Remove(name) }

func (osFS) Stat(name string) (os.FileInfo, error) { return os.Stat(name) }

func (osFS) ReadDir(dir string) ([]string, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(des))
	for i, de := range des {
		names[i] = de.Name()
	}
	sort.Strings(names)
	return names, nil
}

func (osFS) SyncDir(dir string) error {
	d, err := os.Open(filepath.Clean(dir))
	if err != nil {
		return err
	}
	serr := d.Sync()
	cerr := d.Close()
	if serr != nil {
		return serr
	}
	return cerr
}

func (osFS) PageSize() int { return os.Getpagesize() }

// maxLinks bounds the symbolic links Resolve follows, as the kernel's
// ELOOP limit does for path lookup.
const maxLinks = 40

// Resolve returns the path name stands for once every symbolic link on it
// is followed: the target of a link, also when the target does not exist
// yet (a dangling link names the file a writer should create). The cache
// reads, locks and renames over that path, so a link at the cache path
// stays a link and its target is what changes.
func (osFS) Resolve(name string) (string, error) {
	for range maxLinks {
		if notLink(name) {
			return inResolvedDir(name)
		}
		target, err := os.Readlink(name)
		if err != nil {
			// Not a link (EINVAL) or not there: the directory part may
			// still hold links.
			if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.EINVAL) {
				return "", err
			}
			return inResolvedDir(name)
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(name), target)
		}
		name = target
	}
	return "", &fs.PathError{Op: "resolve", Path: name, Err: syscall.ELOOP}
}

// inResolvedDir is name, whose last element is not a link, with the links
// of its directory part followed.
func inResolvedDir(name string) (string, error) {
	dir, err := evalDir(filepath.Dir(name))
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, filepath.Base(name)), nil
}

// Chmod sets the permission bits of name (a new cache file gets the mode of
// the file it replaces).
func (osFS) Chmod(name string, mode os.FileMode) error { return os.Chmod(name, mode) }

// osFile is an *os.File; only the positionless calls are used, so one
// osFile is safe for concurrent ReadAt/WriteAt as the contract requires.
type osFile struct {
	f *os.File
}

var _ File = (*osFile)(nil)

func (o *osFile) ReadAt(p []byte, off int64) (int, error)  { return o.f.ReadAt(p, off) }
func (o *osFile) WriteAt(p []byte, off int64) (int, error) { return o.f.WriteAt(p, off) }
func (o *osFile) Close() error                             { return o.f.Close() }
func (o *osFile) Name() string                             { return o.f.Name() }
func (o *osFile) Truncate(size int64) error                { return o.f.Truncate(size) }
func (o *osFile) Sync() error                              { return o.f.Sync() }

func (o *osFile) Stat() (os.FileInfo, error) { return o.f.Stat() }

func (o *osFile) Size() (int64, error) {
	fi, err := o.f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// FileKind names what a file of mode m is, for messages that refuse
// anything but a regular file ("a FIFO", "a directory", ...).
func FileKind(m os.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a block device"
	case m&os.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "not a regular file (mode " + m.String() + ")"
}
