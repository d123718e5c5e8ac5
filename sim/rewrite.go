package sim

import "strings"

// Rewrite returns text with each directive's expected output replaced by
// got[line] (keyed by the directive's 1-based line), keeping comments,
// blank lines and directives as they are. Directives without an entry keep
// their expected output. It is simrun replay --rewrite, for engineers
// without a Go toolchain at hand; go test uses datadriven's -rewrite.
func Rewrite(text string, got map[int]string) (string, error) {
	ds, err := ParseScenario(text)
	if err != nil {
		return "", err
	}
	lines := strings.Split(text, "\n")
	var b strings.Builder
	next := 0 // next line of text to copy
	for k, d := range ds {
		i := d.Line - 1
		for ; next <= i; next++ {
			b.WriteString(lines[next] + "\n")
		}
		out, ok := got[d.Line]
		if !ok {
			out = d.Expected
		}
		out = strings.TrimRight(out, "\n")
		if strings.Contains(out, "\n\n") {
			b.WriteString("----\n----\n" + out + "\n----\n----\n")
		} else {
			b.WriteString("----\n" + out + "\n")
		}
		// Skip the old expected block: up to the next directive or comment
		// that ParseScenario would see, i.e. the line after its blank.
		end := len(lines)
		if k+1 < len(ds) {
			end = ds[k+1].Line - 1
		}
		next = i + 1
		for next < end && !blankOrComment(lines, next, end) {
			next++
		}
	}
	for ; next < len(lines); next++ {
		b.WriteString(lines[next])
		if next < len(lines)-1 {
			b.WriteString("\n")
		}
	}
	return b.String(), nil
}

// blankOrComment reports whether line j starts the gap before the next
// directive: a blank line after which only blanks and comments remain up
// to end.
func blankOrComment(lines []string, j, end int) bool {
	if strings.TrimSpace(lines[j]) != "" {
		return false
	}
	for k := j; k < end; k++ {
		l := strings.TrimSpace(lines[k])
		if l != "" && !strings.HasPrefix(l, "#") {
			return false
		}
	}
	return true
}
