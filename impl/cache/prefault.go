package cache

import (
	"sync"
	"sync/atomic"

	"github.com/xpwc/xpwc/impl/vfs"
)

// prefaultChunk is how much of a mapping one populate call covers: small
// enough that Close, which waits for the call in flight, is not held up
// for long (about a millisecond), large enough that the calls cost
// nothing beside the faults they take.
const prefaultChunk = 4 << 20

// prefaulter enters the pages of one committed mapping into the page
// tables on a goroutine of its own (Options.Prefault). It goes from the
// mapping's end towards its start: a program computes its layers in the
// order they were packed, which is file order, so the two meet once and
// each page is faulted by one of them. The first touch of a warm launch's
// mapping costs more than reading it (docs/benchmarks.md); on a second
// core that cost moves off the path to the first output.
type prefaulter struct {
	stop atomic.Bool
	wg   sync.WaitGroup
	// chunks counts the populate calls made; err is the one that ended
	// the walk early, if any. Both are read after wait.
	chunks int
	err    error
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
			p.chunks++
			end = off
		}
	}()
	return p
}

// wait stops the walk after the chunk in flight and waits for it: the
// mapping may be unmapped afterwards.
func (p *prefaulter) wait() {
	p.stop.Store(true)
	p.wg.Wait()
}
