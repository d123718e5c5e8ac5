// Command conform-adapter serves xpwc's own cache behind the conformance
// protocol (docs/conform.md) on stdin and stdout, so that
// `simrun conform --exec 'conform-adapter'` checks it the way it checks a
// cache in any other language.
//
//	conform-adapter [--design NAME] [--claim CAP,CAP...]
//
// Exit codes: 0 after destroy or end of input; 1 on an I/O error; 2 usage.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/xpwc/xpwc/conform"
)

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

func run(args []string, in io.Reader, out, errw io.Writer) int {
	fs := flag.NewFlagSet("conform-adapter", flag.ContinueOnError)
	fs.SetOutput(errw)
	design := fs.String("design", "reference", "the design to serve: reference, a design variant of the catalog, or executorch (a port of ExecuTorch's cache)")
	claim := fs.String("claim", "", "claim only these capabilities, comma-separated (default: the design's own; \"none\" claims none)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(errw, "conform-adapter: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	a, err := conform.GoAdapter(*design)
	if err != nil {
		fmt.Fprintf(errw, "conform-adapter: %v\n", err)
		return 2
	}
	if *claim != "" {
		a.Capabilities = nil
		for _, c := range strings.Split(*claim, ",") {
			if c != "none" {
				a.Capabilities = append(a.Capabilities, c)
			}
		}
	}
	if err := conform.Serve(a, in, out); err != nil {
		fmt.Fprintf(errw, "conform-adapter: %v\n", err)
		return 1
	}
	return 0
}
