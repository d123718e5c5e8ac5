package crashpoint

import (
	"fmt"
	"os"

	"github.com/xpwc/xpwc/spec"
	"github.com/xpwc/xpwc/spec/spectest"
)

// launchAndMark is one launch that reports its save point when it committed.
func launchAndMark(e Env, ks []spec.Key) error { return launchAndMarkPacked(e, ks, Pack) }

func launchAndMarkPacked(e Env, ks []spec.Key, pack func(spec.Key) []byte) error {
	r, err := LaunchPacked(e.FS, e.Opts, ks, pack)
	e.observe(r, err)
	if err != nil {
		return err
	}
	if !r.Committed {
		return fmt.Errorf("launch did not commit: %v", r.Stats.CommitErr)
	}
	e.Saved(ks)
	return nil
}

// Workloads are the standard crash-point workloads over a model of n
// weights: cold launch and save; warm launch after a kernel upgrade that
// re-packs half the weights, appends and commits; compaction; recovery from
// a corrupt file; two processes, one committing under the other's mapping;
// and the conversion of a file of the other format.
func Workloads(n int) []Workload {
	k1 := Keys(n, 1)
	k2 := Upgrade(k1)
	return []Workload{
		{
			Name: "cold",
			Run:  func(e Env) error { return launchAndMark(e, k1) },
			Keys: k1,
		},
		{
			Name:  "upgrade",
			Setup: func(e Env) error { return launchAndMark(e, k1) },
			Run:   func(e Env) error { return launchAndMark(e, k2) },
			Keys:  k2,
		},
		{
			Name: "compact",
			Setup: func(e Env) error {
				if err := launchAndMark(e, k1); err != nil {
					return err
				}
				return launchAndMark(e, k2)
			},
			Run: func(e Env) error {
				r, err := Compact(e.FS, e.Opts, k2)
				e.observe(r, nil) // a failed compaction is no G8 failure
				if err != nil {
					return err
				}
				if !r.Committed {
					return fmt.Errorf("compaction did not commit")
				}
				e.Saved(k2)
				return nil
			},
			Keys: k2,
		},
		{
			Name:  "corrupt",
			Setup: writeCorrupt,
			Run:   func(e Env) error { return launchAndMark(e, k1) },
			Keys:  k1,
		},
		Concurrent(n),
		{
			// A file of the other format, then a launch that names this
			// one: its entries are carried over without re-packing and
			// the commit rewrites the file in this format (docs/paths.md).
			Name:  "convert",
			Setup: func(e Env) error { return launchAndMark(e.otherFormat(), k1) },
			Run:   func(e Env) error { return launchAndMark(e, k1) },
			Keys:  k1,
		},
	}
}

// otherFormat is e with the format the caller did not name.
func (e Env) otherFormat() Env {
	if e.Opts.Format == spec.FormatV2 {
		e.Opts.Format = spec.FormatV3
	} else {
		e.Opts.Format = spec.FormatV2
	}
	return e
}

