package cache

import (
	"go/ast"
	"go/parser"
	"go/token"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHeapCodesCoverEveryReason reads the HeapReason constants from
// stats.go and checks that each has a heap code that gives it back, so a
// reason added without a code fails here rather than at an insert.
func TestHeapCodesCoverEveryReason(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "stats.go", nil, 0)
	require.NoError(t, err)
	n := 0
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			if id, ok := v.Type.(*ast.Ident); !ok || id.Name != "HeapReason" {
				continue
			}
			lit := v.Values[0].(*ast.BasicLit).Value
			r := HeapReason(lit[1 : len(lit)-1])
			require.Equal(t, r, heapCodeOf(r).reason())
			n++
		}
	}
	listed := 0
	for _, r := range heapReasons() {
		if r != "" {
			listed++
		}
	}
	require.Equal(t, listed, n, "heapReasons lists a reason stats.go does not declare")
}
