// Package crashfs is an in-memory vfs.FS that simulates the crash model of
// docs/faults.md: it keeps, per file, the bytes in the page cache (volatile) apart
// from the bytes on disk (durable), and per directory the entries in memory
// apart from the entries on disk, and it can crash in two ways:
//
//   - ProcessCrash (SIGKILL, OOM kill, jetsam) keeps the page cache: every
//     completed call and every store into a shared mapping survives.
//   - PowerLoss keeps what was made durable — file bytes by File.Sync,
//     File.SyncData or Mapping.Sync, directory entries by FS.SyncDir — plus
//     a seeded subset of the unsynced units (512-byte sectors by default),
//     and tears the write in flight at 512-byte granularity.
//
// Both return a new FS, the disk as the next process finds it; the old FS
// and everything opened from it fail with ErrCrashed from then on.
//
// Every mutating call is logged with a sequence number, and SetCrashAfter(n)
// freezes the FS after the n-th one, so a test can run a workload once per
// crash point and crash it exactly there (crash-point enumeration).
//
// # Mappings
//
// Each Mapping has its own buffer (Go cannot alias a growing file), kept
// coherent with the page cache at seam calls: a call that reads the page
// cache (ReadAt, Sync, SyncData, Map, Mapping.Sync, a crash) first copies
// the stores made into the mappings since the last such call; Mapping.Protect
// and Mapping.Close take their own mapping's stores; and every change of the
// page cache (WriteAt, Truncate, Allocate, stores taken) is copied into the
// mappings, writing only the bytes whose value changes. So ReadAt sees mapped
// stores and mappings see WriteAt, as on Linux, at the granularity of seam
// calls, and crashfs never touches mapping memory a program of another
// "process" may be using, which the race detector would report. Stores
// between the crash point and the crash are not seen, which is the state of
// a process killed right after that call.
//
// Memory faults are raised as panics with a *FaultError: Mapping.Bytes on a
// mapping whose range was truncated away (SIGBUS; the bytes of the slice
// beyond the end of file are also overwritten with a poison pattern, so a
// slice taken earlier never silently reads plausible data), and a store into
// a read-only mapping, found when the stores are next taken (SIGSEGV).
package crashfs

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/xpwc/xpwc/faultinject/errorfs"
	"github.com/xpwc/xpwc/impl/vfs"
)

// Options configure an FS. The zero value is valid.
type Options struct {
	// PageSize is what PageSize returns and the mapping alignment; default
	// 4096.
	PageSize int
	// LossUnit is the granularity at which PowerLoss keeps or drops unsynced
	// data: 512 (a disk sector, the default) or the page size (the page
	// cache's writeback unit). The write in flight is always torn at 512.
	LossUnit int
	// Capacity, if positive, is the size of the disk: a WriteAt or Allocate
	// that would make the files reachable from a directory exceed it fails
	// with ENOSPC, as a full disk does (G8). Truncate never fails for
	// space (it makes a hole), and unlinked files still open are not
	// counted. Clones made by a crash keep it.
	Capacity int64
	_        struct{}
}

const sectorSize = 512

// poison fills the bytes of a mapping that lie beyond the end of file.
const poison = 0xDB

// FS is the crash-simulating file system. It is safe for concurrent use.
type FS struct {
	mu   sync.Mutex
	cond *sync.Cond // signalled when a lock is released
	opts Options

	dirs   map[string]*dir // by clean path; "/" and "." always exist
	nextID uint64
	clock  int64 // logical time for mtimes: one tick per mutating call

	log        []LogEntry
	crashAfter int  // -1: never
	frozen     bool // crash point reached: no call takes effect any more
	inFlight   *inFlightWrite
	dead       bool // crashed: a newer FS replaced this one
}

var _ vfs.FS = (*FS)(nil)

type dir struct {
	entries map[string]*inode // volatile
	durable map[string]*inode // as of the last SyncDir
}

type inode struct {
	id      uint64
	data    []byte // page cache
	durable []byte // disk
	mtime   int64
	dmtime  int64
	maps    []*Mapping
	// mode is the permission bits. Crashes keep it as it is: the model is
	// about data and names, and the cache sets a file's mode before any of
	// its data is made durable.
	mode     os.FileMode
	locks    map[*File]vfs.LockMode
	fsRef    *FS
	lastPath string
}

