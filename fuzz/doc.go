// Package fuzz holds the native Go fuzz targets of xpwc; it has no code of
// its own outside tests. The seed corpus lives in testdata/fuzz/<Target>/,
// so a plain `go test ./...` replays every seed, and .ci/run fuzzes each
// target for a few seconds. docs/format.md gives the commands for a long run
// and the results of the last one.
package fuzz
