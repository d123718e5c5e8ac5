package cache

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/xpwc/xpwc/impl/vfs"
)

// The lock protocol (docs/locking.md): a separate lock file, Path+".lock",
// never removed and never written. The data file cannot be the lock target
// because a commit may replace it by rename, and because on Linux a flock
// belongs to the open file description, which a mapping of the data file
// keeps alive (research: ExecuTorch's load left its shared lock held by the
// whole-file mapping). The lock file's descriptor is closed explicitly when
// the lock is released, and nothing is ever mapped from it.
//
//   - shared: held while loading (reading the commit point and the index and
//     mapping the data); excludes writers, so a reader never classifies a
//     file that is being appended to as corrupt.
//   - exclusive: held by a writer from its first append until its commit is
//     durable, and while replacing or compacting the file.

// The data file itself carries a shared lock for as long as this process
// has it open or mapped (docs/locking.md, "Sharing a file with
// ExecuTorch"). ExecuTorch's writer needs flock(LOCK_EX|LOCK_NB) on the
// data file before it truncates it for a fresh write, and its loader takes
// LOCK_SH; holding LOCK_SH ourselves makes the writer's request fail (it
// packs to heap and leaves the file alone) while its loader still reads.
// Conversely, a data file an ExecuTorch writer holds exclusively is not
// read or written here: lockData fails and the launch packs to heap. xpwc
// processes only ever take the shared lock on the data file, so they never
// exclude each other through it; their own exclusion is the lock file's.
// On Linux a flock belongs to the open file description, which every
// mapping made from it keeps alive, so the lock lasts as long as the
// mappings even after the descriptor is closed.
func lockData(f vfs.File) error {
	err := f.Lock(vfs.LockShared, false)
	if errors.Is(err, vfs.ErrWouldBlock) {
		return fmt.Errorf("%w: %s is held exclusively by another program", ErrLockBusy, f.Name())
	}
	if err != nil {
		return fmt.Errorf("cache: lock %s: %w", f.Name(), err)
	}
	return nil
}

// lockPollMin and lockPollMax bound the back-off of a waiting lock request.
// Waiting is polled rather than blocking in flock, so that Options.LockWait
// is a real bound.
const (
	lockPollMin = time.Millisecond
	lockPollMax = 50 * time.Millisecond
)

// lockFile is an open, locked lock file.
type lockFile struct {
	f vfs.File
}

// acquire opens the lock file and takes mode, waiting up to wait. A busy lock
// is ErrLockBusy; anything else is the I/O error (a missing or read-only
// directory).
func acquire(fsys vfs.FS, path string, mode vfs.LockMode, wait time.Duration) (*lockFile, error) {
	return acquireFile(fsys, path, mode, wait, true)
}

// acquireFile is acquire; with create false a missing lock file is an error
// (wrapping fs.ErrNotExist) instead of being created, for a read-only
// cache, which writes nothing, not even the lock file.
func acquireFile(fsys vfs.FS, path string, mode vfs.LockMode, wait time.Duration, create bool) (*lockFile, error) {
	name := path + ".lock"
	var f vfs.File
	err := fs.ErrNotExist
	if create {
		f, err = fsys.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	}
	if err != nil {
		// A read-only directory may still hold a lock file made earlier;
		// flock works on a read-only descriptor.
		var rerr error
		if f, rerr = fsys.OpenFile(name, os.O_RDONLY, 0); rerr != nil {
			if !create {
				err = rerr
			}
			return nil, fmt.Errorf("cache: open lock file: %w", err)
		}
	}
	deadline := time.Now().Add(wait)
	pause := lockPollMin
	for {
		err := f.Lock(mode, false)
		if err == nil {
			return &lockFile{f: f}, nil
		}
		if !errors.Is(err, vfs.ErrWouldBlock) || !time.Now().Before(deadline) {
			_ = f.Close()
			if errors.Is(err, vfs.ErrWouldBlock) {
				return nil, fmt.Errorf("%w: %s %s", ErrLockBusy, name, mode)
			}
			return nil, fmt.Errorf("cache: lock %s: %w", name, err)
		}
		time.Sleep(min(pause, time.Until(deadline)))
		pause = min(2*pause, lockPollMax)
	}
}

// release drops the lock and closes the descriptor; closing is what
// guarantees the open file description, and with it the flock, is gone.
func (l *lockFile) release() error {
	uerr := l.f.Unlock()
	cerr := l.f.Close()
	if uerr != nil {
		return uerr
	}
	return cerr
}
