package cache_test

import (
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/vfs"
)

// popFS records the Populate calls made on its mappings, and whether any
// came after the mapping was unmapped. Calls from index on (the load's
// populate of the index it decodes: populateIndex) are kept apart, in
// indexCalls, and pass the gate; index 0 keeps none apart. refuse, if set,
// fails every call, counted in refused.
type popFS struct {
	vfs.FS
	mu         sync.Mutex
	calls      [][2]int // off, length
	index      int
	indexCalls [][2]int
	refuse     error
	refused    atomic.Int32
	late       int // calls after Close of the mapping
	gate       chan struct{}
	inside     chan struct{} // receives once when a call waits at the gate
}

func (p *popFS) OpenFile(name string, flag int, perm os.FileMode) (vfs.File, error) {
	f, err := p.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &popFile{File: f, p: p}, nil
}

type popFile struct {
	vfs.File
	p *popFS
}

func (f *popFile) Map(off int64, length int, prot vfs.Prot) (vfs.Mapping, error) {
	m, err := f.File.Map(off, length, prot)
	if err != nil {
		return nil, err
	}
	return &popMapping{Mapping: m, p: f.p}, nil
}

type popMapping struct {
	vfs.Mapping
	p      *popFS
	closed bool
}

func (m *popMapping) Populate(off, length int) error {
	if m.p.refuse != nil {
		m.p.refused.Add(1)
		return m.p.refuse
	}
	if m.p.index > 0 && off >= m.p.index {
		m.p.mu.Lock()
		defer m.p.mu.Unlock()
		m.p.indexCalls = append(m.p.indexCalls, [2]int{off, length})
		return m.Mapping.(vfs.Populater).Populate(off, length)
	}
	if m.p.gate != nil {
		select {
		case m.p.inside <- struct{}{}:
		default:
		}
		<-m.p.gate
	}
	m.p.mu.Lock()
	defer m.p.mu.Unlock()
	if m.closed {
		m.p.late++
		return nil
	}
	m.p.calls = append(m.p.calls, [2]int{off, length})
	return m.Mapping.(vfs.Populater).Populate(off, length)
}

func (m *popMapping) Close() error {
	m.p.mu.Lock()
	m.closed = true
	m.p.mu.Unlock()
	return m.Mapping.Close()
}

func (p *popFS) covered() (calls [][2]int, end int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	calls = append(calls, p.calls...)
	for _, c := range calls {
		end = max(end, c[0]+c[1])
	}
	return calls, end
}

// With prefaulting (on unless Options.DisablePrefault) a load of the committed file populates its mapping
// from the end back to offset 0, in chunks that start at page-aligned
// offsets, each page once; without it nothing is populated.
func TestPrefaultPopulatesCommittedMappingBackwards(t *testing.T) {
	if _, ok := mustMap(t).(vfs.Populater); !ok {
		t.Skip("mappings of this OS cannot be populated")
	}
	path := tempPath(t)
	ks := keys(2500, 1) // about 6.5 MB: more than one chunk
	process(t, cache.Options{Path: path}, ks)

	fs := &popFS{FS: vfs.OS(), index: indexPage(t, path)}
	c := open(t, cache.Options{Path: path, FS: fs, DisableVerifyAhead: true})
	require.Equal(t, len(ks), launch(t, c, "P", ks))
	var calls [][2]int
	require.Eventually(t, func() bool {
		var last [2]int
		calls, _ = fs.covered()
		if len(calls) > 0 {
			last = calls[len(calls)-1]
		}
		return len(calls) > 0 && last[0] == 0
	}, 10*time.Second, time.Millisecond)
	require.Greater(t, len(calls), 1)
	end := calls[0][0] + calls[0][1]
	require.Greater(t, int64(end), int64(fileInfo(t, path).Size())/2, "the first call covers the end of the committed data")
	for i, cl := range calls {
		require.Zero(t, cl[0]%vfs.OS().PageSize(), "call %d at %d", i, cl[0])
		require.Equal(t, end, cl[0]+cl[1], "call %d ends where the one before began", i)
		end = cl[0]
	}

	plain := &popFS{FS: vfs.OS(), index: indexPage(t, path)}
	c2 := open(t, cache.Options{Path: path, FS: plain})
	require.Equal(t, len(ks), launch(t, c2, "P", ks))
	require.NoError(t, c2.Close())
	calls, _ = plain.covered()
	require.Empty(t, calls)
}

// Close waits for the populate call in flight before it unmaps, and no
// call follows the unmap.
func TestCloseWaitsForPrefault(t *testing.T) {
	if _, ok := mustMap(t).(vfs.Populater); !ok {
		t.Skip("mappings of this OS cannot be populated")
	}
	path := tempPath(t)
	ks := keys(2500, 1)
	process(t, cache.Options{Path: path}, ks)

	fs := &popFS{FS: vfs.OS(), index: indexPage(t, path), gate: make(chan struct{}), inside: make(chan struct{}, 1)}
	c, err := cache.Open(cache.Options{Path: path, FS: fs, DisableVerifyAhead: true})
	require.NoError(t, err)
	require.NoError(t, c.InitializeForProgram("P"))
	// The walk starts when the init ends; it is held inside its first call.
	require.NoError(t, c.Finalize())
	select {
	case <-fs.inside:
	case <-time.After(10 * time.Second):
		t.Fatal("no populate call after a load with Prefault")
	}

	closed := make(chan struct{})
	go func() {
		_ = c.Close()
		close(closed)
	}()
	select {
	case <-closed:
		t.Fatal("Close returned while a populate call was in flight")
	case <-time.After(50 * time.Millisecond):
	}
	close(fs.gate)
	<-closed
	calls, _ := fs.covered()
	require.Len(t, calls, 1, "the walk stops after the call in flight")
	require.Zero(t, fs.late, "no populate after the unmap")
}

// mustMap maps a page of a temporary file through the OS file system.
func mustMap(t *testing.T) vfs.Mapping {
	t.Helper()
	p := tempPath(t)
	require.NoError(t, os.WriteFile(p, make([]byte, vfs.OS().PageSize()), 0o600))
	f, err := vfs.OS().OpenFile(p, os.O_RDONLY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.Close() })
	m, err := f.Map(0, vfs.OS().PageSize(), vfs.ProtRead)
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })
	return m
}
