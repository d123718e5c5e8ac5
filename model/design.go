package model

import (
	"fmt"

	"github.com/xpwc/xpwc/spec"
)

// Design is a named configuration of the model: the reference design with
// zero or more of its decisions replaced by the decision a historical design
// made. Each switch is the smallest change that reproduces one bug, so a
// variant isolates it.
type Design struct {
	Name string
	// Source is where the behaviour comes from (ExecuTorch PRs, commits).
	Source string
	// Summary says what the design does differently and what goes wrong.
	Summary string
	// Expect lists the invariants the design is known to break; empty for
	// the reference. The explorer's tests require each to be found.
	Expect []spec.InvariantID
	// ExpectNeeds gives, for an expected invariant that some bounds cannot
	// show, the least names and sources a trace breaking it needs (zero
	// fields: no need). A design whose key has no source digest serves a
	// stale packing only after a source change, so one source version can
	// never show its I1; ExpectedAt applies this.
	ExpectNeeds map[spec.InvariantID]Bounds

	// NoIndex: the file is only backing store for mappings; nothing is
	// persisted, every instance truncates the file when it opens it.
	NoIndex bool
	// LoadedFlagOnlyOnLoad: the "cache loaded" flag is set when a load
	// succeeds but not on the fresh-write path, so a later init of the same
	// instance loads (maps) the file again over its own regions.
	LoadedFlagOnlyOnLoad bool
	// NoSeed: the key has no kernel layout identity (v1 files).
	NoSeed bool
	// LoadedRepacksToHeap: an instance that loaded a file sends every
	// reservation to the heap (loaded_from_disk_), so re-packs never reach
	// the file.
	LoadedRepacksToHeap bool
	// TruncateInPlace: an unreadable file is truncated to zero in place
	// (ftruncate(0)) instead of being replaced by rename.
	TruncateInPlace bool
	// BorrowOptions: the module keeps a pointer to the caller's options
	// map and reads it at every program init.
	BorrowOptions bool
	// NoCommitPoint: the index is a trailer written by ftruncate then
	// pwrite at the end of the file, with no checksum: a crash in between
	// leaves no loadable index, and bytes that happen to parse as a trailer
	// are accepted. Without checksums, data is not verified either.
	NoCommitPoint bool

	// IgnoreSource: the key is the names and the layout seed only; a
	// packing of changed source weights under the same names hits
	// (ExecuTorch's name+seed key).
	IgnoreSource bool
	// ReserveBreaksIndex: the trailer at the end of the file is the only
	// commit point and a reservation appends after it, so from a
	// reservation in the file to the next commit the file has no loadable
	// index: an exit or a crash in between loses every committed entry.
	ReserveBreaksIndex bool
	// IdleSaveWrites: an explicit save by an instance that created the
	// file and packed nothing into it writes a trailer with no entries,
	// which a load refuses (ExecuTorch's save guard skips only after a
	// first save).
	IdleSaveWrites bool
	// NoInvalidate: the cache has no per-entry invalidation.
	NoInvalidate bool
	// LockInitToDestroy: the writer lock is taken by an init that does not
	// load (a fresh write) and held until destroy or a crash, not from a
	// reservation to the commit; a loaded instance keeps its shared lock as
	// long as it maps the file, so no process takes the writer lock while
	// one does (ExecuTorch's flock on the descriptor its mapping keeps).
	LockInitToDestroy bool
	// ReinitWithoutLoad: an init of an instance that holds entries (heap
	// packings of a launch that found the lock busy) runs no loader and
	// takes the writer lock when it is free; its first reservation then
	// starts at offset 0, truncating the file in place, and its commit lists
	// only its own packings over the index another process committed
	// (ExecuTorch's heap fall-back re-init, docs/bugs.md section 20).
	ReinitWithoutLoad bool

	// FallbackHits: a look-up hits a heap fall-back packing (made for a
	// busy lock or no path) whatever the launch could write, so while a
	// program holding it stays loaded no launch writes the name to the
	// file (ExecuTorch's look_up finds every packing the instance lists,
	// heap ones included).
	FallbackHits bool

	// CheckAtCompute: the on-compute verification policy
	// (spec.VerifyOnCompute, the runtime's default): a look-up hands out an
	// entry without checking its data, and the first compute that reads it
	// checks it; an entry that fails is re-packed then, after finalize,
	// outside any program's packing, and the output is computed from the
	// new bytes (I13).
	CheckAtCompute bool
	// ComputeUnchecked: under CheckAtCompute, the compute reads the bytes
	// without the check (the read path of the on-compute policy with its
	// check left out).
	ComputeUnchecked bool

	// NoCompaction: commits never rewrite the file to drop garbage (the
	// cache with a negative CompactGarbageRatio). Not a historical design:
	// the conformance harness uses it because the model counts garbage in
	// packings and the cache in bytes, so the two would compact at
	// different moments.
	NoCompaction bool
}

