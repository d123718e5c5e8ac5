package runtime_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/xpwc/xpwc/impl/runtime"
)

// Two launches of a program against one cache file, as two processes would
// make them: the first packs every layer into the file, the second loads
// it and packs nothing. Verify runs the program from heap packing too and
// compares the outputs bit for bit. Prefault and VerifyAhead are zero in a
// zero LaunchConfig, so a runtime that wants the launch defaults names
// them.
func ExampleLaunch() {
	dir, err := os.MkdirTemp("", "xpwc-runtime-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	prog, err := runtime.Preset(runtime.PresetSmall, 1)
	if err != nil {
		panic(err)
	}
	for launch := 1; launch <= 2; launch++ {
		rep, err := runtime.Launch(context.Background(), runtime.LaunchConfig{
			CachePath: filepath.Join(dir, "model.xpwc"),
			Program:   prog,
			Verify:    true,
		})
		if err != nil {
			panic(err) // an invalid configuration; a cache problem is in rep
		}
		fmt.Printf("launch %d: load=%s packed=%d hits=%d/%d verified=%v\n",
			launch, rep.Load, rep.Packed, rep.Hits, prog.NumLayers(), rep.Verified)
	}
	// Output:
	// launch 1: load=missing packed=4 hits=0/4 verified=true
	// launch 2: load=ok packed=0 hits=4/4 verified=true
}
