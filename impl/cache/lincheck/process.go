package lincheck

import (
	"fmt"
	"sync"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/vfs"
)

// Process is a Target that is one process using the cache through its
// Manager, which it can relaunch: Relaunch releases the process's own
// reference, so the Manager closes the instance, and takes a new one,
// which opens a new instance on the same path. Calls and relaunches
// exclude each other (a relaunch is a process ending and starting, never
// concurrent with its own calls). OpenSecond opens a second process's
// instance on the same path.
type Process struct {
	ViaManager
	life    sync.RWMutex
	release func()
}

// NewProcess takes the process's reference on the cache of opts.
func NewProcess(m *cache.Manager, opts cache.Options) (*Process, error) {
	p := &Process{}
	p.ViaManager = ViaManager{M: m, Opts: opts, life: &p.life}
	if err := p.acquire(); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *Process) acquire() error {
	_, release, err := p.M.Get(p.Opts)
	if err != nil {
		return err
	}
	p.release = release
	return nil
}

// Relaunch closes the instance and opens a new one. It fails if the
// Manager kept the old instance open (another reference outlived it).
func (p *Process) Relaunch() error { return p.reopen(nil) }

// Restart is the process starting again on fsys after its machine lost
// power: the old instance is released on the old filesystem, where every
// call now fails, so it writes nothing; the new one opens on fsys. Callers
// hold no other reference (the runner's gate and life lock see to it).
func (p *Process) Restart(fsys vfs.FS) error { return p.reopen(fsys) }

// reopen releases the process's instance and opens a new one, on fsys
// when it is not nil.
func (p *Process) reopen(fsys vfs.FS) error {
	p.life.Lock()
	defer p.life.Unlock()
	p.release()
	if n := p.M.Live(); n != 0 {
		return fmt.Errorf("lincheck: %d cache instances still open after the process's last reference went", n)
	}
	if fsys != nil {
		p.Opts.FS = fsys
	}
	return p.acquire()
}

// Close releases the process's reference.
func (p *Process) Close() {
	p.life.Lock()
	defer p.life.Unlock()
	p.release()
}

// OpenSecond opens another process's cache instance on the same path: not
// through the Manager, which would return this process's instance.
func (p *Process) OpenSecond() (*cache.Cache, error) { return cache.Open(p.Opts) }
