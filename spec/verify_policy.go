package spec

// VerifyPolicyID is the stable name of a data-verification policy: when a
// cache checks a committed entry's data checksum against its bytes (G1).
// Flags, JSON reports and docs use these names; an ID never changes meaning
// once published.
type VerifyPolicyID string

// The policy IDs, in the order tables list them.
const (
	VerifyOnCompute  VerifyPolicyID = "on-compute"
	VerifyOnFirstUse VerifyPolicyID = "on-first-use"
	VerifyOnLoad     VerifyPolicyID = "on-load"
	VerifyOff        VerifyPolicyID = "off"
)

// VerifyPolicy is one row of the verification-policy table.
type VerifyPolicy struct {
	ID VerifyPolicyID
	// When says at which moment an entry's data is checked.
	When string
	// KeepsNoUncheckedUse tells whether the policy keeps
	// InvNoUncheckedUse (I13) for a checksummed format: every output
	// computed from bytes this instance checked or packed.
	KeepsNoUncheckedUse bool
	Statement           string
}

// VerifyPolicies returns the policy table, a fresh slice each call.
func VerifyPolicies() []VerifyPolicy {
	return []VerifyPolicy{
		{VerifyOnCompute, "at the runtime's first read of an entry's bytes for a compute", true, "Initialization checks nothing: a look-up hands out a handle unchecked, and the first read of its bytes, made right before the compute that uses them, checks them. An entry that fails leaves the index (its next look-up misses with reason corrupt); the runtime re-packs it from the program's source and computes with the new bytes. For runtimes that read packed bytes through the cache right before each compute."},
		{VerifyOnFirstUse, "at the first look-up hit of an entry", true, "The look-up that would hand an entry out checks it first; one that fails is a miss with reason corrupt and is re-packed during initialization. For callers that compute from the pointer a look-up returns (XNNPACK's operators), where the look-up is the last call before the compute."},
		{VerifyOnLoad, "at load, every committed entry", true, "Loading the index checks every entry's data, used or not; entries that fail are dropped and re-packed when looked up. Pays for the whole file at every launch."},
		{VerifyOff, "never", false, "Data is trusted once the index's checksum holds: bytes changed after their commit (bit rot, a stray writer) are computed with. Waives I13 and the data half of G1."},
	}
}

// VerifyPolicyByID looks a policy up; ok is false for an unknown ID.
func VerifyPolicyByID(id VerifyPolicyID) (VerifyPolicy, bool) {
	for _, p := range VerifyPolicies() {
		if p.ID == id {
			return p, true
		}
	}
	return VerifyPolicy{}, false
}
