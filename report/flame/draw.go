package flame

import (
	"fmt"
	"hash/fnv"
	"math"
	"strings"

	"github.com/tokenpulse/tokenpulse/report/svg"
)

// Drawing constants, in pixels, and the report's chart font.
const (
	rowH     = 17
	headH    = 24
	legendH  = 26
	margin   = 8
	charW    = 6.3 // average width of a character of the 11 px font
	minRectW = 0.3 // narrower frames (and what they call) are not drawn
	fontAttr = "font-family:system-ui,-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;font-size:11px"
)

// OwnModule is the import path prefix whose packages are drawn in the
// warm colours of "our code"; everything else is the runtime, the
// standard library or another module.
const OwnModule = "github.com/tokenpulse/tokenpulse"

// kind is a family of packages, each drawn in its own hue.
type kind int

const (
	kindOwn kind = iota
	kindRuntime
	kindStd
	kindOther
)

var kindNames = [...]string{"tokenpulse", "Go runtime", "standard library", "other modules"}

// hues and lightness ranges of the kinds: HSL, a package's own shade
// picked by a hash of its name within the range.
var kindHSL = [...]struct{ h, s, l0, l1 float64 }{
	kindOwn:     {22, 85, 52, 66},
	kindRuntime: {210, 10, 62, 76},
	kindStd:     {205, 60, 58, 74},
	kindOther:   {130, 40, 52, 68},
}

func kindOf(pkg string) kind {
	switch {
	case pkg == OwnModule || strings.HasPrefix(pkg, OwnModule+"/"):
		return kindOwn
	case pkg == "runtime" || strings.HasPrefix(pkg, "runtime/") || strings.HasPrefix(pkg, "internal/runtime/"):
		return kindRuntime
	case pkg == "" || !strings.Contains(strings.SplitN(pkg, "/", 2)[0], "."):
		return kindStd
	}
	return kindOther
}

// colour is a function's fill: its package's kind and shade.
func colour(fn string) string {
	pkg := Package(fn)
	k := kindHSL[kindOf(pkg)]
	h := fnv.New32a()
	h.Write([]byte(pkg))
	t := float64(h.Sum32()%1000) / 999
	return fmt.Sprintf("hsl(%.0f,%.0f%%,%.0f%%)", k.h, k.s, k.l0+t*(k.l1-k.l0))
}

// SVG draws the graph width pixels wide, the root at the bottom and each
// caller under its callees; each frame is as wide as its share of the
// root and carries a tooltip (its full name, share and time). heading is
// the line drawn above it.
func (g *Graph) SVG(width float64, heading string) []byte {
	scale := (width - 2*margin) / float64(g.Root.Total)
	depth := drawnDepth(g.Root, scale)
	h := headH + float64(depth)*rowH + legendH + margin
	c := svg.New(width, h, "Flame graph: "+heading, svg.Class("flame"), svg.A("style", fontAttr+";background:#fff"))
	c.Rect(0, 0, width, h, svg.A("fill", "#fff"))
	c.Text(margin, 16, heading, svg.A("fill", "#222"), svg.A("font-weight", "600"))
	bottom := headH + float64(depth)*rowH // the root's row ends here
	var draw func(n *Node, x float64, level int)
	draw = func(n *Node, x float64, level int) {
		w := float64(n.Total) * scale
		if w < minRectW {
			return
		}
		y := bottom - float64(level+1)*rowH
		fill := "#c9c9c9"
		name := "all"
		if level > 0 {
			fill, name = colour(n.Name), Short(n.Name)
		}
		c.Group(svg.Class("frame"))
		c.Title(g.tooltip(n, level == 0))
		c.Rect(x, y, w, rowH-1, svg.A("fill", fill), svg.A("rx", "2"))
		if label := fit(name, w-6); label != "" {
			c.Text(x+3, y+12, label, svg.A("fill", "#111"))
		}
		c.End()
		cx := x
		for _, ch := range n.Children {
			draw(ch, cx, level+1)
			cx += float64(ch.Total) * scale
		}
	}
	draw(g.Root, margin, 0)
	g.legend(c, bottom+8)
	return c.Bytes()
}

// drawnDepth is the depth of n's subtree counting only the frames wide
// enough to be drawn at scale pixels per unit.
func drawnDepth(n *Node, scale float64) int {
	if float64(n.Total)*scale < minRectW {
		return 0
	}
	d := 0
	for _, c := range n.Children {
		d = max(d, drawnDepth(c, scale))
	}
	return d + 1
}

// legend draws a swatch for each kind of package the graph holds.
func (g *Graph) legend(c *svg.Canvas, y float64) {
	seen := map[kind]bool{}
	var walk func(*Node)
	walk = func(n *Node) {
		if n != g.Root {
			seen[kindOf(Package(n.Name))] = true
		}
		for _, ch := range n.Children {
			walk(ch)
		}
	}
	walk(g.Root)
	x := float64(margin)
	for k := kindOwn; k <= kindOther; k++ {
		if !seen[k] {
			continue
		}
		hsl := kindHSL[k]
		c.Rect(x, y, 12, 12, svg.A("fill", fmt.Sprintf("hsl(%.0f,%.0f%%,%.0f%%)", hsl.h, hsl.s, (hsl.l0+hsl.l1)/2)), svg.A("rx", "2"))
		c.Text(x+16, y+10, kindNames[k], svg.A("fill", "#666"))
		x += 16 + float64(len(kindNames[k]))*charW + 18
	}
	c.Text(x, y+10, "width: share of the sampled CPU time; hover a frame for its name and time", svg.A("fill", "#666"))
}

// tooltip is a frame's hover text.
func (g *Graph) tooltip(n *Node, root bool) string {
	share := 100 * float64(n.Total) / float64(g.Root.Total)
	if root {
		return fmt.Sprintf("all: %s sampled", g.Value(n.Total))
	}
	s := fmt.Sprintf("%s\n%.1f%% (%s)", n.Name, share, g.Value(n.Total))
	if n.Self > 0 {
		s += fmt.Sprintf(", self %.1f%% (%s)", 100*float64(n.Self)/float64(g.Root.Total), g.Value(n.Self))
	}
	return s
}

// Value formats v in the graph's unit: "1.23 s", "45 ms", "12 samples".
func (g *Graph) Value(v int64) string {
	if g.Unit != "nanoseconds" {
		return fmt.Sprintf("%d %s", v, g.Unit)
	}
	switch d := float64(v); {
	case d >= 1e9:
		return fmt.Sprintf("%.2f s", d/1e9)
	case d >= 1e6:
		return fmt.Sprintf("%.0f ms", d/1e6)
	default:
		return fmt.Sprintf("%.0f µs", d/1e3)
	}
}

// fit cuts s to what w pixels hold, with an ellipsis; "" when not even
// three characters fit.
func fit(s string, w float64) string {
	n := int(math.Floor(w / charW))
	r := []rune(s)
	switch {
	case n >= len(r):
		return s
	case n < 3:
		return ""
	}
	return string(r[:n-1]) + "…"
}
