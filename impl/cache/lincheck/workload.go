package lincheck

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/spec"
)

// Workload is a seeded concurrent workload. Each client runs Ops steps,
// drawn from its own generator: look up a key and on a miss reserve, pack
// and insert it (XNNPACK's operator creation), reserve space it never uses,
// re-check the bytes of a handle it holds, save, compact, invalidate a
// name, delete a program, initialize a program, finalize. Variants of a
// name differ in their seed (a kernel upgrade, G1), so clients keep
// replacing each other's entries.
type Workload struct {
	Clients  int // 1 … MaxClients
	Ops      int // per client
	Names    int // 1 … MaxNames
	Variants int // 1 … 255
	Programs int // 1 … MaxPrograms
	Seed     uint64
	// Relaunch is the per-cent share of each client's steps that relaunch
	// the process (KindRelaunch); the target must be a Relauncher.
	Relaunch int
	// Second adds a client that is a second process on the same path
	// (KindOpen2, KindLookUp2, KindClose2); the target must be a
	// SecondOpener.
	Second bool
	// PowerLoss is the per-cent share of each client's steps that cut the
	// power (KindPowerLoss); the target must be a PowerCutter. Only
	// RunInterleaved runs it: every call has returned when the power goes,
	// so the history says exactly which commits were promised durable.
	PowerLoss int
}

// Relauncher is a Target whose process can be relaunched (Process).
type Relauncher interface {
	Target
	Relaunch() error
}

// SecondOpener is a Target that can open a second process's instance on
// its path (Process).
type SecondOpener interface {
	Target
	OpenSecond() (*cache.Cache, error)
}

// PowerCutter is a Target whose machine can lose power: PowerLoss drops
// every instance without closing it, keeps what the filesystem had made
// durable and any share of the rest, and starts the process again.
type PowerCutter interface {
	Relauncher
	PowerLoss() error
}

// ErrWorkload is matched by the error of an invalid Workload.
var ErrWorkload = errors.New("lincheck: invalid workload")

func (w Workload) validate() error {
	switch {
	case w.Clients < 1 || w.Clients > MaxClients:
		return fmt.Errorf("%w: %d clients", ErrWorkload, w.Clients)
	case w.Names < 1 || w.Names > MaxNames:
		return fmt.Errorf("%w: %d names", ErrWorkload, w.Names)
	case w.Variants < 1 || w.Variants > 255:
		return fmt.Errorf("%w: %d variants", ErrWorkload, w.Variants)
	case w.Programs < 1 || w.Programs > MaxPrograms:
		return fmt.Errorf("%w: %d programs", ErrWorkload, w.Programs)
	case w.Ops < 0:
		return fmt.Errorf("%w: %d ops", ErrWorkload, w.Ops)
	case w.Relaunch < 0 || w.Relaunch > 100:
		return fmt.Errorf("%w: relaunch share %d%%", ErrWorkload, w.Relaunch)
	case w.PowerLoss < 0 || w.PowerLoss > 100:
		return fmt.Errorf("%w: power-loss share %d%%", ErrWorkload, w.PowerLoss)
	case w.Second && w.Clients+1 > MaxClients:
		return fmt.Errorf("%w: %d clients and a second process", ErrWorkload, w.Clients)
	}
	return nil
}

// Key is the key of name n in variant v.
func Key(n int, v uint8) spec.Key {
	return spec.Key{
		Weight: "w" + strconv.Itoa(n), Bias: "b" + strconv.Itoa(n),
		Seed: 100 + uint32(v), Fingerprint: 0xfeed, Source: 1000 + uint64(n),
	}
}

// Size is the packed size of name n: not page multiples, and some larger
// than a page, so regions span pages and have padding.
func Size(n int) int { return 1000 + 1500*n }

// Pack writes the packing of name n in variant v: deterministic, so equal
// keys have equal bytes and different variants different ones.
func Pack(dst []byte, n int, v uint8) {
	x := uint32(n)*2654435761 ^ uint32(v)*40503 ^ 0x9e3779b9
	for i := range dst {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		dst[i] = byte(x)
	}
}

func programName(q uint8) string { return "p" + strconv.Itoa(int(q)) }

