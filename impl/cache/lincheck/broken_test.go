package lincheck_test

import (
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anishathalye/porcupine"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/cache/lincheck"
	"github.com/xpwc/xpwc/spec"
)

// memoCache is a deliberately broken front of a cache: it remembers the last
// inserted handle per name so that look-ups skip the cache's lock, and it
// publishes an insert's handle after the insert has left the lock. An older
// insert that publishes late overwrites a newer one: a lost update, which
// look-ups then serve.
type memoCache struct {
	lincheck.Target
	mu   sync.Mutex
	memo map[string]memoEntry
	// beforePublish runs between the cache's insert and the publication.
	beforePublish func(k spec.Key)
}

type memoEntry struct {
	k spec.Key
	h cache.Handle
}

func (m *memoCache) LookUp(k spec.Key) (cache.Handle, bool) {
	m.mu.Lock()
	e, ok := m.memo[k.Name()]
	m.mu.Unlock()
	if ok && e.k == k {
		return e.h, true
	}
	return m.Target.LookUp(k)
}

func (m *memoCache) LookUpOrInsert(k spec.Key, packed []byte) (cache.Handle, error) {
	h, err := m.Target.LookUpOrInsert(k, packed)
	if err != nil {
		return h, err
	}
	if m.beforePublish != nil {
		m.beforePublish(k)
	}
	m.mu.Lock()
	m.memo[k.Name()] = memoEntry{k, h}
	m.mu.Unlock()
	return h, nil
}

// insert records reserve, pack and insert of n in variant v by client c.
func insert(t *testing.T, rec *lincheck.Recorder, tg lincheck.Target, hs *lincheck.HandleTable, c, n int, v uint8) {
	p := rec.Call(c, lincheck.Input{Kind: lincheck.KindReserve, Name: n})
	buf, err := tg.ReserveSpace(lincheck.Size(n))
	p.Return(lincheck.Output{Err: lincheck.Classify(err)})
	require.NoError(t, err)
	lincheck.Pack(buf, n, v)
	p = rec.Call(c, lincheck.Input{Kind: lincheck.KindInsert, Name: n, Variant: v})
	h, err := tg.LookUpOrInsert(lincheck.Key(n, v), buf)
	p.Return(lincheck.Output{Handle: hs.Number(h), Err: lincheck.Classify(err)})
	require.NoError(t, err)
}

// lookUp records a look-up of n in variant v by client c and reports
// whether it hit.
func lookUp(rec *lincheck.Recorder, tg lincheck.Target, hs *lincheck.HandleTable, c, n int, v uint8) bool {
	p := rec.Call(c, lincheck.Input{Kind: lincheck.KindLookUp, Name: n, Variant: v})
	h, ok := tg.LookUp(lincheck.Key(n, v))
	p.Return(lincheck.Output{Hit: ok, Handle: hs.Number(h)})
	return ok
}

