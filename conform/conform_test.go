package conform

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/sim"
	"github.com/xpwc/xpwc/spec"
)

var (
	buildOnce  sync.Once
	adapterBin string
	buildErr   error
)

// adapter builds cmd/conform-adapter once per test binary, so every test
// drives a real subprocess.
func adapter(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "xpwc-conform-adapter-")
		if err != nil {
			buildErr = err
			return
		}
		adapterBin = filepath.Join(dir, "conform-adapter")
		out, err := exec.Command("go", "build", "-o", adapterBin, "github.com/xpwc/xpwc/cmd/conform-adapter").CombinedOutput()
		if err != nil {
			buildErr = err
			adapterBin = string(out)
		}
	})
	if buildErr != nil {
		t.Fatalf("go build cmd/conform-adapter: %v\n%s", buildErr, adapterBin)
	}
	return adapterBin
}

func TestMain(m *testing.M) {
	if mode := os.Getenv(misbehaveEnv); mode != "" {
		// Re-executed as a misbehaving adapter (misbehave_test.go).
		os.Exit(misbehave(mode, os.Stdin, os.Stdout))
	}
	code := m.Run()
	if adapterBin != "" && buildErr == nil {
		_ = os.RemoveAll(filepath.Dir(adapterBin))
	}
	os.Exit(code)
}

// TestReferenceConforms runs the scenario suite through the Go adapter:
// every scenario that can run through the protocol holds.
func TestReferenceConforms(t *testing.T) {
	cmd := Command{Argv: []string{adapter(t)}}
	rep, err := Run(Options{Command: cmd})
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, s := range rep.Scenarios {
		switch s.Verdict {
		case Holds:
			ran++
		case Skipped:
		case NotClaimed:
			// The on-compute design's scenarios: the reference checks at
			// first use.
			if !slices.Equal(s.Missing, []string{CapOnCompute}) {
				t.Errorf("%s: not claimed: %v", s.Name, s.Missing)
			}
		default:
			t.Errorf("%s: %s: %s", s.Name, s.Verdict, s.Reason)
		}
	}
	if ran < 20 {
		t.Errorf("only %d scenarios ran through the adapter", ran)
	}
	if !rep.OK() {
		t.Errorf("report not OK")
	}
	t.Logf("%d scenarios held; checks: %v", ran, summarize(rep.Checks))
}

func summarize(cs []Check) string {
	var b strings.Builder
	for _, c := range cs {
		b.WriteString(c.ID + "=" + c.Verdict + " ")
	}
	return b.String()
}

// bugTraces is the suite's design-variant files: the explorer's shortest
// trace for each variant's bug, which Run holds to the reference.
func bugTraces(t *testing.T) []sim.File {
	fs, err := sim.Scenarios()
	require.NoError(t, err)
	var out []sim.File
	for _, f := range fs {
		if strings.HasPrefix(f.Name, "bug-") {
			out = append(out, f)
		}
	}
	require.NotEmpty(t, out)
	return out
}

