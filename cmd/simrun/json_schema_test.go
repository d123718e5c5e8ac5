package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/spec"
	"github.com/xpwc/xpwc/spec/spectest"
)

// dataMaps are JSON fields whose keys are data (reasons, policies,
// invariant IDs), not field names.
var dataMaps = map[string]bool{
	"repacks": true, "heap_by_reason": true, "known_divergences": true, "upgrade_repacks": true,
	"warm_ms_by_policy": true, "warm_speedup_by_policy": true, "warm_first_output_ms_by_policy": true,
	"warm_first_output_ms_by_prefault": true, "warm_first_output_off_ms_by_prefault": true,
	"warm_first_output_to_steady_by_prefault": true, "warm_first_output_to_off_by_prefault": true,
	"warm_checks_ahead_by_prefault": true,
}

var snakeCase = regexp.MustCompile(`^[a-z0-9]+(_[a-z0-9]+)*$`)

// fieldNames collects the field names of a decoded JSON value.
func fieldNames(v any, out map[string]bool) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			out[k] = true
			if !dataMaps[k] {
				fieldNames(x, out)
			}
		}
	case []any:
		for _, x := range v {
			fieldNames(x, out)
		}
	}
}

// TestJSONSchema: every --json output of simrun uses one snake_case schema,
// and every field name it prints is documented in docs/simrun.md, so a
// field renamed without the docs fails here.
func TestJSONSchema(t *testing.T) {
	dir := t.TempDir()
	v3 := filepath.Join(dir, "v3.cache")
	v2 := filepath.Join(dir, "v2.cache")
	file, _ := spectest.BuildV2(4096, spectest.Weights(2, 100, 1))
	file[len(file)-spec.V2FooterSize+8]++ // entry_count off by one: the footer is shown
	require.NoError(t, os.WriteFile(v2, file, 0o600))
	runs := [][]string{
		{"launch", "--cache", v3, "--json"},
		{"inspect", v3, "--json", "--map"},
		{"inspect", v2, "--json"},
		{"kernels", "--json"},
		{"diff", v3, v3, "--json"},
		{"explore", "--depth", "3", "--quiet", "--json"},
		{"random", "--runs", "2", "--steps", "10", "--out", dir, "--json"},
		{"bench", "--runs", "1", "--relaunches", "1", "--dir", dir, "--json"},
	}
	docs, err := os.ReadFile("../../docs/simrun.md")
	require.NoError(t, err)
	for _, args := range runs {
		var out, errOut bytes.Buffer
		run(&env{stdout: &out, stderr: &errOut}, args)
		var v any
		require.NoError(t, json.Unmarshal(out.Bytes(), &v), "%v: %s %s", args, out.String(), errOut.String())
		names := map[string]bool{}
		fieldNames(v, names)
		var sorted []string
		for n := range names {
			sorted = append(sorted, n)
		}
		sort.Strings(sorted)
		for _, n := range sorted {
			if !snakeCase.MatchString(n) {
				t.Errorf("simrun %s: field %q is not snake_case", args[0], n)
			}
			if !strings.Contains(string(docs), "`"+n+"`") {
				t.Errorf("simrun %s: field %q is not documented in docs/simrun.md", args[0], n)
			}
		}
	}
}
