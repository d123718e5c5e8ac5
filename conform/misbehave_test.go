package conform

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/sim"
	"github.com/xpwc/xpwc/spec"
)

// misbehaveEnv makes the test binary, re-executed, an adapter that breaks
// the protocol in the way its value names, at its first init request.
const misbehaveEnv = "XPWC_CONFORM_MISBEHAVE"

// misbehave is that adapter: it answers hello and set_path correctly (but
// for the modes that break the hello), then misbehaves.
func misbehave(mode string, in io.Reader, out io.Writer) int {
	sc := bufio.NewScanner(in)
	w := bufio.NewWriter(out)
	say := func(r Response) {
		b, _ := json.Marshal(r)
		_, _ = w.Write(append(b, '\n'))
		_ = w.Flush()
	}
	for sc.Scan() {
		var req Request
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			return 2
		}
		if req.Op == OpHello {
			h := Response{ID: req.ID, OK: true, Protocol: Protocol, Name: "misbehaving", Capabilities: Capabilities(), Format: "v3"}
			switch mode {
			case "version":
				h.Protocol = Protocol + 1
			case "kept-v1", "stats-v1":
				h.Protocol = 1
			case "unknown-capability":
				h.Capabilities = append(h.Capabilities, "telepathy")
			}
			say(h)
			continue
		}
		if code, ok := strings.CutPrefix(mode, "fallback="); ok && req.Op == OpReserve {
			// A reservation on the heap, for the reason code.
			say(Response{ID: req.ID, OK: true, Reservation: 1, Fallback: code})
			continue
		}
		if req.Op == OpStats {
			// An instance that maps w0 twice.
			say(Response{ID: req.ID, OK: true, Mapped: []Mapped{{Name: "w0.weight", Maps: 2}, {Name: "w1.weight", Maps: 1}}})
			continue
		}
		if req.Op != OpInit {
			say(Response{ID: req.ID, OK: true})
			continue
		}
		switch mode {
		case "kept", "kept-v1":
			say(Response{ID: req.ID, OK: true, Load: LoadKept})
			continue
		case "garbage":
			_, _ = w.WriteString("load: ok, all good\n")
			_ = w.Flush()
		case "hang":
			time.Sleep(time.Hour)
		case "exit":
			fmt.Fprintln(os.Stderr, "adapter: segmentation fault (pretend)")
			return 3
		case "order":
			say(Response{ID: req.ID + 1, OK: true, Load: "missing"})
		case "unknown-field":
			_, _ = fmt.Fprintf(w, `{"id":%d,"ok":true,"load":"missing","lod":"ok"}`+"\n", req.ID)
			_ = w.Flush()
		default:
			say(Response{ID: req.ID, OK: true, Load: "missing"})
		}
	}
	return 0
}

// misbehaving returns the command that re-executes this test binary as a
// misbehaving adapter, with a short request timeout: 2 s, since starting
// the test binary took over 500 ms on a loaded 2-core machine and turned a
// well-behaved hello into a timeout; only the "hang" mode waits it out.
func misbehaving(t *testing.T, mode string) Command {
	t.Setenv(misbehaveEnv, mode)
	return Command{Argv: []string{os.Args[0], "-test.run=^$"}, Timeout: 2 * time.Second}
}

// TestDriverFaults: each way an adapter can break the protocol ends the
// request with a *ProtocolError of its kind, within the timeout, and the
// adapter process is gone; a scenario run through it gets the verdict
// fault, never a hang.
func TestDriverFaults(t *testing.T) {
	for _, tc := range []struct {
		mode, kind string
		atHello    bool
		msg        string
	}{
		{mode: "version", kind: FaultVersion, atHello: true, msg: "protocol 3"},
		{mode: "unknown-capability", kind: FaultCapability, atHello: true, msg: "telepathy"},
		{mode: "garbage", kind: FaultGarbage, msg: "all good"},
		{mode: "unknown-field", kind: FaultGarbage, msg: "lod"},
		{mode: "hang", kind: FaultTimeout, msg: "no answer within"},
		{mode: "exit", kind: FaultExit, msg: "exit status 3); stderr: adapter: segmentation fault (pretend)"},
		{mode: "order", kind: FaultOrder, msg: "answer to request"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			cmd := misbehaving(t, tc.mode)
			start := time.Now()
			cl, err := Start(cmd)
			if !tc.atHello {
				require.NoError(t, err)
				require.NoError(t, cl.SetPath(t.TempDir()+"/weights.xpwc"))
				err = cl.InitializeForProgram("P1")
				require.Equal(t, err, cl.Fault(), "a protocol failure is the instance's fault")
				// Sticky: every later request fails the same way at once.
				_, hit := cl.LookUp(spec.Key{Weight: "w0.weight"})
				require.False(t, hit)
				require.Equal(t, err, cl.Fault())
				require.True(t, cl.cmd.ProcessState != nil, "the adapter was not reaped")
			}
			var pe *ProtocolError
			require.ErrorAs(t, err, &pe)
			require.Equal(t, tc.kind, pe.Kind, "%v", err)
			require.Contains(t, err.Error(), tc.msg)
			require.True(t, errors.Is(err, ErrProtocol) && errors.Is(err, sim.ErrImplementation))
			require.Less(t, time.Since(start), 5*time.Second)

			if tc.atHello {
				_, err := Run(Options{Command: cmd, Scenarios: oneScenario(t)})
				require.ErrorAs(t, err, &pe)
				return
			}
			rep, err := Run(Options{Command: cmd, Scenarios: oneScenario(t)})
			require.NoError(t, err)
			require.Len(t, rep.Scenarios, 1)
			s := rep.Scenarios[0]
			require.Equal(t, Fault, s.Verdict, s.Reason)
			require.Contains(t, s.Reason, tc.kind)
			require.False(t, rep.OK())
		})
	}
}

