package cache

import (
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/faultinject/corrupt"
	"github.com/xpwc/xpwc/spec"
)

// aheadKeys are the n keys of aheadFile, in the order they were packed
// (file order).
func aheadKeys(n int) []spec.Key {
	ks := make([]spec.Key, n)
	for i := range ks {
		w := "w" + strconv.Itoa(i)
		ks[i] = spec.Key{Weight: w, Bias: w + "_b", Seed: 1, Fingerprint: 1, Source: 1}
	}
	return ks
}

// aheadBytes is the packing of key i: 20 KiB, so an entry spans pages.
func aheadBytes(i int, b []byte) {
	for j := range b {
		b[j] = byte(i*7 + j)
	}
}

// aheadFile packs n entries into a new v3 file and commits it.
func aheadFile(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "weights.xpwc")
	c, err := Open(Options{Path: path, Format: spec.FormatV3})
	require.NoError(t, err)
	require.NoError(t, c.InitializeForProgram("P"))
	for i, k := range aheadKeys(n) {
		_, hit := c.LookUp(k)
		require.False(t, hit)
		buf, err := c.ReserveSpace(20 << 10)
		require.NoError(t, err)
		aheadBytes(i, buf)
		_, err = c.LookUpOrInsert(k, buf)
		require.NoError(t, err)
	}
	require.NoError(t, c.Finalize())
	require.NoError(t, c.Close())
	return path
}

// openAhead opens path as a warm launch with the walk on (Prefault,
// VerifyAhead, VerifyOnCompute unless policy says otherwise), hook set
// before the load, and looks every key up: the handles, in file order.
func openAhead(t *testing.T, path string, n int, policy VerifyPolicy, hook func(*entry)) (*Cache, []Handle) {
	t.Helper()
	c, err := Open(Options{Path: path, Format: spec.FormatV3, VerifyData: policy})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	c.aheadChecked = hook
	require.NoError(t, c.InitializeForProgram("P"))
	hs := make([]Handle, n)
	for i, k := range aheadKeys(n) {
		h, hit := c.LookUp(k)
		if policy != VerifyOnFirstUse || hit {
			require.True(t, hit, "key %d", i)
		}
		hs[i] = h
	}
	beginWalks(c)
	return c, hs
}

// beginWalks starts the walks the load prepared, as the end of the
// program's look-ups does (Finalize, or a ReserveSpace), with the program
// left open for the test's own calls.
func beginWalks(c *Cache) {
	c.mu.Lock()
	c.startWalks()
	c.mu.Unlock()
}

// A load prepares its walks and the program's init starts them when its
// look-ups end: at Finalize, or at the first ReserveSpace (a packing
// follows, which the walk runs beside). None runs beside the look-ups of
// a warm launch, where it only held them up (docs/benchmarks.md).
func TestWalksStartWhenInitEnds(t *testing.T) {
	const n = 6
	path := aheadFile(t, n)
	for _, trigger := range []string{"finalize", "reserve"} {
		t.Run(trigger, func(t *testing.T) {
			c, err := Open(Options{Path: path, Format: spec.FormatV3, VerifyData: VerifyOnCompute})
			require.NoError(t, err)
			defer func() { require.NoError(t, c.Close()) }()
			require.NoError(t, c.InitializeForProgram("P"))
			for _, k := range aheadKeys(n) {
				_, hit := c.LookUp(k)
				require.True(t, hit)
			}
			c.mu.Lock()
			started, pending := len(c.prefaults), len(c.pendingWalks)
			c.mu.Unlock()
			require.Zero(t, started, "a walk started during the look-ups")
			require.Equal(t, 1, pending)
			switch trigger {
			case "finalize":
				require.NoError(t, c.Finalize())
			case "reserve":
				_, hit := c.LookUp(spec.Key{Weight: "new", Seed: 1, Fingerprint: 1, Source: 1})
				require.False(t, hit)
				_, err := c.ReserveSpace(64)
				require.NoError(t, err)
			}
			waitWalks(c)
			require.Equal(t, uint64(n), c.Stats().VerifiedAhead)
			c.mu.Lock()
			require.Empty(t, c.pendingWalks)
			c.mu.Unlock()
			if trigger == "reserve" {
				require.NoError(t, c.Finalize())
			}
		})
	}
}

