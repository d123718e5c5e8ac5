package conformance

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/spec"
)

// v2Histories are fixed v2 histories, each with the load outcome the last
// init must see. They reach what random sequences reach rarely: a writer
// that ends with space appended since its commit, and a crash there.
type v2History struct {
	name    string
	text    string
	crashfs bool // needs crashfs (a real process crash)
	load    spec.LoadOutcome
	anyLoad bool // no demand on the last load (a trace TestConformanceV2 wrote)
}

var v2Histories = []v2History{
	{
		// A reservation grows the file past its footer; closing the
		// instance ends the file with the last commit again.
		name: "close-after-reserve", load: spec.LoadOK, text: `
init proc=A program=P2
lookup proc=A name=w1
reserve proc=A name=w1
insert proc=A name=w1
finalize proc=A
init proc=A program=P1
lookup proc=A name=w0
reserve proc=A name=w0
restart proc=A
init proc=A program=P2
lookup proc=A name=w1
`,
	},
	{
		// An insert that finds its packing already committed by another
		// process leaves appended space; finalize commits again to end the
		// file with a footer, although nothing changed.
		name: "reterminate", load: spec.LoadOK, text: `
init proc=A program=P2
init proc=B program=P2
lookup proc=A name=w1
reserve proc=A name=w1
insert proc=A name=w1
lookup proc=B name=w1
finalize proc=A
reserve proc=B name=w1
insert proc=B name=w1
finalize proc=B
restart proc=B
init proc=B program=P2
`,
	},
	{
		// Invalidating the only entry commits an empty index, which v2
		// cannot express: the file goes, and the next load finds none.
		name: "empty-index", load: spec.LoadMissing, text: `
init proc=A program=P2
lookup proc=A name=w1
reserve proc=A name=w1
insert proc=A name=w1
finalize proc=A
unload proc=A program=P2
invalidate proc=A name=w1
restart proc=A
init proc=A program=P2
`,
	},
	{
		// A process crash while the file ends in appended space loses the
		// whole cache (no commit point): the next load rejects the file.
		name: "crash-in-append", crashfs: true, load: spec.LoadRejected, text: `
init proc=A program=P2
lookup proc=A name=w1
reserve proc=A name=w1
insert proc=A name=w1
finalize proc=A
init proc=A program=P1
lookup proc=A name=w0
reserve proc=A name=w0
insert proc=A name=w0
crash kind=process proc=A branch=mid-save
init proc=A program=P1
`,
	},
}

// TestV2Lockstep replays v2Histories on v2 against v2Design: every step
// conforms and is one v2Demands allows, and the last load is the one the
// history is about.
func TestV2Lockstep(t *testing.T) {
	d, err := v2Design()
	require.NoError(t, err)
	histories := v2Histories
	if p := os.Getenv("XPWC_CONFORMANCE_V2_TRACE"); p != "" {
		// A trace TestConformanceV2 wrote: every step must conform.
		text, err := os.ReadFile(p)
		require.NoError(t, err)
		histories = append(histories, v2History{name: filepath.Base(p), text: string(text), crashfs: true, anyLoad: true})
	}
	for _, h := range histories {
		ops, err := spec.ParseTrace(h.text)
		require.NoError(t, err, h.name)
		for _, cfg := range v2Setups {
			if h.crashfs && cfg.backend != backendCrashFS {
				continue
			}
			t.Run(h.name+"/"+cfg.String(), func(t *testing.T) {
				w, err := newWorld(t.TempDir(), cfg)
				require.NoError(t, err)
				defer w.close()
				var last spec.LoadOutcome
				err = w.run(&d, bounds(), ops, func(_ int, out model.Outcome, o observation) {
					if out.Op.Kind == spec.OpInit {
						last = o.load
					}
				})
				require.NoError(t, err)
				if !h.anyLoad {
					require.Equal(t, h.load, last)
				}
			})
		}
	}
}