func oneScenario(t *testing.T) []sim.File {
	fs, err := sim.Scenarios()
	require.NoError(t, err)
	for _, f := range fs {
		if strings.HasPrefix(f.Name, "g3-relaunch-hits-everything") {
			return []sim.File{f}
		}
	}
	t.Fatal("no g3-relaunch-hits-everything scenario")
	return nil
}

// TestFallbackInTheAdaptersWords: a fallback code an adapter reports is
// recognised as the lock being busy (G8), and says so in words that fit a
// cache with no lock file and name the fallback once (the harness adds
// "fallback: " to its note).
func TestFallbackInTheAdaptersWords(t *testing.T) {
	for _, code := range []string{CodeLockBusy, "no-space"} {
		cl, err := Start(misbehaving(t, "fallback="+code))
		require.NoError(t, err)
		require.NoError(t, cl.SetPath(t.TempDir()+"/weights.xpwc"))
		require.NoError(t, cl.InitializeForProgram("P1"))
		_, err = cl.ReserveSpace(16)
		require.NoError(t, err)
		fe := cl.Stats().FallbackErr
		require.Equal(t, code == CodeLockBusy, errors.Is(fe, cache.ErrLockBusy))
		note := "fallback: " + fe.Error()
		require.NotContains(t, note, "fallback: fallback:")
		require.NotContains(t, note, "lock file")
		require.Contains(t, note, code)
		_ = cl.Close()
	}
}

// TestLoadKept: a version 2 adapter's init that runs no loader says kept:
// the instance keeps its load outcome and says it kept its view (the
// runner then does not compare that init's load). A version 1 adapter has
// no such word: it is a protocol fault.
func TestLoadKept(t *testing.T) {
	cl, err := Start(misbehaving(t, "kept"))
	require.NoError(t, err)
	require.Equal(t, 2, cl.Hello().Protocol)
	require.NoError(t, cl.SetPath(t.TempDir()+"/weights.xpwc"))
	require.NoError(t, cl.InitializeForProgram("P1"))
	require.True(t, cl.KeptView())
	require.NoError(t, cl.Fault())
	_ = cl.Close()

	cl, err = Start(misbehaving(t, "kept-v1"))
	require.NoError(t, err, "a version 1 adapter still speaks to this driver")
	require.Equal(t, 1, cl.Hello().Protocol)
	require.NoError(t, cl.SetPath(t.TempDir()+"/weights.xpwc"))
	err = cl.InitializeForProgram("P1")
	var pe *ProtocolError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, FaultGarbage, pe.Kind)
}

// TestStatsOnlyWhenClaimed: stats is asked of a version 2 adapter that
// claims it, and its counts are the instance's Mappings; an adapter of
// version 1 is never asked (I7 is not judged), whatever it claims.
func TestStatsOnlyWhenClaimed(t *testing.T) {
	cl, err := Start(misbehaving(t, "stats"))
	require.NoError(t, err)
	require.True(t, cl.Hello().Claims(CapStats))
	require.NoError(t, cl.SetPath(t.TempDir()+"/weights.xpwc"))
	ms, err := cl.Mappings()
	require.NoError(t, err)
	require.Equal(t, []cache.MappedCopy{{Name: "w0.weight", Maps: 2}, {Name: "w1.weight", Maps: 1}}, ms)
	_ = cl.Close()

	cl, err = Start(misbehaving(t, "stats-v1"))
	require.NoError(t, err)
	require.NoError(t, cl.SetPath(t.TempDir()+"/weights.xpwc"))
	_, err = cl.Mappings()
	require.ErrorIs(t, err, sim.ErrNotSupported, "a version 1 adapter is asked no stats")
	require.NoError(t, cl.Fault())
	_ = cl.Close()
}
