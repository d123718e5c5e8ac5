package runtime

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/xpwc/xpwc/impl/runtime/options"
)

// randomOptions builds a valid map of up to MaxBackends backends (one of
// them, sometimes, a valid XNNPACK entry) from r.
func randomOptions(r *rand.Rand) *options.Map {
	var m options.Map
	for i := range r.IntN(options.MaxBackends + 1) {
		id := fmt.Sprintf("B%d-%d", i, r.IntN(1000))
		var opts []options.Option
		for j := range r.IntN(4) {
			key := fmt.Sprintf("k%d", j)
			switch r.IntN(3) {
			case 0:
				opts = append(opts, options.Option{Key: key, Value: options.Bool(r.IntN(2) == 1)})
			case 1:
				opts = append(opts, options.Option{Key: key, Value: options.Int(r.Int64())})
			default:
				opts = append(opts, options.Option{Key: key, Value: options.String(strings.Repeat("v", r.IntN(options.MaxStringLen+1)))})
			}
		}
		if i == 0 && r.IntN(2) == 0 {
			id = XNNPACKBackendID
			opts = []options.Option{{Key: OptWeightCacheEnabled, Value: options.Bool(false)}}
		}
		if err := m.Set(id, opts...); err != nil {
			panic(err)
		}
	}
	return &m
}

// describe renders a map canonically, so two maps compare by content.
func describe(m *options.Map) string {
	var b strings.Builder
	for _, id := range m.Backends() {
		opts, _ := m.Get(id)
		fmt.Fprintf(&b, "%s%v;", id, opts)
	}
	return b.String()
}

// Whatever the caller does to its map after a successful Load, and whatever
// failed loads follow, the module's options stay those of the successful
// Load (G6, ExecuTorch PR 19673).
func TestModuleOptionsOwnershipProperty(t *testing.T) {
	properties := gopter.NewProperties(nil)
	properties.Property("caller mutations and failed loads never reach the module", prop.ForAll(func(seed uint64, steps int) string {
		r := rand.New(rand.NewPCG(seed, 0))
		m := testModule(t)
		caller := randomOptions(r)
		if err := m.Load(caller); err != nil {
			return "load: " + err.Error()
		}
		want := describe(caller)
		for range steps {
			switch r.IntN(4) {
			case 0:
				caller.Clear()
			case 1:
				*caller = *randomOptions(r)
			case 2:
				if caller.Set(XNNPACKBackendID, options.Option{Key: OptPackedCachePath, Value: options.Int(1)}) != nil {
					break // the map is full of other backends
				}
				if m.Load(caller) == nil {
					return "a load with a wrongly typed option succeeded"
				}
			default:
				bad := randomOptions(r)
				if bad.Set(XNNPACKBackendID, options.Option{Key: "no_such_key", Value: options.Bool(true)}) != nil {
					break
				}
				if m.Load(bad) == nil {
					return "a load with an unknown key succeeded"
				}
			}
			if got := describe(m.Options()); got != want {
				return fmt.Sprintf("module options changed:\n got %s\nwant %s", got, want)
			}
		}
		return ""
	}, gen.UInt64(), gen.IntRange(1, 20)))
	properties.TestingRun(t)
}
