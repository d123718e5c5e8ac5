package lincheck

import (
	"sync"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/spec"
)

// Target is the part of the cache API the workload drives: the provider
// calls and the lifecycle calls a runtime makes while threads pack.
type Target interface {
	InitializeForProgram(program string) error
	LookUp(k spec.Key) (cache.Handle, bool)
	ReserveSpace(n int) ([]byte, error)
	LookUpOrInsert(k spec.Key, packed []byte) (cache.Handle, error)
	Bytes(h cache.Handle) ([]byte, error)
	Finalize() error
	Save() error
	Compact() error
	Invalidate(weights ...string) error
	DeleteProgram(program string) error
}

var _ Target = (*cache.Cache)(nil)

// ViaManager is a Target that asks the Manager for the cache of opts for
// every call and releases it afterwards, as independent runtime objects
// (backends of several programs) of one process do. The caller keeps one
// reference of its own for the run, so the cache stays open; every call must
// then reach that same instance (ExecuTorch #20337: two instances on one
// path corrupted each other's file).
type ViaManager struct {
	M    *cache.Manager
	Opts cache.Options
	// life, when set, is held shared for every call (Process holds it
	// exclusively to relaunch).
	life *sync.RWMutex
}

func (v ViaManager) with(f func(c *cache.Cache) error) error {
	if v.life != nil {
		v.life.RLock()
		defer v.life.RUnlock()
	}
	c, release, err := v.M.Get(v.Opts)
	if err != nil {
		return err
	}
	defer release()
	return f(c)
}

func (v ViaManager) InitializeForProgram(program string) error {
	return v.with(func(c *cache.Cache) error { return c.InitializeForProgram(program) })
}

func (v ViaManager) LookUp(k spec.Key) (h cache.Handle, ok bool) {
	_ = v.with(func(c *cache.Cache) error { h, ok = c.LookUp(k); return nil })
	return h, ok
}

func (v ViaManager) ReserveSpace(n int) (b []byte, err error) {
	err = v.with(func(c *cache.Cache) (e error) { b, e = c.ReserveSpace(n); return e })
	return b, err
}

func (v ViaManager) LookUpOrInsert(k spec.Key, packed []byte) (h cache.Handle, err error) {
	err = v.with(func(c *cache.Cache) (e error) { h, e = c.LookUpOrInsert(k, packed); return e })
	return h, err
}

func (v ViaManager) Bytes(h cache.Handle) (b []byte, err error) {
	err = v.with(func(c *cache.Cache) (e error) { b, e = c.Bytes(h); return e })
	return b, err
}

func (v ViaManager) Finalize() error {
	return v.with(func(c *cache.Cache) error { return c.Finalize() })
}

func (v ViaManager) Save() error {
	return v.with(func(c *cache.Cache) error { return c.Save() })
}

func (v ViaManager) DeleteProgram(program string) error {
	return v.with(func(c *cache.Cache) error { return c.DeleteProgram(program) })
}

func (v ViaManager) Compact() error {
	return v.with(func(c *cache.Cache) error { return c.Compact() })
}

func (v ViaManager) Invalidate(weights ...string) error {
	return v.with(func(c *cache.Cache) error { return c.Invalidate(weights...) })
}
