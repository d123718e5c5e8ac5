//go:build linux

package runtime

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/xpwc/xpwc/kernels"
)

// TestFolioProbe measures, on this machine's kernel and file system, what
// the way a cache file is written does to the page-cache folios a warm
// launch maps: llama-1184's packed layers written region by region at 4 KiB
// alignment (as the cache's staged writes do), the same bytes in 2 MiB or
// 1 MiB pwrites at aligned offsets, and region by region after the
// allocated range was faulted in through a MADV_HUGEPAGE mapping. For each
// it reports the write's CPU, then a fresh read-only mapping's first pass
// (a load per 4 KiB page): CPU, minor faults, and the bytes mapped by PMDs
// (smaps FilePmdMapped). A measurement, not a check: it runs only with
// XPWC_FOLIO_PROBE=1 (docs/benchmarks.md, "First output on a shadow-paged
// guest"), in the directory XPWC_FOLIO_PROBE_DIR (default the test's temp
// directory, which must be on the file system to measure);
// XPWC_FOLIO_PROBE_MODES, _ROUNDS and _PAUSE (a Go duration to wait before
// each write) choose what runs.
func TestFolioProbe(t *testing.T) {
	if os.Getenv("XPWC_FOLIO_PROBE") != "1" {
		t.Skip("a measurement: set XPWC_FOLIO_PROBE=1")
	}
	dir := os.Getenv("XPWC_FOLIO_PROBE_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	p, err := Preset(PresetLlama1184, 1)
	if err != nil {
		t.Fatal(err)
	}
	k := kernels.NewRegistry().Default()
	var sizes []int
	for _, l := range p.Layers() {
		sizes = append(sizes, k.PackedSize(l.N, l.K))
	}
	rounds := 2
	if v, err := strconv.Atoi(os.Getenv("XPWC_FOLIO_PROBE_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	modes := []string{"regions", "chunks-2MiB", "chunks-1MiB", "regions-prefault-huge", "regions-prefault-huge-aligned"}
	if m := os.Getenv("XPWC_FOLIO_PROBE_MODES"); m != "" {
		modes = strings.Split(m, ",")
	}
	// A pause before each write lets memory freed by the last file settle
	// (this guest reports free 2 MiB blocks to its host after a delay).
	var pause time.Duration
	if v, err := time.ParseDuration(os.Getenv("XPWC_FOLIO_PROBE_PAUSE")); err == nil {
		pause = v
	}
	goruntime.LockOSThread()
	defer goruntime.UnlockOSThread()
	for r := range rounds {
		for _, mode := range modes {
			for _, huge := range []bool{false, true} {
				path := filepath.Join(dir, fmt.Sprintf("probe-%s-%d-%v", mode, r, huge))
				time.Sleep(pause)
				w, err := probeWrite(path, mode, sizes)
				if err != nil {
					t.Fatal(err)
				}
				var passes []string
				var rd probeReadResult
				for range 3 {
					if rd, err = probeFirstPass(path, huge); err != nil {
						t.Fatal(err)
					}
					passes = append(passes, fmt.Sprintf("%.1f", rd.cpu))
				}
				_ = os.Remove(path)
				t.Logf("round %d %-22s write %4.0f ms wall, %4.0f ms cpu (+%3.0f fdatasync) | madv_hugepage=%-5v vma%%2MiB=%d, first pass of 3 fresh mappings %v ms cpu, %d minflt, %d MB pmd-mapped",
					r, mode, w.wall, w.cpu, w.syncCPU, huge, rd.misalign, passes, rd.minflt, rd.pmd>>20)
			}
		}
	}
}

// probeSink keeps the first pass's loads alive.
var probeSink byte

type probeWriteResult struct{ wall, cpu, syncCPU float64 }

type probeReadResult struct {
	cpu      float64
	minflt   int64
	pmd      int64
	misalign uintptr
}

func threadUsage() (cpu float64, minflt int64) {
	var ru unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_THREAD, &ru)
	us := func(tv unix.Timeval) float64 { return float64(tv.Sec)*1e3 + float64(tv.Usec)/1e3 }
	return us(ru.Utime) + us(ru.Stime), ru.Minflt
}

// probeWrite writes the packed sizes' worth of bytes (a pattern, not
// zeros) to a new file the way mode says, fdatasyncs it, and returns the
// time and CPU. The file is fallocated ahead as the cache's writer does
// (16 MiB, doubling).
func probeWrite(path, mode string, sizes []int) (probeWriteResult, error) {
	const page, ahead16 = 4096, 16 << 20
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return probeWriteResult{}, err
	}
	defer f.Close()
	fd := int(f.Fd())
	largest, total := 0, int64(0)
	for _, n := range sizes {
		largest = max(largest, n)
		total += int64((n + page - 1) &^ (page - 1))
	}
	buf := make([]byte, max(largest, 2<<20))
	for i := range buf {
		buf[i] = byte(i*7 + 1)
	}
	t0 := time.Now()
	c0, _ := threadUsage()
	var allocated int64
	allocate := func(end int64) error {
		if end <= allocated {
			return nil
		}
		target := end + min(end, ahead16)
		if mode == "regions-prefault-huge-aligned" {
			target = (target + 2<<20 - 1) &^ (2<<20 - 1)
		}
		if err := unix.Fallocate(fd, 0, allocated, target-allocated); err != nil {
			return err
		}
		if strings.HasPrefix(mode, "regions-prefault-huge") {
			if err := prefaultHuge(fd, allocated, target); err != nil {
				return err
			}
		}
		allocated = target
		return nil
	}
	switch mode {
	case "regions", "regions-prefault-huge", "regions-prefault-huge-aligned":
		var off int64
		for _, n := range sizes {
			length := int64((n + page - 1) &^ (page - 1))
			if err := allocate(off + length); err != nil {
				return probeWriteResult{}, err
			}
			if _, err := unix.Pwrite(fd, buf[:n], off); err != nil {
				return probeWriteResult{}, err
			}
			off += length
		}
	case "chunks-2MiB", "chunks-1MiB":
		chunk := int64(2 << 20)
		if mode == "chunks-1MiB" {
			chunk = 1 << 20
		}
		for off := int64(0); off < total; off += chunk {
			n := min(chunk, total-off)
			if err := allocate(off + n); err != nil {
				return probeWriteResult{}, err
			}
			if _, err := unix.Pwrite(fd, buf[:n], off); err != nil {
				return probeWriteResult{}, err
			}
		}
	default:
		return probeWriteResult{}, fmt.Errorf("unknown mode %q", mode)
	}
	if err := unix.Ftruncate(fd, total); err != nil {
		return probeWriteResult{}, err
	}
	cw, _ := threadUsage()
	if err := unix.Fdatasync(fd); err != nil {
		return probeWriteResult{}, err
	}
	c1, _ := threadUsage()
	return probeWriteResult{wall: float64(time.Since(t0).Microseconds()) / 1e3, cpu: cw - c0, syncCPU: c1 - cw}, nil
}

// prefaultHuge faults [from, to) of fd's file into the page cache through
// a MADV_HUGEPAGE mapping, so that the read-around allocates PMD-sized
// folios (zero-filled: the range is allocated but unwritten).
func prefaultHuge(fd int, from, to int64) error {
	from &^= 4095
	b, err := unix.Mmap(fd, from, int(to-from), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return err
	}
	defer unix.Munmap(b)
	if err := unix.Madvise(b, unix.MADV_HUGEPAGE); err != nil {
		return fmt.Errorf("madvise hugepage: %w", err)
	}
	if err := unix.Madvise(b, unix.MADV_POPULATE_READ); err != nil {
		return fmt.Errorf("madvise populate: %w", err)
	}
	return nil
}

func probeFirstPass(path string, huge bool) (probeReadResult, error) {
	f, err := os.Open(path)
	if err != nil {
		return probeReadResult{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return probeReadResult{}, err
	}
	b, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return probeReadResult{}, err
	}
	defer unix.Munmap(b)
	addr := uintptr(unsafe.Pointer(&b[0]))
	if huge {
		if err := unix.Madvise(b, unix.MADV_HUGEPAGE); err != nil {
			return probeReadResult{}, err
		}
	}
	c0, f0 := threadUsage()
	var acc byte
	for i := 0; i < len(b); i += 4096 {
		acc += b[i]
	}
	c1, f1 := threadUsage()
	pmd, err := smapsField(addr, "FilePmdMapped:")
	if err != nil {
		return probeReadResult{}, err
	}
	probeSink += acc // the loads must not be dead code
	return probeReadResult{cpu: c1 - c0, minflt: f1 - f0, pmd: pmd, misalign: addr % (2 << 20)}, nil
}

// smapsField returns the named field (in bytes) of the mapping starting
// at addr in /proc/self/smaps.
func smapsField(addr uintptr, field string) (int64, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	in := false
	start := strconv.FormatUint(uint64(addr), 16) + "-"
	for s.Scan() {
		line := s.Text()
		if f := strings.Fields(line); len(f) > 0 && !strings.HasSuffix(f[0], ":") {
			in = strings.HasPrefix(line, start) // a mapping's header line
			continue
		}
		if in && strings.HasPrefix(line, field) {
			kb, err := strconv.ParseInt(strings.Fields(line)[1], 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no %s for mapping at %x", field, addr)
}
