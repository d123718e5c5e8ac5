package spec

import "strings"

// NameSeparator joins a weight name and a bias name in a v3 entry name. Tensor
// names never contain NUL, so the join is unambiguous: ExecuTorch's plain
// concatenation made "ab"+"c" and "a"+"bc" (and a bias-less "ab") one entry.
const NameSeparator = "\x00"

// MaxNameLen bounds each of the weight and bias names. Real tensor names are
// short; the bound keeps a hostile file from declaring huge names and lets
// parsers size their checks before allocating.
const MaxNameLen = 1 << 12

// Key is the full identity of one packed weight: which tensors were packed
// (Weight, Bias), by which packed layout (Seed), by which packer behaviour
// (Fingerprint), from which source bytes (Source). A look-up hits only when
// every field is equal (guarantee G1).
type Key struct {
	// Weight is the name of the weight tensor. Unnamed constants are never
	// persisted, so it is never empty in a stored entry.
	Weight string
	// Bias is the name of the bias tensor, empty when the layer has none.
	Bias string
	// Seed identifies the packed layout of the kernel: a hash of its layout
	// parameters and an explicit layout version.
	Seed uint32
	// Fingerprint is a hash of the packer's output on fixed pseudo-random
	// input; it changes when the packer's behaviour changes even if the
	// layout parameters do not. v2 files cannot store it (zero).
	Fingerprint uint64
	// Source identifies the source weights (a digest chosen by the runtime,
	// see docs/format.md for the policy). v2 files cannot store it (zero).
	Source uint64
}

// Name is the v3 entry name: Weight, NameSeparator, Bias.
func (k Key) Name() string { return k.Weight + NameSeparator + k.Bias }

// V2Name is the name ExecuTorch stores: weight and bias names concatenated.
// It is ambiguous (see NameSeparator) and kept only for v2 files.
func (k Key) V2Name() string { return k.Weight + k.Bias }

// SplitName is the inverse of Key.Name. It reports false when name holds no
// separator or more than one.
func SplitName(name string) (weight, bias string, ok bool) {
	weight, bias, ok = strings.Cut(name, NameSeparator)
	if !ok || strings.Contains(bias, NameSeparator) {
		return "", "", false
	}
	return weight, bias, true
}

// ValidTensorName reports whether s may be used as a weight or bias name:
// at most MaxNameLen bytes and free of the separator.
func ValidTensorName(s string) bool {
	return len(s) <= MaxNameLen && !strings.Contains(s, NameSeparator)
}