// waitWalks waits for the walks c started to end on their own.
func waitWalks(c *Cache) {
	c.mu.Lock()
	ps := slices.Clone(c.prefaults)
	c.mu.Unlock()
	for _, p := range ps {
		p.wg.Wait()
	}
}

// The walk checks every entry in file order, counted as checks (Verified,
// VerifiedAhead); the compute's Bytes then checks none of them again.
// Under another policy than on-compute the walk only populates and checks
// nothing.
func TestVerifyAheadChecksOnceInFileOrder(t *testing.T) {
	const n = 40
	path := aheadFile(t, n)
	var offs []int64
	c, hs := openAhead(t, path, n, VerifyOnCompute, func(e *entry) { offs = append(offs, e.off()) })
	waitWalks(c)
	st := c.Stats()
	require.Equal(t, uint64(n), st.VerifiedAhead)
	require.Equal(t, uint64(n), st.Verified)
	require.Len(t, offs, n)
	require.True(t, slices.IsSorted(offs), "walk not in file order: %v", offs)
	want := make([]byte, 20<<10)
	for i, h := range hs {
		got, err := c.Bytes(h)
		require.NoError(t, err)
		aheadBytes(i, want)
		require.Equal(t, want, got, "entry %d", i)
	}
	st = c.Stats()
	require.Equal(t, uint64(n), st.Verified, "the compute checked again what the walk checked")
	require.Zero(t, st.Corrupt)

	for _, pol := range []VerifyPolicy{VerifyOff, VerifyOnFirstUse} {
		c, _ := openAhead(t, path, n, pol, nil)
		waitWalks(c)
		require.Zero(t, c.Stats().VerifiedAhead, "%v", pol)
	}
}

// The walk checks the entries near the compute while they fit in its
// window (three entries here), and whenever the window is full the last
// unchecked entry instead, from the end of the file back: it never waits
// for the compute, and the two ends meet. The walk is held inside each
// check while the test moves the compute, so the order is exact.
func TestVerifyAheadTurnsToTheEndWhenTheWindowIsFull(t *testing.T) {
	const n, size = 12, 20 << 10
	path := aheadFile(t, n)
	checked, gate, ended := make(chan string), make(chan struct{}), make(chan struct{})
	c, err := Open(Options{Path: path, Format: spec.FormatV3, VerifyData: VerifyOnCompute})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	t.Cleanup(func() { close(ended) }) // first: a failed test lets the walk go
	c.aheadWindow = 3 * size
	c.aheadChecked = func(e *entry) {
		select {
		case checked <- e.key().Weight:
			select {
			case <-gate:
			case <-ended:
			}
		case <-ended:
		}
	}
	require.NoError(t, c.InitializeForProgram("P"))
	hs := make([]Handle, n)
	for i, k := range aheadKeys(n) {
		h, hit := c.LookUp(k)
		require.True(t, hit)
		hs[i] = h
	}
	beginWalks(c)
	// compute[i] are the entries the compute asks for while the walk is
	// held in its check of want[i].
	want := []int{0, 1, 2, 11, 3, 10, 4, 5, 9, 8, 7, 6}
	compute := map[int][]int{3: {0}, 5: {1, 2}}
	for step, w := range want {
		select {
		case got := <-checked:
			require.Equal(t, "w"+strconv.Itoa(w), got, "check %d of %v", step, want)
		case <-time.After(10 * time.Second):
			t.Fatalf("check %d of %v: the walk waits for the compute", step, want)
		}
		for _, i := range compute[step] {
			_, err := c.Bytes(hs[i])
			require.NoError(t, err)
		}
		gate <- struct{}{}
	}
	waitWalks(c)
	for _, h := range hs {
		_, err := c.Bytes(h)
		require.NoError(t, err)
	}
	st := c.Stats()
	require.Equal(t, uint64(n), st.VerifiedAhead)
	require.Equal(t, uint64(n), st.Verified, "the compute checked again what the walk checked")
}

