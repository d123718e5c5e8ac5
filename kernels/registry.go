package kernels

import "sort"

// builtinLayouts are the registered kernels. Bump a layout's version
// whenever its packer's output changes; golden_test.go enforces it.
func builtinLayouts() []layout {
	return []layout{
		{version: 1, elem: elemF32, nr: 8, kr: 1, sr: 1},
		{version: 1, elem: elemF32, nr: 16, kr: 1, sr: 1},
		{version: 1, elem: elemF32, nr: 16, kr: 4, sr: 1},
		{version: 1, elem: elemF32, nr: 8, kr: 1, sr: 4},
		{version: 1, elem: elemQC8W, nr: 16, kr: 4, sr: 1},
		{version: 1, elem: elemQC8W, nr: 16, kr: 1, sr: 1},
		// The rest of XNNPACK's reference goi layouts (f32: the
		// xnn_pack_f32_gemm_goi_w shapes of its nr8-kr2, nr8-kr4 and
		// nr16-kr2-sr4 micro-kernels; qc8w: the qs8 qc8w shapes nr8-kr4,
		// nr16-kr8, nr8-kr2-sr4). They compute through the pure-Go paths.
		{version: 1, elem: elemF32, nr: 8, kr: 2, sr: 1},
		{version: 1, elem: elemF32, nr: 8, kr: 4, sr: 1},
		{version: 1, elem: elemF32, nr: 16, kr: 2, sr: 4},
		{version: 1, elem: elemQC8W, nr: 8, kr: 4, sr: 1},
		{version: 1, elem: elemQC8W, nr: 16, kr: 8, sr: 1},
		{version: 1, elem: elemQC8W, nr: 8, kr: 2, sr: 4},
	}
}

// defaultName is the kernel Default returns: f32, nr 16, kr 1, the layout
// XNNPACK uses for f32 FC on x86 with FMA3 or AVX-512.
const defaultName = "f32-goi-nr16"

// Registry holds the built-in kernels. Each Registry owns its Kernel
// values (and their cached fingerprints); there is no package-level one.
type Registry struct {
	kernels []*Kernel // sorted by name
	byName  map[string]*Kernel
}

// NewRegistry returns a registry of all built-in kernels, each using the
// fastest compute path this CPU supports.
func NewRegistry() *Registry { return newRegistry() }

func newRegistry(opts ...option) *Registry {
	r := &Registry{byName: make(map[string]*Kernel)}
	for _, l := range builtinLayouts() {
		k := newKernel(l, opts...)
		r.kernels = append(r.kernels, k)
		r.byName[k.name] = k
	}
	sort.Slice(r.kernels, func(i, j int) bool { return r.kernels[i].name < r.kernels[j].name })
	return r
}

// Kernels returns the registered kernels sorted by name. The slice is a
// copy; the Kernels are shared.
func (r *Registry) Kernels() []*Kernel {
	return append([]*Kernel(nil), r.kernels...)
}

// Lookup returns the kernel registered under name.
func (r *Registry) Lookup(name string) (*Kernel, bool) {
	k, ok := r.byName[name]
	return k, ok
}

// Default returns the f32 nr16 kernel.
func (r *Registry) Default() *Kernel { return r.byName[defaultName] }
