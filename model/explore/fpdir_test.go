package explore

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Looking a fingerprint up through the directory finds what the binary
// search over every pair finds: each present fingerprint's number, none
// for an absent one, also at the ends of the range of fingerprints and in
// a run of pairs that share their top bits.
func TestDirectoryFindsWhatFindFinds(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	fps := []uint64{0, 1, math.MaxUint64, math.MaxUint64 - 1, 1 << 48, 1<<48 - 1}
	for range 5000 {
		fps = append(fps, r.Uint64())
	}
	for k := range 40 { // one directory entry's worth of pairs and more
		fps = append(fps, 0xabcd<<48|uint64(k)*977)
	}
	p := make(fpPairs, 0, 2*len(fps))
	for i, fp := range fps {
		p = append(p, fp, uint64(i))
	}
	sort.Sort(p)
	dir := p.directory()
	for _, fp := range fps {
		want, ok := p.find(fp)
		assert.True(t, ok)
		got, ok := p.findIn(dir, fp)
		assert.True(t, ok, "%#x", fp)
		assert.Equal(t, want, got, "%#x", fp)
	}
	for range 5000 {
		fp := r.Uint64()
		_, want := p.find(fp)
		_, got := p.findIn(dir, fp)
		assert.Equal(t, want, got, "%#x", fp)
	}
	_, ok := p.findIn(dir, 0xabcd<<48|1)
	assert.False(t, ok)
}