// A compute racing the walk gets no byte that was not checked: whoever
// reaches an entry first checks it, the compute repeats a check the walk
// has in flight, each entry's check is counted once, and a
// corrupt entry is reported to the compute whichever goroutine met it. The
// walk is slowed at random entries so that the two overtake each other.
func TestVerifyAheadRaceGivesOnlyCheckedBytes(t *testing.T) {
	const n = 64
	path := aheadFile(t, n)
	ks := aheadKeys(n)
	rot := []int{3, 17, 40}
	for _, i := range rot {
		require.NoError(t, corrupt.RotEntry(path, func(k spec.Key) bool { return k == ks[i] }))
	}
	for round := range 4 {
		slow := round
		c, hs := openAheadWindow(t, path, n, int64(4+round)*(20<<10), func(e *entry) {
			if len(e.key().Weight)%3 == slow%3 {
				time.Sleep(200 * time.Microsecond)
			}
		})
		want := make([]byte, 20<<10)
		for i, h := range hs {
			got, err := c.Bytes(h)
			if slices.Contains(rot, i) {
				require.ErrorIs(t, err, ErrCorruptData, "entry %d", i)
				continue
			}
			require.NoError(t, err, "entry %d", i)
			c.mu.Lock()
			e := c.handles.get(h.id)
			verified, failed := e.verified, e.failed
			c.mu.Unlock()
			require.True(t, verified && !failed, "entry %d served unchecked", i)
			aheadBytes(i, want)
			require.Equal(t, want, got, "entry %d", i)
		}
		waitWalks(c)
		st := c.Stats()
		require.Equal(t, uint64(n), st.Verified, "round %d: checks counted more than once", round)
		require.Equal(t, uint64(len(rot)), st.Corrupt)
	}
}

// openAheadWindow is openAhead under VerifyOnCompute with the walk's
// window set.
func openAheadWindow(t *testing.T, path string, n int, window int64, hook func(*entry)) (*Cache, []Handle) {
	t.Helper()
	c, err := Open(Options{Path: path, Format: spec.FormatV3, VerifyData: VerifyOnCompute})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	c.aheadChecked, c.aheadWindow = hook, window
	require.NoError(t, c.InitializeForProgram("P"))
	hs := make([]Handle, n)
	for i, k := range aheadKeys(n) {
		h, hit := c.LookUp(k)
		require.True(t, hit, "key %d", i)
		hs[i] = h
	}
	beginWalks(c)
	return c, hs
}

// A corrupt entry the walk reaches first is left unchecked: the compute's
// first Bytes finds it (ErrCorruptData), its look-up misses with reason
// corrupt and the re-pack is counted so, exactly as without the walk.
func TestVerifyAheadLeavesCorruptionToCompute(t *testing.T) {
	const n = 24
	path := aheadFile(t, n)
	rot := []int{0, n / 2, n - 1}
	ks := aheadKeys(n)
	for _, i := range rot {
		require.NoError(t, corrupt.RotEntry(path, func(k spec.Key) bool { return k == ks[i] }))
	}
	c, hs := openAhead(t, path, n, VerifyOnCompute, nil)
	waitWalks(c)
	st := c.Stats()
	require.Equal(t, uint64(n-len(rot)), st.VerifiedAhead)
	require.Zero(t, st.Corrupt, "the walk recorded a failed check")
	for i, h := range hs {
		_, err := c.Bytes(h)
		if slices.Contains(rot, i) {
			require.ErrorIs(t, err, ErrCorruptData, "entry %d", i)
		} else {
			require.NoError(t, err, "entry %d", i)
		}
	}
	st = c.Stats()
	require.Equal(t, uint64(len(rot)), st.Corrupt)
	require.Equal(t, uint64(n), st.Verified)
	for _, i := range rot {
		_, hit := c.LookUp(ks[i])
		require.False(t, hit)
		buf, err := c.ReserveSpace(20 << 10)
		require.NoError(t, err)
		aheadBytes(i, buf)
		_, err = c.LookUpOrInsert(ks[i], buf)
		require.NoError(t, err)
	}
	require.Equal(t, uint64(len(rot)), c.Stats().Repacks[RepackCorrupt])
	require.NoError(t, c.Finalize())
	require.NoError(t, c.Check())
}

