package sim

import (
	"fmt"
	"strings"

	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/spec"
)

// DescribePacking renders a packing as the model's records print it:
// k<kernel>s<source>, "!" when the bytes are not what was packed.
func DescribePacking(p spec.Packing) string {
	s := fmt.Sprintf("k%ds%d", p.Kernel, p.Source)
	if !p.Intact {
		s += "!"
	}
	return s
}

// DescribeResult renders what op observably returned: the scenario files'
// oracle. Only fields op can set are printed, so equal results print alike.
func DescribeResult(op spec.Op, r spec.Result) string {
	var w []string
	if r.Failed {
		w = append(w, "failed")
	}
	switch op.Kind {
	case spec.OpInit:
		w = append(w, "load="+r.Load.String(), "place="+describePlace(r.Place))
	case spec.OpLookUp:
		if r.Hit {
			w = append(w, "hit "+DescribePacking(r.Bytes))
		} else {
			w = append(w, "miss")
		}
		if r.Checked {
			w = append(w, "checked")
		}
	case spec.OpReserve:
		w = append(w, "place="+describePlace(r.Place))
	case spec.OpCompute:
		w = append(w, "bytes "+DescribePacking(r.Bytes))
		if r.Checked {
			w = append(w, "checked")
		}
		if r.Place != spec.PlaceNone {
			w = append(w, "repacked place="+describePlace(r.Place))
		}
		if r.Wrote {
			w = append(w, "wrote")
		}
	case spec.OpFinalize, spec.OpSave, spec.OpInvalidate:
		if r.Wrote {
			w = append(w, "wrote")
		} else {
			w = append(w, "no-write")
		}
	}
	if r.Reason != spec.ReasonNone {
		w = append(w, "reason="+describeReason(r.Reason))
	}
	if len(w) == 0 {
		return "ok"
	}
	return strings.Join(w, " ")
}

func describePlace(p spec.Placement) string {
	switch p {
	case spec.PlaceFile:
		return "file"
	case spec.PlaceHeap:
		return "heap"
	}
	return "none"
}

func describeReason(r spec.Reason) string {
	switch r {
	case spec.ReasonLockBusy:
		return "lock-busy"
	case spec.ReasonNoPath:
		return "no-path"
	case spec.ReasonDesign:
		return "design"
	}
	return fmt.Sprintf("Reason(%d)", r)
}

var eventNames = []struct {
	e    model.Events
	name string
}{
	{model.EvtCommit, "commit"},
	{model.EvtCompact, "compact"},
	{model.EvtReplace, "replace"},
	{model.EvtTruncate, "truncate"},
	{model.EvtCorruptCaught, "corrupt-caught"},
	{model.EvtStaleMiss, "stale-miss"},
	{model.EvtWarmHit, "warm-hit"},
	{model.EvtLockBusy, "lock-busy"},
	{model.EvtMidSave, "mid-save"},
	{model.EvtConverged, "converged"},
	{model.EvtLoadCorrupt, "load-corrupt"},
	{model.EvtInvalidated, "invalidated"},
	{model.EvtRefresh, "refresh"},
	{model.EvtUncheckedHandle, "unchecked-handle"},
	{model.EvtComputeRepack, "repack-at-compute"},
	{model.EvtFallbackMiss, "fallback-miss"},
}

// DescribeEvents names the model's internal happenings of a step (commit,
// compaction, a caught corruption, …): what the design docs narrate.
func DescribeEvents(e model.Events) string {
	var w []string
	for _, en := range eventNames {
		if e&en.e != 0 {
			w = append(w, en.name)
		}
	}
	return strings.Join(w, " ")
}

// DescribeDisk renders the cache file as a new process would find it, in
// the model's terms: empty, corrupt, or valid with each name's record.
func DescribeDisk(b model.Bounds, d model.Disk) string {
	switch d.State {
	case model.DiskEmpty:
		return "empty"
	case model.DiskCorrupt:
		return "corrupt"
	}
	return "valid " + describeIdx(b, d.Idx[:])
}

func describeIdx(b model.Bounds, idx []model.Rec) string {
	var w []string
	for n := 0; n < b.Names; n++ {
		w = append(w, fmt.Sprintf("%s=%s", spec.Name(n), idx[n].Content()))
	}
	return strings.Join(w, " ")
}
