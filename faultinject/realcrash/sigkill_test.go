//go:build linux

package realcrash

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/faultinject/crashpoint"
	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/vfs"
	"github.com/xpwc/xpwc/spec"
)

// childSaveLoop launches and saves until killed, printing SavedLine(i)
// after each launch whose commit succeeded.
func childSaveLoop(dir string) int {
	opts := cache.Options{Path: filepath.Join(dir, "model.xpwc"), Format: formatFromEnv()}
	for i := 0; ; i++ {
		r, err := crashpoint.Launch(vfs.OS(), opts, KeysFor(i))
		if err != nil {
			return childFail(3, "launch %d: %v", i, err)
		}
		if len(r.Wrong) > 0 {
			return childFail(4, "launch %d served wrong bytes for %v", i, r.Wrong)
		}
		if r.Committed {
			fmt.Println(SavedLine(i))
		}
	}
}

func formatFromEnv() spec.Format {
	if os.Getenv("XPWC_REALCRASH_FORMAT") == "v2" {
		return spec.FormatV2
	}
	return spec.FormatV3
}

func kills() int {
	if os.Getenv("XPWC_LONG") == "1" {
		return 300
	}
	return 6
}

// TestSIGKILLDuringSave kills a child at random instants of its launch and
// save loop and recovers in this process: the last save the child reported
// is all there (G2), no hit has wrong bytes (G1), and after one recovery
// launch the next hits everything (G3).
func TestSIGKILLDuringSave(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	for _, format := range []string{"v3", "v2"} {
		t.Run(format, func(t *testing.T) {
			seed := uint64(time.Now().UnixNano())
			rng := rand.New(rand.NewPCG(seed, 1))
			t.Logf("seed %d", seed)
			violations := map[string]int{}
			afterSave := 0
			for k := 0; k < kills(); k++ {
				dir := t.TempDir()
				// Start-up takes a few milliseconds; the window then covers
				// several launches, each with its commit.
				delay := time.Duration(5_000+rng.IntN(60_000)) * time.Microsecond
				last, err := runAndKill(t, dir, format, delay)
				require.NoError(t, err)
				if last >= 0 {
					afterSave++
				}
				for _, v := range recoverAfterKill(dir, format, last) {
					violations[v[:2]]++
					if format == "v3" {
						t.Errorf("kill %d after %v (last save %d): %s", k, delay, last, v)
					} else if violations[v[:2]] == 1 {
						t.Logf("v2: kill %d after %v (last save %d): %s", k, delay, last, v)
					}
				}
			}
			t.Logf("%s: %d processes killed with SIGKILL, %d after at least one reported save; violations %v", format, kills(), afterSave, violations)
		})
	}
}

// runAndKill starts the save loop in dir, kills it after delay and returns
// the index of the last save it reported (-1 for none).
func runAndKill(t *testing.T, dir, format string, delay time.Duration) (int, error) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envSaveLoop+"="+dir, "XPWC_REALCRASH_FORMAT="+format)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return -1, err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return -1, err
	}
	last := -1
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var i int
			if _, err := fmt.Sscanf(sc.Text(), "saved %d", &i); err == nil {
				last = i
			}
		}
	}()
	time.Sleep(delay)
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-done
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
		return last, nil
	}
	return last, fmt.Errorf("child did not die by SIGKILL: %v; stderr: %s", err, stderr.String())
}

// committedKeys reads the committed index of the file at path with the
// spec parsers, without a cache (and so without changing the file).
func committedKeys(path string) (map[spec.Key]bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	format, err := spec.DetectFormat(f, st.Size())
	if err != nil {
		return nil, err
	}
	var entries []spec.Entry
	if format == spec.FormatV2 {
		v, err := spec.ParseV2(f, st.Size())
		if err != nil {
			return nil, err
		}
		entries = v.Entries
	} else {
		v, err := spec.ParseV3(f, st.Size())
		if err != nil {
			return nil, err
		}
		entries = v.Entries
	}
	out := map[spec.Key]bool{}
	for _, e := range entries {
		out[e.Key] = true
	}
	return out, nil
}

// containsAll reports whether set holds every key of ks. v2 entries keep
// only the concatenated name and the seed, so keys are compared that way
// when set came from a v2 file.
func containsAll(set map[spec.Key]bool, ks []spec.Key, v2 bool) bool {
	for _, k := range ks {
		if v2 {
			k = spec.Key{Weight: k.V2Name(), Seed: k.Seed}
		}
		if !set[k] {
			return false
		}
	}
	return true
}

// recoverAfterKill checks the file the killed child left and runs the
// recovery launch and the next one in this process; it returns the
// guarantees they break. The child may have committed the launch after its
// last report before it died, so the committed index must hold the last
// reported save or the next one, whole (G2).
func recoverAfterKill(dir, format string, last int) []string {
	opts := cache.Options{Path: filepath.Join(dir, "model.xpwc"), Format: spec.FormatV3}
	if format == "v2" {
		opts.Format = spec.FormatV2
	}
	ks := KeysFor(max(last, 0))
	var out []string
	if last >= 0 {
		keys, err := committedKeys(opts.Path)
		switch {
		case err != nil:
			out = append(out, fmt.Sprintf("G2: the file does not load after save %d: %v", last, err))
		case containsAll(keys, ks, format == "v2"):
		case containsAll(keys, KeysFor(last+1), format == "v2"):
			ks = KeysFor(last + 1)
		default:
			out = append(out, fmt.Sprintf("G2: the committed index holds neither save %d nor %d", last, last+1))
		}
	}
	r1, err := crashpoint.Launch(vfs.OS(), opts, ks)
	if err != nil {
		return append(out, "G8: recovery launch failed: "+err.Error())
	}
	if len(r1.Wrong) > 0 {
		out = append(out, "G1: recovery served wrong bytes")
	}
	if len(out) == 0 && last >= 0 && len(r1.Misses) > 0 {
		out = append(out, fmt.Sprintf("G2: %d committed entries missed (load %s %v)", len(r1.Misses), r1.Stats.Load, r1.Stats.LoadErr))
	}
	r2, err := crashpoint.Launch(vfs.OS(), opts, ks)
	if err != nil {
		return append(out, "G8: second launch failed: "+err.Error())
	}
	if len(r2.Wrong) > 0 {
		out = append(out, "G1: second launch served wrong bytes")
	}
	if len(r2.Misses) > 0 {
		out = append(out, fmt.Sprintf("G3: second launch re-packed %d", len(r2.Misses)))
	}
	return out
}

// The harness must notice a lost save: a "saved" claim about a file that
// was removed afterwards is reported as G2.
func TestRecoveryCheckCanFail(t *testing.T) {
	dir := t.TempDir()
	opts := cache.Options{Path: filepath.Join(dir, "model.xpwc")}
	r, err := crashpoint.Launch(vfs.OS(), opts, KeysFor(0))
	require.NoError(t, err)
	require.True(t, r.Committed)
	require.NoError(t, os.Remove(opts.Path))
	vs := recoverAfterKill(dir, "v3", 0)
	require.NotEmpty(t, vs)
	assert.Contains(t, vs[0], "G2")
}
