package kernels

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// pin is a regression pin: the seed and fingerprint a kernel had when its
// layout version was released. Values were computed once by this package
// and committed; a stored cache entry written by that version carries them.
type pin struct {
	name        string
	version     uint32
	seed        uint32
	fingerprint uint64
}

// goldenPins keeps every released (name, layout version). When a packer's
// output changes on purpose, bump its version in builtinLayouts and ADD a
// pin; never edit an existing one, or caches written by the old packer
// would be served to the new compute (G1).
func goldenPins() []pin {
	return []pin{
		{"f32-goi-nr16", 1, 0xd469bfd6, 0x8e5dc187d6469a49},
		{"f32-goi-nr16-kr4", 1, 0x53cd2a13, 0xf880834ed54e7c2b},
		{"f32-goi-nr8", 1, 0x37a0af6d, 0x194238091740038d},
		{"f32-goi-nr8-sr4", 1, 0xb19e13ef, 0xd955c8f0752de75e},
		{"qc8w-goi-nr16-kr4", 1, 0x6722269d, 0x79c04e330e208bfb},
		{"qc8w-goi-nr16", 1, 0x22ab1fc5, 0x0159146102a16b65},
		{"f32-goi-nr8-kr2", 1, 0x933d51ab, 0xa56d01836908a9b2},
		{"f32-goi-nr8-kr4", 1, 0x7097324b, 0x9c78740f5c7ed92e},
		{"f32-goi-nr16-kr2-sr4", 1, 0x0ac53705, 0x8996e87767283b6f},
		{"qc8w-goi-nr8-kr4", 1, 0xd33dac3b, 0x5477869b8b8ee14e},
		{"qc8w-goi-nr16-kr8", 1, 0x255ee22d, 0xb6f265a3cd38bc57},
		{"qc8w-goi-nr8-kr2-sr4", 1, 0x4ae0ede8, 0xd0b72e3824b6ee24},
	}
}

// checkPinned compares a kernel with its pin for (name, layout version).
func checkPinned(k *Kernel, pins []pin) error {
	for _, p := range pins {
		if p.name != k.Name() || p.version != k.LayoutVersion() {
			continue
		}
		if k.Seed() != p.seed {
			return fmt.Errorf("%s v%d: seed %#08x, pinned %#08x: the seed encoding changed",
				k.Name(), p.version, k.Seed(), p.seed)
		}
		if k.Fingerprint() != p.fingerprint {
			return fmt.Errorf("%s v%d: fingerprint %#016x, pinned %#016x: the packer's output changed "+
				"without a layout version bump; bump the version in builtinLayouts and add a pin",
				k.Name(), p.version, k.Fingerprint(), p.fingerprint)
		}
		return nil
	}
	return fmt.Errorf("%s: no pin for layout version %d; add one to goldenPins", k.Name(), k.LayoutVersion())
}

func TestGoldenSeedsAndFingerprints(t *testing.T) {
	for _, k := range NewRegistry().Kernels() {
		require.NoError(t, checkPinned(k, goldenPins()))
	}
}

// TestGoldenCatchesUnbumpedLayoutChange builds test-only variants of
// built-in kernels whose packers write different bytes under the same name
// and layout version: the seed does not see the change, the pinned
// fingerprint does. A variant whose version was bumped is reported as
// unpinned and gets a new seed.
func TestGoldenCatchesUnbumpedLayoutChange(t *testing.T) {
	for _, base := range builtinLayouts() {
		orig := newKernel(base)
		for _, change := range []struct {
			what string
			mod  func(*layout)
		}{
			{"bias after weights", func(l *layout) { l.biasLast = true }},
			{"NaN padding", func(l *layout) { l.pad = 0x7fc00000 }},
			{"0x01 padding", func(l *layout) { l.pad = 0x01010101 }},
		} {
			l := base
			change.mod(&l)
			v := newKernel(l)
			require.Equal(t, orig.Seed(), v.Seed(), "%s %s", v.Name(), change.what)
			require.NotEqual(t, orig.Fingerprint(), v.Fingerprint(), "%s %s", v.Name(), change.what)
			err := checkPinned(v, goldenPins())
			require.ErrorContains(t, err, "without a layout version bump", "%s %s", v.Name(), change.what)

			l.version++
			bumped := newKernel(l)
			require.NotEqual(t, orig.Seed(), bumped.Seed())
			require.ErrorContains(t, checkPinned(bumped, goldenPins()), "no pin")
		}
	}
}

// TestVariantLayoutsStillCompute shows the variants above are valid layouts
// (pack and compute agree), so the guard catches a changed packer, not a
// broken one.
func TestVariantLayoutsStillCompute(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, base := range builtinLayouts() {
		for _, l := range []layout{base, base} {
			l.biasLast = true
			l.pad = 0x7fc00000
			k := newKernel(l)
			for range 20 {
				require.Empty(t, checkCase(k, newCase(rng, 1+rng.IntN(6), 1+rng.IntN(40), 1+rng.IntN(40))), k.Name())
			}
		}
	}
}

// TestFingerprintDeterministic: fresh registries agree, and concurrent
// first calls agree (run under -race to check the lazy computation).
func TestFingerprintDeterministic(t *testing.T) {
	a, b := NewRegistry(), newRegistry(withoutSIMD())
	for _, k := range a.Kernels() {
		var wg sync.WaitGroup
		got := make([]uint64, 4)
		for i := range got {
			wg.Go(func() { got[i] = k.Fingerprint() })
		}
		wg.Wait()
		other, ok := b.Lookup(k.Name())
		require.True(t, ok)
		for _, g := range got {
			require.Equal(t, other.Fingerprint(), g, k.Name())
		}
	}
}
