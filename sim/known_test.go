package sim

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/spec"
)

// TestKnownDivergences replays each scenario of testdata/known, which must
// still stop at the known divergence its header names: the comparison of
// model and cache does find differences, and when the model or the cache
// changes to agree, this test says which scenario to move into
// testdata/scenarios.
func TestKnownDivergences(t *testing.T) {
	files, err := filepath.Glob("testdata/known/*[^d]") // not README.md
	require.NoError(t, err)
	emb, err := KnownScenarios()
	require.NoError(t, err)
	require.Len(t, emb, len(files))
	seen := map[string]bool{}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			id := knownID(string(b))
			require.NotEmpty(t, id, "header must name the divergence: # known: ID")
			seen[id] = true
			rep := RunScenario(File{Name: path, Text: string(b)}, Config{Backend: BackendCrashFS})
			var kd *KnownDivergenceError
			require.True(t, errors.As(rep.Err, &kd), "%s no longer diverges (%v): move it to testdata/scenarios", path, rep.Err)
			assert.Equal(t, id, kd.ID)
			assert.Empty(t, rep.Mismatches)
		})
	}
	for _, k := range KnownDivergences() {
		assert.True(t, seen[k.ID], "known divergence %s has no scenario in testdata/known", k.ID)
	}
}

func knownID(text string) string {
	for _, l := range strings.Split(text, "\n") {
		if id, ok := strings.CutPrefix(l, "# known: "); ok {
			return strings.TrimSpace(id)
		}
	}
	return ""
}

// A change to the file behind the model's back is a divergence at the next
// comparison: the lockstep can fail.
func TestDivergenceDetected(t *testing.T) {
	r, err := NewRunner(Config{Backend: BackendCrashFS})
	require.NoError(t, err)
	defer r.Close()
	for _, l := range []string{"init proc=A program=P1", "lookup proc=A name=w0", "reserve proc=A name=w0", "insert proc=A name=w0", "finalize proc=A", "restart proc=A"} {
		_, err := r.Exec(l)
		require.NoError(t, err, l)
	}
	op, err := parseOp("foreign kind=data name=w0")
	require.NoError(t, err)
	require.NoError(t, r.real.foreign(op)) // the model does not see it
	_, err = r.Exec("file")
	var d *DivergenceError
	require.ErrorAs(t, err, &d)
	assert.Equal(t, "file", d.What)
	assert.Equal(t, "valid w0=k0s0", d.Model)
	assert.Equal(t, "valid w0=k0s0!", d.Cache)

	_, err = r.Exec("init proc=B program=P1")
	require.NoError(t, err)
	_, err = r.Exec("lookup proc=B name=w0")
	require.ErrorAs(t, err, &d)
	assert.Equal(t, "hit k0s0 checked", d.Model)
	assert.Equal(t, "miss checked", d.Cache)
}

// A divergence matching a known predicate stops the run as a
// *KnownDivergenceError; any other stays a *DivergenceError.
func TestKnownClassification(t *testing.T) {
	run := func(known []Known) error {
		r, err := NewRunner(Config{Backend: BackendCrashFS})
		require.NoError(t, err)
		defer r.Close()
		r.known = known
		for _, l := range []string{"init proc=A program=P1", "lookup proc=A name=w0", "reserve proc=A name=w0", "insert proc=A name=w0", "finalize proc=A", "restart proc=A"} {
			_, err := r.Exec(l)
			require.NoError(t, err, l)
		}
		op, err := parseOp("foreign kind=data name=w0")
		require.NoError(t, err)
		require.NoError(t, r.real.foreign(op)) // behind the model's back
		_, err = r.Exec("init proc=B program=P1")
		require.NoError(t, err)
		_, err = r.Exec("lookup proc=B name=w0")
		return err
	}
	corruptMiss := Known{ID: "test-corrupt-miss", match: func(k knownCase) bool {
		return k.op.Kind == spec.OpLookUp && !k.got.Hit && k.out.Result.Hit
	}}
	var kd *KnownDivergenceError
	err := run([]Known{corruptMiss})
	require.ErrorAs(t, err, &kd)
	assert.Equal(t, "test-corrupt-miss", kd.ID)
	assert.Equal(t, "known", Signature(err)[:5])

	err = run(nil)
	var d *DivergenceError
	require.ErrorAs(t, err, &d)
	assert.False(t, errors.As(err, &kd))
}
