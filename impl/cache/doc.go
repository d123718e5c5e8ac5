// Package cache is the reference implementation of the persistent cache of
// packed weights: XNNPACK's weights-cache provider (look up, reserve, look up
// or insert, bytes of a handle) with ExecuTorch's lifecycle (initialize for a
// program, finalize, save, delete a program's entries, close), meeting the
// guarantees G1–G8 of the design.
//
// A Cache with no path packs to the heap and never touches a file (G6). With
// a path it loads the committed index of the file on first use, serves hits
// from a read-only shared mapping, packs misses into space appended to the
// file, and commits at Finalize (or Save) only when something changed (G4).
// Every failure of the file (missing directory, busy lock, full disk, corrupt
// content) turns into heap packing with a reason recorded in Stats; the
// cache never fails inference because of its file (G8).
//
// One weight, cached (the package's Example, which go test runs): Program
// brackets a launch and commits it, NewKey names the weight with a digest
// of its unpacked values (G1), Get looks it up and packs it on a miss:
//
//	c, err := cache.Open(cache.Options{Path: "model.xpwc"})
//	...
//	err = c.Program("model", func() error {
//		key := cache.NewKey("fc.weight", "fc.bias", k, w, b)
//		packed, err := c.Get(key, k.PackedSize(64, 32), func(dst []byte) error {
//			return k.Pack(dst, 64, 32, w, b)
//		})
//		_ = packed // the kernel computes from these bytes
//		return err
//	})
//
// Close ends the Cache; it reports packed entries never committed.
// XNNPACK-shaped callers use LookUp, ReserveSpace, LookUpOrInsert and Bytes
// directly (Example_provider).
//
// docs/cache.md describes the lifecycle, the commit protocol and the
// verification policy; docs/locking.md the lock protocol.
package cache
