package runtime

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/kernels"
	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/spec"
)

// The runtime's re-pack after finalize (Backend.packedBytes) does what the
// model's compute under the on-compute policy does (model/step_compute.go,
// design on-compute): a warm launch hands the rotten weight out unchecked,
// the first inference checks it at its read, re-packs it into the file,
// commits, and gives the writer lock back, so the next process loads. The
// model's name w0 is the rotten layer; the other layers are intact.
func TestRepackAtComputeFollowsModel(t *testing.T) {
	d, err := model.DesignByName("on-compute")
	require.NoError(t, err)
	ops, err := spec.ParseTrace(`init proc=A program=P1
lookup proc=A name=w0
reserve proc=A name=w0
insert proc=A name=w0
finalize proc=A
init proc=B program=P1
lookup proc=B name=w0
finalize proc=B
foreign kind=data name=w0
compute proc=B name=w0
`)
	require.NoError(t, err)
	outs, err := model.Replay(&d, model.DefaultBounds(), ops)
	require.NoError(t, err)
	warmHit, compute := outs[6], outs[len(outs)-1]

	p, err := Preset(PresetSmall, 1)
	require.NoError(t, err)
	k := kernels.NewRegistry().Default()
	opts := cache.Options{Path: tempPath(t, "c.xpwc"), VerifyData: cache.VerifyOnCompute, DisablePrefault: true}
	x := p.Input(2, 7)
	cold, _ := initOnFreshCache(t, p, k, opts)
	want, err := cold.Run(x, 2)
	require.NoError(t, err)

	b, c := initOnFreshCache(t, p, k, opts)
	require.Equal(t, warmHit.Result.Checked, c.Stats().Verified > 0, "the warm look-up's check")
	flipEntryByte(t, opts.Path, p.layers[1].WeightName())
	before := c.Stats()
	got, err := b.Run(x, 2)
	require.NoError(t, err)
	after := c.Stats()

	require.True(t, compute.Result.Checked)
	require.Equal(t, uint64(1), after.Corrupt-before.Corrupt, "the read's check found the rot")
	require.Equal(t, compute.Result.Bytes, spec.Packing{Intact: true})
	require.Equal(t, want.Digest, got.Digest, "the output is the re-pack's")
	require.Equal(t, spec.PlaceFile, compute.Result.Place)
	for r, n := range after.HeapBytes {
		require.Zero(t, n, "re-packed to the heap (%s)", r)
	}
	require.True(t, compute.Result.Wrote)
	require.Equal(t, before.Commits+1, after.Commits, "the re-pack was committed")
	require.Zero(t, compute.Next.Disk.Lock)
	next, err := cache.Open(opts)
	require.NoError(t, err)
	defer func() { require.NoError(t, next.Close()) }()
	require.NoError(t, next.InitializeForProgram("next"))
	require.Equal(t, spec.LoadOK, next.Stats().Load, "the writer lock was kept after the re-pack")
	require.Equal(t, model.DiskValid, compute.Next.Disk.State)
	_, hit := next.LookUp(b.Key(1))
	require.True(t, hit, "the next process does not find the re-pack")
}
