package spec

// GuaranteeID names one guarantee of the reference design (docs/guarantees.md).
// Tests, docs and invariants cite these IDs.
type GuaranteeID string

const (
	G1 GuaranteeID = "G1"
	G2 GuaranteeID = "G2"
	G3 GuaranteeID = "G3"
	G4 GuaranteeID = "G4"
	G5 GuaranteeID = "G5"
	G6 GuaranteeID = "G6"
	G7 GuaranteeID = "G7"
	G8 GuaranteeID = "G8"
)

// Guarantee is one row of the guarantee table.
type Guarantee struct {
	ID        GuaranteeID
	Title     string
	Statement string
}

// Guarantees returns the guarantee table G1–G8, a fresh slice each call so
// no caller can change what another sees.
func Guarantees() []Guarantee {
	return []Guarantee{
		{G1, "correct bytes", "A look-up never hands out packed bytes that differ from what the current kernel would produce from the current source weights: not for a changed seed or fingerprint, changed source data under the same name, torn, truncated or forged file content, nor a corrupted index. Data corrupted after commit is caught when data verification is on."},
		{G2, "atomic commit", "After a save returns success, every later process finds every saved entry, after a process crash and after power loss. A crash at any instant of a save, append or compaction leaves the previous committed index or the new one loadable: never neither, never a mix."},
		{G3, "convergence", "After any invalidation (kernel upgrade, changed source, corruption, version change) at most one launch re-packs; the next launch hits every entry."},
		{G4, "bounded space", "Unload/reload and relaunch with nothing new write nothing. Garbage is counted, and compaction keeps the file within a stated bound of its live bytes."},
		{G5, "memory", "After finalize, packed weights live in clean file-backed pages; a warm launch reserves no new space; unpacked source buffers are released at finalize."},
		{G6, "isolation", "Concurrent threads and processes on one cache path never corrupt the file, never see a torn index and never take a SIGBUS. A program that did not opt in never touches a file. Options handed to a module load are copied; a failed load leaves the module as it was."},
		{G7, "hostile input", "Any file content yields either a valid load or a typed error and a clean rebuild: no panic, no out-of-bounds read, allocation bounded by the file's size."},
		{G8, "graceful fallback", "Any I/O failure (ENOSPC, EIO, mmap failure, lock busy, read-only or missing directory) degrades to heap packing with a recorded reason; inference never fails because of the cache."},
	}
}

// GuaranteeByID looks a guarantee up; ok is false for an unknown ID.
func GuaranteeByID(id GuaranteeID) (Guarantee, bool) {
	for _, g := range Guarantees() {
		if g.ID == id {
			return g, true
		}
	}
	return Guarantee{}, false
}
