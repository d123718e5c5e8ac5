// Package model is the executable abstract model of the cache lifecycle: a
// pure, value-typed State and a deterministic Step over the vocabulary of
// package spec (operations and environment events), with crash and power
// loss as explicit branches that list every allowed outcome.
//
// The model is used three ways: the bounded exhaustive explorer in
// model/explore checks every invariant of spec.Invariants at every
// transition; named Designs reproduce historical cache designs so that the
// explorer finds each one's bug; and the conformance harness holds the real
// cache (impl/cache) to the same steps.
//
// The API in brief:
//
//	Init(b Bounds) State                       // the start state
//	Step(d *Design, b Bounds, s State, op spec.Op) []Outcome
//	Alphabet(b Bounds) []spec.Op              // every op the explorer tries
//	Check(b Bounds, t Transition) []spec.InvariantID   // invariants t breaks
//	Replay(d *Design, b Bounds, ops []spec.Op) ([]Outcome, error)
//	Designs() []Design; DesignByName(name)
//	Covers() []Cover                           // reachability ("sometimes") goals
//
// What the model abstracts away: bytes (a packing is its identity: kernel
// version, source version, intact or not), offsets and sizes (a name's data
// is one range), the index encoding (it is a set of entries, valid or not),
// and time. See docs/model.md for the modelling choices and their reasons.
package model
