package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/spec"
)

// A commit on a file that held no commit writes a new file, renamed into
// place like a replacement: the committer's packings are in the file at
// the path (a foreign write reaches them), and it is never a compaction,
// whatever a crashed writer left behind (formerly the known divergence
// refresh-remaps-compacted-entries).
func TestCommitOnCreatedFileIsNotACompaction(t *testing.T) {
	b := DefaultBounds()
	outs := run(t, ref(t), b, `
init proc=A program=P2
lookup proc=A name=w0
reserve proc=A name=w0
insert proc=A name=w0
restart proc=A
init proc=A program=P2
lookup proc=A name=w0
reserve proc=A name=w0
insert proc=A name=w0
restart proc=A
`+launch("B", "P2", "w0"))
	last := outs[len(outs)-1]
	require.True(t, last.Result.Wrote)
	assert.Zero(t, last.Events&EvtCompact)
	assert.Zero(t, last.Next.Disk.Garbage, "the new file carries no garbage over (G4)")
	assert.True(t, last.Next.Procs[1].Ents[0].CurIno, "B's packing is in the file now at the path")
}

// branch=compact makes a commit that would append rewrite the file (the
// cache counts garbage in bytes and may compact first); where no
// compaction can happen the op is not enabled.
func TestCompactBranch(t *testing.T) {
	b := DefaultBounds()
	d := ref(t)
	pre := coldLaunch + `
change-source name=w0
restart proc=A
init proc=A program=P1
lookup proc=A name=w0
reserve proc=A name=w0
insert proc=A name=w0
`
	outs := run(t, d, b, pre+"finalize proc=A\n")
	appended := outs[len(outs)-1]
	require.True(t, appended.Result.Wrote)
	require.Zero(t, appended.Events&EvtCompact, "one stale packing for one live: the model appends")
	require.Equal(t, uint8(1), appended.Next.Disk.Garbage)

	outs = run(t, d, b, pre+"finalize proc=A branch=compact\n")
	compacted := outs[len(outs)-1]
	assert.NotZero(t, compacted.Events&EvtCompact)
	assert.Zero(t, compacted.Next.Disk.Garbage)
	assert.False(t, compacted.Next.Procs[0].Ents[0].CurIno, "a compaction leaves mappings on the old inode")
	assert.Equal(t, appended.Next.Disk.Idx, compacted.Next.Disk.Idx)

	// Nothing to commit, or a created file: no compaction to name.
	s := Init(b)
	for _, line := range []string{"init proc=A program=P1", "lookup proc=A name=w0", "reserve proc=A name=w0", "insert proc=A name=w0"} {
		op, err := spec.ParseOp(line)
		require.NoError(t, err)
		s = Step(d, b, s, op)[0].Next
	}
	op, err := spec.ParseOp("finalize proc=A branch=compact")
	require.NoError(t, err)
	assert.Empty(t, Step(d, b, s, op), "a created file is not compacted")
	op.Branch = spec.BranchNone
	require.Len(t, Step(d, b, s, op), 1)
	idle := Step(d, b, s, op)[0].Next
	op, err = spec.ParseOp("save proc=A branch=compact")
	require.NoError(t, err)
	assert.Empty(t, Step(d, b, idle, op), "nothing to commit")
}
