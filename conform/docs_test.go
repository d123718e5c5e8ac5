package conform

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestProtocolDocumented: docs/conform.md names every request and every
// field of the messages, every capability and every kind of protocol fault, so a message added here
// without its documentation fails.
func TestProtocolDocumented(t *testing.T) {
	b, err := os.ReadFile("../docs/conform.md")
	require.NoError(t, err)
	doc := string(b)
	words := []string{OpHello, OpSetPath, OpInit, OpLookUp, OpReserve, OpInsert, OpIsFinalized, OpReadBytes,
		OpFinalize, OpSave, OpInvalidate, OpDeleteProgram, OpDestroy, CodeLockBusy,
		FaultGarbage, FaultOrder, FaultVersion, FaultTimeout, FaultExit, FaultStart, FaultCapability}
	words = append(words, Capabilities()...)
	// Every field of a request, a key and a response.
	for _, v := range []any{Request{}, Key{}, Response{}} {
		ty := reflect.TypeOf(v)
		for i := 0; i < ty.NumField(); i++ {
			name, _, _ := strings.Cut(ty.Field(i).Tag.Get("json"), ",")
			words = append(words, name)
		}
	}
	for _, w := range words {
		require.Contains(t, doc, "`"+w+"`", "docs/conform.md does not name %q", w)
	}
}
