package report

import (
	"unicode"

	"github.com/tokenpulse/tokenpulse/report/svg"
)

// The charts are drawn with no browser at hand, so the width of a text is
// estimated from its characters. The estimate follows DejaVu Sans, the
// widest of the fonts that the charts' font list falls back to on Linux
// (Helvetica, Arial and Segoe UI are narrower), so a label sized from it
// fits in any of them.

// Font sizes of the charts, in pixels.
const (
	fontSize  = 11.0 // labels and axis text
	smallSize = 10.0 // bin counts and marker tags
	// boldWidth is how much wider bold text is than regular: estimate
	// bold text's width at fontSize*boldWidth.
	boldWidth = 1.1
)

// runeEm returns the estimated advance of r in ems.
func runeEm(r rune) float64 {
	switch {
	case isWide(r):
		return 1
	case r >= '0' && r <= '9':
		return 0.64
	case r == 'm' || r == 'w':
		return 0.98
	case r == 'M' || r == 'W' || r == '%':
		return 1.0
	case r == '#' || r == '→' || r == '×' || r == '<' || r == '>' || r == '=' || r == '+' || r == '~':
		return 0.84
	}
	switch r {
	case 'i', 'j', 'l', '.', ',', ':', ';', '\'', '!', '|', '·':
		return 0.32
	case 'f', 't', 'r', 'I', '(', ')', '[', ']', '-', ' ', '/', '\\':
		return 0.42
	case 's', 'z', 'c', 'k', 'v', 'x', 'y', '_', '"', '…':
		return 0.6
	}
	if unicode.IsUpper(r) {
		return 0.78
	}
	return 0.64
}

// isWide reports whether r is drawn a full em wide: CJK ideographs, kana,
// Hangul, fullwidth forms and the like.
func isWide(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) ||
		(r >= 0x3000 && r <= 0x303f) || // CJK punctuation
		(r >= 0xff00 && r <= 0xff60) || (r >= 0xffe0 && r <= 0xffe6) || // fullwidth forms
		(r >= 0x1f300 && r <= 0x1faff) // emoji
}

// textWidth estimates the width in pixels of s drawn at size pixels.
func textWidth(s string, size float64) float64 {
	w := 0.0
	for _, r := range s {
		w += runeEm(r)
	}
	return w * size
}

// fitText returns s, or s cut and ended with an ellipsis so that it is at
// most maxW pixels wide at size pixels, and whether it was cut.
func fitText(s string, maxW, size float64) (string, bool) {
	if textWidth(s, size) <= maxW {
		return s, false
	}
	room := maxW - textWidth("…", size)
	w := 0.0
	for i, r := range s {
		w += runeEm(r) * size
		if w > room {
			return s[:i] + "…", true
		}
	}
	return s, false
}

// fittedText draws s at (x, y), cut with an ellipsis to at most maxW
// pixels; a cut text carries the whole of s in a <title>, which browsers
// show on hover.
func fittedText(c *svg.Canvas, x, y float64, s string, maxW, size float64, attrs ...svg.Attr) {
	shown, cut := fitText(s, maxW, size)
	if !cut {
		c.Text(x, y, s, attrs...)
		return
	}
	c.Group(svg.Class("cut"))
	c.Title(s)
	c.Text(x, y, shown, attrs...)
	c.End()
}

// box is an axis-aligned rectangle in chart pixels.
type box struct{ X0, Y0, X1, Y1 float64 }

// overlaps reports whether a and b share more than a hair of area.
func (a box) overlaps(b box) bool {
	const eps = 0.01
	return a.X0 < b.X1-eps && b.X0 < a.X1-eps && a.Y0 < b.Y1-eps && b.Y0 < a.Y1-eps
}

// textBox returns the estimated box of s drawn at (x, y) (y is the
// baseline) at size pixels with the SVG text-anchor anchor: its width
// from textWidth, its height the font's ascent and descent, as a
// browser's getBBox reports them.
func textBox(x, y float64, s string, size float64, anchor string) box {
	w := textWidth(s, size)
	switch anchor {
	case "middle":
		x -= w / 2
	case "end":
		x -= w
	}
	return box{x, y - 0.93*size, x + w, y + 0.24*size}
}

// placer keeps the boxes already taken on a chart so that later labels
// can avoid them.
type placer struct{ taken []box }

// free reports whether b overlaps no taken box.
func (p *placer) free(b box) bool {
	for _, t := range p.taken {
		if b.overlaps(t) {
			return false
		}
	}
	return true
}

// take marks b as taken.
func (p *placer) take(b box) { p.taken = append(p.taken, b) }
