package crashfs

import (
	"os"
	"testing"

	"github.com/xpwc/xpwc/impl/vfs"
)

// BenchmarkWriteAt is the cost of a 4 KiB page-cache write with and without
// a live mapping of the file (which every call keeps coherent).
func BenchmarkWriteAt(b *testing.B) {
	for _, mapped := range []bool{false, true} {
		name := "unmapped"
		if mapped {
			name = "mapped-1MiB"
		}
		b.Run(name, func(b *testing.B) {
			f := New(Options{})
			file, err := f.OpenFile("/a", os.O_RDWR|os.O_CREATE, 0o644)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := file.WriteAt(make([]byte, 1<<20), 0); err != nil {
				b.Fatal(err)
			}
			if mapped {
				if _, err := file.Map(0, 1<<20, vfs.ProtReadWrite); err != nil {
					b.Fatal(err)
				}
			}
			page := make([]byte, 4096)
			b.SetBytes(int64(len(page)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := file.WriteAt(page, int64(i%256)*4096); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPowerLoss is the cost of one power-loss outcome of a 1 MiB file
// with 64 unsynced sectors.
func BenchmarkPowerLoss(b *testing.B) {
	f := New(Options{})
	if err := f.MkdirAll("/c"); err != nil {
		b.Fatal(err)
	}
	file, err := f.OpenFile("/c/a", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := file.WriteAt(make([]byte, 1<<20), 0); err != nil {
		b.Fatal(err)
	}
	if err := file.Sync(); err != nil {
		b.Fatal(err)
	}
	for s := 0; s < 64; s++ {
		if _, err := file.WriteAt([]byte{1}, int64(s)*16384); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = f.PowerLoss(uint64(i))
	}
}
