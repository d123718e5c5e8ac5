// Package faultinject holds the fault-injection tools of xpwc: the seams that
// stand in for the operating system when a test wants it to fail or crash.
//
//   - errorfs wraps any vfs.FS and fails chosen calls (ENOSPC, EIO, EINTR,
//     short writes, mmap failure, busy lock, read-only or missing directory),
//     so tests can check guarantee G8 (graceful fallback).
//   - crashfs is an in-memory vfs.FS that keeps volatile and durable state
//     apart and can simulate a process crash or a power loss after any
//     operation, for guarantees G1, G2 and G3 under the crash model of
//     docs/faults.md.
//   - corrupt is the corruption matrix (G7, G1): damaged files of both
//     formats through the parsers and through the cache.
//   - crashpoint drives the cache through those seams: crash-point and
//     error-point enumeration of workloads, random faults over launch
//     sequences, two crashes in a row, a full disk of every size.
//   - realcrash kills real processes with SIGKILL during saves and truncates
//     a file under a live mapping from another process.
//
// See docs/faults.md for how to use them and what they found.
package faultinject
