// Package vfs is the filesystem seam of the cache: every call the cache makes
// to the operating system goes through FS, File and Mapping, so that fault
// injection (package faultinject) can wrap the real implementation and a
// crash-simulating in-memory implementation can replace it.
//
// The contracts below are written for three implementations that must agree:
// the OS one in this package, the error-injecting wrapper and the
// crash-simulating memory FS. Where the OS differs between platforms, the
// contract states the Linux behaviour, which is what the crash model of
// docs/faults.md assumes.
package vfs

import (
	"errors"
	"io"
	"os"
)

// ErrWouldBlock is returned by File.Lock when a non-blocking lock request
// conflicts with a lock held through another open file description (in this
// process or another). Callers branch on it to fall back to heap packing.
var ErrWouldBlock = errors.New("vfs: lock is held elsewhere")

// ErrNotSupported is returned by operations the platform cannot perform
// (mmap on a heap-only build, fallocate on a filesystem without it). The
// cache treats it as a reason to fall back to heap, never as corruption.
var ErrNotSupported = errors.New("vfs: operation not supported")

// Prot is the protection of a mapping.
type Prot int

const (
	// ProtRead maps pages read-only: committed data is always mapped this way,
	// so a stray write faults instead of corrupting a committed entry.
	ProtRead Prot = iota
	// ProtReadWrite maps pages writable and shared: writes reach the page
	// cache of the file and are visible to ReadAt on any descriptor of it.
	ProtReadWrite
)

func (p Prot) String() string {
	if p == ProtReadWrite {
		return "rw"
	}
	return "r"
}

// LockMode is an advisory whole-file lock mode (flock(2) semantics: the lock
// belongs to the open file description, so two opens of one path in one
// process conflict like two processes do).
type LockMode int

const (
	LockShared LockMode = iota + 1
	LockExclusive
)

func (m LockMode) String() string {
	switch m {
	case LockShared:
		return "shared"
	case LockExclusive:
		return "exclusive"
	}
	return "unlocked"
}

// FS is the directory-level part of the seam.
type FS interface {
	// OpenFile opens name with os.O_* flags and perm, like os.OpenFile.
	// Implementations add O_CLOEXEC so that forked children never inherit a
	// descriptor, and with it a lock (ExecuTorch's cache leaked its flock into
	// children this way). A missing parent directory is an error wrapping
	// fs.ErrNotExist; the cache never creates directories on its own.
	OpenFile(name string, flag int, perm os.FileMode) (File, error)

	// Rename atomically replaces newname by oldname (rename(2)). Open
	// descriptors and mappings of the replaced file keep its inode, which is
	// why the cache replaces files instead of truncating them. The new
	// directory entry is durable only after SyncDir of its directory.
	Rename(oldname, newname string) error

	// Remove unlinks name. Like Rename, durable only after SyncDir.
	Remove(name string) error

	// Stat returns the size, mode and modification time of name, following
	// symbolic links.
	Stat(name string) (os.FileInfo, error)

	// Resolve returns the path name stands for once every symbolic link on
	// it is followed, also when the last target does not exist yet (a
	// dangling link names the file a writer should create). The cache reads,
	// locks and renames over that path, so a link at the cache path stays a
	// link. A loop is an error wrapping syscall.ELOOP. A filesystem without
	// links returns name cleaned.
	Resolve(name string) (string, error)

	// Chmod sets the permission bits of name exactly, whatever the umask: a
	// new cache file gets the configured mode, a replacement the mode of the
	// file it replaces.
	Chmod(name string, mode os.FileMode) error

	// ReadDir lists the names in dir, sorted. The cache uses it to remove the
	// temporary files a crashed writer left behind.
	ReadDir(dir string) ([]string, error)

	// SyncDir makes the entries of dir (creations, renames, removals) durable:
	// open the directory and fsync it. Until then a power loss may undo them.
	SyncDir(dir string) error

	// PageSize is the size of a memory page: mapping offsets must be a
	// multiple of it, and the cache aligns every data region to it.
	PageSize() int
}