// inFlightWrite is the first WriteAt refused after the crash point: the
// write the power loss interrupts.
type inFlightWrite struct {
	ino  *inode
	off  int64
	data []byte
}

// LogEntry is one mutating call, in the order it took effect.
type LogEntry struct {
	Seq int
	Op  errorfs.Op
}

func (e LogEntry) String() string { return fmt.Sprintf("%d %s", e.Seq, e.Op) }

// New returns an empty FS holding the root directory "/" (and ".").
func New(opts Options) *FS {
	if opts.PageSize <= 0 {
		opts.PageSize = 4096
	}
	if opts.LossUnit <= 0 {
		opts.LossUnit = sectorSize
	}
	f := &FS{opts: opts, crashAfter: -1}
	f.cond = sync.NewCond(&f.mu)
	f.dirs = map[string]*dir{"/": newDir(), ".": newDir()}
	return f
}

func newDir() *dir { return &dir{entries: map[string]*inode{}, durable: map[string]*inode{}} }

// MkdirAll creates dir and its parents, durably at once. The seam has no
// mkdir (the cache never creates directories), so tests set directories up
// with this.
func (f *FS) MkdirAll(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.alive(); err != nil {
		return err
	}
	name = clean(name)
	for d := name; ; d = path.Dir(d) {
		if f.dirs[d] == nil {
			if ino := f.lookup(d); ino != nil {
				return &fs.PathError{Op: "mkdir", Path: d, Err: syscall.ENOTDIR}
			}
			f.dirs[d] = newDir()
		}
		if d == "/" || d == "." {
			return nil
		}
	}
}

// SetCrashAfter makes the n-th logged call (counting from 1) the last one to
// take effect: every later call on this FS and its Files and Mappings returns
// ErrCrashed, and mapped stores made after it are not seen. n = 0 lets no
// call take effect; n < 0 disables the crash point.
func (f *FS) SetCrashAfter(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.crashAfter = n
	if n >= 0 && len(f.log) >= n {
		f.freeze()
	}
}

// SetCapacity changes Options.Capacity (0: unlimited), for example to free
// space after a full-disk test.
func (f *FS) SetCapacity(n int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.opts.Capacity = n
}

// room reports ENOSPC when growing ino to size would exceed the capacity.
// Callers hold mu.
func (f *FS) room(ino *inode, size int64, op, name string) error {
	if f.opts.Capacity <= 0 || size <= int64(len(ino.data)) {
		return nil
	}
	used := size - int64(len(ino.data))
	for _, x := range f.inodes() {
		used += int64(len(x.data))
	}
	if used > f.opts.Capacity {
		return &fs.PathError{Op: op, Path: name, Err: syscall.ENOSPC}
	}
	return nil
}

// CrashPointReached reports whether SetCrashAfter's call count was reached.
func (f *FS) CrashPointReached() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.frozen
}

// Log returns the mutating calls so far.
func (f *FS) Log() []LogEntry {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]LogEntry(nil), f.log...)
}

// Ops is the number of mutating calls logged so far: the crash points of a
// workload are SetCrashAfter(0) through SetCrashAfter(Ops()).
func (f *FS) Ops() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.log)
}

// alive reports ErrCrashed for a crashed or frozen FS. Callers hold mu.
func (f *FS) alive() error {
	if f.dead || f.frozen {
		return ErrCrashed
	}
	return nil
}

// record logs a mutating call that took effect and freezes at the crash
// point. Callers hold mu.
func (f *FS) record(op errorfs.Op) {
	f.clock++
	f.log = append(f.log, LogEntry{Seq: len(f.log) + 1, Op: op})
	if f.crashAfter >= 0 && len(f.log) >= f.crashAfter {
		f.freeze()
	}
}

// freeze captures the page cache at the crash point, including mapped
// stores. Callers hold mu.
func (f *FS) freeze() {
	if f.frozen {
		return
	}
	for _, ino := range f.inodes() {
		ino.pull()
	}
	f.frozen = true
	f.cond.Broadcast()
}

