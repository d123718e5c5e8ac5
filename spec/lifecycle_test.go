package spec

import (
	"errors"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sampleOps covers every kind and every argument form.
func sampleOps() []Op {
	return []Op{
		{Kind: OpInit, Proc: 1, Program: 1},
		{Kind: OpLookUp, Proc: 0, Name: 2},
		{Kind: OpReserve, Proc: 0, Name: 0},
		{Kind: OpInsert, Proc: 3, Name: 7},
		{Kind: OpFinalize, Proc: 0},
		{Kind: OpSave, Proc: 1},
		{Kind: OpInvalidate, Proc: 0, Name: 1},
		{Kind: OpUnload, Proc: 0, Program: 3},
		{Kind: OpDestroy, Proc: 1},
		{Kind: OpCompute, Proc: 0, Name: 2},
		{Kind: OpCompute, Proc: 1, Name: 0, Branch: BranchCompact},
		{Kind: EvCrash, Crash: CrashProcess, Proc: 1, Branch: BranchIdle},
		{Kind: EvCrash, Crash: CrashProcess, Proc: 0, Branch: BranchMidSave},
		{Kind: EvCrash, Crash: CrashPower, Branch: BranchForged},
		{Kind: EvCrash, Crash: CrashPower, Branch: BranchDataLost},
		{Kind: EvCrash, Crash: CrashPower},
		{Kind: EvRestart, Proc: 1},
		{Kind: EvKernelUpgrade},
		{Kind: EvSourceChange, Name: 1},
		{Kind: EvForeign, Foreign: ForeignData, Name: 0},
		{Kind: EvForeign, Foreign: ForeignIndex},
		{Kind: EvClobberOptions, Proc: 0},
	}
}

func TestOpTextRoundTrip(t *testing.T) {
	kinds := map[OpKind]bool{}
	for _, o := range sampleOps() {
		got, err := ParseOp(o.String())
		require.NoError(t, err, o.String())
		assert.Equal(t, o, got, o.String())
		kinds[o.Kind] = true
	}
	for _, k := range OpKinds() {
		assert.True(t, kinds[k], "sample lacks %s", k)
	}
	trace := FormatTrace(sampleOps())
	back, err := ParseTrace("# a comment\n\n" + trace)
	require.NoError(t, err)
	assert.Equal(t, sampleOps(), back)
}

func TestOpTextExamples(t *testing.T) {
	assert.Equal(t, "init proc=A program=P1", Op{Kind: OpInit}.String())
	assert.Equal(t, "crash kind=power branch=mid-save", Op{Kind: EvCrash, Crash: CrashPower, Branch: BranchMidSave}.String())
	o, err := ParseOp("  lookup   name=w1 proc=B ")
	require.NoError(t, err)
	assert.Equal(t, Op{Kind: OpLookUp, Proc: 1, Name: 1}, o)
}

func TestParseOpRejects(t *testing.T) {
	for _, line := range []string{
		"",
		"fly proc=A",
		"init proc=A",                          // missing program
		"init proc=A program=P1 name=w0",       // extra argument
		"init proc=A program=P0",               // programs count from 1
		"init proc=A program=P5",               // beyond MaxPrograms
		"lookup proc=E name=w0",                // beyond MaxProcs
		"lookup proc=A name=w8",                // beyond MaxNames
		"lookup proc=A name=x0",                // wrong prefix
		"lookup proc=A proc=B name=w0",         // repeated
		"lookup proc=A w0",                     // not key=value
		"crash proc=A",                         // missing kind
		"crash kind=power proc=A",              // power takes no process
		"crash kind=process proc=A branch=bad", // unknown branch
		"crash kind=data",                      // kind of another verb
		"foreign kind=data",                    // data needs a name
		"foreign kind=index name=w0",           // index takes none
		"upgrade-kernel proc=A",
		"finalize proc=A color=red",
	} {
		_, err := ParseOp(line)
		require.Error(t, err, line)
		assert.True(t, errors.Is(err, ErrBadOp), line)
		var oe *OpError
		assert.True(t, errors.As(err, &oe), line)
	}
	_, err := ParseTrace("init proc=A program=P1\nbogus\n")
	require.ErrorIs(t, err, ErrBadOp)
	assert.Contains(t, err.Error(), "line 2")
}

func TestOpKindStrings(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range OpKinds() {
		s := k.String()
		assert.NotEqual(t, "invalid", s)
		assert.False(t, seen[s], "duplicate verb %s", s)
		seen[s] = true
	}
	assert.Equal(t, "invalid", OpKind(200).String())
	assert.False(t, OpSave.IsEvent())
	assert.True(t, EvCrash.IsEvent())
}

// The compaction branch belongs to the ops that commit, the crash branches
// to crashes.
func TestCompactBranch(t *testing.T) {
	for _, line := range []string{"finalize proc=A branch=compact", "save proc=B branch=compact", "invalidate proc=A name=w1 branch=compact"} {
		o, err := ParseOp(line)
		require.NoError(t, err, line)
		assert.Equal(t, BranchCompact, o.Branch)
		assert.Equal(t, line, o.String())
	}
	for _, line := range []string{"crash kind=power branch=compact", "finalize proc=A branch=idle", "lookup proc=A name=w0 branch=compact", "destroy proc=A branch=compact"} {
		_, err := ParseOp(line)
		require.ErrorIs(t, err, ErrBadOp, line)
	}
}

// TestVocabularyBounds: the text forms at the ends of every range. The
// last process, program and name parse and the next ones do not; a value
// one past each enumeration prints as invalid and never parses back (the
// word "invalid" is not a verb, a branch or a kind); IsEvent holds from
// EvCrash to the last kind only; an OpError names its word when it has one.
func TestVocabularyBounds(t *testing.T) {
	last := "init proc=" + Proc(MaxProcs-1).String() + " program=" + Program(MaxPrograms-1).String()
	o, err := ParseOp(last)
	require.NoError(t, err, last)
	assert.Equal(t, Op{Kind: OpInit, Proc: MaxProcs - 1, Program: MaxPrograms - 1}, o)
	o, err = ParseOp("lookup proc=A name=" + Name(MaxNames-1).String())
	require.NoError(t, err)
	assert.Equal(t, Name(MaxNames-1), o.Name)
	// Each error names the argument and the range it must lie in, so a
	// scenario's author sees the bound.
	for _, tc := range []struct{ line, want string }{
		{"init proc=" + string(rune('A'+MaxProcs)) + " program=P1", `"proc=E": want a process A…D`},
		{"init proc=A program=P" + strconv.Itoa(MaxPrograms+1), `"program=P5": want P1…P4`},
		{"lookup proc=A name=w" + strconv.Itoa(MaxNames), `"name=w8": want w0…w7`},
		{"invalid proc=A", `"invalid": unknown verb`},
		{"invalid", `"invalid": unknown verb`},
		{"crash kind=process proc=A branch=invalid", `"branch=invalid": unknown branch`},
		{"crash kind=invalid proc=A", `"kind=invalid": unknown kind for crash`},
	} {
		_, err := ParseOp(tc.line)
		require.Error(t, err, tc.line)
		require.Equal(t, "spec: bad op "+strconv.Quote(tc.line)+": "+tc.want, err.Error())
	}

	assert.Equal(t, "invalid", opLimit.String())
	assert.Equal(t, "invalid", branchLimit.String())
	assert.Equal(t, "LoadOutcome(8)", loadLimit.String())
	assert.Equal(t, "spec: bad op \"x\": y", (&OpError{Text: "x", Msg: "y"}).Error())
	assert.Equal(t, "spec: bad op \"x\": \"a=b\": y", (&OpError{Text: "x", Arg: "a=b", Msg: "y"}).Error())

	assert.False(t, opLimit.IsEvent())
	assert.True(t, EvCrash.IsEvent())
	assert.False(t, (EvCrash - 1).IsEvent())
	assert.True(t, (opLimit - 1).IsEvent())
	assert.Len(t, OpKinds(), int(opLimit)-1)
	assert.Equal(t, OpInit, OpKinds()[0])
}
