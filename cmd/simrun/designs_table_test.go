package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDesignTableIsCurrent: designs.json, from which explore
// --list-designs prints at the default bounds without exploring, is what
// exploring every design at those bounds finds (go test ./cmd/simrun -run
// DesignTable -update rewrites it).
func TestDesignTableIsCurrent(t *testing.T) {
	rows, err := exploreDesignTable()
	require.NoError(t, err)
	want, err := json.MarshalIndent(rows, "", "  ")
	require.NoError(t, err)
	want = append(want, '\n')
	if *updateGolden {
		require.NoError(t, os.WriteFile("designs.json", want, 0o644))
		return
	}
	require.Equal(t, string(want), string(designsJSON), "designs.json is stale: go test ./cmd/simrun -run DesignTable -update")
}

// explore --list-designs at the default bounds lists at once, with the
// table's figures; other bounds explore.
func TestListDesignsAtOnce(t *testing.T) {
	var out, errOut bytes.Buffer
	require.Equal(t, exitOK, run(&env{stdout: &out, stderr: &errOut}, []string{"explore", "--list-designs"}), errOut.String())
	require.Contains(t, out.String(), "from designs.json", "the list explored instead of reading the table")
	for name, r := range designTable() {
		line := ""
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.HasPrefix(l, name+" ") {
				line = l
			}
		}
		require.NotEmpty(t, line, "design %s not listed", name)
		for _, inv := range r.Found {
			require.Contains(t, line, inv)
		}
	}
}
