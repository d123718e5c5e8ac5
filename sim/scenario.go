package sim

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/xpwc/xpwc/model"
)

//go:embed testdata/scenarios testdata/known
var embedded embed.FS

// ScenarioDir is the directory of the embedded scenarios inside Embedded;
// KnownDir holds the scenarios of known divergences (see Known).
const (
	ScenarioDir = "testdata/scenarios"
	KnownDir    = "testdata/known"
)

// Embedded is the scenario suite compiled into the package, so simrun
// replays it without a source checkout.
func Embedded() fs.FS { return embedded }

// File is one scenario file.
type File struct {
	Name string // path relative to the suite or as given
	Text string
	// Path is the file on the OS filesystem ("" for an embedded one).
	Path string
}

// Scenarios returns the embedded suite, sorted by name.
func Scenarios() ([]File, error) { return embeddedDir(ScenarioDir) }

// KnownScenarios returns the embedded scenarios of known divergences.
func KnownScenarios() ([]File, error) { return embeddedDir(KnownDir) }

func embeddedDir(dir string) ([]File, error) {
	var out []File
	err := fs.WalkDir(embedded, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".md") {
			return err
		}
		b, err := embedded.ReadFile(p)
		if err != nil {
			return err
		}
		out = append(out, File{Name: strings.TrimPrefix(p, dir+"/"), Text: string(b)})
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, err
}

// ReadFiles reads scenario files and directories (recursively) from the OS
// filesystem.
func ReadFiles(paths ...string) ([]File, error) {
	var out []File
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			b, err := os.ReadFile(p)
			if err != nil {
				return nil, err
			}
			out = append(out, File{Name: p, Text: string(b), Path: p})
			continue
		}
		err = fs.WalkDir(os.DirFS(p), ".", func(q string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".") || strings.HasSuffix(q, ".md") {
				return err
			}
			b, err := os.ReadFile(path.Join(p, q))
			if err != nil {
				return err
			}
			out = append(out, File{Name: path.Join(p, q), Text: string(b), Path: path.Join(p, q)})
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Backends lists the backends a scenario runs on: the model alone for a
// design variant; otherwise (the reference, on-compute) crashfs, and the OS filesystem unless the file
// has a power loss (which only crashfs can simulate) or, in v2, a crash
// inside a commit (only crashfs crashes a process alone).
// A file that does not parse gets the error, and crashfs alone, so that
// running it reports the error where it is (RunScenario).
func Backends(text string) ([]Backend, error) {
	ds, err := ParseScenario(text)
	if err != nil {
		return []Backend{BackendCrashFS}, err
	}
	power, v2, mid := false, false, false
	for _, d := range ds {
		f := strings.Fields(d.Text)
		if f[0] == "design" {
			if v, ok := argValue(f[1:], "name"); ok && !cleanDesign(v) {
				return []Backend{BackendModel}, nil
			}
		}
		if v, ok := strings.CutPrefix(f[0], "design="); ok && !cleanDesign(v) {
			return []Backend{BackendModel}, nil
		}
		if (f[0] == "crash") && strings.Contains(d.Text, "kind=power") {
			power = true
		}
		v2 = v2 || d.Text == directiveV2
		mid = mid || f[0] == "crash" && strings.Contains(d.Text, "branch=mid-save")
	}
	if power || v2 && mid {
		return []Backend{BackendCrashFS}, nil
	}
	return []Backend{BackendCrashFS, BackendOS}, nil
}

// cleanDesign reports whether the design named name breaks nothing (the
// reference, and the reference under the on-compute policy): the cache is
// held to it in lockstep.
func cleanDesign(name string) bool {
	d, err := model.DesignByName(name)
	return err == nil && len(d.Expect) == 0
}

// SyntaxError is a scenario file that does not parse, at a 1-based line.
// RunScenario reports it as FILE:LINE: like every other scenario error.
type SyntaxError struct {
	Line int
	Msg  string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// Directive is one directive of a scenario file with its expected output.
type Directive struct {
	Line     int // 1-based line of the directive
	Text     string
	Expected string
}

// String is the directive with its line number.
func (d Directive) String() string { return fmt.Sprintf("%d: %s", d.Line, d.Text) }

// ParseScenario reads the datadriven form: comment (#) and blank lines
// between directives, a directive line, "----", and the expected output up
// to a blank line (or, after "----" twice, up to "----" twice).
func ParseScenario(text string) ([]Directive, error) {
	lines := strings.Split(text, "\n")
	var out []Directive
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		d := Directive{Line: i + 1, Text: l}
		i++
		if i >= len(lines) || strings.TrimSpace(lines[i]) != "----" {
			return out, &SyntaxError{Line: d.Line, Msg: fmt.Sprintf("%q: want ---- after the directive", l)}
		}
		var exp []string
		if i+1 < len(lines) && strings.TrimSpace(lines[i+1]) == "----" {
			for i += 2; i < len(lines); i++ {
				if lines[i] == "----" && i+1 < len(lines) && lines[i+1] == "----" {
					i++
					break
				}
				exp = append(exp, lines[i])
			}
			if len(exp) > 0 && exp[len(exp)-1] == "" {
				exp = exp[:len(exp)-1]
			}
		} else {
			for i++; i < len(lines) && lines[i] != ""; i++ {
				exp = append(exp, lines[i])
			}
		}
		d.Expected = strings.Join(exp, "\n")
		out = append(out, d)
	}
	return out, nil
}
