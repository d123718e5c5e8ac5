package crashfs

import (
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/xpwc/xpwc/faultinject/errorfs"
	"github.com/xpwc/xpwc/impl/vfs"
)

// File is an open file description of a crashfs FS.
type File struct {
	fs     *FS
	ino    *inode
	name   string
	acc    int
	closed bool
	// maps counts the live Mappings made from this description: like the
	// kernel's, it stays alive, with its lock, until they are unmapped.
	maps int
}

var _ vfs.File = (*File)(nil)

// enter checks the FS and the file are usable. Callers hold fs.mu.
func (w *File) enter(op string) error {
	if err := w.fs.alive(); err != nil {
		return err
	}
	if w.closed {
		return &fs.PathError{Op: op, Path: w.name, Err: os.ErrClosed}
	}
	return nil
}

func (w *File) writable(op string) error {
	if w.acc == os.O_RDONLY {
		return &fs.PathError{Op: op, Path: w.name, Err: syscall.EBADF}
	}
	return nil
}

// ReadAt implements vfs.File.
func (w *File) ReadAt(p []byte, off int64) (int, error) {
	w.fs.mu.Lock()
	defer w.fs.mu.Unlock()
	if err := w.enter("read"); err != nil {
		return 0, err
	}
	if w.acc == os.O_WRONLY {
		return 0, &fs.PathError{Op: "read", Path: w.name, Err: syscall.EBADF}
	}
	if off < 0 {
		return 0, &fs.PathError{Op: "read", Path: w.name, Err: syscall.EINVAL}
	}
	w.ino.pullRange(off, off+int64(len(p)))
	if off >= int64(len(w.ino.data)) {
		return 0, io.EOF
	}
	n := copy(p, w.ino.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// WriteAt implements vfs.File.
func (w *File) WriteAt(p []byte, off int64) (int, error) {
	w.fs.mu.Lock()
	defer w.fs.mu.Unlock()
	if w.fs.frozen && !w.fs.dead && w.fs.inFlight == nil && !w.closed {
		// The first write refused after the crash point is the one a power
		// loss interrupts: PowerLoss may keep any of its sectors.
		w.fs.inFlight = &inFlightWrite{ino: w.ino, off: off, data: append([]byte(nil), p...)}
	}
	if err := w.enter("write"); err != nil {
		return 0, err
	}
	if err := w.writable("write"); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, &fs.PathError{Op: "write", Path: w.name, Err: syscall.EINVAL}
	}
	// A later pwrite wins over earlier stores to the same bytes; stores
	// elsewhere stay pending in their mappings, so no pull is needed.
	end := off + int64(len(p))
	if err := w.fs.room(w.ino, end, "write", w.name); err != nil {
		return 0, err
	}
	old := int64(len(w.ino.data))
	w.ino.grow(end)
	copy(w.ino.data[off:], p)
	w.ino.refresh(off, end)
	if end > old {
		w.ino.resized(old)
	}
	w.ino.mtime = w.fs.clock + 1
	w.fs.record(errorfs.Op{Kind: errorfs.OpWriteAt, Path: w.name, Off: off, Len: int64(len(p))})
	return len(p), nil
}

// Close implements vfs.File: mappings stay valid, and the lock is released
// once the last mapping made from this description is closed too (flock
// belongs to the open file description, which a mapping keeps alive).
func (w *File) Close() error {
	w.fs.mu.Lock()
	defer w.fs.mu.Unlock()
	if err := w.enter("close"); err != nil {
		return err
	}
	w.closed = true
	w.releaseIfGone()
	return nil
}

// releaseIfGone drops the lock of a description nothing refers to any more.
// Callers hold fs.mu.
func (w *File) releaseIfGone() {
	if !w.closed || w.maps > 0 {
		return
	}
	if _, ok := w.ino.locks[w]; ok {
		delete(w.ino.locks, w)
		w.fs.cond.Broadcast()
	}
}

// Stat implements vfs.File: crashfs holds only regular files.
func (w *File) Stat() (os.FileInfo, error) {
	w.fs.mu.Lock()
	defer w.fs.mu.Unlock()
	if err := w.enter("fstat"); err != nil {
		return nil, err
	}
	return w.ino.info(w.name), nil
}

// Name implements vfs.File.
func (w *File) Name() string { return w.name }

// Size implements vfs.File.
func (w *File) Size() (int64, error) {
	w.fs.mu.Lock()
	defer w.fs.mu.Unlock()
	if err := w.enter("stat"); err != nil {
		return 0, err
	}
	return int64(len(w.ino.data)), nil
}

// Truncate implements vfs.File. Shrinking below a live mapping makes that
// mapping fault (see the package comment).
func (w *File) Truncate(size int64) error {
	w.fs.mu.Lock()
	defer w.fs.mu.Unlock()
	if err := w.enter("truncate"); err != nil {
		return err
	}
	return w.truncateLocked(size)
}

func (w *File) truncateLocked(size int64) error {
	if err := w.writable("truncate"); err != nil {
		return err
	}
	if size < 0 {
		return &fs.PathError{Op: "truncate", Path: w.name, Err: syscall.EINVAL}
	}
	// Stores into the part that goes away are lost; pulling first keeps
	// them from reappearing if the file grows back.
	w.ino.pull()
	old := int64(len(w.ino.data))
	if size < old {
		clear(w.ino.data[size:])
		w.ino.data = w.ino.data[:size]
	} else {
		w.ino.grow(size)
	}
	w.ino.mtime = w.fs.clock + 1
	w.ino.resized(old)
	w.fs.record(errorfs.Op{Kind: errorfs.OpTruncate, Path: w.name, Off: size})
	return nil
}

// Allocate implements vfs.File: extends the size (with zeros) to cover the
// range; beyond Options.Capacity it fails with ENOSPC and changes nothing.
func (w *File) Allocate(off, length int64) error {
	w.fs.mu.Lock()
	defer w.fs.mu.Unlock()
	if err := w.enter("allocate"); err != nil {
		return err
	}
	if err := w.writable("allocate"); err != nil {
		return err
	}
	if off < 0 || length <= 0 {
		return &fs.PathError{Op: "allocate", Path: w.name, Err: syscall.EINVAL}
	}
	if err := w.fs.room(w.ino, off+length, "allocate", w.name); err != nil {
		return err
	}
	if end := off + length; end > int64(len(w.ino.data)) {
		old := int64(len(w.ino.data))
		w.ino.grow(end)
		w.ino.mtime = w.fs.clock + 1
		w.ino.resized(old)
	}
	w.fs.record(errorfs.Op{Kind: errorfs.OpAllocate, Path: w.name, Off: off, Len: length})
	return nil
}

// Sync implements vfs.File: the whole page cache of the file, mapped stores
// included, becomes durable. The directory entry does not (SyncDir).
func (w *File) Sync() error { return w.sync(errorfs.OpSync) }

// SyncData implements vfs.File; the model does not distinguish it from Sync,
// since size is the only metadata the cache reads back.
func (w *File) SyncData() error { return w.sync(errorfs.OpSyncData) }

func (w *File) sync(kind errorfs.OpKind) error {
	w.fs.mu.Lock()
	defer w.fs.mu.Unlock()
	if err := w.enter("sync"); err != nil {
		return err
	}
	w.ino.pull()
	w.ino.durable = append(w.ino.durable[:0:0], w.ino.data...)
	w.ino.dmtime = w.ino.mtime
	w.fs.record(errorfs.Op{Kind: kind, Path: w.name})
	return nil
}

// Map implements vfs.File.
func (w *File) Map(off int64, length int, prot vfs.Prot) (vfs.Mapping, error) {
	w.fs.mu.Lock()
	defer w.fs.mu.Unlock()
	if err := w.enter("mmap"); err != nil {
		return nil, err
	}
	if off < 0 || off%int64(w.fs.opts.PageSize) != 0 || length <= 0 {
		return nil, &fs.PathError{Op: "mmap", Path: w.name, Err: syscall.EINVAL}
	}
	if prot == vfs.ProtReadWrite && w.acc != os.O_RDWR {
		return nil, &fs.PathError{Op: "mmap", Path: w.name, Err: syscall.EACCES}
	}
	w.ino.pullRange(off, off+int64(length))
	if off+int64(length) > int64(len(w.ino.data)) {
		// The contract requires the range inside the file; Linux would map
		// it and fault on access, which is never what the cache wants.
		return nil, &fs.PathError{Op: "mmap", Path: w.name, Err: syscall.EINVAL}
	}
	m := &Mapping{fs: w.fs, ino: w.ino, from: w, name: w.name, off: off, prot: prot,
		buf: make([]byte, length), shadow: make([]byte, length)}
	w.maps++
	w.ino.maps = append(w.ino.maps, m)
	m.load()
	return m, nil
}

// Lock implements vfs.File with flock semantics: the lock belongs to this
// open file description; another open of the same file conflicts.
func (w *File) Lock(mode vfs.LockMode, wait bool) error {
	w.fs.mu.Lock()
	defer w.fs.mu.Unlock()
	for {
		if err := w.enter("flock"); err != nil {
			return err
		}
		if mode != vfs.LockShared && mode != vfs.LockExclusive {
			return &fs.PathError{Op: "flock", Path: w.name, Err: syscall.EINVAL}
		}
		if !w.conflicts(mode) {
			w.ino.locks[w] = mode
			return nil
		}
		if !wait {
			return vfs.ErrWouldBlock
		}
		w.fs.cond.Wait()
	}
}

func (w *File) conflicts(mode vfs.LockMode) bool {
	for other, m := range w.ino.locks {
		if other != w && (mode == vfs.LockExclusive || m == vfs.LockExclusive) {
			return true
		}
	}
	return false
}

// Unlock implements vfs.File.
func (w *File) Unlock() error {
	w.fs.mu.Lock()
	defer w.fs.mu.Unlock()
	if err := w.enter("flock"); err != nil {
		return err
	}
	delete(w.ino.locks, w)
	w.fs.cond.Broadcast()
	return nil
}

// grow extends the page cache with zeros to size.
func (ino *inode) grow(size int64) {
	if size > int64(len(ino.data)) {
		ino.data = append(ino.data, make([]byte, size-int64(len(ino.data)))...)
	}
}
