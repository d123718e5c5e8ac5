package lincheck_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/cache/lincheck"
)

// relaunchWorkload relaunches the process in about 3% of each client's
// steps and runs a second process on the same path beside it.
func relaunchWorkload(seed uint64) lincheck.Workload {
	return lincheck.Workload{Clients: 3, Ops: 12, Names: 2, Variants: 2, Programs: 2, Seed: seed, Relaunch: 3, Second: true}
}

func newProcess(t *testing.T, opts cache.Options) *lincheck.Process {
	t.Helper()
	p, err := lincheck.NewProcess(cache.NewManager(nil), opts)
	require.NoError(t, err)
	t.Cleanup(p.Close)
	return p
}

// TestLinearizableRelaunch checks histories with relaunches (the Manager's
// instance closed and a new one opened on the same path) and a second
// process: many short seeded interleavings (exact, replayable), for a v3
// file empty and holding an earlier process's entries, and concurrent runs
// checked by name and whole. A relaunch must find exactly what was
// committed, a second process what was committed when it loaded, or
// nothing while the writer holds the lock.
func TestLinearizableRelaunch(t *testing.T) {
	seeds := 60
	if long() {
		seeds = 1500
	}
	warm := []uint8{1, 2}
	for _, tc := range []struct {
		name string
		warm []uint8
	}{{"v3", nil}, {"v3-warm", warm}} {
		t.Run("interleaved-"+tc.name, func(t *testing.T) {
			m := lincheck.NewModel(lincheck.ModelConfig{Warm: tc.warm, NoPartition: true})
			var all []porcupine.Operation
			for seed := range uint64(seeds) {
				opts := cache.Options{Path: filepath.Join(t.TempDir(), "c")}
				if tc.warm != nil {
					writeWarm(t, opts, tc.warm)
				}
				p, err := lincheck.NewProcess(cache.NewManager(nil), opts)
				require.NoError(t, err)
				all = append(all, checkSeed(t, m, p, relaunchWorkload(seed))...)
			}
			requireCovers(t, all, "relaunch", "open2", "lookup2:hit", "lookup2:miss", "lookup:hit")
		})
	}
	t.Run("concurrent", func(t *testing.T) {
		for seed := uint64(1); seed <= 2; seed++ {
			p := newProcess(t, cache.Options{Path: filepath.Join(t.TempDir(), "c")})
			w := lincheck.Workload{Clients: 4, Ops: 60, Names: 3, Variants: 2, Programs: 2, Seed: seed, Relaunch: 2, Second: true}
			h := runAndCheck(t, p, w, lincheck.ModelConfig{})
			requireCovers(t, h, "relaunch", "open2")
		}
	})
}

// checkSeed runs w interleaved on p, closes p, and requires the history
// to be linearizable; it returns the history.
func checkSeed(t *testing.T, m porcupine.Model, p interface {
	lincheck.Target
	Close()
}, w lincheck.Workload) []porcupine.Operation {
	t.Helper()
	rec := lincheck.NewRecorder()
	errs := lincheck.RunInterleaved(p, w, rec, lincheck.NewHandleTable())
	p.Close()
	require.Empty(t, errs, "seed %d", w.Seed)
	h := rec.History()
	opts := checkOpts(t)
	opts.Name = fmt.Sprintf("%s-seed%d", opts.Name, w.Seed)
	_, err := lincheck.Check(m, h, opts)
	require.NoError(t, err, "seed %d:\n%s", w.Seed, lincheck.Describe(h))
	return h
}

// forgetful is a deliberately broken relaunch: the new instance starts on
// an empty file, as a reopen that forgot the committed entries would.
type forgetful struct{ *lincheck.Process }

func (f forgetful) Relaunch() error {
	if err := f.Process.Relaunch(); err != nil {
		return err
	}
	return os.Remove(f.Opts.Path)
}

// blindSecond is a deliberately broken second process: it opens a file of
// its own, so it never sees what the first committed.
type blindSecond struct {
	*lincheck.Process
	dir string
}

func (b blindSecond) OpenSecond() (*cache.Cache, error) {
	return cache.Open(cache.Options{Path: filepath.Join(b.dir, "other")})
}

