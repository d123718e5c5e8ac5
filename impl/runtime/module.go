package runtime

import (
	"fmt"

	"github.com/xpwc/xpwc/impl/runtime/options"
)

// MethodForward is the one method every program has: run the FC graph.
const MethodForward = "forward"

// ModuleConfig tells a Module where its program, kernels and caches come
// from.
type ModuleConfig struct {
	// Program supplies the program. Load calls it until one call succeeds.
	Program func() (*Program, error)
	// Kernel returns the kernel registered under name; "" asks for the
	// default. Required.
	Kernel func(name string) (Kernel, bool)
	// OpenCache returns the cache for path ("" means heap only) and a
	// function releasing it; cache.Manager.Get wrapped by ManagerCaches fits.
	// Required.
	OpenCache func(path string) (Cache, func(), error)

	_ struct{}
}

// Module is ExecuTorch's Module reduced to what the cache needs: it loads a
// program with a backend-options map and loads methods (backend instances)
// with those options.
//
// Load deep-copies the map and commits program and copy only when the load
// succeeds (ExecuTorch PR 19673): the caller may change or drop its map at
// once, and a failed load leaves the module's options and loaded methods as
// they were (G6). Before that PR the module kept a pointer to the caller's
// map, so a lazy LoadMethod read whatever the map held by then.
//
// A Module is not safe for concurrent use.
type Module struct {
	cfg     ModuleConfig
	program *Program
	opts    *options.Map // owned; never shared with a caller
	methods map[string]*Method
}

// Method is a loaded method: an initialized backend.
type Method struct {
	name    string
	config  BackendConfig
	backend *Backend
	release func()
}

// NewModule returns an unloaded module.
func NewModule(cfg ModuleConfig) *Module {
	return &Module{cfg: cfg, opts: &options.Map{}, methods: make(map[string]*Method)}
}

// Load loads the program (first time only) and replaces the module's
// backend options with a deep copy of opts (nil means none). The options
// are validated for the XNNPACK backend before anything is committed: a
// wrong value type, an unknown key or an unknown kernel fails the load.
// Methods loaded earlier keep the options they were loaded with.
func (m *Module) Load(opts *options.Map) error {
	owned := &options.Map{}
	if opts != nil {
		owned = opts.Clone()
	}
	cfg, err := ParseBackendConfig(owned)
	if err != nil {
		return fmt.Errorf("runtime: module load: %w", err)
	}
	if _, err := m.kernel(cfg.Kernel); err != nil {
		return fmt.Errorf("runtime: module load: %w", err)
	}
	prog := m.program
	if prog == nil {
		if m.cfg.Program == nil {
			return ErrNoProgram
		}
		if prog, err = m.cfg.Program(); err != nil {
			return fmt.Errorf("runtime: module load: %w", err)
		}
		if prog == nil {
			return ErrNoProgram
		}
	}
	m.program, m.opts = prog, owned
	return nil
}

// IsLoaded reports whether a Load has succeeded.
func (m *Module) IsLoaded() bool { return m.program != nil }

// Program returns the loaded program, nil before a successful Load.
func (m *Module) Program() *Program { return m.program }

// Options returns a copy of the module's own backend options.
func (m *Module) Options() *options.Map { return m.opts.Clone() }

// LoadMethod initializes the named method's backend: every weight is looked
// up or packed through the cache its options name, and the cache finalized.
// opts, when not nil, overrides the module's options for this method only.
// Loading a loaded method does nothing.
func (m *Module) LoadMethod(name string, opts *options.Map) error {
	if m.program == nil {
		return ErrNoProgram
	}
	if name != MethodForward {
		return fmt.Errorf("%w: %q", ErrMethodNotFound, name)
	}
	if _, ok := m.methods[name]; ok {
		return nil
	}
	if opts == nil {
		opts = m.opts
	}
	cfg, err := ParseBackendConfig(opts)
	if err != nil {
		return fmt.Errorf("runtime: load method %q: %w", name, err)
	}
	k, err := m.kernel(cfg.Kernel)
	if err != nil {
		return fmt.Errorf("runtime: load method %q: %w", name, err)
	}
	var c Cache
	release := func() {}
	if cfg.WeightCacheEnabled {
		if m.cfg.OpenCache == nil {
			return fmt.Errorf("runtime: load method %q: no OpenCache", name)
		}
		if c, release, err = m.cfg.OpenCache(cfg.CachePath); err != nil {
			return fmt.Errorf("runtime: load method %q: %w", name, err)
		}
	}
	b, err := NewBackend(m.program, k, c)
	if err == nil {
		err = b.Init()
	}
	if err == nil && c != nil && cfg.SaveOnDisk {
		// A failed explicit save is the cache's to record (G8); the method
		// runs from the bytes it holds either way.
		_ = c.Save()
	}
	if err != nil {
		if b != nil {
			_ = b.Destroy()
		}
		release()
		return fmt.Errorf("runtime: load method %q: %w", name, err)
	}
	m.methods[name] = &Method{name: name, config: cfg, backend: b, release: release}
	return nil
}

// Method returns a loaded method.
func (m *Module) Method(name string) (*Method, error) {
	if mt, ok := m.methods[name]; ok {
		return mt, nil
	}
	return nil, fmt.Errorf("%w: %q not loaded", ErrMethodNotFound, name)
}

// UnloadMethod destroys a loaded method's backend, releasing its cache
// entries.
func (m *Module) UnloadMethod(name string) error {
	mt, ok := m.methods[name]
	if !ok {
		return fmt.Errorf("%w: %q not loaded", ErrMethodNotFound, name)
	}
	delete(m.methods, name)
	err := mt.backend.Destroy()
	mt.release()
	return err
}

// Close unloads every method.
func (m *Module) Close() error {
	var first error
	for name := range m.methods {
		if err := m.UnloadMethod(name); err != nil && first == nil {
			first = err
		}
	}
	return first
}

func (m *Module) kernel(name string) (Kernel, error) {
	if m.cfg.Kernel == nil {
		return nil, ErrNoKernel
	}
	k, ok := m.cfg.Kernel(name)
	if !ok || k == nil {
		return nil, fmt.Errorf("%w: %q", ErrUnknownKernel, name)
	}
	return k, nil
}

// Name is the method's name.
func (mt *Method) Name() string { return mt.name }

// Config is the backend configuration the method was loaded with.
func (mt *Method) Config() BackendConfig { return mt.config }

// Backend is the method's initialized backend.
func (mt *Method) Backend() *Backend { return mt.backend }

// Execute runs the method on m rows of input.
func (mt *Method) Execute(x []float32, m int) (*Result, error) {
	return mt.backend.Run(x, m)
}