// TestVariantsCaught: the Go adapter under each design variant it serves
// claims every capability the reference claims, and lacks one: the run
// catches it (exit 1 in simrun), with a shrunk failing trace judged by the
// model as the variant itself, breaking the invariants the catalog knows
// it for. The trace, written as a scenario file, fails again through the
// variant and passes through the reference.
func TestVariantsCaught(t *testing.T) {
	bin := adapter(t)
	ref := Command{Argv: []string{bin}}
	for _, name := range VariantNames() {
		t.Run(name, func(t *testing.T) {
			d, err := model.DesignByName(name)
			require.NoError(t, err)
			cmd := Command{Argv: []string{bin, "--design", name}}
			out := t.TempDir()
			rep, err := Run(Options{Command: cmd, Scenarios: append(bugTraces(t), onComputeScenarios(t)...), OutDir: out})
			require.NoError(t, err)
			require.False(t, rep.OK(), "variant %s not caught", name)
			var found *ScenarioResult
			for i, s := range rep.Scenarios {
				require.NotEqual(t, Fault, s.Verdict, "%s: %s", s.Name, s.Reason)
				if s.Verdict == Broken && s.Like == name && found == nil {
					found = &rep.Scenarios[i]
				}
			}
			require.NotNil(t, found, "no broken run judged closest to %s", name)
			require.True(t, len(found.Evidence) > 0 || found.Uncovered != "", "%s: %s", found.Name, found.Reason)
			_ = d
			require.NotEmpty(t, found.File)
			b, err := os.ReadFile(found.File)
			require.NoError(t, err)
			f := sim.File{Name: found.File, Text: string(b)}
			again := sim.RunScenario(f, sim.Config{Backend: sim.BackendOS, Dir: t.TempDir(), Open: Opener(cmd, nil)})
			require.False(t, again.OK(), "the written trace does not fail through %s", name)
			clean := ref
			if strings.Contains(f.Text, "design name=on-compute") {
				clean = Command{Argv: []string{bin, "--design", "on-compute"}}
			}
			passes := sim.RunScenario(f, sim.Config{Backend: sim.BackendOS, Dir: t.TempDir(), Open: Opener(clean, nil), AdoptCompaction: true})
			// Its outputs are the model's as the run wrote them; a divergence is Err.
			require.NoError(t, passes.Err, "the written trace fails through the reference")
			var broken []string
			for _, c := range rep.Checks {
				if c.Verdict == Broken {
					broken = append(broken, c.ID)
				}
			}
			t.Logf("%s: %s shrunk to %d ops, breaks %v (%v), like %s %v; checks broken: %v", name, found.Name, found.Shrunk, found.Broke, found.Evidence, found.Like, found.LikeBreaks, broken)
			for _, s := range rep.Scenarios {
				if s.Verdict == Broken {
					t.Logf("  %s: %v like=%s %v uncovered=%q", s.Name, s.Broke, s.Like, s.LikeBreaks, s.Uncovered)
				}
			}
		})
	}
}

// TestEveryVariantHasAnAdapterOrAReason: each design of the catalog is
// served by GoAdapter or named with the reason it cannot be.
func TestEveryVariantHasAnAdapterOrAReason(t *testing.T) {
	for _, d := range model.Designs() {
		_, err := GoAdapter(d.Name)
		if err != nil {
			require.Contains(t, notEmulated, d.Name, "%v", err)
			require.Contains(t, err.Error(), notEmulated[d.Name])
		}
	}
	_, err := GoAdapter("no-such-design")
	require.ErrorContains(t, err, "unknown design")
}

// TestExploreTraces: with Explore, the explorer's shortest trace to each
// variant's known bug runs through the adapter, held to the reference;
// through the v1-no-seed adapter exactly the trace to v1-no-seed's bug
// breaks, judged closest to it.
func TestExploreTraces(t *testing.T) {
	cmd := Command{Argv: []string{adapter(t), "--design", "v1-no-seed"}}
	rep, err := Run(Options{Command: cmd, Scenarios: []sim.File{}, Explore: true})
	require.NoError(t, err)
	ran := 0
	for _, s := range rep.Scenarios {
		require.True(t, strings.HasPrefix(s.Name, "explore "), s.Name)
		ran++
		if strings.HasPrefix(s.Name, "explore v1-no-seed ") {
			require.Equal(t, Broken, s.Verdict, s.Reason)
			require.Equal(t, "v1-no-seed", s.Like)
			require.Contains(t, s.Broke, "I1-no-stale-hit")
		} else {
			require.Equal(t, Holds, s.Verdict, "%s: %s", s.Name, s.Reason)
		}
	}
	require.GreaterOrEqual(t, ran, 5)
}

