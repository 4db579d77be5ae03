// Package svg writes small, deterministic SVG documents: a Canvas that
// appends elements, and linear and logarithmic scales that map data to
// pixels. It exists so that tokenpulse's reports draw their charts in plain
// Go, with no JavaScript and nothing fetched from the network, and so that
// the same data always gives the same bytes (golden-file tests rely on it).
//
//	c := svg.New(200, 100, "TTFT")
//	x := svg.Linear{D0: 0, D1: 500, R0: 10, R1: 190}
//	c.Rect(x.Map(0), 20, x.Map(120)-x.Map(0), 10, svg.A("class", "bar"))
//	os.Stdout.Write(c.Bytes())
//
// Numbers are written with at most two decimals and text is XML-escaped.
// A Canvas is not safe for concurrent use; scales are plain values.
package svg

import (
	"bytes"
	"encoding/xml"
	"math"
	"strconv"
	"strings"
)

// Attr is one attribute of an element.
type Attr struct{ Key, Value string }

// A returns the attribute key="value".
func A(key, value string) Attr { return Attr{key, value} }

// Class returns the attribute class="names".
func Class(names string) Attr { return Attr{"class", names} }

// Canvas accumulates the elements of one SVG document.
type Canvas struct {
	W, H  float64
	buf   bytes.Buffer
	depth int
}

// New starts a document w by h pixels whose accessible title is title.
// Extra attributes go on the root <svg> element.
func New(w, h float64, title string, attrs ...Attr) *Canvas {
	c := &Canvas{W: w, H: h}
	c.buf.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" width="` + Num(w) + `" height="` + Num(h) +
		`" viewBox="0 0 ` + Num(w) + " " + Num(h) + `" role="img"`)
	writeAttrs(&c.buf, attrs)
	c.buf.WriteString(">\n")
	if title != "" {
		c.buf.WriteString("<title>" + Escape(title) + "</title>\n")
	}
	return c
}

// Raw appends s unchanged (a <style> or <defs> block).
func (c *Canvas) Raw(s string) { c.buf.WriteString(s) }

// Rect appends a rectangle. Negative sizes are clamped to zero.
func (c *Canvas) Rect(x, y, w, h float64, attrs ...Attr) {
	c.elem("rect", []Attr{{"x", Num(x)}, {"y", Num(y)}, {"width", Num(math.Max(w, 0))}, {"height", Num(math.Max(h, 0))}}, attrs, "")
}

// Line appends a line from (x1, y1) to (x2, y2).
func (c *Canvas) Line(x1, y1, x2, y2 float64, attrs ...Attr) {
	c.elem("line", []Attr{{"x1", Num(x1)}, {"y1", Num(y1)}, {"x2", Num(x2)}, {"y2", Num(y2)}}, attrs, "")
}

// Circle appends a circle.
func (c *Canvas) Circle(cx, cy, r float64, attrs ...Attr) {
	c.elem("circle", []Attr{{"cx", Num(cx)}, {"cy", Num(cy)}, {"r", Num(r)}}, attrs, "")
}

// Path appends a path whose geometry is p.
func (c *Canvas) Path(p *PathData, attrs ...Attr) {
	c.elem("path", []Attr{{"d", p.String()}}, attrs, "")
}

// Text appends a text element at (x, y) whose content is s (escaped).
func (c *Canvas) Text(x, y float64, s string, attrs ...Attr) {
	c.elem("text", []Attr{{"x", Num(x)}, {"y", Num(y)}}, attrs, s)
}

// Title appends a <title> child, which browsers show as a tooltip of the
// enclosing group.
func (c *Canvas) Title(s string) { c.indent(); c.buf.WriteString("<title>" + Escape(s) + "</title>\n") }

// Group opens a <g> element; close it with End.
func (c *Canvas) Group(attrs ...Attr) {
	c.indent()
	c.buf.WriteString("<g")
	writeAttrs(&c.buf, attrs)
	c.buf.WriteString(">\n")
	c.depth++
}

// End closes the innermost open group.
func (c *Canvas) End() {
	if c.depth == 0 {
		return
	}
	c.depth--
	c.indent()
	c.buf.WriteString("</g>\n")
}

// Bytes closes any open group and the document and returns it. The canvas
// must not be used afterwards.
func (c *Canvas) Bytes() []byte {
	for c.depth > 0 {
		c.End()
	}
	c.buf.WriteString("</svg>\n")
	return c.buf.Bytes()
}

func (c *Canvas) indent() {
	for range c.depth {
		c.buf.WriteByte(' ')
	}
}

func (c *Canvas) elem(name string, geom, attrs []Attr, text string) {
	c.indent()
	c.buf.WriteString("<" + name)
	writeAttrs(&c.buf, geom)
	writeAttrs(&c.buf, attrs)
	if text == "" {
		c.buf.WriteString("/>\n")
		return
	}
	c.buf.WriteString(">" + Escape(text) + "</" + name + ">\n")
}

func writeAttrs(b *bytes.Buffer, attrs []Attr) {
	for _, a := range attrs {
		b.WriteString(" " + a.Key + `="` + Escape(a.Value) + `"`)
	}
}

// Escape returns s with XML's special characters escaped.
func Escape(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

// Num formats f with at most two decimals and no trailing zeros, so output
// is short and stable. NaN and infinities become 0.
func Num(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "0"
	}
	f = math.Round(f*100) / 100
	if f == 0 {
		return "0" // no "-0"
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// PathData builds the d attribute of a path.
type PathData struct{ b strings.Builder }

// MoveTo starts a subpath at (x, y).
func (p *PathData) MoveTo(x, y float64) *PathData { return p.cmd("M", x, y) }

// LineTo draws a straight line to (x, y).
func (p *PathData) LineTo(x, y float64) *PathData { return p.cmd("L", x, y) }

// H draws a horizontal line to x.
func (p *PathData) H(x float64) *PathData { return p.cmd("H", x) }

// V draws a vertical line to y.
func (p *PathData) V(y float64) *PathData { return p.cmd("V", y) }

// Close closes the subpath.
func (p *PathData) Close() *PathData { p.b.WriteString("Z"); return p }

// String returns the path data.
func (p *PathData) String() string { return p.b.String() }

func (p *PathData) cmd(c string, xs ...float64) *PathData {
	p.b.WriteString(c)
	for i, x := range xs {
		if i > 0 {
			p.b.WriteByte(',')
		}
		p.b.WriteString(Num(x))
	}
	return p
}
