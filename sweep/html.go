package sweep

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"

	"github.com/tokenpulse/tokenpulse/report/svg"
)

//go:embed sweep.tmpl
var pageTemplate string

var page = template.Must(template.New("sweep").Parse(pageTemplate))

// Colours and type of the charts, as the run report's.
const (
	colText  = "#222"
	colMuted = "#666"
	colGrid  = "#e3e3e3"
	colAxis  = "#999"
	colLine  = "#2b6cb0"
	colPass  = "#2e7d32"
	colFail  = "#c62828"
	colKnee  = "#e0a030"
	fontAttr = "font-family:system-ui,-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;font-size:11px"
)

// Chart is one SVG chart of the sweep report.
type Chart struct {
	Name, Title string
	SVG         []byte
}

// series is one metric drawn against load.
type series struct {
	name, title, unit string
	value             func(Step) float64
}

func (s *Sweep) series() []series {
	return []series{
		{"ttft-p95", "TTFT p95", "ms", func(st Step) float64 { return st.TTFTP95Ms }},
		{"gap-p95", "Gap p95", "ms", func(st Step) float64 { return st.GapP95Ms }},
		{"longest-stall", "Longest stall", "ms", func(st Step) float64 { return st.LongestStallMs }},
		{"goodput", "Goodput", "% of requests", func(st Step) float64 { return 100 * st.GoodputShare }},
		{"achieved", "Achieved rate", "successful requests/s", func(st Step) float64 { return st.AchievedPerS }},
	}
}

// Charts returns the sweep's charts: TTFT p95, gap p95, longest stall,
// goodput and the achieved rate against load, each with the knee and the
// capacity marked.
func (s *Sweep) Charts() []Chart {
	var out []Chart
	for _, se := range s.series() {
		out = append(out, s.chart(se))
	}
	return out
}

func (s *Sweep) chart(se series) Chart {
	const w, h, left, right, top, bottom = 480.0, 270.0, 56.0, 16.0, 34.0, 44.0
	title := se.title + " against load"
	steps := s.ByLoad()
	c := svg.New(w, h, title, svg.Class("chart sweep"), svg.A("style", fontAttr+";background:#fff"))
	c.Rect(0, 0, w, h, svg.A("fill", "#fff"))
	c.Text(10, 18, se.title+" ("+se.unit+")", svg.A("fill", colText), svg.A("font-weight", "600"))
	if len(steps) == 0 {
		c.Text(left, top+20, "no step was measured", svg.A("fill", colMuted))
		return Chart{Name: se.name, Title: title, SVG: c.Bytes()}
	}
	maxX, maxY := 0.0, 0.0
	for _, st := range steps {
		maxX = math.Max(maxX, st.Load)
		maxY = math.Max(maxY, se.value(st))
	}
	if strings.HasPrefix(se.unit, "%") {
		maxY = 100
	}
	// Room to the right of the highest load, so its point and marks
	// are not on the edge.
	xs := svg.Linear{D0: 0, D1: svg.NiceMax(maxX * 1.05), R0: left, R1: w - right}
	ys := svg.Linear{D0: 0, D1: svg.NiceMax(maxY), R0: h - bottom, R1: top}
	for _, t := range ys.Ticks(5) {
		c.Line(left, ys.Map(t), w-right, ys.Map(t), svg.A("stroke", colGrid))
		c.Text(left-6, ys.Map(t)+4, svg.Label(t), svg.A("fill", colMuted), svg.A("text-anchor", "end"))
	}
	for _, t := range xs.Ticks(6) {
		c.Line(xs.Map(t), h-bottom, xs.Map(t), h-bottom+4, svg.A("stroke", colAxis))
		c.Text(xs.Map(t), h-bottom+16, svg.Label(t), svg.A("fill", colMuted), svg.A("text-anchor", "middle"))
	}
	c.Line(left, h-bottom, w-right, h-bottom, svg.A("stroke", colAxis))
	c.Text((left+w-right)/2, h-8, s.Kind+" ("+s.Unit()+")", svg.A("fill", colMuted), svg.A("text-anchor", "middle"))

	// The marks are labelled in the margin above the plot, where no
	// point is: the capacity to the left of its line, the knee to the
	// right of its band (to the left when that would leave the chart).
	line := func(x float64, col string) {
		c.Line(xs.Map(x), top, xs.Map(x), h-bottom, svg.A("stroke", col), svg.A("stroke-width", "1.5"), svg.A("stroke-dasharray", "5,3"))
	}
	label := func(x float64, col, text string, right bool) {
		attrs := []svg.Attr{svg.A("fill", col), svg.A("font-weight", "600")}
		if right {
			c.Text(x+4, top-6, text, attrs...)
			return
		}
		c.Text(x-4, top-6, text, append(attrs, svg.A("text-anchor", "end"))...)
	}
	if k := s.Knee; k != nil {
		// The knee lies between the last load under the limit and the
		// first above it: the band between them, the line at the first.
		c.Rect(xs.Map(k.Below), top, xs.Map(k.Load)-xs.Map(k.Below), h-bottom-top, svg.A("fill", colKnee), svg.A("fill-opacity", "0.12"))
		line(k.Load, colKnee)
		text := fmt.Sprintf("knee %g–%g", k.Below, k.Load)
		x := xs.Map(k.Load)
		end := x + 4 + textWidth(text)
		right := end < w-right
		// The capacity's label stands to the left of its line: when the
		// knee's would run into it, the knee's goes left of its band.
		if r := s.Search; right && r != nil && r.Capacity > 0 && r.Capacity >= k.Load {
			capText := fmt.Sprintf("capacity %g", r.Capacity)
			right = end < xs.Map(r.Capacity)-4-textWidth(capText)
		}
		if right {
			label(x, colKnee, text, true)
		} else {
			label(xs.Map(k.Below), colKnee, text, false)
		}
	}
	if r := s.Search; r != nil && r.Capacity > 0 {
		line(r.Capacity, colPass)
		label(xs.Map(r.Capacity), colPass, fmt.Sprintf("capacity %g", r.Capacity), false)
	}
	var p svg.PathData
	for i, st := range steps {
		x, y := xs.Map(st.Load), ys.Map(se.value(st))
		if i == 0 {
			p.MoveTo(x, y)
		} else {
			p.LineTo(x, y)
		}
	}
	c.Path(&p, svg.A("fill", "none"), svg.A("stroke", colLine), svg.A("stroke-width", "2"))
	for _, st := range steps {
		col, verdict := colPass, "thresholds held"
		if !st.Passed {
			col, verdict = colFail, "thresholds crossed"
		}
		c.Group()
		c.Title(fmt.Sprintf("%g %s: %s %.1f %s, %s", st.Load, s.Unit(), se.title, se.value(st), se.unit, verdict))
		c.Circle(xs.Map(st.Load), ys.Map(se.value(st)), 4, svg.A("fill", col), svg.A("stroke", "#fff"))
		c.End()
	}
	return Chart{Name: se.name, Title: title, SVG: c.Bytes()}
}

