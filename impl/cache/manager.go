package cache

import (
	"path/filepath"
	"sync"

	"github.com/xpwc/xpwc/impl/vfs"
)

// Manager hands out one Cache per path in a process (ExecuTorch #20337: two
// instances on one path truncated each other's file under live mappings).
// A Cache lives while some caller holds it and is closed when the last one
// releases it. Callers with no path share one heap-only cache, which never
// touches a file (G6).
type Manager struct {
	fs vfs.FS

	mu   sync.Mutex
	live map[string]*managed // by cleaned path; "" is the heap-only cache
}

type managed struct {
	c    *Cache
	opts Options
	refs int
}

// NewManager returns a manager whose caches use fs when Options.FS is nil
// (nil: the OS filesystem).
func NewManager(fs vfs.FS) *Manager {
	if fs == nil {
		fs = vfs.OS()
	}
	return &Manager{fs: fs, live: map[string]*managed{}}
}

// Get returns the live cache of opts.Path, opening it if there is none, and
// a release function to call exactly once when done (further calls are
// no-ops). A live cache opened with a different Format or VerifyData is
// ErrOptionsMismatch: one file cannot be written two ways by one process.
// Formats compare as named: none named (the file's) is neither v2 nor v3.
func (m *Manager) Get(opts Options) (*Cache, func(), error) {
	if opts.FS == nil {
		opts.FS = m.fs
	}
	if opts.Path != "" {
		opts.Path = filepath.Clean(opts.Path)
	}
	norm, err := opts.normalized()
	if err != nil {
		return nil, nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	mc := m.live[norm.Path]
	if mc != nil {
		if mc.opts.Format != norm.Format || mc.opts.VerifyData != norm.VerifyData {
			return nil, nil, ErrOptionsMismatch
		}
	} else {
		c, err := Open(norm)
		if err != nil {
			return nil, nil, err
		}
		mc = &managed{c: c, opts: norm}
		m.live[norm.Path] = mc
	}
	mc.refs++
	var once sync.Once
	return mc.c, func() { once.Do(func() { m.release(norm.Path, mc) }) }, nil
}

func (m *Manager) release(path string, mc *managed) {
	m.mu.Lock()
	mc.refs--
	last := mc.refs == 0
	if last && m.live[path] == mc {
		delete(m.live, path)
	}
	m.mu.Unlock()
	if last {
		_ = mc.c.Close()
	}
}

// Live returns the number of live caches.
func (m *Manager) Live() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.live)
}

// SaveAll commits every live cache (ExecuTorch's save_all), continuing
// after a failure and returning the first error.
func (m *Manager) SaveAll() error {
	m.mu.Lock()
	caches := make([]*Cache, 0, len(m.live))
	for _, mc := range m.live {
		caches = append(caches, mc.c)
	}
	m.mu.Unlock()
	var first error
	for _, c := range caches {
		if err := c.Save(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
