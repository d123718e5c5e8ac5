package spec

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var updateDocs = flag.Bool("update", false, "rewrite docs/lifecycle.md from spec.LifecycleMarkdown")

// TestLifecycleDocFresh fails when docs/lifecycle.md is not what the spec's
// tables generate. Rewrite it with
//
//	go test ./spec -run LifecycleDoc -update
//
// (or XPWC_UPDATE_DOCS=1 go test ./spec -run LifecycleDoc).
func TestLifecycleDocFresh(t *testing.T) {
	path := filepath.Join("..", "docs", "lifecycle.md")
	want := LifecycleMarkdown()
	if *updateDocs || os.Getenv("XPWC_UPDATE_DOCS") == "1" {
		require.NoError(t, os.WriteFile(path, []byte(want), 0o644))
	}
	got, err := os.ReadFile(path)
	require.NoError(t, err, "docs/lifecycle.md missing: run go test ./spec -run LifecycleDoc -update")
	require.Equal(t, want, string(got), "docs/lifecycle.md is stale: run go test ./spec -run LifecycleDoc -update")
}

// The generated reference covers the whole vocabulary: every op kind has a
// description and a row in the phase table, every phase and entry status is
// reached, and the result lists have one row per constant, so adding a
// constant without documenting it fails here.
func TestLifecycleDocComplete(t *testing.T) {
	doc := LifecycleMarkdown()
	onPhase := ""
	for _, tr := range phaseTransitions {
		onPhase += tr.on + ", "
	}
	for _, k := range OpKinds() {
		require.NotEmpty(t, opDocs[k], "no description for %s", k)
		require.Contains(t, onPhase, k.String(), "%s missing from the phase table", k)
		for _, o := range exampleOps(k) {
			parsed, err := ParseOp(o.String())
			require.NoError(t, err, "example of %s does not parse", k)
			require.Equal(t, o, parsed)
		}
	}
	reached := map[Phase]bool{}
	for _, tr := range phaseTransitions {
		reached[tr.from], reached[tr.to] = true, true
	}
	require.Len(t, reached, len(phaseNames))
	statuses := map[EntryStatus]bool{}
	for _, tr := range entryTransitions {
		statuses[tr.from], statuses[tr.to] = true, true
	}
	require.Len(t, statuses, len(entryNames))
	require.Len(t, loadDocs, int(loadLimit)-1, "one row per LoadOutcome after LoadNone")
	for i, d := range loadDocs {
		require.Equal(t, LoadOutcome(i+1).String(), d.name, "rows in the order of the constants")
	}
	require.Len(t, placeDocs, int(PlaceHeap), "one row per Placement after PlaceNone")
	require.Len(t, reasonDocs, int(ReasonDesign), "one row per Reason after ReasonNone")
	require.Len(t, branchDocs, int(branchLimit)-1)
	for _, inv := range Invariants() {
		require.Contains(t, doc, string(inv.ID))
	}
	require.Equal(t, 2, strings.Count(doc, "```mermaid"))
}

// TestLoadOutcomeNames: every outcome has one name, and the name reads
// back as the outcome, as text and in JSON.
func TestLoadOutcomeNames(t *testing.T) {
	seen := map[string]bool{}
	for l := LoadNone; l < loadLimit; l++ {
		name := l.String()
		require.NotEmpty(t, name)
		require.False(t, seen[name], "two outcomes named %q", name)
		seen[name] = true
		back, err := ParseLoadOutcome(name)
		require.NoError(t, err)
		require.Equal(t, l, back)
		j, err := json.Marshal(l)
		require.NoError(t, err)
		require.Equal(t, `"`+name+`"`, string(j))
		var fromJSON LoadOutcome
		require.NoError(t, json.Unmarshal(j, &fromJSON))
		require.Equal(t, l, fromJSON)
	}
	_, err := ParseLoadOutcome("empty")
	require.Error(t, err)
	require.Equal(t, "LoadOutcome(200)", LoadOutcome(200).String())
}