// inodes lists every inode reachable from a volatile or durable directory
// entry, in id order; an unlinked file is not listed even while it is
// still open or mapped. Callers hold mu.
func (f *FS) inodes() []*inode {
	seen := map[*inode]bool{}
	var out []*inode
	for _, d := range f.dirs {
		for _, m := range []map[string]*inode{d.entries, d.durable} {
			for _, ino := range m {
				if !seen[ino] {
					seen[ino] = true
					out = append(out, ino)
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

func clean(name string) string { return path.Clean(name) }

// lookup returns the volatile inode of name, or nil. Callers hold mu.
func (f *FS) lookup(name string) *inode {
	d := f.dirs[path.Dir(name)]
	if d == nil {
		return nil
	}
	return d.entries[path.Base(name)]
}

func (f *FS) parent(op, name string) (*dir, error) {
	d := f.dirs[path.Dir(name)]
	if d == nil {
		return nil, &fs.PathError{Op: op, Path: name, Err: syscall.ENOENT}
	}
	return d, nil
}

func (f *FS) newInode() *inode {
	f.nextID++
	return &inode{id: f.nextID, locks: map[*File]vfs.LockMode{}, fsRef: f, mtime: f.clock, dmtime: f.clock}
}

// OpenFile implements vfs.FS. Supported flags: the access mode, O_CREATE,
// O_EXCL and O_TRUNC; others (O_NONBLOCK) are ignored. There is no umask:
// a new file's mode is perm.
func (f *FS) OpenFile(name string, flag int, perm os.FileMode) (vfs.File, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.alive(); err != nil {
		return nil, err
	}
	name = clean(name)
	if f.dirs[name] != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.EISDIR}
	}
	d, err := f.parent("open", name)
	if err != nil {
		return nil, err
	}
	acc := flag & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR)
	ino := d.entries[path.Base(name)]
	switch {
	case ino == nil && flag&os.O_CREATE == 0:
		return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.ENOENT}
	case ino != nil && flag&os.O_CREATE != 0 && flag&os.O_EXCL != 0:
		return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.EEXIST}
	case ino == nil:
		ino = f.newInode()
		ino.mode = perm & os.ModePerm
		d.entries[path.Base(name)] = ino
		f.record(errorfs.Op{Kind: errorfs.OpCreate, Path: name})
	}
	ino.lastPath = name
	file := &File{fs: f, ino: ino, name: name, acc: acc}
	if flag&os.O_TRUNC != 0 && acc != os.O_RDONLY && !f.frozen {
		if err := file.truncateLocked(0); err != nil {
			return nil, err
		}
	}
	return file, nil
}

// Resolve implements vfs.FS. crashfs has no symbolic links, so every path
// resolves to itself.
func (f *FS) Resolve(name string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.alive(); err != nil {
		return "", err
	}
	return clean(name), nil
}

// Chmod implements vfs.FS. It is not a logged mutation: crash points are
// about data and names, and a crash keeps the mode (see inode.mode).
func (f *FS) Chmod(name string, mode os.FileMode) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.alive(); err != nil {
		return err
	}
	name = clean(name)
	ino := f.lookup(name)
	if ino == nil {
		return &fs.PathError{Op: "chmod", Path: name, Err: syscall.ENOENT}
	}
	if !f.frozen {
		ino.mode = mode & os.ModePerm
	}
	return nil
}

// Rename implements vfs.FS: the new entry is volatile until SyncDir.
func (f *FS) Rename(oldname, newname string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.alive(); err != nil {
		return err
	}
	oldname, newname = clean(oldname), clean(newname)
	od, err := f.parent("rename", oldname)
	if err != nil {
		return err
	}
	nd, err := f.parent("rename", newname)
	if err != nil {
		return err
	}
	ino := od.entries[path.Base(oldname)]
	if ino == nil {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: syscall.ENOENT}
	}
	if f.dirs[newname] != nil {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: syscall.EISDIR}
	}
	delete(od.entries, path.Base(oldname))
	nd.entries[path.Base(newname)] = ino
	ino.lastPath = newname
	f.record(errorfs.Op{Kind: errorfs.OpRename, Path: oldname, NewPath: newname})
	return nil
}

