package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/xpwc/xpwc/model"
	"github.com/xpwc/xpwc/model/explore"
	"github.com/xpwc/xpwc/sim"
	"github.com/xpwc/xpwc/spec"
)

// counterexamples says where an exploration's violations and lassos go
// besides the report: Mermaid diagrams on stdout, scenario files (with a
// .mmd diagram beside each) in a directory.
type counterexamples struct {
	mermaid bool
	dir     string
}

// makeDir makes the scenario directory, if one is asked for, before the
// exploration: a missing one is made (as simrun random makes --out), and
// one that cannot be made is reported before minutes of search, not after.
func (c counterexamples) makeDir() error {
	if c.dir == "" {
		return nil
	}
	return os.MkdirAll(c.dir, 0o755)
}

func (c counterexamples) write(e *env, d model.Design, r explore.Result) error {
	if !c.mermaid && c.dir == "" {
		return nil
	}
	type cex struct {
		name, header string
		inv          spec.InvariantID
		ops          []spec.Op
		cycleFrom    int
	}
	var all []cex
	for _, v := range r.Violations {
		all = append(all, cex{fmt.Sprintf("%s-%s", d.Name, v.Invariant),
			fmt.Sprintf("Explorer counterexample: %s breaks %s at the last step (shortest trace).", d.Name, v.Invariant),
			v.Invariant, v.Trace, -1})
	}
	for _, l := range r.Liveness.Violations {
		ops := append(append([]spec.Op(nil), l.Prefix...), l.Cycle...)
		all = append(all, cex{fmt.Sprintf("%s-%s-lasso", d.Name, l.Invariant),
			fmt.Sprintf("Explorer lasso: %s never converges (%s): after the first %d ops, the last %d ops lead back to the state they start from, every process finalizes in them, and no launch in them hits everything and writes nothing.",
				d.Name, l.Invariant, len(l.Prefix), len(l.Cycle)),
			l.Invariant, ops, len(l.Prefix)})
	}
	for _, x := range all {
		pic, err := explore.Mermaid(&d, r.Bounds, x.ops, x.cycleFrom, x.inv)
		if err != nil {
			return err
		}
		if c.mermaid {
			fmt.Fprintf(e.stdout, "\n%s:\n```mermaid\n%s```\n", x.name, pic)
		}
		if c.dir == "" {
			continue
		}
		text, err := sim.FormatScenario([]string{x.header}, d.Name, r.Bounds, x.ops)
		if err != nil {
			return err
		}
		base := filepath.Join(c.dir, x.name)
		if err := os.WriteFile(base, []byte(text), 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(base+".mmd", []byte(pic), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "simrun explore: wrote %s and %s.mmd\n", base, base)
	}
	return nil
}
