package main

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// The picture is the file laid out like a hex dump: rows of svgRowWidth
// pixels, each standing for the same number of bytes (a whole number of
// pages, so entries start at a row's page marks), every range of the byte
// map a run of rectangles at its true length. A proportional bar would
// shrink a 512-byte commit slot to nothing beside megabytes of data; rows
// keep small ranges visible while every pixel still stands for the same
// bytes.
const (
	svgRowWidth  = 960.0
	svgRowHeight = 26.0
	svgRowGap    = 6.0
	svgLeft      = 84.0 // room for the row's offset
	svgTop       = 44.0 // room for the heading
	svgMaxRows   = 32
	svgCharWidth = 6.6 // of the 11px label font, for fitting labels
)

// svgColors are the fills of the range kinds, in legend order. Garbage
// (dead) is the one warm red; what alignment left unused is a pale tint of
// the data it follows.
var svgColors = []struct{ kind, fill, legend string }{
	{"slot", "#5b4bb7", "commit slot"},
	{"header", "#c9c3ea", "header"},
	{"data", "#2f8f5b", "entry data"},
	{"padding", "#bfe3cc", "padding"},
	{"index", "#e39b25", "index"},
	{"footer", "#b5651d", "footer"},
	{"dead", "#d64541", "garbage"},
}

// svgDataAlt is the fill of every other entry's data, svgDeadNamed that of
// dead bytes spec.ExplainDead names (an earlier save's index or trailer).
const (
	svgDataAlt   = "#1d6b42"
	svgDeadNamed = "#8e1f1c"
)

