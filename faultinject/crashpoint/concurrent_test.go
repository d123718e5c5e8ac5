package crashpoint

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/faultinject/crashfs"
	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/spec"
)

// Several processes (caches on one crashfs, each with its own open file
// descriptions and locks) launch at once, each with its own kernel version
// of one model, so they keep replacing each other's entries and compacting.
// No launch may see a wrong byte (G1, G6), and after crashes of both kinds
// the file recovers in one launch (G3).
func TestConcurrentProcessesThenCrash(t *testing.T) {
	for _, format := range []spec.Format{spec.FormatV3, spec.FormatV2} {
		fsys := crashfs.New(crashfs.Options{})
		require.NoError(t, fsys.MkdirAll(Dir))
		opts := cache.Options{Path: Path, Format: format}
		var wg sync.WaitGroup
		var mu sync.Mutex
		var wrong, failed, launches, v2Unparsable int
		for p := 0; p < 4; p++ {
			wg.Add(1)
			go func(p int) {
				defer wg.Done()
				for i := 0; i < 8; i++ {
					ks := Keys(6, uint32(1+(p+i)%3))
					r, err := Launch(fsys, opts, ks)
					mu.Lock()
					launches++
					if err != nil {
						failed++
					}
					wrong += len(r.Wrong)
					// The consistency check reads the live file without the
					// lock. A v2 file appended to by another process has no
					// footer until that commit ends, so v2 checks may fail
					// transiently; v3 appends never make it unparsable.
					if r.CheckErr != nil && format == spec.FormatV3 {
						t.Errorf("%s: process %d launch %d: %v", format, p, i, r.CheckErr)
					} else if r.CheckErr != nil {
						v2Unparsable++
					}
					mu.Unlock()
				}
			}(p)
		}
		wg.Wait()
		t.Logf("%s: %d concurrent launches, %d failed, %d wrong bytes, %d checks saw an unparsable v2 file", format, launches, failed, wrong, v2Unparsable)
		assert.Zero(t, failed, "G8")
		assert.Zero(t, wrong, "G1/G6")
		ks := Keys(6, 1)
		for _, state := range []*crashfs.FS{fsys.ProcessCrash(), fsys.PowerLoss(5)} {
			vs := recoverAndCheck(state, opts, ks, nil, Pack)
			for _, v := range vs {
				t.Errorf("%s after the concurrent launches: %s %s", format, v.Guarantee, v.Detail)
			}
		}
	}
}
