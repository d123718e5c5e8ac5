package cache_test

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/spec"
)

// BenchmarkChecksumMappedFile: what data verification costs on the path a
// warm launch runs, a read-only mapping of the cache file, beside its floor
// in the same run: a read sweep of the same mapping (one load per cache
// line), CRC32C (what v3 stored for data before the commit slot named the
// algorithm) and spec.DataChecksum (XXH3-64 folded to 32 bits, what v3
// stores now). Compare the sub-benchmarks' MB/s:
//
//	go test ./impl/cache -run '^$' -bench ChecksumMappedFile -count 6
//
// The file is 64 MiB by default; XPWC_BENCH_MAPPED_MB sets another size.
func BenchmarkChecksumMappedFile(b *testing.B) {
	mb := 64
	if v, err := strconv.Atoi(os.Getenv("XPWC_BENCH_MAPPED_MB")); err == nil && v > 0 {
		mb = v
	}
	path := filepath.Join(b.TempDir(), "mapped.cache")
	data := make([]byte, mb<<20)
	for i := range data {
		data[i] = byte(i*131 + i>>9)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		b.Fatal(err)
	}
	f, err := vfs.OS().OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	m, err := f.Map(0, len(data), vfs.ProtRead)
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	mem := m.Bytes()
	var sink uint64
	b.Run("sweep", func(b *testing.B) {
		b.SetBytes(int64(len(mem)))
		for b.Loop() {
			var acc uint64
			for i := 0; i < len(mem); i += 64 {
				acc += uint64(mem[i])
			}
			sink += acc
		}
	})
	b.Run("crc32c", func(b *testing.B) {
		b.SetBytes(int64(len(mem)))
		for b.Loop() {
			sink += uint64(spec.CRC32C(mem))
		}
	})
	b.Run("xxh3", func(b *testing.B) {
		b.SetBytes(int64(len(mem)))
		for b.Loop() {
			sink += uint64(spec.DataChecksum(mem))
		}
	})
	_ = sink
}
