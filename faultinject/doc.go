// Package faultinject holds the fault-injection tools of xpwc: the seams that
// stand in for the operating system when a test wants it to fail or crash.
//
//   - errorfs wraps any vfs.FS and fails chosen calls (ENOSPC, EIO, EINTR,
//     short writes, mmap failure, busy lock, read-only or missing directory),
//     so tests can check guarantee G8 (graceful fallback).
//   - crashfs is an in-memory vfs.FS that keeps volatile and durable state
//     apart and can simulate a process crash or a power loss after any
//     operation, for guarantees G1, G2 and G3 under the crash model of
//     DESIGN.md.
//   - corrupt and crashpoint drive the cache through those seams: the
//     corruption matrix (G7) and crash-point enumeration.
//
// See docs/faults.md for how to use them and what they found.
package faultinject
