package main

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/xpwc/xpwc/kernels"
)

// kernelInfo is one row of `simrun kernels`. The seed is a number in JSON,
// as in every other --json output (a u32 is exact as a float64); the
// fingerprint is a hex string so that JSON tools that read numbers as
// float64 (jq, JavaScript) do not round the 64 bits. Text prints both in
// hex, as XNNPACK logs seeds.
type kernelInfo struct {
	Name          string `json:"name"`
	Seed          hex32  `json:"seed"`
	Fingerprint   string `json:"fingerprint"`
	LayoutVersion uint32 `json:"layout_version"`
	Elem          string `json:"elem"`
	NR            int    `json:"nr"`
	KR            int    `json:"kr"`
	SR            int    `json:"sr"`
	ComputePath   string `json:"compute_path"`
}

// cmdKernels lists the registered kernels with the seed and fingerprint a
// cache entry packed by each must carry (G1), so an engineer can compare
// them with what a cache file holds.
func cmdKernels(e *env, args []string) int {
	fs := newFlagSet(e, "kernels", "simrun kernels [--json]")
	asJSON := fs.Bool("json", false, "print a JSON list instead of a table")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if code := extraArgs(e, fs, "kernels"); code >= 0 {
		return code
	}
	reg := kernels.NewRegistry()
	var rows []kernelInfo
	for _, k := range reg.Kernels() {
		elem, nr, kr, sr := k.Params()
		rows = append(rows, kernelInfo{
			Name:          k.Name(),
			Seed:          hex32(k.Seed()),
			Fingerprint:   fmt.Sprintf("0x%016x", k.Fingerprint()),
			LayoutVersion: k.LayoutVersion(),
			Elem:          elem, NR: nr, KR: kr, SR: sr,
			ComputePath: k.ComputePath(),
		})
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rows); err != nil {
			fmt.Fprintf(e.stderr, "simrun kernels: %v\n", err)
			return exitProblem
		}
		return exitOK
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSEED\tFINGERPRINT\tVERSION\tELEM\tNR\tKR\tSR\tCOMPUTE")
	for _, r := range rows {
		def := ""
		if r.Name == reg.Default().Name() {
			def = " (default)"
		}
		fmt.Fprintf(tw, "%s%s\t0x%08x\t%s\t%d\t%s\t%d\t%d\t%d\t%s\n",
			r.Name, def, r.Seed, r.Fingerprint, r.LayoutVersion, r.Elem, r.NR, r.KR, r.SR, r.ComputePath)
	}
	if err := tw.Flush(); err != nil {
		fmt.Fprintf(e.stderr, "simrun kernels: %v\n", err)
		return exitProblem
	}
	return exitOK
}
