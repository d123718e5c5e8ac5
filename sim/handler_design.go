package sim

import (
	"fmt"
	"strings"

	"github.com/xpwc/xpwc/model"
)

func (r *Runner) execDesign(line string, args []string) (string, error) {
	if r.started {
		return "", &HarnessError{Line: line, Msg: "design must come before the first lifecycle directive"}
	}
	if r.v2 {
		return "", &HarnessError{Line: line, Msg: "format v2 named the design already"}
	}
	name, ok := argValue(args, "name")
	if !ok || len(args) != 1 {
		return "", &HarnessError{Line: line, Msg: "want design name=NAME"}
	}
	d, err := model.DesignByName(name)
	if err != nil {
		return "", &HarnessError{Line: line, Msg: err.Error()}
	}
	r.design = d
	mode := "lockstep with the cache"
	if !r.lockstep() {
		mode = "model only"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s)\nsource: %s", d.Name, mode, d.Source)
	if len(d.Expect) > 0 {
		fmt.Fprintf(&b, "\nknown to break: %v", d.Expect)
	}
	return b.String(), nil
}

func (r *Runner) execBounds(line string, args []string) (string, error) {
	if r.started {
		return "", &HarnessError{Line: line, Msg: "bounds must come before the first lifecycle directive"}
	}
	b := r.bounds
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		var n int
		if _, err := fmt.Sscanf(v, "%d", &n); !ok || err != nil {
			return "", &HarnessError{Line: line, Msg: "want key=number: " + a}
		}
		switch k {
		case "procs":
			b.Procs = n
		case "names":
			b.Names = n
		case "programs":
			b.Programs = n
		case "kernels":
			b.Kernels = n
		case "sources":
			b.Sources = n
		default:
			return "", &HarnessError{Line: line, Msg: "unknown bound " + k}
		}
	}
	if err := b.Validate(); err != nil {
		return "", &HarnessError{Line: line, Msg: err.Error()}
	}
	r.bounds = b
	return fmt.Sprintf("procs=%d names=%d programs=%d kernels=%d sources=%d", b.Procs, b.Names, b.Programs, b.Kernels, b.Sources), nil
}
