package explore

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkPartInsert measures a part's inserts of a chunk's fingerprints
// (visitedParts.insert) into a table far larger than the caches, as in a
// long run: a tenth new, the rest seen before.
func BenchmarkPartInsert(b *testing.B) {
	const held, batch = 8 << 20, 1500
	r := rand.New(rand.NewPCG(9, 10))
	v := newTableParts(1, nil)
	seen := make([]uint64, 0, held)
	for range held {
		fp := r.Uint64()
		v.tabs[0].addID(fp, 0)
		seen = append(seen, fp)
	}
	// The batches are drawn before the clock starts.
	batches := make([][]uint64, 512)
	for k := range batches {
		for range batch {
			fp := seen[r.IntN(len(seen))]
			if r.IntN(10) == 0 {
				fp = r.Uint64()
			}
			batches[k] = append(batches[k], fp)
		}
	}
	c := &chunk{pfp: [][]uint64{nil}, pres: [][]uint32{nil}}
	n := 0
	b.ResetTimer()
	for b.Loop() {
		c.pfp[0] = batches[n%len(batches)]
		v.insert(0, c)
		n++
	}
	b.ReportMetric(float64(n*batch)/b.Elapsed().Seconds(), "inserts/s")
}
