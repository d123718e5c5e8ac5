package runtime

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"time"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/spec"
)

// Cache is what the backend needs of a packed-weight cache: the calls
// XNNPACK's operator creation and ExecuTorch's XNNPACK backend make.
// *cache.Cache satisfies it.
type Cache interface {
	InitializeForProgram(program string) error
	LookUp(k spec.Key) (cache.Handle, bool)
	ReserveSpace(n int) ([]byte, error)
	LookUpOrInsert(k spec.Key, packed []byte) (cache.Handle, error)
	Bytes(h cache.Handle) ([]byte, error)
	Finalize() error
	Save() error
	DeleteProgram(program string) error
}

// Kernel packs FC weights and computes with the packed bytes;
// *kernels.Kernel satisfies it.
type Kernel interface {
	Name() string
	Seed() uint32
	Fingerprint() uint64
	PackedSize(n, kdim int) int
	Pack(dst []byte, n, kdim int, w, bias []float32) error
	Compute(y, x []float32, m int, packed []byte, n, kdim int) error
}

var _ Cache = (*cache.Cache)(nil)

// InitStats counts what Init did for each layer.
type InitStats struct {
	// Hits are layers whose packed weights the cache already held.
	Hits int
	// Packed are layers packed during this Init; PackedBytes their size.
	Packed      int
	PackedBytes int64
	// Private are layers whose packed bytes the backend keeps itself
	// because the cache is off or refused them; FallbackErr is the first
	// cache error that caused it (G8: inference goes on regardless).
	Private     int
	FallbackErr error
	// Repaired are layers whose cached bytes failed their check at their
	// first compute (cache.VerifyOnCompute) and were packed again before
	// that compute; their packing counts in Packed too.
	Repaired int
	// SourceTime is the time spent reading layers' unpacked weights from
	// the program, PackTime packing them into the reserved space (the
	// stores into fresh file pages included), FinalizeTime the cache's
	// Finalize (the commit: data and index synced, commit point written).
	SourceTime, PackTime, FinalizeTime time.Duration
}

// Backend is one initialized program: the XNNPACK delegate of ExecuTorch
// reduced to FC layers. It is not safe for concurrent use.
type Backend struct {
	prog   *Program
	kernel Kernel
	cache  Cache // nil: weights cache disabled

	// handles[i] is layer i's entry in the cache. own[i], non-nil, is
	// layer i's packed bytes kept by the backend instead (no cache, or one
	// that refused): own is allocated at the first such layer, so a warm
	// launch, which keeps none, allocates 16 bytes a layer here, not 40.
	// Each new heap page is a fault in a fresh process
	// (TestWarmInitAllocationBound).
	handles []cache.Handle
	own     [][]byte
	// scratch holds the unpacked source weights of the layer being packed.
	// It is dropped at finalize (G5): the backend holds no source after Init.
	scratchW, scratchB []float32

	stats      InitStats
	state      backendState
	registered bool  // InitializeForProgram was called: Destroy must delete
	inputIdx   []int // producer layer of each layer, -1 = program input
	// seed and fingerprint are the kernel's, part of every key: a kernel
	// computes its seed by hashing its layout.
	seed        uint32
	fingerprint uint64
}

type backendState uint8

const (
	stateCreated backendState = iota
	stateReady
	stateDestroyed
)

// NewBackend prepares p for initialization with kernel k through cache c.
// A nil c disables the weights cache (OptWeightCacheEnabled false).
func NewBackend(p *Program, k Kernel, c Cache) (*Backend, error) {
	if p == nil {
		return nil, ErrNoProgram
	}
	if k == nil {
		return nil, ErrNoKernel
	}
	b := &Backend{prog: p, kernel: k, cache: c, seed: k.Seed(), fingerprint: k.Fingerprint()}
	names := make(map[string]int, p.NumLayers())
	for i, l := range p.layers {
		idx := -1
		if l.Input != "" {
			idx = names[l.Input]
		}
		b.inputIdx = append(b.inputIdx, idx)
		names[l.Name] = i
	}
	return b, nil
}