// A check the walk made of an entry that was invalidated or replaced
// while the checksum ran is not recorded: the walk is held after its
// first checksum (of the first entry) while the test drops that entry.
func TestVerifyAheadDiscardsDroppedEntry(t *testing.T) {
	const n = 8
	path := aheadFile(t, n)
	head := aheadKeys(n)[0]
	for _, drop := range []string{"invalidated", "replaced"} {
		t.Run(drop, func(t *testing.T) {
			inside, gate := make(chan *entry, 1), make(chan struct{})
			release := sync.OnceFunc(func() { close(gate) })
			first := true
			c, _ := openAhead(t, path, n, VerifyOnCompute, func(e *entry) {
				if first {
					first = false
					inside <- e
					<-gate
				}
			})
			t.Cleanup(release) // before Close, which waits for the walk
			e := <-inside
			require.Equal(t, head, *e.key())
			switch drop {
			case "invalidated":
				require.NoError(t, c.Invalidate(head.Weight))
			case "replaced":
				buf, err := c.ReserveSpace(20 << 10)
				require.NoError(t, err)
				aheadBytes(99, buf)
				_, err = c.LookUpOrInsert(head, buf)
				require.NoError(t, err)
			}
			release()
			waitWalks(c)
			st := c.Stats()
			require.Equal(t, uint64(n-1), st.VerifiedAhead, "the check of a dropped entry was recorded")
			c.mu.Lock()
			verified := e.verified
			c.mu.Unlock()
			require.False(t, verified)
			if drop == "replaced" {
				// The replacement was never committed: Close says so.
				require.ErrorIs(t, c.Close(), ErrUncommitted)
			}
		})
	}
}

// Close during the walk waits for the entry in flight (the walk takes the
// cache's lock to record it, so Close must not hold it meanwhile), records
// nothing after, and unmaps only then.
func TestCloseDuringVerifyAhead(t *testing.T) {
	const n = 8
	path := aheadFile(t, n)
	inside, gate := make(chan struct{}, 1), make(chan struct{})
	first := true
	c, err := Open(Options{Path: path, Format: spec.FormatV3, VerifyData: VerifyOnCompute})
	require.NoError(t, err)
	c.aheadChecked = func(*entry) {
		if first {
			first = false
			inside <- struct{}{}
			<-gate
		}
	}
	require.NoError(t, c.InitializeForProgram("P"))
	require.NoError(t, c.Finalize()) // the walk starts when the init ends
	select {
	case <-inside:
	case <-time.After(10 * time.Second):
		t.Fatal("no check after a load with VerifyAhead")
	}
	closed := make(chan error)
	go func() { closed <- c.Close() }()
	select {
	case <-closed:
		t.Fatal("Close returned while the walk was checking an entry")
	case <-time.After(50 * time.Millisecond):
	}
	close(gate)
	select {
	case err := <-closed:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return after the walk's entry: deadlock with the walk")
	}
	require.Zero(t, c.Stats().VerifiedAhead, "a check was recorded after Close")
	require.Nil(t, c.maps, "Close left mappings")
	_, err = c.Bytes(Handle{cache: c.tag, id: 1})
	require.True(t, errors.Is(err, ErrClosed))
}