// TestBrokenMemoCaught: the lost update, forced by a schedule. Client 1
// inserts v0 and stalls before publishing; client 2 inserts v1 and
// publishes; client 1 publishes v0 over it. Look-ups after both returned
// then say v0 is current (from the memo) and v1 is current (from the
// cache): no order of the two inserts explains both. Porcupine must say
// Illegal and write its visualization.
func TestBrokenMemoCaught(t *testing.T) {
	c := newCache(t, cache.Options{Path: t.TempDir() + "/cache.xpwc"})
	stall, resume := make(chan struct{}), make(chan struct{})
	m := &memoCache{Target: c, memo: map[string]memoEntry{}}
	m.beforePublish = func(k spec.Key) {
		if k == lincheck.Key(0, 0) {
			close(stall)
			<-resume
		}
	}
	rec, hs := lincheck.NewRecorder(), lincheck.NewHandleTable()
	p := rec.Call(0, lincheck.Input{Kind: lincheck.KindInit, Program: 0})
	p.Return(lincheck.Output{Err: lincheck.Classify(c.InitializeForProgram("p0"))})

	done := make(chan struct{})
	go func() {
		defer close(done)
		insert(t, rec, m, hs, 1, 0, 0)
	}()
	<-stall
	insert(t, rec, m, hs, 2, 0, 1)
	close(resume)
	<-done
	lookUp(rec, m, hs, 3, 0, 0)
	lookUp(rec, m, hs, 3, 0, 1)

	rep, err := lincheck.Check(lincheck.NewModel(lincheck.ModelConfig{}), rec.History(), illegalOpts(t))
	require.ErrorIs(t, err, lincheck.ErrNotLinearizable)
	require.Equal(t, porcupine.Illegal, rep.Result)
	require.Contains(t, err.Error(), rep.Visualization)
	fi, serr := os.Stat(rep.Visualization)
	require.NoError(t, serr, "visualization file")
	require.Greater(t, fi.Size(), int64(1000))
	t.Logf("visualization: %s (%d bytes)", rep.Visualization, fi.Size())

	// The same schedule on the cache itself is linearizable.
	c2 := newCache(t, cache.Options{Path: t.TempDir() + "/cache.xpwc"})
	rec, hs = lincheck.NewRecorder(), lincheck.NewHandleTable()
	p = rec.Call(0, lincheck.Input{Kind: lincheck.KindInit, Program: 0})
	p.Return(lincheck.Output{Err: lincheck.Classify(c2.InitializeForProgram("p0"))})
	insert(t, rec, c2, hs, 1, 0, 0)
	insert(t, rec, c2, hs, 2, 0, 1)
	lookUp(rec, c2, hs, 3, 0, 0)
	lookUp(rec, c2, hs, 3, 0, 1)
	_, err = lincheck.Check(lincheck.NewModel(lincheck.ModelConfig{}), rec.History(), checkOpts(t))
	require.NoError(t, err)
}

// perCallCache is a deliberately broken manager: a new cache instance for
// every Get, as two ExecuTorch instances on one path were (#20337). The
// instances stay open until the test ends, so reserved space stays mapped.
type perCallCache struct {
	t    *testing.T
	opts cache.Options
}

func (p perCallCache) open() *cache.Cache { return newCache(p.t, p.opts) }

func (p perCallCache) InitializeForProgram(q string) error { return p.open().InitializeForProgram(q) }
func (p perCallCache) LookUp(k spec.Key) (cache.Handle, bool) {
	return p.open().LookUp(k)
}
func (p perCallCache) ReserveSpace(n int) ([]byte, error) { return p.open().ReserveSpace(n) }
func (p perCallCache) LookUpOrInsert(k spec.Key, b []byte) (cache.Handle, error) {
	return p.open().LookUpOrInsert(k, b)
}
func (p perCallCache) Bytes(h cache.Handle) ([]byte, error) { return p.open().Bytes(h) }
func (p perCallCache) Finalize() error                      { return p.open().Finalize() }
func (p perCallCache) Save() error                          { return p.open().Save() }
func (p perCallCache) DeleteProgram(q string) error         { return p.open().DeleteProgram(q) }
func (p perCallCache) Compact() error                       { return p.open().Compact() }
func (p perCallCache) Invalidate(w ...string) error         { return p.open().Invalidate(w...) }

// TestBrokenManagerCaught: with one instance per call, an insert is not
// seen by the next look-up, and a reservation is not known to the instance
// that inserts it. The seeded eight-client workload must be Illegal.
func TestBrokenManagerCaught(t *testing.T) {
	tg := perCallCache{t: t, opts: cache.Options{Path: t.TempDir() + "/cache.xpwc"}}
	w := lincheck.Workload{Clients: 8, Ops: 10, Names: 2, Variants: 2, Programs: 2, Seed: 1}
	rec := lincheck.NewRecorder()
	_ = lincheck.Run(t.Context(), tg, w, rec, lincheck.NewHandleTable())
	rep, err := lincheck.Check(lincheck.NewModel(lincheck.ModelConfig{}), rec.History(), illegalOpts(t))
	require.ErrorIs(t, err, lincheck.ErrNotLinearizable)
	require.Equal(t, porcupine.Illegal, rep.Result)
	require.FileExists(t, rep.Visualization)
}
