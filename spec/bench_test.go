package spec_test

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/xpwc/xpwc/spec"
	"github.com/xpwc/xpwc/spec/spectest"
)

// Parse benchmarks at the size of a large real model (1,184 packed weights)
// and at a million entries. Data regions are never read, so the files are
// sparse: only header, index and footer exist in memory. Reported besides
// ns/op: ns/entry (wall), cpu-ns/entry (CPU time of the process, GC
// included, which stays meaningful on a shared machine) and alloc/index, the
// bytes allocated per parse divided by the index size (goals: at most
// 100 ns/entry and 2x).

func BenchmarkParseV2(b *testing.B) {
	for _, n := range []int{1184, 1_000_000} {
		for _, order := range []string{"offset", "hash"} {
			b.Run(fmt.Sprintf("entries=%d/order=%s", n, order), func(b *testing.B) {
				f, entries := spectest.SparseV2(n, 4096, 4000)
				if order == "hash" {
					// ExecuTorch writes unordered_map order.
					rand.New(rand.NewPCG(1, 2)).Shuffle(len(entries), func(i, j int) { entries[i], entries[j] = entries[j], entries[i] })
					idx := spec.EncodeV2Index(uint64(n)*4096, entries)
					f.Parts[0].Data = idx
				}
				indexLen := len(f.Parts[0].Data) - spec.V2FooterSize
				benchParse(b, n, indexLen, func() error { _, err := spec.ParseV2(f, f.Size); return err })
			})
		}
	}
}

func BenchmarkParseV3(b *testing.B) {
	for _, n := range []int{1184, 1_000_000} {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			f, _ := spectest.SparseV3(n, 4096, 4000)
			benchParse(b, n, len(f.Parts[1].Data), func() error { _, err := spec.ParseV3(f, f.Size); return err })
		})
	}
}

// BenchmarkParseBaseline is the floor the parse benchmarks are compared
// with in the same run: reading the same index bytes through the same
// sparse file in 64 KiB pieces and CRC32C-ing them, with no decoding. On a
// shared machine the ratio parse/baseline is steadier than either time.
func BenchmarkParseBaseline(b *testing.B) {
	for _, n := range []int{1184, 1_000_000} {
		for _, format := range []string{"v2", "v3"} {
			b.Run(fmt.Sprintf("format=%s/entries=%d", format, n), func(b *testing.B) {
				var f *spectest.SparseFile
				var off, length int64
				if format == "v2" {
					f, _ = spectest.SparseV2(n, 4096, 4000)
					off, length = f.Parts[0].Off, int64(len(f.Parts[0].Data)-spec.V2FooterSize)
				} else {
					f, _ = spectest.SparseV3(n, 4096, 4000)
					off, length = f.Parts[1].Off, int64(len(f.Parts[1].Data))
				}
				buf := make([]byte, 64<<10)
				benchParse(b, n, int(length), func() error {
					var crc uint32
					for p := off; p < off+length; p += int64(len(buf)) {
						k := min(int64(len(buf)), off+length-p)
						if _, err := f.ReadAt(buf[:k], p); err != nil {
							return err
						}
						crc = spec.UpdateCRC32C(crc, buf[:k])
					}
					if crc == 0 {
						return fmt.Errorf("zero CRC")
					}
					return nil
				})
			})
		}
	}
}

func benchParse(b *testing.B, n, indexLen int, parse func() error) {
	if err := parse(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(indexLen))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	cpu0 := processCPUNanos()
	b.ResetTimer()
	for b.Loop() {
		if err := parse(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	cpu := processCPUNanos() - cpu0
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(cpu)/float64(b.N)/float64(n), "cpu-ns/entry")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/entry")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/float64(indexLen), "alloc/index")
}

var _ io.ReaderAt = (*spectest.SparseFile)(nil)

// BenchmarkVerifyEntryData prices the G1 data check: DataChecksum (XXH3) over one 4 MiB
// packed weight read through a bytes.Reader (a mapping costs the same copy).
func BenchmarkVerifyEntryData(b *testing.B) {
	ws := spectest.Weights(1, 4<<20, 1)
	file, entries := spectest.BuildV3(4096, ws)
	r := bytes.NewReader(file)
	b.SetBytes(int64(entries[0].Size))
	b.ReportAllocs()
	for b.Loop() {
		if err := spec.VerifyEntryData(r, entries[0]); err != nil {
			b.Fatal(err)
		}
	}
}