// An entry without bytes is not walked: it has no pages to fault in, and
// its check costs the compute nothing. VerifiedAhead counts the entries
// with bytes; the empty one is checked at its first Bytes.
func TestVerifyAheadSkipsEmptyEntries(t *testing.T) {
	const n = 3
	path := filepath.Join(t.TempDir(), "weights.xpwc")
	empty := spec.Key{Weight: "empty", Bias: "empty_b", Seed: 1, Fingerprint: 1, Source: 1}
	w, err := Open(Options{Path: path, Format: spec.FormatV3})
	require.NoError(t, err)
	require.NoError(t, w.InitializeForProgram("P"))
	for i, k := range aheadKeys(n) {
		buf, err := w.ReserveSpace(20 << 10)
		require.NoError(t, err)
		aheadBytes(i, buf)
		_, err = w.LookUpOrInsert(k, buf)
		require.NoError(t, err)
	}
	buf, err := w.ReserveSpace(1)
	require.NoError(t, err)
	_, err = w.LookUpOrInsert(empty, buf[:0])
	require.NoError(t, err)
	require.NoError(t, w.Finalize())
	require.NoError(t, w.Close())

	c, _ := openAhead(t, path, n, VerifyOnCompute, nil)
	waitWalks(c)
	require.Equal(t, uint64(n), c.Stats().VerifiedAhead)
	h, hit := c.LookUp(empty)
	require.True(t, hit)
	got, err := c.Bytes(h)
	require.NoError(t, err)
	require.Empty(t, got)
	require.Equal(t, uint64(n+1), c.Stats().Verified, "the empty entry checked by the compute")
}

// The compute's check (Bytes under VerifyOnCompute) runs without the
// cache's lock, so that the walk can record its own checks meanwhile, and
// records its outcome once: while the first Bytes of an entry is between
// its checksum and its record, the lock is free, and a second Bytes of the
// same entry, made then, checks it again but the check is counted once.
// Bytes returns the entry's bytes only after its check held, and a corrupt
// entry checked this way is still reported and dropped.
func TestComputeCheckOutsideLock(t *testing.T) {
	const n = 4
	path := aheadFile(t, n)
	ks := aheadKeys(n)
	require.NoError(t, corrupt.RotEntry(path, func(k spec.Key) bool { return k == ks[2] }))
	c, err := Open(Options{Path: path, Format: spec.FormatV3, VerifyData: VerifyOnCompute, DisablePrefault: true})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	require.NoError(t, c.InitializeForProgram("P"))
	hs := make([]Handle, n)
	for i, k := range ks {
		h, hit := c.LookUp(k)
		require.True(t, hit)
		hs[i] = h
	}
	var free, nested []bool
	c.computeChecked = func(e *entry) {
		locked := c.mu.TryLock()
		free = append(free, locked)
		if !locked {
			return
		}
		c.mu.Unlock()
		if len(nested) == 0 {
			// A second Bytes of the same entry while the first is between
			// its checksum and its record.
			nested = append(nested, true)
			b, err := c.Bytes(hs[0])
			require.NoError(t, err)
			want := make([]byte, 20<<10)
			aheadBytes(0, want)
			require.Equal(t, want, b)
		}
	}
	b, err := c.Bytes(hs[0])
	require.NoError(t, err)
	want := make([]byte, 20<<10)
	aheadBytes(0, want)
	require.Equal(t, want, b)
	require.Equal(t, []bool{true, true}, free, "Bytes held the cache's lock over its checksum")
	require.Equal(t, uint64(1), c.Stats().Verified, "one entry's checks counted more than once")

	_, err = c.Bytes(hs[2])
	require.ErrorIs(t, err, ErrCorruptData)
	_, err = c.Bytes(hs[2])
	require.ErrorIs(t, err, ErrCorruptData, "a failed entry served on its second Bytes")
	st := c.Stats()
	require.Equal(t, uint64(1), st.Corrupt)
	require.Equal(t, uint64(2), st.Verified)
	_, hit := c.LookUp(ks[2])
	require.False(t, hit, "a corrupt entry stayed indexed")
}