// Remove implements vfs.FS. Open Files and Mappings keep the inode.
func (f *FS) Remove(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.alive(); err != nil {
		return err
	}
	name = clean(name)
	d, err := f.parent("remove", name)
	if err != nil {
		return err
	}
	if d.entries[path.Base(name)] == nil {
		return &fs.PathError{Op: "remove", Path: name, Err: syscall.ENOENT}
	}
	delete(d.entries, path.Base(name))
	f.record(errorfs.Op{Kind: errorfs.OpRemove, Path: name})
	return nil
}

// Stat implements vfs.FS. ModTime is a logical clock that advances by one
// millisecond per mutating call, so "mtime unchanged" (G4) is checkable.
func (f *FS) Stat(name string) (os.FileInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.alive(); err != nil {
		return nil, err
	}
	name = clean(name)
	if f.dirs[name] != nil {
		return fileInfo{name: path.Base(name), dir: true}, nil
	}
	ino := f.lookup(name)
	if ino == nil {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: syscall.ENOENT}
	}
	return ino.info(name), nil
}

func (ino *inode) info(name string) fileInfo {
	return fileInfo{name: path.Base(name), size: int64(len(ino.data)), mtime: ino.mtime, mode: ino.mode}
}

// ReadDir implements vfs.FS: file and subdirectory names, sorted.
func (f *FS) ReadDir(name string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.alive(); err != nil {
		return nil, err
	}
	name = clean(name)
	d := f.dirs[name]
	if d == nil {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: syscall.ENOENT}
	}
	var out []string
	for n := range d.entries {
		out = append(out, n)
	}
	for p := range f.dirs {
		if p != name && path.Dir(p) == name {
			out = append(out, path.Base(p))
		}
	}
	sort.Strings(out)
	return out, nil
}

// SyncDir implements vfs.FS: the volatile entries of dir become durable.
func (f *FS) SyncDir(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.alive(); err != nil {
		return err
	}
	name = clean(name)
	d := f.dirs[name]
	if d == nil {
		return &fs.PathError{Op: "syncdir", Path: name, Err: syscall.ENOENT}
	}
	d.durable = make(map[string]*inode, len(d.entries))
	for n, ino := range d.entries {
		d.durable[n] = ino
	}
	f.record(errorfs.Op{Kind: errorfs.OpSyncDir, Path: name})
	return nil
}

// PageSize implements vfs.FS.
func (f *FS) PageSize() int { return f.opts.PageSize }

// ReadFile returns the volatile content of name: a test helper, not part of
// the seam, and not logged.
func (f *FS) ReadFile(name string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dead {
		return nil, ErrCrashed
	}
	ino := f.lookup(clean(name))
	if ino == nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: syscall.ENOENT}
	}
	if !f.frozen {
		ino.pull()
	}
	return append([]byte(nil), ino.data...), nil
}

// DurableFile returns the bytes of name on disk (durable entry, durable
// content): what PowerLoss with nothing kept would leave.
func (f *FS) DurableFile(name string) ([]byte, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	name = clean(name)
	d := f.dirs[path.Dir(name)]
	if d == nil || d.durable[path.Base(name)] == nil {
		return nil, false
	}
	return append([]byte(nil), d.durable[path.Base(name)].durable...), true
}

// Files returns the volatile content of every file, by path: a test helper
// for comparing whole states.
func (f *FS) Files() map[string][]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string][]byte{}
	for p, d := range f.dirs {
		for name, ino := range d.entries {
			if !f.frozen && !f.dead {
				ino.pull()
			}
			out[path.Join(p, name)] = append([]byte{}, ino.data...)
		}
	}
	return out
}

type fileInfo struct {
	name  string
	size  int64
	mtime int64
	mode  os.FileMode
	dir   bool
}

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func (i fileInfo) Name() string { return i.name }
func (i fileInfo) Size() int64  { return i.size }
func (i fileInfo) Mode() os.FileMode {
	if i.dir {
		return os.ModeDir | 0o755
	}
	return i.mode
}
func (i fileInfo) ModTime() time.Time { return epoch.Add(time.Duration(i.mtime) * time.Millisecond) }
func (i fileInfo) IsDir() bool        { return i.dir }
func (i fileInfo) Sys() any           { return nil }