// TestBrokenRelaunchCaught: a reopen that forgets the committed entries,
// and a second process that does not see them, are reported illegal, with
// the visualization written. A scripted history shows each
// deterministically (commit, relaunch or open, look-up that must hit);
// random interleavings find both as well.
func TestBrokenRelaunchCaught(t *testing.T) {
	m := lincheck.NewModel(lincheck.ModelConfig{NoPartition: true})
	for _, tc := range []struct {
		name   string
		target func(*lincheck.Process, string) lincheck.Target
		w      lincheck.Workload
	}{
		{"forgetful-reopen", func(p *lincheck.Process, _ string) lincheck.Target { return forgetful{p} },
			lincheck.Workload{Clients: 3, Ops: 12, Names: 2, Variants: 2, Programs: 2, Relaunch: 3}},
		{"blind-second", func(p *lincheck.Process, dir string) lincheck.Target { return blindSecond{p, dir} },
			lincheck.Workload{Clients: 3, Ops: 12, Names: 2, Variants: 2, Programs: 2, Second: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Scripted: commit n0.v0, then look it up after a relaunch and
			// from a second process.
			dir := t.TempDir()
			p := newProcess(t, cache.Options{Path: filepath.Join(dir, "c")})
			tg := tc.target(p, dir)
			rec, hs := lincheck.NewRecorder(), lincheck.NewHandleTable()
			call(t, rec, 0, lincheck.Input{Kind: lincheck.KindInit}, tg.InitializeForProgram("p0"))
			insert(t, rec, tg, hs, 0, 0, 0)
			call(t, rec, 0, lincheck.Input{Kind: lincheck.KindFinalize}, tg.Finalize())
			if rl, ok := tg.(lincheck.Relauncher); ok && tc.w.Relaunch > 0 {
				call(t, rec, 0, lincheck.Input{Kind: lincheck.KindRelaunch}, rl.Relaunch())
				call(t, rec, 0, lincheck.Input{Kind: lincheck.KindInit}, tg.InitializeForProgram("p0"))
				lookUp(rec, tg, hs, 0, 0, 0)
			} else {
				sc, err := tg.(lincheck.SecondOpener).OpenSecond()
				require.NoError(t, err)
				defer sc.Close()
				call(t, rec, 1, lincheck.Input{Kind: lincheck.KindOpen2}, sc.InitializeForProgram("p0"))
				pc := rec.Call(1, lincheck.Input{Kind: lincheck.KindLookUp2})
				_, hit := sc.LookUp(lincheck.Key(0, 0))
				pc.Return(lincheck.Output{Hit: hit})
			}
			requireIllegal(t, m, rec.History())

			// Random interleavings: some seed among the first few finds it.
			found := false
			for seed := range uint64(40) {
				dir := t.TempDir()
				p, err := lincheck.NewProcess(cache.NewManager(nil), cache.Options{Path: filepath.Join(dir, "c")})
				require.NoError(t, err)
				w := tc.w
				w.Seed = seed
				rec := lincheck.NewRecorder()
				errs := lincheck.RunInterleaved(tc.target(p, dir), w, rec, lincheck.NewHandleTable())
				p.Close()
				require.Empty(t, errs)
				if _, err := lincheck.Check(m, rec.History(), illegalOpts(t)); errors.Is(err, lincheck.ErrNotLinearizable) {
					t.Logf("seed %d found it:\n%s", seed, lincheck.Describe(rec.History()))
					found = true
					break
				}
			}
			require.True(t, found, "no interleaving caught the broken %s", tc.name)
		})
	}
}

func call(t *testing.T, rec *lincheck.Recorder, c int, in lincheck.Input, err error) {
	t.Helper()
	require.NoError(t, err)
	rec.Call(c, in).Return(lincheck.Output{})
}

// requireIllegal checks that h is reported illegal and its visualization
// written.
func requireIllegal(t *testing.T, m porcupine.Model, h []porcupine.Operation) {
	t.Helper()
	rep, err := lincheck.Check(m, h, illegalOpts(t))
	require.ErrorIs(t, err, lincheck.ErrNotLinearizable, "history:\n%s", lincheck.Describe(h))
	require.Equal(t, porcupine.Illegal, rep.Result)
	st, err := os.Stat(rep.Visualization)
	require.NoError(t, err)
	require.Positive(t, st.Size())
}