// writeSVG draws rep's byte map (a valid file's, as --map lists it) as an
// SVG: each range a <g class="range KIND"> carrying its offset, length and
// name as data attributes and a tooltip, then a legend with the bytes of
// each kind. rep.Map must be set.
func writeSVG(w io.Writer, rep *inspectReport) error {
	unit := int64(rep.PageSize)
	if unit <= 0 {
		unit = 4096 // v2 files have no page size of their own; ExecuTorch aligns to the page
	}
	perRow := (rep.Size + unit*svgMaxRows - 1) / (unit * svgMaxRows) * unit
	perRow = max(perRow, unit)
	rows := int((rep.Size + perRow - 1) / perRow)
	scale := svgRowWidth / float64(perRow) // pixels per byte
	fill := map[string]string{}
	for _, c := range svgColors {
		fill[c.kind] = c.fill
	}
	totals := map[string]int64{}
	for _, m := range rep.Map {
		totals[m.Kind] += m.Length
	}
	shown := 0
	for _, c := range svgColors {
		if totals[c.kind] > 0 {
			shown++
		}
	}
	rowY := func(r int) float64 { return svgTop + float64(r)*(svgRowHeight+svgRowGap) }
	legendY := rowY(rows) + 10
	width := svgLeft + svgRowWidth + 16
	height := legendY + float64(shown)*18 + 10

	var b strings.Builder
	heading := fmt.Sprintf("%s: %s, %d bytes, %d entries; live %d, padding %d, garbage %d, a rewrite frees %d",
		rep.Path, rep.Format, rep.Size, len(rep.Entries), rep.LiveBytes, rep.PaddingBytes, rep.GarbageBytes, rep.ReclaimableBytes)
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="11">`+"\n",
		width, height, width, height)
	fmt.Fprintf(&b, "<title>%s</title>\n", svgEscape(heading))
	fmt.Fprintf(&b, `<text x="%.0f" y="18" font-size="13" font-weight="bold">%s</text>`+"\n", svgLeft, svgEscape(rep.Path))
	fmt.Fprintf(&b, `<text x="%.0f" y="34" fill="#444">%s, %d bytes; each row is %d bytes; hover a range for its offset and length</text>`+"\n",
		svgLeft, svgEscape(rep.Format), rep.Size, perRow)
	for r := range rows {
		fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" text-anchor="end" fill="#666">%d</text>`+"\n",
			svgLeft-6, rowY(r)+svgRowHeight/2+4, int64(r)*perRow)
	}
	fmt.Fprintf(&b, `<g id="map" data-row-bytes="%d" data-row-width="%.0f">`+"\n", perRow, svgRowWidth)
	// An entry is labelled "weight + bias" where the file keeps them apart
	// (v3); the map names it as ExecuTorch keys it, the two glued.
	display := map[int64]string{}
	for _, en := range rep.Entries {
		if en.Bias != "" {
			display[int64(en.Offset)] = termSafe(en.Weight) + " + " + termSafe(en.Bias)
		}
	}
	entries := 0
	for _, m := range rep.Map {
		color := fill[m.Kind]
		if m.Kind == "data" {
			// Every other entry a shade darker, so that entries which
			// follow each other without padding still show apart.
			if entries%2 == 1 {
				color = svgDataAlt
			}
			entries++
		}
		if m.Kind == "dead" && m.Name != "" {
			color = svgDeadNamed
		}
		// termSafe: a forged name's control bytes are not even legal
		// escaped in XML.
		name := termSafe(m.Name)
		shown := name
		if d, ok := display[m.Offset]; ok && m.Kind == "data" {
			shown = d
		}
		label := m.Kind
		if shown != "" {
			label += " " + shown
		}
		fmt.Fprintf(&b, `<g class="range %s" data-offset="%d" data-length="%d" data-name="%s">`, m.Kind, m.Offset, m.Length, svgEscape(name))
		fmt.Fprintf(&b, "<title>%s: offset %d, %d bytes</title>", svgEscape(label), m.Offset, m.Length)
		// One rectangle per row the range crosses; the widest one gets
		// the entry's name when it fits.
		var best struct{ x, y, w float64 }
		for off, end := m.Offset, m.Offset+m.Length; off < end; {
			row := off / perRow
			stop := min(end, (row+1)*perRow)
			x := svgLeft + float64(off-row*perRow)*scale
			wd := float64(stop-off) * scale
			y := rowY(int(row))
			fmt.Fprintf(&b, `<rect x="%.3f" y="%.1f" width="%.3f" height="%.0f" fill="%s"/>`, x, y, wd, svgRowHeight, color)
			if wd > best.w {
				best.x, best.y, best.w = x, y, wd
			}
			off = stop
		}
		if (m.Kind == "data" || m.Kind == "dead") && shown != "" {
			if text, ok := fitLabel(shown, best.w-8); ok {
				fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" fill="#fff">%s</text>`, best.x+4, best.y+svgRowHeight/2+4, svgEscape(text))
			}
		}
		b.WriteString("</g>\n")
	}
	b.WriteString("</g>\n")
	fmt.Fprintf(&b, `<g id="legend">`+"\n")
	y := legendY
	for _, c := range svgColors {
		n := totals[c.kind]
		if n == 0 {
			continue
		}
		legend := c.legend
		if c.kind == "dead" {
			legend += " (darker: an earlier save's index or trailer)"
		}
		fmt.Fprintf(&b, `<g class="legend %s"><rect x="%.0f" y="%.0f" width="12" height="12" fill="%s"/><text x="%.0f" y="%.0f">%s: %d bytes</text></g>`+"\n",
			c.kind, svgLeft, y, c.fill, svgLeft+18, y+10, legend, n)
		y += 18
	}
	b.WriteString("</g>\n</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// fitLabel is s, or s shortened with an ellipsis, in at most room pixels;
// false when not even a few characters fit.
func fitLabel(s string, room float64) (string, bool) {
	fits := int(room / svgCharWidth)
	switch n := utf8.RuneCountInString(s); {
	case n <= fits:
		return s, true
	case fits < 5:
		return "", false
	default:
		return string([]rune(s)[:fits-1]) + "…", true
	}
}

// svgEscape escapes text and attribute values (quotes included).
func svgEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;").Replace(s)
}
