package errorfs

import (
	"os"
	"testing"
)

// BenchmarkOverhead is the cost the wrapper adds to a call whose injector
// lets it through, for a trivial and a composite injector.
func BenchmarkOverhead(b *testing.B) {
	for _, spec := range []string{"none", "(onIndex 1000000000 (and writes (path \"*.tmp\")) enospc)", "(randomly 0 1 eio)"} {
		inj, err := Parse(spec)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(spec, func(b *testing.B) {
			base := newFake()
			f, err := Wrap(base, inj).OpenFile("/a.tmp", os.O_RDWR|os.O_CREATE, 0o644)
			if err != nil {
				b.Fatal(err)
			}
			buf := []byte("x")
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				base.calls = base.calls[:0]
				if _, err := f.WriteAt(buf, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
