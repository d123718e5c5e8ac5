package runtime

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"syscall"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/kernels"
	"github.com/xpwc/xpwc/spec"
)

// programSpec is a generated program: up to five layers of shapes 1..40 so
// that N and K are often not multiples of nr or kr, each layer reading the
// program input or an earlier layer.
type programSpec struct {
	Seed   uint64
	Inputs []int // per layer: -1 program input, else index of an earlier layer
	Ns     []int
	K0     int
	Biases []bool
	Kernel int
}

func (s programSpec) program() (*Program, error) {
	layers := make([]Layer, len(s.Ns))
	for i := range layers {
		l := Layer{Name: fmt.Sprintf("l%d", i), N: s.Ns[i], K: s.K0, Bias: s.Biases[i]}
		if j := s.Inputs[i]; j >= 0 && j < i {
			l.Input, l.K = layers[j].Name, layers[j].N
		}
		layers[i] = l
	}
	return NewSynthetic("gen", s.Seed, layers)
}

func genProgramSpec(nKernels int) gopter.Gen {
	return gen.IntRange(1, 5).FlatMap(func(v any) gopter.Gen {
		n := v.(int)
		return gopter.CombineGens(
			gen.UInt64(),
			gen.SliceOfN(n, gen.IntRange(-1, 4)),
			gen.SliceOfN(n, gen.IntRange(1, 40)),
			gen.IntRange(1, 40),
			gen.SliceOfN(n, gen.Bool()),
			gen.IntRange(0, nKernels-1),
		).Map(func(vs []any) programSpec {
			return programSpec{Seed: vs[0].(uint64), Inputs: vs[1].([]int), Ns: vs[2].([]int),
				K0: vs[3].(int), Biases: vs[4].([]bool), Kernel: vs[5].(int)}
		})
	}, nil)
}

// Heap, cold file-backed and warm launches give bit-identical outputs, the
// cold launch packs every layer into the file, and the warm one packs
// nothing and hits every layer (G1, G3, G5). The heap output is also checked
// against a float64 reference of the graph, so a wiring bug common to all
// three launches cannot pass.
func TestLaunchesBitIdentical(t *testing.T) {
	reg := kernels.NewRegistry()
	ks := reg.Kernels()
	params := gopter.DefaultTestParameters()
	params.MinSuccessfulTests = 40
	properties := gopter.NewProperties(params)
	properties.Property("heap == cold == warm", prop.ForAll(func(s programSpec) string {
		p, err := s.program()
		if err != nil {
			return err.Error()
		}
		k := ks[s.Kernel]
		path := filepath.Join(t.TempDir(), "p.cache")
		launch := func(path string) LaunchReport {
			rep, err := Launch(context.Background(), LaunchConfig{CachePath: path, Program: p, Kernel: k, Rows: 3, InputSeed: s.Seed})
			require.NoError(t, err)
			return rep
		}
		heap, cold, warm := launch(""), launch(path), launch(path)
		n := p.NumLayers()
		switch {
		case heap.OutputDigest != cold.OutputDigest || !bitsEqual(heap.Output, cold.Output):
			return "cold differs from heap"
		case heap.OutputDigest != warm.OutputDigest || !bitsEqual(heap.Output, warm.Output):
			return "warm differs from heap"
		case cold.Packed != n || cold.FileBytes == 0 || cold.HeapBytes != 0:
			return fmt.Sprintf("cold: packed %d of %d, file %d, heap %d", cold.Packed, n, cold.FileBytes, cold.HeapBytes)
		case warm.Packed != 0 || warm.Hits != uint64(n) || warm.Load != spec.LoadOK:
			return fmt.Sprintf("warm: packed %d, hits %d of %d, load %s %v", warm.Packed, warm.Hits, n, warm.Load, warm.LoadErr)
		case cold.Commits != 1 || warm.Commits != 0:
			// Finalize commits once; the explicit Save after it and the warm
			// launch have nothing new and must write nothing (G4).
			return fmt.Sprintf("commits: cold %d, warm %d", cold.Commits, warm.Commits)
		case cold.Entries != n || warm.Entries != n:
			return fmt.Sprintf("entries: cold %d, warm %d, want %d", cold.Entries, warm.Entries, n)
		case warm.FileSize != cold.FileSize:
			return fmt.Sprintf("warm launch grew the file %d -> %d", cold.FileSize, warm.FileSize)
		}
		// int8 weights with per-channel scales are off by up to half a step
		// (1/254 of the row's largest weight) per product.
		tol := 1e-3
		if elem, _, _, _ := k.Params(); elem != "f32" {
			tol = 0.05
		}
		want := reference(p, p.Input(3, s.Seed), 3)
		for i := range want {
			if d := float64(heap.Output[i]) - want[i]; d > tol || d < -tol {
				return fmt.Sprintf("output %d = %v, reference %v", i, heap.Output[i], want[i])
			}
		}
		return ""
	}, genProgramSpec(len(ks))))
	properties.TestingRun(t)
}

