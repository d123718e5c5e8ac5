package cache

import (
	"cmp"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/spec"
)

// prefaultChunk is how much of a mapping one populate call covers: small
// enough that Close, which waits for the call in flight, is not held up
// for long (about a millisecond), large enough that the calls cost
// nothing beside the faults they take.
const prefaultChunk = 4 << 20

// prefaulter enters the pages of one committed mapping into the page
// tables on a goroutine of its own (unless Options.DisablePrefault). It goes from the
// mapping's end towards its start: a program computes its layers in the
// order they were packed, which is file order, so the two meet once and
// each page is faulted by one of them. The first touch of a warm launch's
// mapping costs more than reading it (docs/benchmarks.md); on a second
// core that cost moves off the path to the first output. Each chunk is
// populated, then loaded from once per page (touchMapped): on a guest whose
// hypervisor shadows its page tables, a populated page still traps at its
// first load (about 1.5 µs per 4 KiB page, "First output on a shadow-paged
// guest" in docs/benchmarks.md), and that trap is what the walk takes off
// the compute's path there.
//
// Unless Options.DisableVerifyAhead, the walk checks the entries' data instead of
// only populating (startVerifyAhead): reading an entry to check it faults
// its pages in as populating would.
type prefaulter struct {
	stop atomic.Bool
	wg   sync.WaitGroup
	// chunks counts the populate calls made; err is the one that ended
	// the walk early, if any. Both are read after wait.
	chunks int
	err    error
	// sum keeps the loads of touchMapped from being optimized away.
	sum uint64
	// ahead is a verifying walk's progress, shared with the compute; nil
	// for a populating walk.
	ahead *aheadWalk
}

// startPrefault starts populating m's first n bytes if m can be populated;
// it returns nil otherwise (nothing is lost but speed).
func startPrefault(m vfs.Mapping, n int) *prefaulter {
	pm, ok := m.(vfs.Populater)
	if !ok || n <= 0 {
		return nil
	}
	p := &prefaulter{}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for end := n; end > 0 && !p.stop.Load(); {
			// Chunks start at multiples of prefaultChunk: page-aligned
			// for every page size up to it.
			off := (end - 1) / prefaultChunk * prefaultChunk
			if err := pm.Populate(off, end-off); err != nil {
				p.err = err
				return
			}
			sum, ok := touchMapped(m.Bytes()[off:end])
			if !ok {
				return
			}
			p.sum += sum
			p.chunks++
			end = off
		}
	}()
	return p
}

// pendingWalk is a walk a load prepared and startWalks starts: a populating
// walk over m's first n bytes, or a verifying walk over the entries ents
// a load made from recs.
type pendingWalk struct {
	m    vfs.Mapping
	n    int
	ents []entry
	recs []spec.Entry
}

// startWalks starts the walks the loads prepared; c.mu is held. A load
// prepares its walks and the program's init starts them when it ends
// (Finalize) or turns to packing (ReserveSpace), not the load itself: a
// walk is for the first inference, and one running beside a warm launch's
// look-ups made them wait for the lock and for the page-table updates its
// faults take (a fresh llama-1184 launch's init_ms, docs/benchmarks.md).
func (c *Cache) startWalks() {
	for _, w := range c.pendingWalks {
		var p *prefaulter
		if w.ents != nil {
			p = c.startVerifyAhead(w.ents, w.recs)
		} else {
			p = startPrefault(w.m, w.n)
		}
		if p != nil {
			c.prefaults = append(c.prefaults, p)
		}
	}
	c.pendingWalks = nil
}

// wait stops the walk after the chunk (or entry) in flight and waits for
// it: the mapping may be unmapped afterwards. The caller must not hold
// c.mu: a verifying walk takes it between entries.
func (p *prefaulter) wait() {
	p.stop.Store(true)
	p.wg.Wait()
}

// aheadWindow bounds how far a verifying walk runs ahead of the compute
// (unless the cache's own aheadWindow is set, by tests): the bytes from
// the first entry the compute has not reached to the end of the entry the
// walk checks, so that the compute may find in cache what the walk just
// read instead of both streaming the file from memory (docs/benchmarks.md). Larger than the largest entry of a
// model layer (about 1 MiB in llama-1184), small beside a last-level cache.
const aheadWindow = 8 << 20

