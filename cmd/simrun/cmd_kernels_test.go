package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/xpwc/xpwc/kernels"
)

func TestKernelsJSON(t *testing.T) {
	var out, errb bytes.Buffer
	require.Equal(t, exitOK, run(&env{stdout: &out, stderr: &errb}, []string{"kernels", "--json"}), errb.String())
	var rows []map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &rows))

	reg := kernels.NewRegistry()
	want := reg.Kernels()
	require.Len(t, rows, len(want))
	for i, k := range want {
		require.Equal(t, k.Name(), rows[i]["name"])
		require.Equal(t, fmt.Sprintf("0x%08x", k.Seed()), rows[i]["seed"], "seeds are hex strings, as in text and inspect")
		require.Equal(t, fmt.Sprintf("0x%016x", k.Fingerprint()), rows[i]["fingerprint"])
		_, nr, _, _ := k.Params()
		require.EqualValues(t, nr, rows[i]["nr"])
	}
}

func TestKernelsTable(t *testing.T) {
	var out, errb bytes.Buffer
	require.Equal(t, exitOK, run(&env{stdout: &out, stderr: &errb}, []string{"kernels"}), errb.String())
	reg := kernels.NewRegistry()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 1+len(reg.Kernels()))
	require.Contains(t, out.String(), "f32-goi-nr16 (default)")
	require.Contains(t, out.String(), fmt.Sprintf("0x%016x", reg.Default().Fingerprint()))
}

func TestKernelsUsage(t *testing.T) {
	for _, args := range [][]string{{"kernels", "--bogus"}, {"kernels", "extra"}} {
		var out, errb bytes.Buffer
		require.Equal(t, exitUsage, run(&env{stdout: &out, stderr: &errb}, args))
		require.Contains(t, errb.String(), "usage: simrun kernels")
		require.Empty(t, out.String())
	}
}