// File is an open file. Offsets are absolute; there is no file position, so
// concurrent ReadAt/WriteAt calls on one File are safe.
type File interface {
	io.ReaderAt
	io.WriterAt
	io.Closer

	// Name is the path the file was opened with.
	Name() string

	// Size returns the current size of the file (fstat).
	Size() (int64, error)

	// Stat describes the open file (fstat): what was opened, whatever the
	// path names by now. The cache checks it is a regular file after every
	// open of the cache path, since a stat of the path before the open can
	// be outdated by the time of the open.
	Stat() (os.FileInfo, error)

	// Truncate sets the size of the file. The cache calls it only on files no
	// other process can have mapped (a fresh temporary file), because
	// shrinking a mapped file makes the mapping's readers take SIGBUS.
	Truncate(size int64) error

	// Allocate reserves disk blocks for [off, off+length) and extends the
	// file size to cover them (fallocate(2) mode 0). A full disk is reported
	// here, as an error wrapping syscall.ENOSPC, instead of as a SIGBUS on the
	// first store through a mapping of a sparse range.
	Allocate(off, length int64) error

	// Sync flushes data and metadata (fsync).
	Sync() error

	// SyncData flushes data and the metadata needed to read it back, such as
	// the size (fdatasync).
	SyncData() error

	// Map maps [off, off+length) of the file shared (MAP_SHARED); off must be
	// a multiple of PageSize and the range must lie within the file's size.
	// The mapping stays valid after Close of the File.
	Map(off int64, length int, prot Prot) (Mapping, error)

	// Lock takes an advisory lock on the whole file (flock(2)). With wait
	// false a conflicting lock yields ErrWouldBlock at once. Lock with a new
	// mode converts the held lock. Close releases it.
	Lock(mode LockMode, wait bool) error

	// Unlock releases a lock taken by Lock.
	Unlock() error
}

// Mapping is a shared memory mapping of part of a file.
type Mapping interface {
	// Bytes is the mapped memory. Stores into it (only through a ProtReadWrite
	// mapping) reach the file's page cache: ReadAt sees them at once and a
	// process crash keeps them, but a power loss may drop any of them until
	// Sync returns. The slice is invalid after Close.
	Bytes() []byte

	// Offset is the file offset the mapping starts at.
	Offset() int64

	// Sync writes the mapping's dirty pages to the file and waits
	// (msync(MS_SYNC)). After it returns the pages are clean: on Linux they
	// no longer count as Private_Dirty. MS_ASYNC is deliberately not offered,
	// since Linux treats it as a no-op.
	Sync() error

	// Protect changes the protection of the whole mapping (mprotect). The
	// cache turns regions read-only once their entries are committed.
	Protect(prot Prot) error

	// Close unmaps the memory (munmap).
	Close() error
}

// Populater is a Mapping that can enter pages into the process's page
// tables before they are read. The OS mapping implements it on Linux
// (MADV_POPULATE_READ); callers that find it absent lose nothing but speed.
type Populater interface {
	// Populate maps the pages of [off, off+length) of the mapping, reading
	// them from the file where they are not cached, so that later loads
	// take no page fault. off must be a multiple of PageSize; a range past
	// the mapping's end is an error.
	Populate(off, length int) error
}

// HugePageSize is the size of a PMD mapping on the platforms the cache
// measures (x86-64, arm64 with 4 KiB pages): a page-cache folio of this
// size, at a file offset that is a multiple of it, can be mapped by one
// page-table entry instead of 512.
const HugePageSize = 2 << 20

// HugeFiller is a File that can fill an allocated, unwritten range of
// itself into the page cache as HugePageSize folios of zeros before it is
// written, so that writes land in large folios and later read-only
// mappings of the range take one page fault per folio instead of one per
// small folio (docs/benchmarks.md, "First output on a shadow-paged guest").
// The OS file implements it on Linux. It changes no byte of the file and
// writes nothing; callers that find it absent, or that get an error, lose
// nothing but speed.
type HugeFiller interface {
	// FillHuge faults [off, off+length) of the file into the page cache in
	// HugePageSize folios where the kernel and file system allow it. off
	// and length must be multiples of HugePageSize and the range must lie
	// within the file's size.
	FillHuge(off, length int64) error
}
