package crashpoint

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"

	"github.com/xpwc/xpwc/faultinject/errorfs"
	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/spec"
)

// Pack is the reference packer of the checks: a deterministic function of
// every field of the key, so a packing made for another seed, fingerprint
// or source differs from the current one (G1). Sizes range from 100 bytes
// to a little over a page, so some regions span a page boundary.
func Pack(k spec.Key) []byte {
	h := fnv.New64a()
	h.Write([]byte(k.Name()))
	var x [20]byte
	binary.LittleEndian.PutUint32(x[0:], k.Seed)
	binary.LittleEndian.PutUint64(x[4:], k.Fingerprint)
	binary.LittleEndian.PutUint64(x[12:], k.Source)
	h.Write(x[:])
	s := h.Sum64() | 1
	b := make([]byte, 100+int(s%5000))
	for i := range b {
		s ^= s << 13
		s ^= s >> 7
		s ^= s << 17
		b[i] = byte(s)
	}
	return b
}

// Keys returns n keys of a model with layout seed seed.
func Keys(n int, seed uint32) []spec.Key {
	ks := make([]spec.Key, n)
	for i := range ks {
		ks[i] = spec.Key{Weight: fmt.Sprintf("layers.%d.w", i), Bias: fmt.Sprintf("layers.%d.b", i),
			Seed: seed, Fingerprint: 7, Source: uint64(i) + 1}
	}
	return ks
}

// Upgrade returns ks with every other key re-seeded: a kernel upgrade that
// changes the packed layout of half the weights.
func Upgrade(ks []spec.Key) []spec.Key {
	out := append([]spec.Key(nil), ks...)
	for i := range out {
		if i%2 == 0 {
			out[i].Seed++
		}
	}
	return out
}

// LaunchResult is what one launch saw.
type LaunchResult struct {
	Hits   []spec.Key
	Misses []spec.Key
	Stats  cache.Stats
	// Wrong lists the keys whose hit bytes differed from Pack (G1).
	Wrong []spec.Key
	// Committed reports that the launch's commit succeeded (or that there
	// was nothing to commit).
	Committed bool
	// CheckErr is the cache's consistency check after the launch.
	CheckErr error
}

// Launch runs one process's launch of a program over ks against the cache
// at opts.Path on fsys, the way XNNPACK's operator creation drives the
// provider: look up; on a miss reserve, pack and look up or insert; then
// finalize (which commits) and close.
func Launch(fsys vfs.FS, opts cache.Options, ks []spec.Key) (LaunchResult, error) {
	return LaunchPacked(fsys, opts, ks, Pack)
}

// LaunchPacked is Launch with another packer: pack is both what misses store
// and what hits are checked against.
func LaunchPacked(fsys vfs.FS, opts cache.Options, ks []spec.Key, pack func(spec.Key) []byte) (LaunchResult, error) {
	c, err := Begin(fsys, opts)
	if err != nil {
		return LaunchResult{}, err
	}
	return Finish(fsys, c, ks, pack)
}

// Begin opens a cache and initializes the program: the load, and the
// mapping of the committed file, happen here. Finish does the rest, so a
// test can let another process commit in between.
func Begin(fsys vfs.FS, opts cache.Options) (*cache.Cache, error) {
	opts.FS = fsys
	c, err := cache.Open(opts)
	if err != nil {
		return nil, err
	}
	if err := c.InitializeForProgram("model"); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

// Finish packs ks through c begun by Begin, finalizes and closes it.
func Finish(fsys vfs.FS, c *cache.Cache, ks []spec.Key, pack func(spec.Key) []byte) (LaunchResult, error) {
	var res LaunchResult
	defer c.Close()
	for _, k := range ks {
		h, hit := c.LookUp(k)
		if hit {
			res.Hits = append(res.Hits, k)
		} else {
			res.Misses = append(res.Misses, k)
			want := pack(k)
			buf, err := c.ReserveSpace(len(want))
			if err != nil {
				return res, err
			}
			copy(buf, want)
			if h, err = c.LookUpOrInsert(k, buf[:len(want)]); err != nil {
				return res, err
			}
		}
		got, err := c.Bytes(h)
		if err != nil {
			return res, err
		}
		if string(got) != string(pack(k)) {
			res.Wrong = append(res.Wrong, k)
		}
	}
	before := c.Stats().Commits
	if err := c.Finalize(); err != nil {
		return res, err
	}
	res.Stats = c.Stats()
	res.Committed = res.Stats.CommitErr == nil && (res.Stats.Commits > before || len(res.Misses) == 0)
	res.CheckErr = check(fsys, c)
	return res, nil
}

// check runs the cache's consistency check with fault injection paused: the
// check reads the file through the same filesystem, and an error injected
// into the checker's own reads says nothing about the cache.
func check(fsys vfs.FS, c *cache.Cache) error {
	if ef, ok := fsys.(*errorfs.FS); ok {
		if tg, ok := ef.Injector().(*errorfs.Toggle); ok {
			tg.Off()
			defer tg.On()
		}
	}
	return c.Check()
}

// Compact opens the cache, loads it, rewrites it with its live entries and
// closes it.
func Compact(fsys vfs.FS, opts cache.Options, ks []spec.Key) (LaunchResult, error) {
	var res LaunchResult
	c, err := Begin(fsys, opts)
	if err != nil {
		return res, err
	}
	defer c.Close()
	for _, k := range ks {
		if _, hit := c.LookUp(k); hit {
			res.Hits = append(res.Hits, k)
		} else {
			res.Misses = append(res.Misses, k)
		}
	}
	if err := c.Finalize(); err != nil {
		return res, err
	}
	before := c.Stats().Compactions
	err = c.Compact()
	res.Stats = c.Stats()
	res.Committed = err == nil && res.Stats.Compactions > before
	res.CheckErr = check(fsys, c)
	return res, err
}