// reference evaluates p in float64 from its unpacked weights.
func reference(p *Program, x []float32, m int) []float64 {
	outs := make(map[string][]float64)
	in0 := make([]float64, len(x))
	for i, v := range x {
		in0[i] = float64(v)
	}
	var y []float64
	for i, l := range p.Layers() {
		w, b := make([]float32, l.N*l.K), make([]float32, l.N)
		p.Weights(i, w, b)
		in := in0
		if l.Input != "" {
			in = outs[l.Input]
		}
		y = make([]float64, m*l.N)
		for r := range m {
			for n := range l.N {
				acc := 0.0
				if l.Bias {
					acc = float64(b[n])
				}
				for k := range l.K {
					acc += in[r*l.K+k] * float64(w[n*l.K+k])
				}
				y[r*l.N+n] = acc
			}
		}
		outs[l.Name] = y
	}
	return y
}

func TestLaunchVerify(t *testing.T) {
	p, err := Preset(PresetSmall, 5)
	require.NoError(t, err)
	path := tempPath(t, "v.cache")
	for range 2 {
		rep, err := Launch(context.Background(), LaunchConfig{CachePath: path, Program: p, Verify: true})
		require.NoError(t, err)
		assert.True(t, rep.VerifyRan)
		assert.True(t, rep.Verified)
		assert.Equal(t, rep.HeapDigest, rep.OutputDigest)
		assert.Zero(t, rep.SourceBytesHeld)
	}
	_, err = Launch(context.Background(), LaunchConfig{})
	require.ErrorIs(t, err, ErrNoProgram)
}

// wrongFingerprint is a kernel whose packer claims another behaviour: same
// layout seed, other fingerprint.
type wrongFingerprint struct{ Kernel }

func (k wrongFingerprint) Fingerprint() uint64 { return k.Kernel.Fingerprint() ^ 1 }

// A cache written by kernel A is never served to kernel B of another
// layout (G1): B misses on every layer, re-packs, and its outputs equal a
// heap run with B. Handing A's bytes to B directly gives wrong outputs,
// which is why the refusal matters.
func TestCacheRefusesOtherKernelsPacking(t *testing.T) {
	reg := kernels.NewRegistry()
	a, ok := reg.Lookup("f32-goi-nr8")
	require.True(t, ok)
	b, ok := reg.Lookup("f32-goi-nr16")
	require.True(t, ok)
	require.NotEqual(t, a.Seed(), b.Seed())

	p, err := Preset(PresetSmall, 11)
	require.NoError(t, err)
	path := tempPath(t, "ab.cache")
	n := uint64(p.NumLayers())

	repA, err := Launch(context.Background(), LaunchConfig{CachePath: path, Program: p, Kernel: a})
	require.NoError(t, err)
	require.Equal(t, p.NumLayers(), repA.Packed)

	repB, err := Launch(context.Background(), LaunchConfig{CachePath: path, Program: p, Kernel: b, Verify: true})
	require.NoError(t, err)
	assert.Equal(t, spec.LoadOK, repB.Load)
	assert.Zero(t, repB.Hits)
	assert.Equal(t, p.NumLayers(), repB.Packed)
	assert.Equal(t, n, repB.Repacks[cache.RepackSeed], "repacks %v", repB.Repacks)
	assert.True(t, repB.Verified, "B's outputs differ from heap packing with B")

	// Changed source weights under the same names: a source miss.
	q, err := Preset(PresetSmall, 12)
	require.NoError(t, err)
	repS, err := Launch(context.Background(), LaunchConfig{CachePath: path, Program: q, Kernel: b, Verify: true})
	require.NoError(t, err)
	assert.Zero(t, repS.Hits)
	assert.Equal(t, n, repS.Repacks[cache.RepackSource], "repacks %v", repS.Repacks)
	assert.True(t, repS.Verified)

	// Same layout, changed packer behaviour: a fingerprint miss.
	repF, err := Launch(context.Background(), LaunchConfig{CachePath: path, Program: q, Kernel: wrongFingerprint{b}, Verify: true})
	require.NoError(t, err)
	assert.Zero(t, repF.Hits)
	assert.Equal(t, n, repF.Repacks[cache.RepackFingerprint], "repacks %v", repF.Repacks)
	assert.True(t, repF.Verified)

	// The refusal matters: B computing from A's packing is wrong.
	l := p.Layer(0)
	w, bias := make([]float32, l.N*l.K), make([]float32, l.N)
	p.Weights(0, w, bias)
	packedA := make([]byte, max(a.PackedSize(l.N, l.K), b.PackedSize(l.N, l.K)))
	require.NoError(t, a.Pack(packedA, l.N, l.K, w, bias))
	packedB := make([]byte, b.PackedSize(l.N, l.K))
	require.NoError(t, b.Pack(packedB, l.N, l.K, w, bias))
	x := p.Input(1, 0)
	yA, yB := make([]float32, l.N), make([]float32, l.N)
	require.NoError(t, b.Compute(yA, x, 1, packedA, l.N, l.K))
	require.NoError(t, b.Compute(yB, x, 1, packedB, l.N, l.K))
	assert.False(t, bitsEqual(yA, yB), "kernel B computed A's packing correctly: the layouts do not differ")
}

