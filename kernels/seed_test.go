package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestForeignPackingGivesWrongOutputs hands each kernel's packed buffer to
// every other kernel. The other kernel either refuses it (wrong size) or
// computes wrong outputs: packed bytes are only meaningful to the layout
// that wrote them, which is why the cache keys entries on the seed (G1).
// Shapes are chosen so that several pairs have equal packed sizes and the
// buffer is accepted silently.
func TestForeignPackingGivesWrongOutputs(t *testing.T) {
	reg := NewRegistry()
	rng := rand.New(rand.NewPCG(11, 12))
	for _, sh := range [][2]int{{32, 64}, {37, 29}} {
		c := newCase(rng, 3, sh[0], sh[1])
		c.b = nil // biases sit at the same offsets in several layouts; keep the test about weights
		for _, src := range reg.Kernels() {
			packed := packOrFail(t, src, c)
			for _, dst := range reg.Kernels() {
				if dst == src {
					continue
				}
				require.NotEqual(t, src.Seed(), dst.Seed())
				y := make([]float32, c.m*c.n)
				err := dst.Compute(y, c.x, c.m, packed, c.n, c.kdim)
				if err != nil {
					require.ErrorIs(t, err, ErrBufferTooSmall)
					continue
				}
				if len(packed) == dst.PackedSize(c.n, c.kdim) {
					t.Logf("%s accepted %s's buffer (%d bytes, n=%d k=%d)", dst.Name(), src.Name(), len(packed), c.n, c.kdim)
				}
				ref, _ := naiveFC(c.x, c.m, c.w, c.b, c.n, c.kdim)
				wrong := 0
				for i := range y {
					if math.Abs(float64(y[i])-ref[i]) > 1e-2*(1+math.Abs(ref[i])) {
						wrong++
					}
				}
				require.Greater(t, wrong, len(y)/2, "%s computing with %s's packing", dst.Name(), src.Name())
			}
		}
	}
}

// TestSeedsAreDistinct: no two registered layouts share a seed, and the
// seed does not collide the way XNNPACK's XOR does: it does not depend on
// N and K at all, and swapping nr and kr changes it.
func TestSeedsAreDistinct(t *testing.T) {
	seen := map[uint32]string{}
	for _, k := range NewRegistry().Kernels() {
		prev, dup := seen[k.Seed()]
		require.False(t, dup, "%s and %s share seed %#x", k.Name(), prev, k.Seed())
		seen[k.Seed()] = k.Name()
	}
	a := layout{version: 1, elem: elemF32, nr: 4, kr: 8, sr: 1}
	b := layout{version: 1, elem: elemF32, nr: 8, kr: 4, sr: 1}
	require.NotEqual(t, a.seed(), b.seed())
	v2 := a
	v2.version = 2
	require.NotEqual(t, a.seed(), v2.seed())
}

// TestFingerprintsAreDistinct: every registered packer writes different
// bytes for the fingerprint input.
func TestFingerprintsAreDistinct(t *testing.T) {
	seen := map[uint64]string{}
	for _, k := range NewRegistry().Kernels() {
		prev, dup := seen[k.Fingerprint()]
		require.False(t, dup, "%s and %s share fingerprint", k.Name(), prev)
		seen[k.Fingerprint()] = k.Name()
	}
}