// writeCorrupt leaves a durable cache file whose index is damaged: a file
// of the configured format built from the spec encoders, with one byte of
// its index flipped (which v3 detects by checksum and v2, in this byte, by
// its bounds checks).
func writeCorrupt(e Env) error {
	ws := spectest.Weights(3, 200, 9)
	var file []byte
	if e.Opts.Format == spec.FormatV2 {
		file, _ = spectest.BuildV2(e.FS.PageSize(), ws)
		file[len(file)-spec.V2FooterSize] ^= 0xFF // index_start
	} else {
		file, _ = spectest.BuildV3(e.FS.PageSize(), ws)
		file[len(file)-1] ^= 0x01 // last index byte: index CRC mismatch
	}
	f, err := e.FS.OpenFile(Path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteAt(file, 0); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return e.FS.SyncDir(Dir)
}

// ForgedTrailer is the workload of a weight whose packed bytes end in a
// forged v2 index and footer (weights are caller-controlled bytes). After a
// committed launch over ks, a launch adds one new weight, the carrier, of
// two pages whose last bytes are the forgery: an index naming ks[0] at the
// carrier's own offset. A crash after the carrier's data reach the file
// and before the real index is written leaves the forgery at the end of the
// file. v2 then serves the carrier's bytes as ks[0] (G1) and loses the
// other entries (G2); v3 finds commits only in its header slots.
func ForgedTrailer(n int) Workload {
	ks := Keys(n, 1)
	carrier := spec.Key{Weight: "zz.carrier", Seed: 1, Fingerprint: 7, Source: 99}
	all := append(append([]spec.Key(nil), ks...), carrier)
	const carrierLen = 8192
	var carrierOff uint64 // where the next append lands, learned in Setup
	pack := func(k spec.Key) []byte {
		if k != carrier {
			return Pack(k)
		}
		b := make([]byte, carrierLen)
		for i := range b {
			b[i] = byte(i*7 + 1)
		}
		victim := spec.Entry{Key: spec.Key{Weight: ks[0].V2Name(), Seed: ks[0].Seed},
			Offset: carrierOff, Size: uint64(len(Pack(ks[0])))}
		probe := spec.EncodeV2Index(0, []spec.Entry{victim})
		idx := spec.EncodeV2Index(carrierOff+carrierLen-uint64(len(probe)), []spec.Entry{victim})
		copy(b[carrierLen-len(idx):], idx)
		return b
	}
	return Workload{
		Name: "forged-trailer",
		Setup: func(e Env) error {
			if err := launchAndMark(e, ks); err != nil {
				return err
			}
			st, err := e.FS.Stat(Path)
			if err != nil {
				return err
			}
			align := int64(max(e.FS.PageSize(), spec.V2Alignment))
			carrierOff = uint64((st.Size() + align - 1) / align * align)
			return nil
		},
		Run:  func(e Env) error { return launchAndMarkPacked(e, all, pack) },
		Keys: all,
		Pack: pack,
	}
}

// Concurrent is the workload of two processes on one cache file: process A
// (the old model) loads and maps the file; process B, after a kernel
// upgrade, re-packs half the weights and commits; then A packs its program
// from what it loaded. A must get right bytes whatever B did to the file
// (append in place, or a new file renamed over A's mapping), and a crash
// anywhere in B's commit is recovered like any other.
func Concurrent(n int) Workload {
	k1 := Keys(n, 1)
	k2 := Upgrade(k1)
	return Workload{
		Name:  "concurrent",
		Setup: func(e Env) error { return launchAndMark(e, k1) },
		Run: func(e Env) error {
			a, err := Begin(e.FS, e.Opts)
			if err != nil {
				return err
			}
			errB := launchAndMark(e, k2)
			r, err := Finish(e.FS, a, k1, Pack)
			e.observe(r, err)
			if err != nil {
				return err
			}
			return errB
		},
		Keys: k2,
	}
}

// PackLarge is a packer of weights of 20 to 60 KiB: several pages each, so
// that a power loss can tear a weight's region across many sectors.
func PackLarge(k spec.Key) []byte {
	small := Pack(k)
	b := make([]byte, 20<<10+len(small)*8)
	for i := range b {
		b[i] = small[i%len(small)] ^ byte(i/len(small))
	}
	return b
}

// Large is the cold and upgrade workloads with PackLarge.
func Large(n int) []Workload {
	k1 := Keys(n, 1)
	k2 := Upgrade(k1)
	launch := func(ks []spec.Key) func(Env) error {
		return func(e Env) error { return launchAndMarkPacked(e, ks, PackLarge) }
	}
	return []Workload{
		{Name: "cold-large", Run: launch(k1), Keys: k1, Pack: PackLarge},
		{Name: "upgrade-large", Setup: launch(k1), Run: launch(k2), Keys: k2, Pack: PackLarge},
	}
}