// Run drives t with w from w.Clients goroutines, recording every call in
// rec. It returns the problems found outside the model: a handle whose
// bytes are not its key's packing (G1; a released handle may instead be
// ErrStaleHandle, never another entry's bytes), clients still running when
// ctx ends (their operations stay pending in the history).
//
// Client 0 first initializes program p0, so the committed index is loaded
// before anything else (ModelConfig.Warm). The workload then keeps the
// cache's one contract on callers: Finalize ends packing, so no packer may
// still be writing into reserved space when it runs (it maps that space
// read-only). A reader-writer gate stands for the runtime's serialization:
// packers hold it shared from ReserveSpace until their stores are done,
// Finalize holds it exclusively. Inserts may still run after a Finalize
// that dropped their reservation; the model says what they must return.
func Run(ctx context.Context, t Target, w Workload, rec *Recorder, handles *HandleTable) []error {
	if w.PowerLoss > 0 {
		// A cut with calls in flight would leave commits half done, which
		// the sequential model does not describe (model/conformance and
		// faultinject/crashpoint cut inside commits).
		return []error{fmt.Errorf("%w: power loss runs in RunInterleaved only", ErrWorkload)}
	}
	r, err := newRunner(t, w, rec, handles)
	if err != nil {
		return []error{err}
	}
	r.errOnly(0, Input{Kind: KindInit, Program: 0})

	done := make(chan struct{})
	var wg sync.WaitGroup
	for c := range w.Clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.client(ctx, c)
		}()
	}
	if w.Second {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.secondProcess(ctx, w.Clients)
		}()
	}
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		r.fail(fmt.Errorf("lincheck: clients still running when the run ended: %w", ctx.Err()))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.errs...)
}

// newRunner checks w and that t can do what w asks of it.
func newRunner(t Target, w Workload, rec *Recorder, handles *HandleTable) (*runner, error) {
	if err := w.validate(); err != nil {
		return nil, err
	}
	r := &runner{t: t, w: w, rec: rec, handles: handles}
	if w.Relaunch > 0 {
		if r.relauncher, _ = t.(Relauncher); r.relauncher == nil {
			return nil, fmt.Errorf("%w: relaunches need a Relauncher, not %T", ErrWorkload, t)
		}
	}
	if w.PowerLoss > 0 {
		if r.cutter, _ = t.(PowerCutter); r.cutter == nil {
			return nil, fmt.Errorf("%w: power loss needs a PowerCutter, not %T", ErrWorkload, t)
		}
	}
	if w.Second {
		if r.second, _ = t.(SecondOpener); r.second == nil {
			return nil, fmt.Errorf("%w: a second process needs a SecondOpener, not %T", ErrWorkload, t)
		}
	}
	return r, nil
}

type runner struct {
	t          Target
	relauncher Relauncher
	cutter     PowerCutter
	second     SecondOpener
	// sp is the second process of RunInterleaved, which a power loss
	// takes down with the first.
	sp      *secondProc
	w       Workload
	rec     *Recorder
	handles *HandleTable
	gate    sync.RWMutex
	// life is held exclusively by a relaunch (after gate) and shared by
	// every use of memory an instance mapped outside the gate: an insert
	// reading its packed buffer, a check of a handle's bytes.
	life sync.RWMutex
	// epoch counts relaunches (changed under life held exclusively): a
	// reservation or handle of an earlier epoch belongs to a closed
	// instance, whose mappings are gone and whose addresses a new mapping
	// may reuse, so it is never used again (a runtime never carries one
	// across a relaunch either).
	epoch atomic.Uint64

	mu   sync.Mutex
	errs []error
}

func (r *runner) fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.errs) < 20 {
		r.errs = append(r.errs, err)
	}
}

// held is a handle a client got, with what its bytes must be.
type held struct {
	h     cache.Handle
	name  int
	v     uint8
	epoch uint64
}

func (r *runner) client(ctx context.Context, c int) {
	rng := rand.New(rand.NewPCG(r.w.Seed, uint64(c)))
	var mine []held
	for range r.w.Ops {
		if ctx.Err() != nil {
			return
		}
		if r.w.Relaunch > 0 && rng.IntN(100) < r.w.Relaunch {
			r.relaunch(c)
			mine = nil
			continue
		}
		n := rng.IntN(r.w.Names)
		v := uint8(rng.IntN(r.w.Variants))
		q := uint8(rng.IntN(r.w.Programs))
		switch x := rng.IntN(100); {
		case x < 55:
			if hd, ok := r.lookUpOrPack(c, n, v); ok {
				mine = append(mine, hd)
			}
		case x < 62:
			r.reserveOnly(c, n, v)
		case x < 70 && len(mine) > 0:
			hd := mine[rng.IntN(len(mine))]
			r.checkBytes(hd)
		default:
			in := cacheWideInput(x, n, q)
			if r.w.Second && (in.Kind == KindSave || in.Kind == KindCompact) {
				// They may take the writer lock: never while the second
				// process loads (it holds the gate), whose loader would
				// find it busy where the model says the lock is free.
				r.gate.RLock()
				r.errOnly(c, in)
				r.gate.RUnlock()
				break
			}
			if in.Kind != KindFinalize {
				r.errOnly(c, in)
				break
			}
			// Finalize makes finished reservations read-only; the gate
			// keeps it from running while another client packs.
			r.gate.Lock()
			r.errOnly(c, in)
			r.gate.Unlock()
		}
	}
}