// pageView is what the HTML template shows.
type pageView struct {
	Title    string
	Facts    [][2]string
	Header   []string
	Rows     [][]string
	Passed   []bool
	Charts   []template.HTML
	Captions []string
	Crossed  []string
	Warnings []string
}

// WriteHTML writes the sweep report: facts, the knee and capacity, the
// table of steps and the charts, one self-contained page.
func (s *Sweep) WriteHTML(w io.Writer) error {
	v := pageView{Title: "tokenpulse sweep: " + s.Target.Model + " at " + s.Target.URL, Warnings: s.Warnings}
	v.Facts = append(v.Facts, [2]string{"target", fmt.Sprintf("%s (%s, model %s)", s.Target.URL, orDash(s.Target.Backend), s.Target.Model)})
	v.Facts = append(v.Facts, [2]string{"suite", s.Suite})
	if s.Tier != "" {
		v.Facts = append(v.Facts, [2]string{"tier", s.Tier})
	}
	v.Facts = append(v.Facts, [2]string{"load", fmt.Sprintf("%s, %d steps", s.Kind, len(s.Steps))})
	if s.Knee != nil {
		v.Facts = append(v.Facts, [2]string{"knee", s.Knee.String()})
	} else {
		v.Facts = append(v.Facts, [2]string{"knee", NoKnee(s.Steps)})
	}
	if s.Search != nil {
		v.Facts = append(v.Facts, [2]string{"capacity", s.Search.String()})
	}
	if len(s.Thresholds) > 0 {
		v.Facts = append(v.Facts, [2]string{"thresholds", strings.Join(s.Thresholds, "; ")})
	}
	v.Header = []string{s.Kind, "achieved/s", "TTFT p50", "TTFT p95", "gap p95", "longest stall", "goodput", "goodput/s", "errors", "thresholds", "run"}
	for _, st := range s.ByLoad() {
		verdict := "held"
		if !st.Passed {
			verdict = "crossed"
		}
		v.Rows = append(v.Rows, []string{
			fmt.Sprintf("%g", st.Load), fmt.Sprintf("%.2f", st.AchievedPerS),
			fmt.Sprintf("%.1f ms", st.TTFTP50Ms), fmt.Sprintf("%.1f ms", st.TTFTP95Ms), fmt.Sprintf("%.1f ms", st.GapP95Ms),
			fmt.Sprintf("%.1f ms", st.LongestStallMs), fmt.Sprintf("%.0f%%", 100*st.GoodputShare), fmt.Sprintf("%.2f", st.GoodputPerS),
			fmt.Sprintf("%d/%d", st.Errors, st.Requests), verdict, st.Dir,
		})
		v.Passed = append(v.Passed, st.Passed)
		for _, x := range st.Crossed {
			v.Crossed = append(v.Crossed, fmt.Sprintf("at %g: %s", st.Load, x))
		}
	}
	for _, ch := range s.Charts() {
		v.Charts = append(v.Charts, template.HTML(ch.SVG))
		v.Captions = append(v.Captions, ch.Title)
	}
	return page.Execute(w, v)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// textWidth is the width a label of the charts' 11 px font takes, about
// 6.5 px a character.
func textWidth(s string) float64 { return float64(len([]rune(s))) * 6.5 }