// Key is the cache identity of layer i packed by the backend's kernel.
func (b *Backend) Key(i int) spec.Key {
	t := b.prog.tensors[i]
	return spec.Key{
		Weight:      t.weight,
		Bias:        t.bias,
		Seed:        b.seed,
		Fingerprint: b.fingerprint,
		Source:      b.prog.SourceDigest(i),
	}
}

// Init looks up or packs every layer's weights and finalizes the cache. Per
// layer it makes the calls XNNPACK's fully-connected operator creation
// makes: LookUp; on a miss ReserveSpace(PackedSize), Pack into it and
// LookUpOrInsert(key, packed); on a hit LookUpOrInsert(key, nil), which
// returns the existing entry (ExecuTorch #18295). Cache failures never fail
// Init: the layer is packed into memory the backend owns (G8).
func (b *Backend) Init() error {
	if b.state != stateCreated {
		return fmt.Errorf("%w: Init called twice or after Destroy", ErrNotInitialized)
	}
	if b.cache != nil {
		if err := b.cache.InitializeForProgram(b.prog.name); err != nil {
			// Misuse of a shared cache (another program mid-init) must not
			// attribute this program's entries to that one: pack privately.
			b.fallback(err)
			b.cache = nil
		} else {
			b.registered = true
		}
	}
	b.handles = make([]cache.Handle, b.prog.NumLayers())
	for i := range b.prog.layers {
		if err := b.initLayer(i); err != nil {
			return err
		}
	}
	b.scratchW, b.scratchB = nil, nil
	if b.cache != nil {
		start := time.Now()
		if err := b.cache.Finalize(); err != nil {
			b.fallback(err)
		}
		b.stats.FinalizeTime = time.Since(start)
	}
	b.state = stateReady
	return nil
}

func (b *Backend) initLayer(i int) error {
	l := b.prog.layers[i]
	size := b.kernel.PackedSize(l.N, l.K)
	if size <= 0 {
		return fmt.Errorf("runtime: layer %q: kernel %s cannot pack %d×%d", l.Name, b.kernel.Name(), l.N, l.K)
	}
	if b.cache == nil {
		own, err := b.pack(i, make([]byte, size))
		b.keep(i, own)
		b.stats.Private++
		return err
	}
	key := b.Key(i)
	if _, ok := b.cache.LookUp(key); ok {
		h, err := b.cache.LookUpOrInsert(key, nil)
		if err == nil {
			b.handles[i] = h
			b.stats.Hits++
			return nil
		}
		b.fallback(err)
	}
	dst, err := b.cache.ReserveSpace(size)
	if err != nil || len(dst) < size {
		b.fallback(err)
		dst = make([]byte, size)
	}
	packed, err := b.pack(i, dst[:size])
	if err != nil {
		return err
	}
	h, err := b.cache.LookUpOrInsert(key, packed)
	if err != nil {
		// The reserved region's fate is the cache's; keep a private copy.
		b.fallback(err)
		b.keep(i, append([]byte(nil), packed...))
		b.stats.Private++
		return nil
	}
	b.handles[i] = h
	return nil
}

// keep records packed as layer i's bytes, kept by the backend, not the cache.
func (b *Backend) keep(i int, packed []byte) {
	if b.own == nil {
		b.own = make([][]byte, len(b.handles))
	}
	b.own[i] = packed
}

// owned returns layer i's bytes if the backend keeps them, else nil.
func (b *Backend) owned(i int) []byte {
	if b.own == nil {
		return nil
	}
	return b.own[i]
}

// pack generates layer i's source weights into the scratch buffers and packs
// them into dst.
func (b *Backend) pack(i int, dst []byte) ([]byte, error) {
	l := b.prog.layers[i]
	if cap(b.scratchW) < l.N*l.K {
		b.scratchW = make([]float32, l.N*l.K)
	}
	if cap(b.scratchB) < l.N {
		b.scratchB = make([]float32, l.N)
	}
	w, bias := b.scratchW[:l.N*l.K], b.scratchB[:l.N]
	start := time.Now()
	b.prog.Weights(i, w, bias)
	read := time.Now()
	b.stats.SourceTime += read.Sub(start)
	if !l.Bias {
		bias = nil
	}
	err := b.kernel.Pack(dst, l.N, l.K, w, bias)
	b.stats.PackTime += time.Since(read)
	if err != nil {
		return nil, fmt.Errorf("runtime: pack layer %q: %w", l.Name, err)
	}
	b.stats.Packed++
	b.stats.PackedBytes += int64(len(dst))
	return dst, nil
}

