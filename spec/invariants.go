package spec

// InvariantID is the stable name of one lifecycle invariant. IDs never change
// meaning once published: scenario files, test names and docs cite them.
type InvariantID string

// The invariant IDs. Each is checked by the model's explorer at every
// transition (model/invariants.go) and, where the real cache exposes what it
// needs, by the conformance harness.
const (
	InvNoStaleHit      InvariantID = "I1-no-stale-hit"
	InvNoCorruptHit    InvariantID = "I2-no-corrupt-hit"
	InvCommitSurvives  InvariantID = "I3-commit-survives"
	InvConverge        InvariantID = "I4-converge"
	InvNoIdleWrite     InvariantID = "I5-no-idle-write"
	InvGarbageBounded  InvariantID = "I6-garbage-bounded"
	InvMapOnce         InvariantID = "I7-map-once"
	InvNoSIGBUS        InvariantID = "I8-no-sigbus"
	InvOptionsOwned    InvariantID = "I9-options-owned"
	InvSingleWriter    InvariantID = "I10-single-writer"
	InvLoadTotal       InvariantID = "I11-load-total"
	InvFallbackNoError InvariantID = "I12-fallback-no-error"
	InvNoUncheckedUse  InvariantID = "I13-no-unverified-compute"
)

// Invariant is one row of the invariant table.
type Invariant struct {
	ID        InvariantID
	Guarantee GuaranteeID
	// Statement says what must hold, in terms of the lifecycle vocabulary.
	Statement string
}

// Invariants returns the invariant table in ID order, a fresh slice each
// call.
func Invariants() []Invariant {
	return []Invariant{
		{InvNoStaleHit, G1, "A look-up hit hands out bytes packed by the kernel the process runs from the source weights its program was initialized with: never a packing from another kernel layout or another source version."},
		{InvNoCorruptHit, G1, "A look-up hit never hands out bytes that differ from what was packed, unless they passed this instance's data check and were changed afterwards (the verification policy checks each entry once per instance)."},
		{InvCommitSurvives, G2, "The index a new process would load, after a process crash and after power loss, is the last commit that became visible: never none while one was made, never a mix. Only a foreign writer scribbling on the index voids this (G7 takes over)."},
		{InvConverge, G3, "A launch that starts after a clean launch of the same program (same kernel, same sources, not blocked by the lock, no invalidation since) hits every entry: no look-up misses and nothing is re-packed."},
		{InvNoIdleWrite, G4, "Finalize, save and invalidate write to the file only when the instance holds something new to commit (a new packing, a packing it dropped); unload/reload and relaunch with nothing new write nothing."},
		{InvGarbageBounded, G4, "After every commit the file's garbage (stale and orphaned packings) is at most its live entries' worth, or one entry when nothing is live: compaction keeps the file bounded."},
		{InvMapOnce, G5, "No process maps one range of the cache file twice: a packing is resident once per process however often the index is loaded."},
		{InvNoSIGBUS, G6, "No live mapping is ever cut short: nothing truncates or overwrites in place a file range any process maps, so no access faults with SIGBUS."},
		{InvOptionsOwned, G6, "Every program initialized by a module uses the options the module was loaded with, whatever the caller does with its own options map afterwards."},
		{InvSingleWriter, G6, "At most one process holds the writer lock, and only the holder has appended data that is not committed yet: appends and commits never interleave."},
		{InvLoadTotal, G7, "Initializing a program succeeds whatever the file holds: a missing, empty, corrupt or forged index is a recorded load outcome followed by a clean rebuild, never an error."},
		{InvFallbackNoError, G8, "Reserve, insert and finalize never fail the runtime: a busy lock or an I/O failure puts the packing on the heap, or leaves the commit pending, with a recorded reason. An explicit save or invalidation may report that it could not commit now, and then only with a recorded reason."},
		{InvNoUncheckedUse, G1, "No output is computed from packed bytes of a checksummed file that this instance neither packed nor checked: the data check of an entry comes before the first compute that reads it (at the look-up under on-first-use, at the compute's read under on-compute, at load under on-load), and an entry that fails is re-packed from the source before that compute. Only the off policy waives it, and formats without data checksums (v2) cannot keep it."},
	}
}

// InvariantByID looks an invariant up; ok is false for an unknown ID.
func InvariantByID(id InvariantID) (Invariant, bool) {
	for _, inv := range Invariants() {
		if inv.ID == id {
			return inv, true
		}
	}
	return Invariant{}, false
}