// startVerifyAhead starts checking the data of es, the entries one load
// mapped, in file order a bounded window (aheadWindow) ahead of the
// compute, which computes its layers in that order (not
// Options.DisableVerifyAhead, with VerifyOnCompute on a v3 file). The
// check of each layer then leaves the compute's path as its page faults
// do: the compute's first Bytes of an entry the walk checked finds it
// verified and its bytes in cache. The walk leaves the entry after the
// one the compute reached to the compute: when the compute catches up,
// both cores check, each its own entries (aheadWalk). An entry the
// compute reaches while the walk checks it is checked by both, and
// recorded once: waiting for the walk's check instead measured slower on
// a busy machine, where the walk's thread is often not running
// (docs/benchmarks.md).
//
// The walk records success only. An entry whose bytes do not hold stays
// unchecked, so the compute's own Bytes finds the corruption and the
// runtime re-packs with reason corrupt, as without the walk: what a caller
// sees of a corrupt entry does not depend on which goroutine got to it
// first.
func (c *Cache) startVerifyAhead(ents []entry, recs []spec.Entry) *prefaulter {
	a := newAheadWalk(ents, recs, cmp.Or(c.aheadWindow, aheadWindow))
	if a == nil {
		return nil
	}
	p := &prefaulter{ahead: a}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer a.done.Store(true)
		c.walkAhead(p)
	}()
	return p
}

// walkAhead is the loop of a verifying walk (startVerifyAhead). It
// checks the entries near the compute while they fit in its window, and
// whenever the window is full it checks the last entry not yet checked
// instead, working back from the end of the file: the two ends meet, and
// the walk never waits. Waiting for the compute to move instead (timed
// sleeps) idled the walk's core: the runtime's idle wait lasts at least
// a millisecond however short a sleep is asked for, in which the compute
// ran through the window and went on checking alone (docs/benchmarks.md,
// "Verifying ahead of the compute"). An entry checked from the far end
// is read again from memory by the compute, as a steady inference reads
// it; what the walk saves it there is the check. A compute that never
// comes (its program waits before its first inference, or uses fewer
// entries than the file holds) finds everything checked.
func (c *Cache) walkAhead(p *prefaulter) {
	a := p.ahead
	// Entries from hi on are the far end's, checked already.
	for lo, hi := 0, a.len(); lo < hi && !p.stop.Load(); {
		next, near := a.next(lo)
		if next >= hi {
			return
		}
		i := next
		if near {
			lo = next + 1
		} else {
			lo, hi = next, hi-1
			i = hi
		}
		// An entry without bytes has no pages to fault in, and its
		// check costs the compute nothing.
		if a.span(i).size > 0 && !c.checkAhead(a.entry(i)) {
			return
		}
	}
}

// aheadWalk is what a verifying walk shares with the compute's Bytes: how
// far the compute got, as an index into the walk's entries in file order,
// and the walk's window (aheadWindow, or the cache's own in tests). The entries are those of
// one load, ents, in the order of its records recs (ents[i] was loaded
// from recs[i]), through order when that is not file order. The walk
// reads the records without c.mu: they never change (a refresh that moves
// an entry gives it a new record), so they say where each entry was at its
// load. A warm launch's walk, over a file xpwc wrote (in file order),
// allocates nothing: a list of the entries and a copy of their ranges took
// 28 KiB, 7 fresh pages, a fault each in a fresh process.
type aheadWalk struct {
	ents   []entry
	recs   []spec.Entry
	order  []int32 // nil: ents are in file order
	window int64
	// reached is the index of the last entry the compute asked for (Bytes),
	// -1 before its first; done is set when the walk ended.
	reached atomic.Int64
	done    atomic.Bool
}

// newAheadWalk returns the walk over ents, loaded from recs, with the
// given window, or nil when there is nothing to walk.
func newAheadWalk(ents []entry, recs []spec.Entry, window int64) *aheadWalk {
	if len(ents) == 0 {
		return nil
	}
	a := &aheadWalk{ents: ents, recs: recs, window: window}
	a.reached.Store(-1)
	byOff := func(x, y spec.Entry) int { return cmp.Compare(x.Offset, y.Offset) }
	if !slices.IsSortedFunc(recs, byOff) {
		a.order = make([]int32, len(recs))
		for i := range a.order {
			a.order[i] = int32(i)
		}
		slices.SortStableFunc(a.order, func(x, y int32) int { return byOff(recs[x], recs[y]) })
	}
	return a
}

func (a *aheadWalk) len() int { return len(a.ents) }

// at maps a position in file order to an index into ents and recs.
func (a *aheadWalk) at(i int) int {
	if a.order == nil {
		return i
	}
	return int(a.order[i])
}