// cacheWideInput maps the upper part of a client's draw (x from the
// threshold on, after the per-name operations) to an operation on the whole
// cache; both runners share it so their operation mixes stay the same.
func cacheWideInput(x, name int, program uint8) Input {
	switch {
	case x < 74:
		return Input{Kind: KindSave}
	case x < 76:
		return Input{Kind: KindCompact}
	case x < 79:
		return Input{Kind: KindInvalidate, Name: name}
	case x < 86:
		return Input{Kind: KindDelete, Program: program}
	case x < 93:
		return Input{Kind: KindInit, Program: program}
	default:
		return Input{Kind: KindFinalize}
	}
}

// lookUpOrPack is XNNPACK's operator creation for one weight.
func (r *runner) lookUpOrPack(c, n int, v uint8) (held, bool) {
	k := Key(n, v)
	epoch := r.epoch.Load()
	p := r.rec.Call(c, Input{Kind: KindLookUp, Name: n, Variant: v})
	h, hit := r.t.LookUp(k)
	p.Return(Output{Hit: hit, Handle: r.handles.Number(h)})
	if hit {
		r.checkBytes(held{h, n, v, epoch})
		return held{h, n, v, epoch}, true
	}
	r.gate.RLock()
	if r.epoch.Load() != epoch {
		// The process that missed was relaunched: its packer is gone,
		// and the new one's reservations follow misses of its own.
		r.gate.RUnlock()
		return held{}, false
	}
	p = r.rec.Call(c, Input{Kind: KindReserve, Name: n})
	buf, err := r.t.ReserveSpace(Size(n))
	p.Return(Output{Err: Classify(err)})
	if err != nil {
		r.gate.RUnlock()
		return held{}, false
	}
	Pack(buf, n, v)
	r.gate.RUnlock()
	// Packing takes long enough in practice for other threads to run
	// (finalize among them); yield so that short histories interleave too.
	runtime.Gosched()

	h, err, ok := r.insert(c, n, v, buf, epoch)
	if !ok || err != nil {
		return held{}, false
	}
	r.checkBytes(held{h, n, v, epoch})
	return held{h, n, v, epoch}, true
}

// insert records and performs the insert of buf, packed with n in v and
// reserved in epoch; ok is false, and nothing is done, if a relaunch came
// in between.
func (r *runner) insert(c, n int, v uint8, buf []byte, epoch uint64) (h cache.Handle, err error, ok bool) {
	r.life.RLock()
	defer r.life.RUnlock()
	if r.epoch.Load() != epoch {
		return h, nil, false
	}
	p := r.rec.Call(c, Input{Kind: KindInsert, Name: n, Variant: v})
	h, err = r.t.LookUpOrInsert(Key(n, v), buf)
	p.Return(Output{Handle: r.handles.Number(h), Err: Classify(err)})
	return h, err, true
}

// errOnly records and performs one of the operations whose only result
// is an error. The call is recorded before the target runs and the return
// after, so the history interval covers the whole operation.
func (r *runner) errOnly(c int, in Input) {
	p := r.rec.Call(c, in)
	var err error
	switch in.Kind {
	case KindSave:
		err = r.t.Save()
	case KindCompact:
		err = r.t.Compact()
	case KindInvalidate:
		err = r.t.Invalidate(Key(in.Name, 0).Weight)
	case KindDelete:
		err = r.t.DeleteProgram(programName(in.Program))
	case KindInit:
		err = r.t.InitializeForProgram(programName(in.Program))
	case KindFinalize:
		err = r.t.Finalize()
	default:
		panic(fmt.Sprintf("lincheck: %v has more results than an error", in.Kind))
	}
	p.Return(Output{Err: Classify(err)})
}

// reserveOnly is a packer that looks name n up and, on a miss, reserves
// space and then fails: the space is written and never inserted. It looks
// up first, as every packer does (XNNPACK reserves only after its look-up
// missed): after Finalize the cache refuses a reservation no miss asked
// for (cache.ErrNoMiss).
func (r *runner) reserveOnly(c, n int, v uint8) {
	epoch := r.epoch.Load()
	p := r.rec.Call(c, Input{Kind: KindLookUp, Name: n, Variant: v})
	h, hit := r.t.LookUp(Key(n, v))
	p.Return(Output{Hit: hit, Handle: r.handles.Number(h)})
	if hit {
		return
	}
	r.gate.RLock()
	defer r.gate.RUnlock()
	if r.epoch.Load() != epoch {
		return // as in lookUpOrPack: the process that missed is gone
	}
	p = r.rec.Call(c, Input{Kind: KindReserve, Name: n})
	buf, err := r.t.ReserveSpace(Size(n))
	p.Return(Output{Err: Classify(err)})
	if err == nil {
		Pack(buf, n, 255)
	}
}

