package model

import "github.com/xpwc/xpwc/spec"

// Outcome is one successor of a state under an op. Op is the op as it
// happened: for a crash, with the Branch taken, so that a trace replays.
type Outcome struct {
	Op     spec.Op
	Next   State
	Result spec.Result
	// Events are internal happenings of the step that the result does not
	// show (a commit, a compaction, a caught corruption): reachability goals
	// and statistics read them.
	Events Events
}

// Events is a set of internal happenings of one step.
type Events uint16

const (
	EvtCommit          Events = 1 << iota // an index was committed
	EvtCompact                            // the commit rewrote the file by rename to drop garbage
	EvtReplace                            // the commit replaced an unreadable file by rename
	EvtTruncate                           // the file was truncated in place
	EvtCorruptCaught                      // a data check rejected corrupt bytes
	EvtStaleMiss                          // a look-up missed on a packing of another version
	EvtWarmHit                            // a look-up hit an entry loaded from the file
	EvtLockBusy                           // a reservation fell back to the heap on a busy lock
	EvtMidSave                            // a crash interrupted a commit
	EvtConverged                          // a launch that had to hit everything finished
	EvtLoadCorrupt                        // a load found an unreadable index
	EvtInvalidated                        // an invalidation was committed
	EvtRefresh                            // an init took in another process's commit
	EvtUncheckedHandle                    // a look-up handed out an entry whose check waits for its compute (on-compute)
	EvtComputeRepack                      // a compute's check failed and the entry was re-packed before the output
	EvtFallbackMiss                       // a look-up missed a heap fall-back packing: this launch can write the file
)
