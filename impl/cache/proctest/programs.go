package proctest

import (
	"errors"
	"fmt"

	"github.com/xpwc/xpwc/impl/runtime"
)

// Programs are the programs children launch:
//   - "a": the small preset;
//   - "b": another graph whose tensor names are disjoint from a's, so a and
//     b share the file without invalidating each other;
//   - "c": the small preset with other source weights: the same names as a
//     with a different source digest, so a and c keep replacing each
//     other's entries (G1, G3).
var Programs = []string{"a", "b", "c"}

// ErrUnknownProgram is returned by Program for a name not in Programs.
var ErrUnknownProgram = errors.New("proctest: unknown program")

// ErrUnknownKernel is returned by RunChild for a kernel name the registry
// does not have.
var ErrUnknownKernel = errors.New("proctest: unknown kernel")

// Kernels are the kernels the process tests alternate: the default f32
// layout and one with another panel width (another seed), so that each
// launch with the other kernel re-packs (G1) and the file keeps changing.
var Kernels = []string{"f32-goi-nr16", "f32-goi-nr8"}

// Program returns the named program.
func Program(name string) (*runtime.Program, error) {
	switch name {
	case "a":
		return runtime.Preset(runtime.PresetSmall, 1)
	case "b":
		return runtime.NewSynthetic("b", 2, []runtime.Layer{
			{Name: "b_in", N: 48, K: 64, Bias: true},
			{Name: "b_mid", Input: "b_in", N: 80, K: 48},
			{Name: "b_out", Input: "b_mid", N: 10, K: 80, Bias: true},
		})
	case "c":
		return runtime.Preset(runtime.PresetSmall, 3)
	}
	return nil, fmt.Errorf("%w: %q", ErrUnknownProgram, name)
}