// entry is the walk's i-th entry in file order, span its range at load.
func (a *aheadWalk) entry(i int) *entry { return &a.ents[a.at(i)] }
func (a *aheadWalk) span(i int) span {
	r := &a.recs[a.at(i)]
	return span{int64(r.Offset), int64(r.Size)}
}

// next tells the walk, about to check its i-th entry, which to turn to: i
// itself, or a later one when the compute reached i or the entry before
// it (the compute checks its next entry itself then, and the walk takes
// the one after). ok is false while i lies beyond the window (the walk
// turns to the far end); the first entry the walk may take is always
// within it, however large, so that the walk does not leave the compute's
// next entries for the far end because one of them is larger than the
// window.
func (a *aheadWalk) next(i int) (next int, ok bool) {
	r := int(a.reached.Load())
	first := r + 2
	if r < 0 {
		first = 0 // the compute has not started: the walk does
	}
	if i < first {
		return first, true
	}
	return i, i == first || a.span(i).off+a.span(i).size-a.span(r+1).off <= a.window
}

// index returns e's position in the walk, or -1 if the walk does not
// hold e (or a refresh moved it since; c.mu held). Entries without bytes
// may share an offset with the next entry.
func (a *aheadWalk) index(e *entry) int {
	off := e.off()
	i, found := sort.Find(a.len(), func(i int) int { return cmp.Compare(off, a.span(i).off) })
	if !found {
		return -1
	}
	for ; i < a.len() && a.span(i).off == off; i++ {
		if a.entry(i) == e {
			return i
		}
	}
	return -1
}

// reach records that the compute asked for e's bytes (Bytes, c.mu held)
// with every verifying walk holding e.
func (c *Cache) reach(e *entry) {
	for _, p := range c.prefaults {
		a := p.ahead
		if a == nil || a.done.Load() {
			continue
		}
		if i := int64(a.index(e)); i > a.reached.Load() {
			a.reached.Store(i)
		}
	}
}

// checkAhead checks e's data for the walk of startVerifyAhead, the
// checksum outside c.mu so that the compute's calls are not held up by
// it, and records the check if it held and e is still wanted: the
// indexed entry for its name, unchecked. An entry replaced, invalidated or
// dropped by a refresh in between, or checked by the compute meanwhile,
// keeps what it has. An entry's bytes and checksum never change while it
// is indexed (a refresh that finds another copy makes a new entry, in a
// new mapping), so the same indexed entry is the same bytes of the same
// mapping. It reports false once the cache is closed.
func (c *Cache) checkAhead(e *entry) bool {
	c.lockAhead()
	if c.closed {
		c.mu.Unlock()
		return false
	}
	data, want, wanted := e.bytes(), e.crc(), c.wantsAhead(e)
	c.mu.Unlock()
	if !wanted {
		return true
	}
	// The mapping stays mapped while the walk runs: Close waits for it
	// before it unmaps, and a refresh maps anew without unmapping.
	sum, ok := crcMapped(data)
	if c.aheadChecked != nil {
		c.aheadChecked(e)
	}
	c.lockAhead()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	if ok && sum == want && c.wantsAhead(e) {
		e.verified = true
		c.stats.Verified++
		c.stats.VerifiedAhead++
	}
	return true
}

// wantsAhead reports whether the walk should check e: a file entry, the
// current one for its name, not yet checked and not failed.
func (c *Cache) wantsAhead(e *entry) bool {
	return e.indexed && !e.verified && !e.failed && e.place == inFile && c.byName.get(e.key().Weight, e.key().Bias) == e
}

// lockAhead takes c.mu for the walk without parking on it. A goroutine
// parked on a mutex is made runnable on the processor of the goroutine
// that unlocks it, here the compute's, which does not block: on a machine
// whose other core went idle meanwhile the walk then waited for the
// scheduler to move it (measured on llama-1184: the walk checked about
// 130 of 1,184 entries before the compute met it, and the first output
// was no faster than without any walk; docs/benchmarks.md). A waiter held
// over a millisecond also puts the mutex in starvation mode, in which
// the compute's Unlock hands its own time slice to the walk. Yielding
// between tries keeps the walk's core busy and the mutex in normal mode;
// the compute holds the lock only to look an entry up and record its
// check (Bytes checks without it).
func (c *Cache) lockAhead() {
	for !c.mu.TryLock() {
		runtime.Gosched()
	}
}