// TestVerdictNamesEachOnce: a verdict names each guarantee once, however
// many of its invariants broke, and the checks table lists a run once
// under each ID.
func TestVerdictNamesEachOnce(t *testing.T) {
	got := withGuarantees([]spec.InvariantID{spec.InvNoCorruptHit, spec.InvNoUncheckedUse, spec.InvNoStaleHit})
	require.Equal(t, []string{"G1", "I1-no-stale-hit", "I2-no-corrupt-hit", "I13-no-unverified-compute"}, got)
	cs := checks([]ScenarioResult{{Name: "s", Verdict: Broken, Broke: []string{"G1", "G1", "I2-no-corrupt-hit"}}})
	for _, c := range cs {
		require.Len(t, c.By, 1, "%s: %v", c.ID, c.By)
	}
}

// TestReasonFromShrunkRun: a broken walk's reason is the shrunk run's
// failure: its step is the shrunk trace's last, not the unshrunk run's.
func TestReasonFromShrunkRun(t *testing.T) {
	cmd := Command{Argv: []string{adapter(t), "--design", "v1-no-seed"}}
	rep, err := Run(Options{Command: cmd, Scenarios: []sim.File{}, Walks: 4, Steps: 40, Seed: 1, Names: 2})
	require.NoError(t, err)
	shrunk := 0
	for _, s := range rep.Scenarios {
		if s.Verdict != Broken {
			continue
		}
		require.Contains(t, s.Reason, fmt.Sprintf("step %d ", s.Shrunk), s.Name)
		if s.Shrunk < s.Steps {
			shrunk++
		}
	}
	require.Positive(t, shrunk, "no walk broke and shrank")
}

// TestExecuTorchPortSuiteAlone: the suite alone through the port of
// ExecuTorch's cache, claiming only seeds: each scenario runs up to its
// first step that needs more (none of 0 steps holds), and I1, I3, I4, I5
// and I8 are broken, each by a named scenario whose evidence names it; no
// broken run names I2 or I13, which a cache without checksums is not
// held to.
func TestExecuTorchPortSuiteAlone(t *testing.T) {
	cmd := Command{Argv: []string{adapter(t), "--design", "executorch", "--claim", "seeds"}}
	rep, err := Run(Options{Command: cmd})
	require.NoError(t, err)
	cut := 0
	for _, s := range rep.Scenarios {
		if s.Verdict == Holds {
			require.Positive(t, s.Steps, "%s holds with no step run", s.Name)
		}
		if s.Cut() && s.Steps > 0 {
			cut++
		}
		if s.Verdict == Broken {
			require.NotContains(t, s.Broke, string(spec.InvNoUncheckedUse), s.Name)
			require.NotContains(t, s.Broke, string(spec.InvNoCorruptHit), s.Name)
		}
	}
	require.Positive(t, cut, "no scenario ran up to its first unclaimed step")
	broken := map[string][]string{}
	for _, c := range rep.Checks {
		if c.Verdict == Broken {
			broken[c.ID] = c.By
		}
	}
	for _, id := range []spec.InvariantID{spec.InvNoStaleHit, spec.InvCommitSurvives, spec.InvConverge, spec.InvNoIdleWrite, spec.InvNoSIGBUS} {
		require.NotEmpty(t, broken[string(id)], "%s not broken by a named scenario", id)
		t.Logf("%s broken by %v", id, broken[string(id)])
	}
}

// TestRepackToHeapNamesI4: a cache that sends a re-pack to the heap after
// loading the file, where the reference appends it to the file, is judged
// by what the trace shows: the reservation's heap placement breaks I4,
// with a why that says so, not a divergence no invariant covers.
func TestRepackToHeapNamesI4(t *testing.T) {
	fs, err := sim.Scenarios()
	require.NoError(t, err)
	var pick []sim.File
	for _, f := range fs {
		if f.Name == "g3-repack-of-loaded-file-persists" || f.Name == "bug-repack-to-heap" {
			pick = append(pick, f)
		}
	}
	require.Len(t, pick, 2)
	cmd := Command{Argv: []string{adapter(t), "--design", "repack-to-heap"}}
	rep, err := Run(Options{Command: cmd, Scenarios: pick})
	require.NoError(t, err)
	judged := 0
	for _, s := range rep.Scenarios {
		if s.Verdict == Skipped { // the variant's file itself runs on the model alone
			continue
		}
		judged++
		require.Equal(t, Broken, s.Verdict, "%s: %s", s.Name, s.Reason)
		require.Empty(t, s.Uncovered, s.Name)
		require.Contains(t, s.Broke, string(spec.InvConverge), s.Name)
		var why string
		for _, f := range s.Evidence {
			if f.ID == spec.InvConverge {
				why = f.Why
			}
		}
		require.Contains(t, why, "placed the re-pack on the heap after a load", s.Name)
		require.Contains(t, why, "reserve proc=", s.Name)
	}
	require.Equal(t, 2, judged)
}