// checkBytes is G1 for handles: a handle's bytes are its key's packing, or
// the handle is stale; never another entry's bytes.
func (r *runner) checkBytes(hd held) {
	r.life.RLock()
	defer r.life.RUnlock()
	if r.epoch.Load() != hd.epoch {
		return // the instance that gave the handle is closed
	}
	r.compareBytes(r.t, hd)
}

// compareBytes is checkBytes on t, whose handle hd is.
func (r *runner) compareBytes(t Target, hd held) {
	b, err := t.Bytes(hd.h)
	if errors.Is(err, cache.ErrStaleHandle) {
		return
	}
	if err != nil {
		r.fail(fmt.Errorf("Bytes(n%d.v%d): %w", hd.name, hd.v, err))
		return
	}
	want := make([]byte, Size(hd.name))
	Pack(want, hd.name, hd.v)
	if !bytes.Equal(b, want) {
		r.fail(fmt.Errorf("Bytes(n%d.v%d): %d bytes differ from the key's packing (G1)", hd.name, hd.v, len(b)))
	}
}

// relaunch relaunches the process and initializes program 0, as a new
// process does first.
func (r *runner) relaunch(c int) { r.restart(c, KindRelaunch, r.relauncher.Relaunch) }

// powerLoss cuts the power and initializes program 0 in the new process.
func (r *runner) powerLoss(c int) { r.restart(c, KindPowerLoss, r.cutter.PowerLoss) }

// restart records kind, runs do (a relaunch or a power cut) and
// initializes program 0, with every other client held off by the gate (a
// packer never writes into space the closed instance unmapped). After a
// power cut the second process's instance died with the machine: it is
// dropped, not closed (a close would be a call the history does not hold).
func (r *runner) restart(c int, kind Kind, do func() error) {
	r.gate.Lock()
	defer r.gate.Unlock()
	r.life.Lock()
	defer r.life.Unlock()
	p := r.rec.Call(c, Input{Kind: kind})
	err := do()
	p.Return(Output{Err: Classify(err)})
	if kind == KindPowerLoss && r.sp != nil && r.sp.c != nil {
		_ = r.sp.c.Close() // on the dead filesystem: releases memory, writes nothing
		r.sp.c = nil
	}
	r.epoch.Add(1)
	r.errOnly(c, Input{Kind: KindInit, Program: 0})
}

// secondProcess is client c as a second process on the same path, for
// w.Ops steps (secondStep).
func (r *runner) secondProcess(ctx context.Context, c int) {
	rng := rand.New(rand.NewPCG(r.w.Seed, uint64(c)))
	var sp secondProc
	defer r.closeSecond(c, &sp)
	for range r.w.Ops {
		if ctx.Err() != nil {
			return
		}
		r.secondStep(rng, c, &sp)
		runtime.Gosched()
	}
}

// secondProc is the second process's instance, nil while closed.
type secondProc struct{ c *cache.Cache }

// secondStep is one step of the second process: open an instance and
// initialize a program (under the gate, so its loader never meets a
// writer taking the lock), or look a name up and check the bytes of a
// hit, or close.
func (r *runner) secondStep(rng *rand.Rand, c int, sp *secondProc) {
	n := rng.IntN(r.w.Names)
	v := uint8(rng.IntN(r.w.Variants))
	q := uint8(rng.IntN(r.w.Programs))
	switch x := rng.IntN(100); {
	case sp.c == nil:
		r.gate.Lock()
		defer r.gate.Unlock()
		p := r.rec.Call(c, Input{Kind: KindOpen2, Program: q})
		sc, err := r.second.OpenSecond()
		if err == nil {
			if err = sc.InitializeForProgram(programName(q)); err != nil {
				_ = sc.Close()
				sc = nil
			}
		}
		p.Return(Output{Err: Classify(err)})
		sp.c = sc
	case x < 85:
		p := r.rec.Call(c, Input{Kind: KindLookUp2, Name: n, Variant: v})
		h, hit := sp.c.LookUp(Key(n, v))
		p.Return(Output{Hit: hit})
		if hit {
			r.compareBytes(sp.c, held{h: h, name: n, v: v})
		}
	default:
		r.closeSecond(c, sp)
	}
}

func (r *runner) closeSecond(c int, sp *secondProc) {
	if sp.c == nil {
		return
	}
	p := r.rec.Call(c, Input{Kind: KindClose2})
	err := sp.c.Close()
	p.Return(Output{Err: Classify(err)})
	sp.c = nil
}
