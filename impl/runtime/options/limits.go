// Package options holds the backend-options map a module load takes: up to
// MaxBackends backends, each with a list of keyed bool, int or string values.
// It mirrors ExecuTorch's LoadBackendOptionsMap (runtime/backend/options.h)
// but enforces that type's fixed-array limits as typed errors instead of
// truncating, and owns its contents so that copies are deep by construction.
package options

// The limits are the capacities of ExecuTorch's fixed arrays minus the NUL
// terminator, so that any map accepted here survives the trip into an
// ExecuTorch runtime byte for byte.
const (
	// MaxBackends is the number of backend entries a map holds
	// (LoadBackendOptionsMap's array of 8).
	MaxBackends = 8

	// MaxBackendIDLen is the longest backend id: ExecuTorch stores it in
	// char[64] and rejects strlen(id) >= 64.
	MaxBackendIDLen = 63

	// MaxKeyLen is the longest option key. ExecuTorch's key array is
	// char[kMaxOptionKeyLength = 64]; its check accepted strlen <= 64 but it
	// copied at most 63 bytes, so a 64-byte key was silently cut to 63 and
	// then matched (or failed to match) a different key. 63 is the longest key
	// that is stored unchanged, so that is the bound enforced here.
	MaxKeyLen = 63

	// MaxStringLen is the longest string value: char[kMaxOptionValueLength =
	// 256] with its NUL. ExecuTorch's set_option(key, const char*) copied at
	// most 255 bytes and dropped the rest without a word; a cache path cut
	// that way names another file.
	MaxStringLen = 255
)
