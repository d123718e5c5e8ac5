package cache

import (
	"errors"
	"fmt"

	"github.com/xpwc/xpwc/internal/rawmem"
	"github.com/xpwc/xpwc/spec"
)

// The calls most programs need: Program brackets a program's packing, Get
// serves one weight, NewKey names it. They are made of the provider calls
// above, which XNNPACK-shaped callers keep using.

// Packer is what a key needs of the kernel that packs a weight: its layout
// seed and its fingerprint (kernels.Kernel has both).
type Packer interface {
	Seed() uint32
	Fingerprint() uint64
}

// Scalar is the element types of unpacked weights NewKey digests.
type Scalar = rawmem.Scalar

// NewKey returns the key of weight (and bias, "" for none) packed by p from
// the unpacked weights w and bias b: Source is spec.SourceDigest of their
// bytes, so a model update that changes them misses instead of serving the
// old packing (G1). The digest reads every byte once: about 1 GB/s on a
// 4 MiB layer on a shared 2-core machine (BenchmarkNewKey; docs/cache.md,
// "Adopting the cache"). A caller that identifies its weights otherwise (a
// version of the model file) may build the spec.Key itself.
func NewKey[T Scalar](weight, bias string, p Packer, w, b []T) spec.Key {
	return spec.Key{
		Weight: weight, Bias: bias,
		Seed: p.Seed(), Fingerprint: p.Fingerprint(),
		Source: spec.SourceDigest(rawmem.Bytes(w), rawmem.Bytes(b)),
	}
}

// Program runs fn as the packing of program: InitializeForProgram, fn,
// Finalize, which commits what fn packed even when fn fails (what was
// packed is sound), so that the caller cannot forget it. It returns fn's
// error, or else the first of InitializeForProgram's and Finalize's.
// DeleteProgram releases the program's entries when it is done.
func (c *Cache) Program(program string, fn func() error) error {
	if err := c.InitializeForProgram(program); err != nil {
		return err
	}
	err := fn()
	if ferr := c.Finalize(); err == nil {
		err = ferr
	}
	return err
}

// Get returns the packed bytes of the weight k names: the cached packing
// when one matches every field of k (checked per Options.VerifyData),
// otherwise the one pack writes into size bytes the cache reserves (the
// file, or the heap with a reason in Stats), inserted under k. It is
// LookUp, then on a miss ReserveSpace, pack, LookUpOrInsert, then Bytes;
// under VerifyOnCompute a cached packing that fails its check is packed
// again here. The bytes stay valid until the program is deleted or the
// cache closed. Between InitializeForProgram and Finalize (Program), or
// after it to re-pack a weight.
func (c *Cache) Get(k spec.Key, size int, pack func(dst []byte) error) ([]byte, error) {
	if h, hit := c.LookUp(k); hit {
		b, err := c.Bytes(h)
		if !errors.Is(err, ErrCorruptData) {
			return b, err
		}
		// The entry left the index: this look-up misses (reason corrupt)
		// and the packing below replaces it.
		if h, hit := c.LookUp(k); hit {
			return c.Bytes(h)
		}
	}
	dst, err := c.ReserveSpace(size)
	if err != nil {
		return nil, err
	}
	if err := pack(dst); err != nil {
		return nil, fmt.Errorf("cache: pack %s: %w", k.Weight, err)
	}
	h, err := c.LookUpOrInsert(k, dst)
	if err != nil {
		return nil, err
	}
	return c.Bytes(h)
}
