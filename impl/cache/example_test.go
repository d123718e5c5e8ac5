package cache_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/kernels"
	"github.com/xpwc/xpwc/spec"
)

// One weight, cached: Program brackets the packing (and commits it), Get
// looks the weight up and packs it on a miss, NewKey names it with a
// digest of the unpacked weights, so a changed weight is packed again.
// Run twice, the second run reads the packing from the file.
func Example() {
	dir, _ := os.MkdirTemp("", "xpwc-example")
	defer os.RemoveAll(dir)
	w, b := make([]float32, 64*32), make([]float32, 64) // the model's weights and bias
	k := kernels.NewRegistry().Default()

	for run := 1; run <= 2; run++ {
		c, err := cache.Open(cache.Options{Path: filepath.Join(dir, "model.xpwc")})
		if err != nil {
			panic(err)
		}
		err = c.Program("model", func() error {
			key := cache.NewKey("fc.weight", "fc.bias", k, w, b)
			packed, err := c.Get(key, k.PackedSize(64, 32), func(dst []byte) error {
				return k.Pack(dst, 64, 32, w, b)
			})
			_ = packed // the kernel computes from these bytes
			return err
		})
		if err != nil {
			panic(err)
		}
		fmt.Println(c.Stats().Load, c.Stats().Hits)
		if err := c.Close(); err != nil {
			panic(err)
		}
	}
	// Output:
	// missing 0
	// ok 1
}

// A launch as XNNPACK's operator creation drives the cache: look up each
// weight; on a miss reserve space, pack into it and insert; finalize. The
// second launch (a new Cache on the same path, as a new process would open)
// hits every weight from the file.
func Example_provider() {
	dir, _ := os.MkdirTemp("", "xpwc-example")
	defer os.RemoveAll(dir)
	opts := cache.Options{Path: filepath.Join(dir, "model.xpwc")}
	weights := []spec.Key{
		{Weight: "fc1.weight", Bias: "fc1.bias", Seed: 1, Fingerprint: 7, Source: 42},
		{Weight: "fc2.weight", Bias: "fc2.bias", Seed: 1, Fingerprint: 7, Source: 42},
	}
	for launch := 1; launch <= 2; launch++ {
		c, err := cache.Open(opts)
		if err != nil {
			panic(err)
		}
		_ = c.InitializeForProgram("model")
		for _, k := range weights {
			h, hit := c.LookUp(k)
			if !hit {
				buf, _ := c.ReserveSpace(1024)
				copy(buf, k.Weight) // the packer writes the packed weights here
				h, _ = c.LookUpOrInsert(k, buf)
			}
			packed, _ := c.Bytes(h)
			_ = packed // the kernel reads the packed weights from here
		}
		_ = c.Finalize()
		s := c.Stats()
		fmt.Printf("launch %d: load=%s hits=%d new=%d commits=%d\n", launch, s.Load, s.Hits, s.Repacks[cache.RepackNew], s.Commits)
		_ = c.Close()
	}
	// Output:
	// launch 1: load=missing hits=0 new=2 commits=1
	// launch 2: load=ok hits=2 new=0 commits=0
}