// Close while a Bytes is checking an entry without the lock waits for the
// checksum before it unmaps the bytes under it, and the Bytes then
// reports ErrClosed instead of the bytes.
func TestCloseDuringComputeCheck(t *testing.T) {
	const n = 2
	path := aheadFile(t, n)
	c, err := Open(Options{Path: path, Format: spec.FormatV3, VerifyData: VerifyOnCompute, DisablePrefault: true})
	require.NoError(t, err)
	require.NoError(t, c.InitializeForProgram("P"))
	h, hit := c.LookUp(aheadKeys(n)[0])
	require.True(t, hit)
	inside, gate := make(chan struct{}), make(chan struct{})
	c.computeChecked = func(*entry) {
		close(inside)
		<-gate
	}
	got := make(chan error)
	go func() {
		_, err := c.Bytes(h)
		got <- err
	}()
	<-inside
	closed := make(chan error)
	go func() { closed <- c.Close() }()
	select {
	case <-closed:
		t.Fatal("Close returned while Bytes was checking mapped bytes")
	case <-time.After(50 * time.Millisecond):
	}
	close(gate)
	require.ErrorIs(t, <-got, ErrClosed)
	select {
	case err := <-closed:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return after the check")
	}
	require.Nil(t, c.maps, "Close left mappings")
}

// TestComputeCheckOfAReleasedEntry: an entry released while Bytes checks
// it with the lock released (its weight invalidated, its program deleted
// by another thread) is a stale handle when Bytes takes the lock back,
// never empty bytes with no error (found by TestLinearizableRelaunch: "0
// bytes differ from the key's packing").
func TestComputeCheckOfAReleasedEntry(t *testing.T) {
	const n = 2
	path := aheadFile(t, n)
	ks := aheadKeys(n)
	c, err := Open(Options{Path: path, Format: spec.FormatV3, VerifyData: VerifyOnCompute, DisablePrefault: true})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	require.NoError(t, c.InitializeForProgram("P"))
	h, hit := c.LookUp(ks[0])
	require.True(t, hit)
	require.NoError(t, c.Finalize())
	c.computeChecked = func(*entry) {
		require.NoError(t, c.Invalidate(ks[0].Weight))
		require.NoError(t, c.DeleteProgram("P"))
	}
	b, err := c.Bytes(h)
	require.ErrorIs(t, err, ErrStaleHandle, "got %d bytes", len(b))
}

// A walk takes its entries in file order whatever the order of the
// records they were loaded from (a refresh adds them in map order), and
// finds each entry's position from its offset, also among entries without
// bytes that share an offset with the next one. Without the sort the
// positions were out of order; a search that stopped at the first entry
// of an offset lost the entries after it.
func TestAheadWalkInFileOrder(t *testing.T) {
	// Offsets, sorted: 0, 0 (empty), 100 (empty), 100, 300.
	offs := []uint64{100, 0, 300, 100, 0}
	sizes := []uint64{0, 100, 50, 200, 0}
	recs := make([]spec.Entry, len(offs))
	ents := make([]entry, len(offs))
	for i := range recs {
		recs[i] = spec.Entry{Key: spec.Key{Weight: strconv.Itoa(i)}, Offset: offs[i], Size: sizes[i]}
		ents[i].rec = &recs[i]
	}
	a := newAheadWalk(ents, recs, 1<<20)
	require.Equal(t, len(recs), a.len())
	var got []int64
	for i := range a.len() {
		got = append(got, a.span(i).off)
		require.Equal(t, int64(a.entry(i).rec.Size), a.span(i).size, "position %d", i)
		require.Equal(t, i, a.index(a.entry(i)), "position of %s", a.entry(i).rec.Key.Weight)
	}
	require.True(t, slices.IsSorted(got), "offsets %v", got)
	require.Equal(t, -1, a.index(&entry{rec: &spec.Entry{Offset: 100}}), "an entry the walk does not hold")
	require.Equal(t, -1, a.index(&entry{rec: &spec.Entry{Offset: 50}}))

	inOrder := newAheadWalk(ents[1:2], recs[1:2], 1<<20)
	require.Nil(t, inOrder.order, "records in file order need no order of their own")
	require.Nil(t, newAheadWalk(nil, nil, 1<<20))
}
