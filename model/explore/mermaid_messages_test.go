package explore

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/spec"
)

const mermaidHeader = `sequenceDiagram
    participant A as process A
    participant B as process B
    participant F as cache file
    participant E as environment
`

// reserving is proc's launch of program up to its reservation of name.
func reserving(proc, program, name string) string {
	return "init proc=" + proc + " program=" + program + "\n" +
		"lookup proc=" + proc + " name=" + name + "\n" +
		"reserve proc=" + proc + " name=" + name + "\n"
}

// Every kind of arrow a diagram draws, each checked against what the op
// did in the model: a load reads the file, a miss and a heap reservation
// stay in the process (with the reason), a file reservation, an insert
// and a commit touch the file, the environment's events come from E, a
// crash and a foreign write cross the line; a lasso's cycle is a loop box,
// and a violation whose last step is the environment's is noted on E and
// the file.
func TestMermaidMessages(t *testing.T) {
	b := model.DefaultBounds()
	for _, c := range []struct {
		design    string
		trace     string
		cycleFrom int
		inv       spec.InvariantID
		want      string
	}{
		{"reference", reserving("A", "P1", "w0") + reserving("B", "P1", "w0") + `
insert proc=A name=w0
finalize proc=A
insert proc=B name=w0
finalize proc=B
init proc=A program=P2
lookup proc=A name=w0
finalize proc=A
unload proc=B program=P1
restart proc=B
clobber-options proc=A
foreign kind=data name=w0
upgrade-kernel
change-source name=w0
crash kind=process proc=B
crash kind=power
`, 14, spec.InvConverge, `    A->>F: init program=P1: load missing, file
    A->>A: lookup name=w0: miss
    A->>F: reserve name=w0: file
    B->>F: init program=P1: load locked, file
    B->>B: lookup name=w0: miss
    B->>B: reserve name=w0: heap (lock busy)
    A->>F: insert name=w0: file
    A->>F: finalize: commit
    B->>B: insert name=w0
    B->>B: finalize: writes nothing
    A->>F: init program=P2: load ok, file
    A->>A: lookup name=w0: hit
    A->>A: finalize: writes nothing
    B->>B: unload program=P1
    loop forever: no launch hits everything (I4-converge, G3)
    E->>B: restart proc=B
    E->>A: clobber-options proc=A
    E-xF: foreign kind=data name=w0
    E->>E: upgrade-kernel
    E->>E: change-source name=w0
    E-xB: crash kind=process proc=B branch=idle
    E-xF: crash kind=power branch=idle
    end
`},
		{"borrowed-options", `
init proc=A program=P1
clobber-options proc=A
lookup proc=A name=w0
reserve proc=A name=w0
insert proc=A name=w0
finalize proc=A
init proc=A program=P2
lookup proc=A name=w0
crash kind=power
`, -1, spec.InvOptionsOwned, `    A->>F: init program=P1: load missing, file
    E->>A: clobber-options proc=A
    A->>A: lookup name=w0: miss
    A->>F: reserve name=w0: file
    A->>F: insert name=w0: file
    A->>F: finalize: commit
    A->>F: init program=P2: load ok, heap
    A->>A: lookup name=w0: hit
    rect rgb(255, 210, 210)
    E-xF: crash kind=power branch=idle
    Note over E,F: breaks I9-options-owned (G6)
    end
`},
		{"repack-to-heap", reserving("A", "P1", "w0") + `
insert proc=A name=w0
finalize proc=A
upgrade-kernel
restart proc=A
` + reserving("A", "P1", "w0"), -1, spec.InvConverge, `    A->>F: init program=P1: load missing, file
    A->>A: lookup name=w0: miss
    A->>F: reserve name=w0: file
    A->>F: insert name=w0: file
    A->>F: finalize: commit
    E->>E: upgrade-kernel
    E->>A: restart proc=A
    A->>F: init program=P1: load ok, file
    A->>A: lookup name=w0: miss
    rect rgb(255, 210, 210)
    A->>A: reserve name=w0: heap (design)
    Note over A,F: breaks I4-converge (G3)
    end
`},
	} {
		d, err := model.DesignByName(c.design)
		require.NoError(t, err)
		ops, err := spec.ParseTrace(c.trace)
		require.NoError(t, err)
		pic, err := Mermaid(&d, b, ops, c.cycleFrom, c.inv)
		require.NoError(t, err)
		assert.Equal(t, mermaidHeader+c.want, pic, c.design)
	}
}

// A lasso's cycle may start at the first op (no prefix): the whole
// diagram is the loop box, with no red box. A cycle start past the last
// op draws no box at all, and no unmatched end.
func TestMermaidLoopBounds(t *testing.T) {
	d, err := model.DesignByName("reference")
	require.NoError(t, err)
	b := model.DefaultBounds()
	ops, err := spec.ParseTrace("init proc=A program=P1\nlookup proc=A name=w0\n")
	require.NoError(t, err)
	arrows := "    A->>F: init program=P1: load missing, file\n    A->>A: lookup name=w0: miss\n"
	pic, err := Mermaid(&d, b, ops, 0, spec.InvConverge)
	require.NoError(t, err)
	assert.Equal(t, mermaidHeader+"    loop forever: no launch hits everything (I4-converge, G3)\n"+arrows+"    end\n", pic)
	pic, err = Mermaid(&d, b, ops, len(ops), spec.InvConverge)
	require.NoError(t, err)
	assert.Equal(t, mermaidHeader+arrows, pic)
}