// noTouchFS fails the test on any filesystem call.
type noTouchFS struct{ t *testing.T }

func (f noTouchFS) fail(op, name string) error {
	f.t.Errorf("a program without a cache path touched the filesystem: %s %q", op, name)
	return os.ErrPermission
}

func (f noTouchFS) OpenFile(name string, _ int, _ os.FileMode) (vfs.File, error) {
	return nil, f.fail("open", name)
}
func (f noTouchFS) Rename(o, _ string) error            { return f.fail("rename", o) }
func (f noTouchFS) Remove(n string) error               { return f.fail("remove", n) }
func (f noTouchFS) Stat(n string) (os.FileInfo, error)  { return nil, f.fail("stat", n) }
func (f noTouchFS) Resolve(n string) (string, error)    { return "", f.fail("resolve", n) }
func (f noTouchFS) Chmod(n string, _ os.FileMode) error { return f.fail("chmod", n) }
func (f noTouchFS) ReadDir(d string) ([]string, error)  { return nil, f.fail("readdir", d) }
func (f noTouchFS) SyncDir(d string) error              { return f.fail("syncdir", d) }
func (f noTouchFS) PageSize() int                       { return 4096 }

// G6: a program that did not opt in never touches a file: no call reaches
// the filesystem seam, and the working directory stays empty.
func TestNoPathTouchesNoFile(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	p, err := Preset(PresetSmall, 1)
	require.NoError(t, err)
	rep, err := Launch(context.Background(), LaunchConfig{Program: p, FS: noTouchFS{t}, Verify: true})
	require.NoError(t, err)
	assert.True(t, rep.Verified)
	assert.Equal(t, spec.LoadDisabled, rep.Load)
	assert.Zero(t, rep.FileBytes)
	assert.NotZero(t, rep.HeapBytes)

	m := NewModule(ModuleConfig{
		Program:   func() (*Program, error) { return p, nil },
		Kernel:    RegistryKernels(kernels.NewRegistry()),
		OpenCache: ManagerCaches(cache.NewManager(noTouchFS{t}), cache.Options{FS: noTouchFS{t}}),
	})
	require.NoError(t, m.Load(nil))
	require.NoError(t, m.LoadMethod(MethodForward, nil))
	require.NoError(t, m.Close())

	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries)
}

// G5: the backend drops its unpacked sources at finalize, after packing.
func TestFinalizeReleasesSources(t *testing.T) {
	p, err := Preset(PresetSmall, 1)
	require.NoError(t, err)
	c, err := cache.Open(cache.Options{})
	require.NoError(t, err)
	defer c.Close()
	b, err := NewBackend(p, kernels.NewRegistry().Default(), c)
	require.NoError(t, err)
	require.NoError(t, b.Init())
	assert.Equal(t, p.NumLayers(), b.Stats().Packed)
	assert.Zero(t, b.SourceBytesHeld())
	require.ErrorIs(t, b.Init(), ErrNotInitialized)
	_, err = b.Run(make([]float32, 3), 1)
	require.ErrorIs(t, err, ErrBadInput)

	require.NoError(t, b.Destroy())
	_, err = b.Run(p.Input(1, 0), 1)
	require.ErrorIs(t, err, ErrNotInitialized)
}

// G5: after finalize the packed weights are in clean file-backed pages,
// on the cold launch that wrote them through a mapping and on the warm one.
func TestLaunchLeavesNoDirtyCachePages(t *testing.T) {
	if goruntime.GOOS != "linux" {
		t.Skip("measured from /proc/self/smaps")
	}
	dir := t.TempDir()
	var st syscall.Statfs_t
	require.NoError(t, syscall.Statfs(dir, &st))
	if st.Type == 0x01021994 { // TMPFS_MAGIC: shmem pages never become clean
		t.Skip("temp dir is on tmpfs")
	}
	p, err := Preset(PresetSmall, 6)
	require.NoError(t, err)
	path := filepath.Join(dir, "g5.cache")
	for _, launch := range []string{"cold", "warm"} {
		rep, err := Launch(context.Background(), LaunchConfig{CachePath: path, Program: p, MeasureMemory: true})
		require.NoError(t, err)
		require.True(t, rep.MemoryMeasured)
		require.Equal(t, spec.LoadOutcome(map[string]spec.LoadOutcome{"cold": spec.LoadMissing, "warm": spec.LoadOK}[launch]), rep.Load)
		assert.NotZero(t, rep.FileBytes, launch)
		assert.NotZero(t, rep.MappedRSS, "%s: inference read no mapped page of the cache file", launch)
		assert.Zero(t, rep.MappedDirty, "%s: dirty cache pages after finalize", launch)
	}
}
