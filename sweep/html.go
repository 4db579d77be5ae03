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

// judgedSeries returns the TTFT threshold whose figure the TTFT chart
// plots beside the overall p95: the first (in the order of the steps'
// verdicts) that any step crossed, else the first judged at all; ok is
// false when no step judged a TTFT threshold (or the file predates
// Step.TTFT).
func (s *Sweep) judgedSeries() (rule string, limit float64, ok bool) {
	for _, want := range []bool{true, false} {
		for _, st := range s.ByLoad() {
			for _, j := range st.TTFT {
				if !want || !j.Passed {
					return j.Rule, j.LimitMs, true
				}
			}
		}
	}
	return "", 0, false
}

// judgedAt returns the step's figure of rule.
func judgedAt(st Step, rule string) (Judged, bool) {
	for _, j := range st.TTFT {
		if j.Rule == rule {
			return j, true
		}
	}
	return Judged{}, false
}

// Geometry of the sweep's charts, in pixels.
const (
	chartW, chartH                       = 480.0, 270.0
	padLeft, padRight, padTop, padBottom = 56.0, 16.0, 48.0, 44.0
	colJudged, colLimit                  = "#c05621", colFail
	markRow                              = padTop - 6 // the baseline of the labels above the plot
)

func (s *Sweep) chart(se series) Chart {
	const w, h, left, right, bottom = chartW, chartH, padLeft, padRight, padBottom
	title := se.title + " against load"
	steps := s.ByLoad()
	rule, limit, judged := "", 0.0, false
	if se.name == "ttft-p95" {
		rule, limit, judged = s.judgedSeries()
	}
	top := padTop
	if judged {
		top += 12 // room for the key under the title, above the marks' labels
	}
	markRow := top - 6 // the baseline of the labels above the plot
	c := svg.New(w, h, title, svg.Class("chart sweep"), svg.A("style", fontAttr+";background:#fff"))
	c.Rect(0, 0, w, h, svg.A("fill", "#fff"))
	c.Text(10, 18, se.title+" ("+se.unit+")", svg.A("fill", colText), svg.A("font-weight", "600"))
	if judged {
		// A key: which line is which, and the limit.
		c.Line(10, 30, 26, 30, svg.A("stroke", colLine), svg.A("stroke-width", "2"))
		c.Text(30, 34, "overall", svg.A("fill", colText))
		c.Line(84, 30, 100, 30, svg.A("stroke", colJudged), svg.A("stroke-width", "2"), svg.A("stroke-dasharray", "5,3"))
		c.Text(104, 34, rule, svg.A("fill", colJudged), svg.Class("judged-key"))
	}
	if len(steps) == 0 {
		c.Text(left, top+20, "no step was measured", svg.A("fill", colMuted))
		return Chart{Name: se.name, Title: title, SVG: c.Bytes()}
	}
	maxX, maxY := 0.0, 0.0
	for _, st := range steps {
		maxX = math.Max(maxX, st.Load)
		maxY = math.Max(maxY, se.value(st))
		if j, ok := judgedAt(st, rule); judged && ok {
			maxY = math.Max(maxY, j.ValueMs)
		}
	}
	if judged {
		maxY = math.Max(maxY, limit*1.1)
	}
	if strings.HasPrefix(se.unit, "%") {
		maxY = 100
	}
	// The load axis ends just past the highest load, in round steps: room
	// to the right of its point and marks, and no empty stretch.
	xTop, xStep := svg.Fit(maxX, 0.05, 8)
	xs := svg.Linear{D0: 0, D1: xTop, R0: left, R1: w - right}
	ys := svg.Linear{D0: 0, D1: svg.NiceMax(maxY), R0: h - bottom, R1: top}
	for _, t := range ys.Ticks(5) {
		c.Line(left, ys.Map(t), w-right, ys.Map(t), svg.A("stroke", colGrid))
		c.Text(left-6, ys.Map(t)+4, svg.Label(t), svg.A("fill", colMuted), svg.A("text-anchor", "end"))
	}
	for _, t := range xs.Every(xStep) {
		c.Line(xs.Map(t), h-bottom, xs.Map(t), h-bottom+4, svg.A("stroke", colAxis))
		c.Text(xs.Map(t), h-bottom+16, svg.Label(t), svg.A("fill", colMuted), svg.A("text-anchor", "middle"), svg.Class("xtick"))
	}
	c.Line(left, h-bottom, w-right, h-bottom, svg.A("stroke", colAxis))
	c.Text((left+w-right)/2, h-8, s.Kind+" ("+s.Unit()+")", svg.A("fill", colMuted), svg.A("text-anchor", "middle"))

	// The marks are labelled in the margin above the plot, where no point
	// is: the capacity to the left of its line, the knee centred over its
	// band. When the two would meet, the knee's goes inside the plot, at
	// the top of its band.
	line := func(x float64, col string) {
		c.Line(xs.Map(x), top, xs.Map(x), h-bottom, svg.A("stroke", col), svg.A("stroke-width", "1.5"), svg.A("stroke-dasharray", "5,3"))
	}
	var capBox [4]float64 // x0, x1 of the capacity's label; zero when none
	if r := s.Search; r != nil && r.Capacity > 0 {
		text := fmt.Sprintf("capacity %g", r.Capacity)
		x := xs.Map(r.Capacity)
		capBox = [4]float64{x - 4 - textWidth(text), x - 4}
	}
	if k := s.Knee; k != nil {
		// The knee lies between the last load under the limit and the
		// first above it: the band between them, the line at the first.
		x0, x1 := xs.Map(k.Below), xs.Map(k.Load)
		c.Rect(x0, top, x1-x0, h-bottom-top, svg.A("fill", colKnee), svg.A("fill-opacity", "0.12"))
		line(k.Load, colKnee)
		text := fmt.Sprintf("knee %g–%g", k.Below, k.Load)
		tw := textWidth(text)
		mid := math.Min(math.Max((x0+x1)/2, 4+tw/2), w-4-tw/2)
		y := markRow
		if capBox[1] > 0 && mid-tw/2 < capBox[1]+4 && mid+tw/2 > capBox[0]-4 {
			y = top + 14
		}
		c.Text(mid, y, text, svg.A("fill", colKnee), svg.A("font-weight", "600"), svg.A("text-anchor", "middle"), svg.Class("knee-label"))
	}
	if r := s.Search; r != nil && r.Capacity > 0 {
		line(r.Capacity, colPass)
		c.Text(xs.Map(r.Capacity)-4, markRow, fmt.Sprintf("capacity %g", r.Capacity), svg.A("fill", colPass), svg.A("font-weight", "600"),
			svg.A("text-anchor", "end"), svg.Class("capacity-label"))
	}
	if judged {
		// The threshold's limit, labelled at the right end above it.
		y := ys.Map(limit)
		c.Line(left, y, w-right, y, svg.A("stroke", colLimit), svg.A("stroke-dasharray", "6,3"), svg.Class("limit"), svg.A("data-limit-ms", svg.Num(limit)))
		c.Text(w-right-2, y-4, "limit "+svg.Label(limit)+" "+se.unit, svg.A("fill", colLimit), svg.A("text-anchor", "end"), svg.Class("limit-label"))
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
	if judged {
		// The judged figure: its own line, each point coloured by whether
		// this threshold held at the step.
		var jp svg.PathData
		started := false
		for _, st := range steps {
			j, ok := judgedAt(st, rule)
			if !ok {
				continue
			}
			x, y := xs.Map(st.Load), ys.Map(j.ValueMs)
			if started {
				jp.LineTo(x, y)
			} else {
				jp.MoveTo(x, y)
				started = true
			}
		}
		c.Path(&jp, svg.A("fill", "none"), svg.A("stroke", colJudged), svg.A("stroke-width", "2"), svg.A("stroke-dasharray", "5,3"), svg.Class("judged"))
		for _, st := range steps {
			j, ok := judgedAt(st, rule)
			if !ok {
				continue
			}
			col, verdict := colPass, "held"
			if !j.Passed {
				col, verdict = colFail, "crossed"
			}
			c.Group(svg.Class("judged-point"), svg.A("data-load", svg.Num(st.Load)), svg.A("data-ms", svg.Num(j.ValueMs)))
			c.Title(fmt.Sprintf("%g %s: %s is %.1f ms, %s", st.Load, s.Unit(), rule, j.ValueMs, verdict))
			c.Rect(xs.Map(st.Load)-3.5, ys.Map(j.ValueMs)-3.5, 7, 7, svg.A("fill", col), svg.A("stroke", "#fff"))
			c.End()
		}
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
