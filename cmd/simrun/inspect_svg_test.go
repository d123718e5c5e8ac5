package main

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/spec/spectest"
)

// svgRange is one <g class="range KIND"> of inspect --svg, as a reader of
// the XML finds it, with the rectangles drawn for it.
type svgRange struct {
	kind, name     string
	offset, length int64
	rects          []svgRect
}

type svgRect struct{ x, y, w float64 }

// parseSVG reads inspect --svg's output as XML: the map's row scale, its
// ranges in document order and the kinds its legend lists, with their
// text.
func parseSVG(t *testing.T, doc string) (rowBytes, rowWidth float64, ranges []svgRange, legend map[string]string) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(doc))
	legend = map[string]string{}
	var cur *svgRange
	var legendKind string
	root := true
	attr := func(e xml.StartElement, name string) string {
		for _, a := range e.Attr {
			if a.Name.Local == name {
				return a.Value
			}
		}
		return ""
	}
	num := func(s string) float64 {
		f, err := strconv.ParseFloat(s, 64)
		require.NoError(t, err, "number %q", s)
		return f
	}
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err, "inspect --svg is well-formed XML")
		switch e := tok.(type) {
		case xml.StartElement:
			if root {
				require.Equal(t, "svg", e.Name.Local)
				require.Equal(t, "http://www.w3.org/2000/svg", e.Name.Space)
				root = false
			}
			class := attr(e, "class")
			switch {
			case e.Name.Local == "g" && attr(e, "id") == "map":
				rowBytes, rowWidth = num(attr(e, "data-row-bytes")), num(attr(e, "data-row-width"))
			case e.Name.Local == "g" && strings.HasPrefix(class, "range "):
				require.Nil(t, cur, "ranges do not nest")
				cur = &svgRange{kind: strings.TrimPrefix(class, "range "), name: attr(e, "data-name"),
					offset: int64(num(attr(e, "data-offset"))), length: int64(num(attr(e, "data-length")))}
			case e.Name.Local == "g" && strings.HasPrefix(class, "legend "):
				legendKind = strings.TrimPrefix(class, "legend ")
			case e.Name.Local == "rect" && cur != nil:
				cur.rects = append(cur.rects, svgRect{num(attr(e, "x")), num(attr(e, "y")), num(attr(e, "width"))})
			}
		case xml.CharData:
			if legendKind != "" {
				legend[legendKind] += string(e)
			}
		case xml.EndElement:
			if e.Name.Local == "g" && cur != nil {
				ranges = append(ranges, *cur)
				cur = nil
			} else if e.Name.Local == "g" {
				legendKind = ""
			}
		}
	}
	return rowBytes, rowWidth, ranges, legend
}

// TestInspectSVGDrawsEveryRange: inspect --svg draws every range of the
// byte map inspect --map lists, in order, with its kind as class, its
// offset and length, and rectangles whose widths add up to its length at
// the picture's scale, each starting where its bytes start in its row;
// the legend lists every kind present with its bytes. For v2 and v3 files,
// with garbage and superseded indexes, and for files ExecuTorch wrote.
func TestInspectSVGDrawsEveryRange(t *testing.T) {
	files := goldenFiles(t)
	for _, f := range spectest.ExecuTorchFiles() {
		files["executorch-"+f.Name] = f.File
	}
	for name, file := range files {
		path := writeFile(t, file)
		code, js, errOut := runInspect(t, path, "--json", "--map")
		require.Equal(t, exitOK, code, "%s: %s", name, errOut)
		rep := decodeReport(t, js)
		require.NotEmpty(t, rep.Map, name)

		code, doc, errOut := runInspect(t, path, "--svg")
		require.Equal(t, exitOK, code, "%s: %s", name, errOut)
		require.Empty(t, errOut, name)
		rowBytes, rowWidth, ranges, legend := parseSVG(t, doc)
		require.Positive(t, rowBytes, name)
		scale := rowWidth / rowBytes
		require.Len(t, ranges, len(rep.Map), "%s: one group per range of the map", name)
		totals := map[string]int64{}
		for i, m := range rep.Map {
			r := ranges[i]
			at := fmt.Sprintf("%s: range %d %+v", name, i, m)
			require.Equal(t, m.Kind, r.kind, at)
			require.Equal(t, m.Offset, r.offset, at)
			require.Equal(t, m.Length, r.length, at)
			require.Equal(t, termSafe(m.Name), r.name, at)
			require.NotEmpty(t, r.rects, at)
			var width float64
			for _, rc := range r.rects {
				width += rc.w
			}
			// Widths are written to a thousandth of a pixel.
			require.InDelta(t, float64(m.Length), width/scale, float64(len(r.rects))*0.001/scale, at)
			first := r.rects[0]
			require.InDelta(t, svgLeft+float64(m.Offset%int64(rowBytes))*scale, first.x, 0.001, at)
			require.InDelta(t, svgTop+float64(m.Offset/int64(rowBytes))*(svgRowHeight+svgRowGap), first.y, 0.05, at)
			for _, rc := range r.rects {
				require.LessOrEqual(t, rc.x+rc.w, svgLeft+rowWidth+0.001, "%s: no rectangle runs past its row", at)
			}
			totals[m.Kind] += m.Length
		}
		require.Len(t, legend, len(totals), "%s: the legend lists the kinds present: %v", name, legend)
		for kind, n := range totals {
			require.Contains(t, legend[kind], fmt.Sprintf(": %d bytes", n), "%s: legend of %s", name, kind)
		}
	}
}

// TestInspectSVGRefusesWhatItCannotDraw: a file that is no cache file is
// input inspect cannot use (exit 2), a cache file that fails its checks a
// finding (exit 1); each gets one line on stderr and nothing on stdout.
// --svg with --json or --map is a usage error.
func TestInspectSVGRefusesWhatItCannotDraw(t *testing.T) {
	text := writeFile(t, []byte("these are not the weights you are looking for\n"))
	code, out, errOut := runInspect(t, text, "--svg")
	require.Equal(t, exitUsage, code)
	require.Empty(t, out)
	require.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
	require.Contains(t, errOut, "not a cache file")

	b := spectest.NewV3(4096)
	b.Save(spectest.Weights(2, 1000, 1))
	bad := append([]byte(nil), b.File...)
	bad[4096] ^= 0xff // entry data: a checksum mismatch
	code, out, errOut = runInspect(t, writeFile(t, bad), "--svg")
	require.Equal(t, exitProblem, code)
	require.Empty(t, out)
	require.Equal(t, 1, strings.Count(errOut, "\n"), errOut)

	for _, flag := range []string{"--json", "--map"} {
		code, out, errOut = runInspect(t, writeFile(t, b.File), "--svg", flag)
		require.Equal(t, exitUsage, code, flag)
		require.Empty(t, out, flag)
		require.Contains(t, errOut, "--svg", flag)
	}
}