// TestTruncationJudgedWithTheResult: an init whose load word differs from
// the model's and that truncates the file in place in the same step is
// judged on both: refusing the index its last commit left (I3) and the
// truncation (I8), not the load word alone.
func TestTruncationJudgedWithTheResult(t *testing.T) {
	cmd := Command{Argv: []string{adapter(t), "--design", "pr19862-no-index"}}
	rep, err := Run(Options{Command: cmd, Scenarios: bugTraces(t)})
	require.NoError(t, err)
	both := 0
	for _, s := range rep.Scenarios {
		if s.Verdict == Broken && slices.Contains(s.Broke, string(spec.InvCommitSurvives)) && slices.Contains(s.Broke, string(spec.InvNoSIGBUS)) {
			require.Contains(t, s.Reason, "result differs")
			require.Contains(t, s.Reason, "truncation differs")
			both++
		}
	}
	require.Positive(t, both, "no run judged on its load word and its truncation together")
}

// TestUnsupportedEndsTheRun: an adapter without invalidate answers
// unsupported (protocol 2): the run ends there, not claimed from that step
// on, its earlier steps held; it is not judged a failed invalidate (G8,
// I12).
func TestUnsupportedEndsTheRun(t *testing.T) {
	cmd := Command{Argv: []string{adapter(t), "--design", "executorch"}}
	rep, err := Run(Options{Command: cmd, Scenarios: bugTraces(t)})
	require.NoError(t, err)
	ended := 0
	for _, s := range rep.Scenarios {
		if slices.Contains(s.Missing, "op invalidate") {
			require.NotEqual(t, Broken, s.Verdict, s.Name)
			require.True(t, s.Cut(), "%s: %d of %d", s.Name, s.Steps, s.Of)
			ended++
		}
		if s.Verdict == Broken {
			require.NotContains(t, s.Broke, string(spec.InvFallbackNoError), s.Name)
		}
	}
	require.Positive(t, ended, "no run reached an invalidate")
}

// TestForeignWritesIntoV2: the driver writes foreign bytes into a v2 file
// too: a cache that claims checksums and serves the changed byte breaks
// I2 (no-commit-point, xpwc's v2 writer claiming every capability); one
// that claims none is not held to it, its run cut at the foreign write.
func TestForeignWritesIntoV2(t *testing.T) {
	var g1 []sim.File
	fs, err := sim.Scenarios()
	require.NoError(t, err)
	for _, f := range fs {
		if strings.HasPrefix(f.Name, "g1-corrupt-data-caught") {
			g1 = append(g1, f)
		}
	}
	require.Len(t, g1, 1)
	rep, err := Run(Options{Command: Command{Argv: []string{adapter(t), "--design", "no-commit-point"}}, Scenarios: g1})
	require.NoError(t, err)
	require.Equal(t, Broken, rep.Scenarios[0].Verdict, rep.Scenarios[0].Reason)
	require.Contains(t, rep.Scenarios[0].Broke, string(spec.InvNoCorruptHit))

	rep, err = Run(Options{Command: Command{Argv: []string{adapter(t), "--design", "executorch", "--claim", "seeds,locking"}}, Scenarios: g1})
	require.NoError(t, err)
	s := rep.Scenarios[0]
	require.NotEqual(t, Broken, s.Verdict, s.Reason)
	require.Contains(t, s.Missing, CapChecksums)
	require.True(t, s.Cut())
}

