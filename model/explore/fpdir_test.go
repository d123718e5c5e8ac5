package explore

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The liveness graph's index of fingerprints finds each placed
// fingerprint's number and none for an absent one, also at the ends of the
// range of fingerprints, in a bucket that many share (placed out of
// order), and when the index is small.
func TestFPIndexFindsWhatWasPlaced(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	fps := []uint64{0, 1, math.MaxUint64, math.MaxUint64 - 1, 1 << 48, 1<<48 - 1}
	for range 5000 {
		fps = append(fps, r.Uint64())
	}
	for k := range 40 { // one bucket's worth of fingerprints and more, in falling order
		fps = append(fps, 0xabcd<<48|uint64(40-k)*977)
	}
	for _, n := range []int{1, 3, len(fps)} {
		x := newFPIndex(n)
		for _, fp := range fps[len(fps)-n:] {
			x.count(fp)
		}
		x.startPlacing()
		want := map[uint64]uint32{}
		for i, fp := range fps[len(fps)-n:] {
			x.place(fp, uint32(i))
			want[fp] = uint32(i)
		}
		x.finish(2)
		for fp, id := range want {
			got, ok := x.find(fp)
			assert.True(t, ok, "%#x", fp)
			assert.Equal(t, id, got, "%#x", fp)
		}
		for range 5000 {
			fp := r.Uint64()
			_, in := want[fp]
			_, ok := x.find(fp)
			assert.Equal(t, in, ok, "%#x", fp)
		}
		_, ok := x.find(0xabcd<<48 | 1)
		assert.False(t, ok)
	}
}
