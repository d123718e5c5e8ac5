package runtime

import (
	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/kernels"
)

// RegistryKernels adapts a kernel registry to ModuleConfig.Kernel: "" is
// the registry's default kernel.
func RegistryKernels(r *kernels.Registry) func(name string) (Kernel, bool) {
	return func(name string) (Kernel, bool) {
		if name == "" {
			return r.Default(), true
		}
		k, ok := r.Lookup(name)
		if !ok {
			return nil, false
		}
		return k, true
	}
}

// ManagerCaches adapts a cache Manager to ModuleConfig.OpenCache; base
// supplies every option but the path.
func ManagerCaches(m *cache.Manager, base cache.Options) func(path string) (Cache, func(), error) {
	return func(path string) (Cache, func(), error) {
		opts := base
		opts.Path = path
		c, release, err := m.Get(opts)
		if err != nil {
			return nil, nil, err
		}
		return c, release, nil
	}
}