// onComputeScenarios is the suite's scenarios of the design on-compute,
// run through adapters that claim verify-on-compute.
func onComputeScenarios(t *testing.T) []sim.File {
	fs, err := sim.Scenarios()
	require.NoError(t, err)
	var out []sim.File
	for _, f := range fs {
		if strings.Contains(f.Text, "design name=on-compute") {
			out = append(out, f)
		}
	}
	require.NotEmpty(t, out)
	return out
}

// TestOnComputeConforms: xpwc's cache under the on-compute policy (the
// runtime's default) through the adapter, protocol 2: every scenario that
// can run holds, the on-compute design's scenarios with their compute
// requests included.
func TestOnComputeConforms(t *testing.T) {
	cmd := Command{Argv: []string{adapter(t), "--design", "on-compute"}}
	rep, err := Run(Options{Command: cmd, Walks: 3, Steps: 40, Seed: 1, Names: 2})
	require.NoError(t, err)
	require.True(t, rep.OK())
	onCompute := map[string]bool{}
	for _, f := range onComputeScenarios(t) {
		onCompute[f.Name] = true
	}
	computed := 0
	for _, s := range rep.Scenarios {
		require.NotEqual(t, Broken, s.Verdict, "%s: %s", s.Name, s.Reason)
		require.NotEqual(t, NotClaimed, s.Verdict, s.Name)
		if s.Verdict == Holds && onCompute[s.Name] {
			computed++
		}
	}
	require.GreaterOrEqual(t, computed, 3, "the on-compute scenarios did not run")
}

// TestForeignFindsNoIndex: a foreign writer that finds no index in the
// file where the model's last commit is loadable (xpwc's v2 writer has
// appended after its trailer) is judged I3, not left unjudged.
func TestForeignFindsNoIndex(t *testing.T) {
	var files []sim.File
	for _, f := range bugTraces(t) {
		if strings.HasPrefix(f.Name, "bug-no-commit-point-loses-commit") {
			files = append(files, f)
		}
	}
	require.Len(t, files, 1)
	rep, err := Run(Options{Command: Command{Argv: []string{adapter(t), "--design", "no-commit-point"}}, Scenarios: files})
	require.NoError(t, err)
	found := false
	for _, s := range rep.Scenarios {
		if s.Verdict == Broken && strings.Contains(s.Reason, "does not parse") {
			require.Contains(t, s.Broke, string(spec.InvCommitSurvives), s.Name)
			found = true
		}
	}
	require.True(t, found, "no foreign write found the file without an index")
}

// TestHeapRepackReasons: a heap placement the reference also allows (a
// busy lock, no cache path) is not I4's evidence, nor is a heap placement
// the model makes too; one with no such reason is, worded by whether the
// process loaded the file.
func TestHeapRepackReasons(t *testing.T) {
	op := spec.Op{Kind: spec.OpReserve, Proc: 1, Name: 0}
	file := spec.Result{Place: spec.PlaceFile}
	for _, r := range []spec.Reason{spec.ReasonLockBusy, spec.ReasonNoPath} {
		_, ok := heapRepack(op, file, spec.Result{Place: spec.PlaceHeap, Reason: r}, true)
		require.False(t, ok, "reason %v", r)
	}
	heap := spec.Result{Place: spec.PlaceHeap}
	_, ok := heapRepack(op, heap, heap, true)
	require.False(t, ok, "the model places it on the heap too")
	f, ok := heapRepack(op, file, heap, true)
	require.True(t, ok)
	require.Equal(t, spec.InvConverge, f.ID)
	require.Contains(t, f.Why, "after a load")
	f, ok = heapRepack(op, file, spec.Result{Place: spec.PlaceHeap, Reason: spec.ReasonDesign}, false)
	require.True(t, ok)
	require.NotContains(t, f.Why, "after a load")
}