// sameTombCopy reports whether committed record r is the copy tombstone t
// names. A v3 index carries each copy's identity, so an invalidation
// yields to another writer's re-pack of the name; a trailer index
// (NoCommitPoint, the v2 layout) has no room for one, so a tombstone names
// whatever copy of the same key the file lists (docs/guarantees.md, G3;
// the cache's sameCopy).
func (d *Design) sameTombCopy(r, t Rec) bool {
	if d.NoCommitPoint {
		return r.Key() == t.Key()
	}
	return r.Copy() == t
}

// verifies reports whether the design checks data (v3 checksums).
func (d *Design) verifies() bool { return !d.NoCommitPoint }

// checksAtLookUp reports whether a look-up checks the data of an entry
// the instance has not checked (on first use); otherwise the compute does.
func (d *Design) checksAtLookUp() bool { return d.verifies() && !d.CheckAtCompute }

// Designs returns the reference design and the historical variants, in the
// order docs and the explorer's table list them.
func Designs() []Design {
	return []Design{
		{
			Name:    "reference",
			Source:  "xpwc (docs/format.md, docs/cache.md)",
			Summary: "v3: key with seed, fingerprint and source; checksummed commit slots written last; append or replace by rename, never truncate in place; writer lock from first reservation to commit; re-packs of a loaded file go to the file; options copied at module load; data verified at first use.",
		},
		{
			Name:           "on-compute",
			Source:         "xpwc (docs/runtime.md, spec verification policy on-compute)",
			Summary:        "the reference under the on-compute policy: look-ups hand out entries unchecked, the first compute after finalize checks each one; a failed check is re-packed then, under the writer lock, saved, and the output computed from the new bytes.",
			CheckAtCompute: true,
		},
		{
			Name:    "pr19862-no-index",
			Source:  "ExecuTorch PR 19862 (file-backed mmap packing, before PR 19988 added the trailer index)",
			Summary: "packed weights live in a MAP_SHARED file but no index is persisted: every launch truncates the file and re-packs everything, so nothing converges (and the truncation cuts other processes' mappings).",
			Expect:  []spec.InvariantID{spec.InvConverge},
			NoIndex: true,
		},
		{
			Name:                 "pr19988-cache-loaded-flag",
			Source:               "ExecuTorch PR 19988 (cache_loaded_), fixed by PR 20245",
			Summary:              "cache_loaded_ is set only when a load succeeds; after a fresh write the next program init loads the file again and maps the instance's own regions a second time.",
			Expect:               []spec.InvariantID{spec.InvMapOnce},
			LoadedFlagOnlyOnLoad: true,
		},
		{
			Name:    "v1-no-seed",
			Source:  "ExecuTorch cache format v1 (before PR 20170 added per-entry seeds)",
			Summary: "entries are keyed by name alone: after a kernel upgrade changes the packed layout, the old packing is served.",
			Expect:  []spec.InvariantID{spec.InvNoStaleHit},
			NoSeed:  true,
		},
		{
			Name:                "repack-to-heap",
			Source:              "ExecuTorch PR 20833 (loaded_from_disk_), fixed by PR 22183",
			Summary:             "an instance that loaded the file sends every re-pack to the heap: after an upgrade every launch re-packs again and the file never converges.",
			Expect:              []spec.InvariantID{spec.InvConverge},
			LoadedRepacksToHeap: true,
		},
		{
			Name:            "truncate-in-place",
			Source:          "ExecuTorch fresh-write path (ftruncate(0)); SIGBUS reported and fixed for one process by PR 20337",
			Summary:         "an instance that finds the file unreadable truncates it to zero in place while another instance still maps it: the other's next access takes SIGBUS.",
			Expect:          []spec.InvariantID{spec.InvNoSIGBUS},
			TruncateInPlace: true,
		},
		{
			Name:          "borrowed-options",
			Source:        "ExecuTorch Module before PR 19673 (raw pointer to the caller's LoadBackendOptionsMap)",
			Summary:       "the module keeps the caller's options map; after the caller reuses it, a later program init reads whatever is there and opts in or out of the cache file against the load's options.",
			Expect:        []spec.InvariantID{spec.InvOptionsOwned},
			BorrowOptions: true,
		},
		{
			Name:          "no-commit-point",
			Source:        "ExecuTorch v2 trailer (save: ftruncate, pwrite footer, fsync; no checksum)",
			Summary:       "a crash between the truncate and the trailer write leaves no loadable index (every saved entry lost), and weight bytes that happen to parse as a trailer are accepted as an index.",
			Expect:        []spec.InvariantID{spec.InvCommitSurvives, spec.InvNoCorruptHit, spec.InvNoUncheckedUse},
			NoCommitPoint: true,
		},
		{
			Name:    "executorch",
			Source:  "ExecuTorch XNNWeightsCache.cpp as it ships (v2 trailer, PR 20170 seeds, PR 20295 auto-save, PR 20833 loaded_from_disk_)",
			Summary: "v2 trailer as the only commit point (a reservation appends after it, so an exit or crash before the next commit loses the cache) and no checksums; key of names and seed only (a source change hits the old packing); re-packs after a load go to the heap; a refused file is truncated to zero in place; an idle save on a new file writes an empty trailer; no invalidate; no compaction (orphaned re-packs stay); the writer lock held from init to destroy, and an instance that packed to the heap for a busy lock takes it at its next init without loading, truncating the file in place at its first reservation and committing over the other's index.",
			Expect: []spec.InvariantID{spec.InvNoStaleHit, spec.InvNoCorruptHit, spec.InvCommitSurvives, spec.InvConverge,
				spec.InvNoIdleWrite, spec.InvGarbageBounded, spec.InvNoUncheckedUse},
			// The key has no source digest, so a stale hit needs a source
			// change; the writer holds the lock from init to destroy, so a
			// commit is lost after a reservation only when the process packs
			// a name it has not committed, which one name never asks of it.
			ExpectNeeds: map[spec.InvariantID]Bounds{
				spec.InvNoStaleHit:     {Sources: 2},
				spec.InvCommitSurvives: {Names: 2},
			},
			NoCommitPoint:       true,
			LoadedRepacksToHeap: true,
			TruncateInPlace:     true,
			IgnoreSource:        true,
			ReserveBreaksIndex:  true,
			IdleSaveWrites:      true,
			NoInvalidate:        true,
			NoCompaction:        true,
			LockInitToDestroy:   true,
			ReinitWithoutLoad:   true,
			FallbackHits:        true,
		},
		{
			Name:             "compute-unchecked",
			Source:           "xpwc on-compute policy without its check at the read (impl/cache Cache.Bytes)",
			Summary:          "under on-compute, look-ups hand out entries unchecked and the compute reads them without the check: an output is computed from bytes nobody verified, corrupt ones included.",
			Expect:           []spec.InvariantID{spec.InvNoCorruptHit, spec.InvNoUncheckedUse},
			CheckAtCompute:   true,
			ComputeUnchecked: true,
		},
	}
}

// ErrUnknownDesign is returned (wrapped) by DesignByName.
var ErrUnknownDesign = fmt.Errorf("model: unknown design")

// DesignByName looks a design up by its name.
func DesignByName(name string) (Design, error) {
	for _, d := range Designs() {
		if d.Name == name {
			return d, nil
		}
	}
	return Design{}, fmt.Errorf("%w %q", ErrUnknownDesign, name)
}

// ExpectedAt splits d.Expect into the invariants a search within b can show
// and those b is too small for (ExpectNeeds), so that a search at small
// bounds is not failed for a bug it cannot reach.
func (d *Design) ExpectedAt(b Bounds) (reachable, beyond []spec.InvariantID) {
	for _, inv := range d.Expect {
		need, ok := d.ExpectNeeds[inv]
		if ok && (b.Names < need.Names || b.Sources < need.Sources) {
			beyond = append(beyond, inv)
			continue
		}
		reachable = append(reachable, inv)
	}
	return reachable, beyond
}

// Widen returns b grown to what d needs to show every expected invariant.
func (d *Design) Widen(b Bounds) Bounds {
	for _, need := range d.ExpectNeeds {
		b.Names = max(b.Names, need.Names)
		b.Sources = max(b.Sources, need.Sources)
	}
	return b
}
