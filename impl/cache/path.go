package cache

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/spec"
)

// What may sit at the cache path, and what the cache does with it, is the
// table of docs/paths.md. The rules: a path that is not a regular file is
// never opened for reading or writing past a stat; a file that is not a
// cache file of either format (spec.Recognize) is never replaced unless the
// caller opted in; a read-only cache or file system is read and never
// written.

// checkRegular returns a *PathError naming the path, matching
// ErrNotRegular, when the path exists and is not a regular file. It is a
// stat, so it cannot block on a FIFO; the open that follows adds
// O_NONBLOCK for one that appears in between. A missing path or a stat
// error is left to that open to report.
func (c *Cache) checkRegular() error {
	fi, err := c.fsys.Stat(c.opts.Path)
	if err != nil || fi.Mode().IsRegular() {
		return nil
	}
	return &PathError{Path: c.opts.Path, Err: fmt.Errorf("%w: %s", ErrNotRegular, vfs.FileKind(fi.Mode()))}
}

// checkPath is Options.CheckPath: the path is not refused by checkRegular,
// and its directory exists (pathError). Any other stat failure (a
// directory this user may not search) is left to the load, which may
// still use the file read-only.
func (c *Cache) checkPath() error {
	if err := c.checkRegular(); err != nil {
		return err
	}
	_, err := c.fsys.Stat(c.opts.Path)
	var pe *PathError
	if err != nil && errors.As(c.pathError(err), &pe) {
		return pe
	}
	return nil
}

// pathError returns err, or a *PathError naming the cache file when err
// (from the lock file beside it) comes of a directory of the path that
// does not exist: the caller configured the path, not the lock file.
func (c *Cache) pathError(err error) error {
	if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
		return err
	}
	fi, serr := c.fsys.Stat(c.dir)
	if serr == nil && fi.IsDir() {
		return err
	}
	// The errno stays in the chain (ENOENT, ENOTDIR), the lock file's
	// name does not.
	cause := error(fs.ErrNotExist)
	var errno syscall.Errno
	if errors.As(err, &errno) {
		cause = errno
	}
	return &PathError{Path: c.opts.Path, Err: fmt.Errorf("%w: %s: %w", ErrNoDirectory, c.dir, cause)}
}

// openLive opens the cache path with flag and checks on the open file
// (fstat) that it is a regular file: checkRegular's stat of the path may be
// outdated by the time of the open, when another program swapped a FIFO or
// a device in. Anything else is closed untouched and reported as
// ErrNotRegular; the open itself cannot block (vfs: O_NONBLOCK).
func (c *Cache) openLive(flag int) (vfs.File, error) {
	f, err := c.fsys.OpenFile(c.opts.Path, flag, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%w: %s is %s", ErrNotRegular, c.opts.Path, vfs.FileKind(fi.Mode()))
	}
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// foreignOrCorrupt turns DetectFormat's rejection of f into ErrForeignFile
// when the file carries no mark of either format. An empty file is not
// foreign: there is nothing in it to lose.
func foreignOrCorrupt(f vfs.File, size int64, detectErr error) error {
	if size == 0 || !errors.Is(detectErr, spec.ErrCorrupt) {
		return detectErr
	}
	got, err := spec.Recognize(f, size, spec.V2ScanLimit)
	if err != nil {
		return err
	}
	if got == spec.FormatUnknown {
		return fmt.Errorf("%w: %s (%d bytes): %v", ErrForeignFile, f.Name(), size, detectErr)
	}
	return detectErr
}

// writeRefused reports whether err says this process may not write the
// file: a file system mounted read-only (EROFS), or permission to read
// without permission to write (EACCES, EPERM), as a cache installed by a
// package or an image is. Either way the cache is used read-only.
func writeRefused(err error) bool {
	return errors.Is(err, syscall.EROFS) || errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM)
}

// writable reports whether this cache may write its file at all.
func (c *Cache) writable() bool {
	return c.opts.Path != "" && c.fileReason == "" && !c.readOnly
}
