package crashpoint

import (
	"fmt"

	"github.com/xpwc/xpwc/faultinject/crashfs"
	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/spec"
)

// FullDiskReport is the result of FullDisk.
type FullDiskReport struct {
	Format     spec.Format
	Capacities int // disk sizes tried
	Fallbacks  int // launches that recorded a fallback or a failed commit
	Violations []Violation
}

func (r FullDiskReport) String() string {
	return fmt.Sprintf("%s: %d disk sizes, %d launches fell back, violations %v", r.Format, r.Capacities, r.Fallbacks, byGuarantee(r.Violations))
}

// FullDisk runs a cold launch and an upgrade launch on disks of every size
// from nothing to enough, in steps of step bytes (crashfs capacity: ENOSPC
// comes from fallocate and writes, where a real full disk reports it). Each
// launch must go on and hand out right bytes (G8, G1); the previous commit
// must survive a failed one (G2); once space is freed, one launch re-packs
// and the next hits everything (G3).
func FullDisk(cfg Config, step int64) (FullDiskReport, error) {
	rep := FullDiskReport{Format: cfg.Format}
	opts := cache.Options{Path: Path, Format: cfg.Format}
	k1 := Keys(6, 1)
	k2 := Upgrade(k1)

	// How much the two launches need on an unlimited disk.
	probe := crashfs.New(crashfs.Options{})
	if err := probe.MkdirAll(Dir); err != nil {
		return rep, err
	}
	var need int64
	for _, ks := range [][]spec.Key{k1, k2} {
		if _, err := Launch(probe, opts, ks); err != nil {
			return rep, err
		}
		for _, b := range probe.Files() {
			need = max(need, int64(len(b)))
		}
	}
	need = 3*need + step // the old file and the new one coexist during a rewrite

	for capacity := int64(0); capacity <= need; capacity += step {
		rep.Capacities++
		fsys := crashfs.New(crashfs.Options{Capacity: max(capacity, 1)})
		if err := fsys.MkdirAll(Dir); err != nil {
			return rep, err
		}
		add := func(g, format string, args ...any) {
			rep.Violations = append(rep.Violations, Violation{Guarantee: g, Point: int(capacity), Crash: "none",
				Detail: fmt.Sprintf(format, args...)})
		}
		var saved []spec.Key
		for _, ks := range [][]spec.Key{k1, k2} {
			r, err := Launch(fsys, opts, ks)
			if err != nil {
				add("G8", "launch failed on a disk of %d bytes: %v", capacity, err)
				continue
			}
			for _, k := range r.Wrong {
				add("G1", "wrong bytes for %s", keyName(k))
			}
			if r.Stats.FallbackErr != nil || r.Stats.CommitErr != nil || len(r.Stats.HeapBytes) > 0 {
				rep.Fallbacks++
			}
			saved, _ = savedAfter(saved, ks, r)
		}
		fsys.SetCapacity(0)
		keys := k2
		if saved != nil {
			keys = saved
		}
		for _, v := range recoverAndCheck(fsys.ProcessCrash(), opts, keys, saved, Pack) {
			v.Point = int(capacity)
			rep.Violations = append(rep.Violations, v)
		}
	}
	return rep, nil
}