func (b *Backend) fallback(err error) {
	if err == nil {
		err = errors.New("runtime: cache returned a short buffer")
	}
	if b.stats.FallbackErr == nil {
		b.stats.FallbackErr = err
	}
}

// Stats reports what Init did.
func (b *Backend) Stats() InitStats { return b.stats }

// SourceBytesHeld is the size of the unpacked source buffers the backend
// still references; zero after Init returns (G5).
func (b *Backend) SourceBytesHeld() int { return 4 * (cap(b.scratchW) + cap(b.scratchB)) }

// Result is the outcome of one Run.
type Result struct {
	// Output is the last layer's output, m rows of OutputDim.
	Output []float32
	// Digest is a checksum (CRC-32 and CRC-32C side by side, as
	// sourceDigest) of every layer's output bits in order, so that two runs
	// agree on it only if every layer computed the same bits.
	Digest uint64
}

// Run computes the program on m rows of input x (m × InputDim), reading
// every weight from the packed bytes.
func (b *Backend) Run(x []float32, m int) (*Result, error) {
	if b.state != stateReady {
		return nil, ErrNotInitialized
	}
	if m <= 0 || len(x) != m*b.prog.inputDim {
		return nil, fmt.Errorf("%w: %d values for %d rows of %d", ErrBadInput, len(x), m, b.prog.inputDim)
	}
	outs := make([][]float32, len(b.handles))
	ieee, cast := crc32.NewIEEE(), crc32.New(castagnoli)
	var buf []byte
	for i, l := range b.prog.layers {
		in := x
		if j := b.inputIdx[i]; j >= 0 {
			in = outs[j]
		}
		packed, err := b.packedBytes(i)
		if err != nil {
			return nil, fmt.Errorf("runtime: layer %q: %w", l.Name, err)
		}
		y := make([]float32, m*l.N)
		if err := b.kernel.Compute(y, in, m, packed, l.N, l.K); err != nil {
			return nil, fmt.Errorf("runtime: layer %q: %w", l.Name, err)
		}
		outs[i] = y
		buf = buf[:0]
		for _, v := range y {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
		}
		ieee.Write(buf)
		cast.Write(buf)
	}
	digest := uint64(ieee.Sum32())<<32 | uint64(cast.Sum32())
	return &Result{Output: outs[len(outs)-1], Digest: digest}, nil
}

// packedBytes returns layer i's packed weights for a compute. Under
// cache.VerifyOnCompute the cache checks an entry at its first Bytes; when
// the check fails, the layer is packed again from the program's source (as
// Init packs a miss: through the cache, privately if it refuses), the
// re-pack is saved, and the compute uses the new bytes: no output is
// computed from bytes that failed, or were not given, their check.
func (b *Backend) packedBytes(i int) ([]byte, error) {
	if own := b.owned(i); own != nil {
		return own, nil
	}
	packed, err := b.cache.Bytes(b.handles[i])
	if !errors.Is(err, cache.ErrCorruptData) {
		return packed, err
	}
	b.handles[i] = cache.Handle{}
	err = b.initLayer(i)
	b.scratchW, b.scratchB = nil, nil // no source held after the re-pack (G5)
	if err != nil {
		return nil, err
	}
	b.stats.Repaired++
	if err := b.cache.Save(); err != nil {
		b.fallback(err)
	}
	if own := b.owned(i); own != nil {
		return own, nil
	}
	return b.cache.Bytes(b.handles[i])
}

// Destroy releases the program's cache entries (cache DeleteProgram) and
// every reference the backend holds. The backend cannot be used afterwards.
func (b *Backend) Destroy() error {
	if b.state == stateDestroyed {
		return nil
	}
	b.state = stateDestroyed
	b.handles, b.own, b.scratchW, b.scratchB = nil, nil, nil, nil
	if b.cache == nil || !b.registered {
		return nil
	}
	return b.cache.DeleteProgram(b.prog.name)
}
