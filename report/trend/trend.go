// Package trend draws a history's headline figures over days: one HTML
// page with, for each target × model × device, a chart per figure (TTFT
// p95, TPOT p95, gap p95, longest stall, goodput, errors) across its runs.
// Each run's threshold on a figure is drawn as a dashed line; a run whose
// threshold was crossed is a red point, a run that regressed against its
// base (runfile.Comparison.Regressions > 0) a ringed one; a point links to
// its run's published report when it has one.
//
// The charts are SVG written by package report/svg, inline: the page
// loads nothing and runs no script.
//
//	runs := []trend.Run{trend.FromRun(id, reportURL, run), ...}
//	err := trend.HTML(w, runs, "postgres://ci@db/tokenpulse")
package trend

import (
	"fmt"
	"github.com/tokenpulse/tokenpulse/compare"
	"html/template"
	"io"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/tokenpulse/tokenpulse/gate"
	"github.com/tokenpulse/tokenpulse/report/svg"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stats"
)

// Figure is one charted figure, named as a threshold names it
// ("ttft.p95").
type Figure struct {
	Key   string // the threshold's metric.stat
	Title string
	Unit  string // "ms" or "%"
}

// Figures are the charted figures, in page order.
var Figures = []Figure{
	{"ttft.p95", "TTFT p95", "ms"},
	{"tpot.p95", "TPOT p95", "ms"},
	{"gap.p95", "Gap p95", "ms"},
	{"gap.max", "Longest stall (gap max)", "ms"},
	{"goodput.share", "Goodput", "%"},
	{"errors.rate", "Errors", "%"},
}

// Run is one recorded run as the trend shows it.
type Run struct {
	ID                    int64
	StartedAt             time.Time
	Target, Model, Device string
	// ReportURL is the run's published report, "" when not published.
	ReportURL string
	// Regressions counts the figures that regressed against the run's
	// base (0: none, or not compared).
	Regressions int
	// Values and Limits are by Figure.Key: the run's overall figure
	// (absent: no value) and its overall threshold (absent: none).
	Values map[string]float64
	Limits map[string]float64
	// Crossed and Regressed are by Figure.Key too: the scopes in which
	// a threshold on the figure was crossed ("overall",
	// "category:short", ...; with the limit, "category:short 250 ms"),
	// and those in which the figure regressed against the run's base. A
	// built-in suite's thresholds are per category, so a run can fail
	// on a figure whose overall value the chart shows.
	Crossed   map[string][]string
	Regressed map[string][]string
}

// FromRun reads what the trend shows of run, recorded as id.
func FromRun(id int64, reportURL string, run *runfile.Run) Run {
	o := run.Summary.Overall
	r := Run{
		ID: id, StartedAt: run.StartedAt, ReportURL: reportURL,
		Target: run.Target.Key(), Model: run.Target.Model, Device: run.Device.Key(),
		Values: map[string]float64{}, Limits: map[string]float64{},
		Crossed: map[string][]string{}, Regressed: map[string][]string{},
	}
	if run.Comparison != nil {
		r.Regressions = run.Comparison.Regressions
		for _, c := range run.Comparison.Regressed() {
			r.Regressed[c.Metric] = append(r.Regressed[c.Metric], c.Scope)
		}
	}
	dist := func(key string, d stats.Distribution, v float64) {
		if d.Count > 0 {
			r.Values[key] = v
		}
	}
	dist("ttft.p95", o.TTFTMs, o.TTFTMs.P95)
	dist("tpot.p95", o.TokenIntervalMs, o.TokenIntervalMs.P95)
	dist("gap.p95", o.GapMs, o.GapMs.P95)
	dist("gap.max", o.GapMs, o.GapMs.Max)
	if g := run.Summary.Goodput; g != nil && g.Requests > 0 {
		r.Values["goodput.share"] = 100 * g.Share
	}
	if o.Requests > 0 {
		r.Values["errors.rate"] = 100 * float64(o.Errors) / float64(o.Requests)
	}
	for _, v := range run.Verdicts {
		rule, err := gate.Parse(v.Rule)
		if err != nil {
			continue
		}
		key := rule.Metric + "." + rule.Stat
		if v.Scope == "overall" {
			r.Limits[key] = v.Limit
		}
		if v.Failed() {
			r.Crossed[key] = append(r.Crossed[key], strings.TrimSpace(v.Scope+" "+svg.Label(v.Limit)+" "+v.Unit))
		}
	}
	return r
}

// Series is the runs of one target, model and device, oldest first.
type Series struct {
	Target, Model, Device string
	Runs                  []Run
}

// Group splits runs into series, ordered by target, model and device,
// each run list oldest first.
func Group(runs []Run) []Series {
	idx := map[[3]string]int{}
	var out []Series
	for _, r := range runs {
		k := [3]string{r.Target, r.Model, r.Device}
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, Series{Target: r.Target, Model: r.Model, Device: r.Device})
		}
		out[i].Runs = append(out[i].Runs, r)
	}
	for _, s := range out {
		sort.SliceStable(s.Runs, func(i, j int) bool { return s.Runs[i].StartedAt.Before(s.Runs[j].StartedAt) })
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Target != b.Target {
			return a.Target < b.Target
		}
		if a.Model != b.Model {
			return a.Model < b.Model
		}
		return a.Device < b.Device
	})
	return out
}

// Chart sizes, in pixels.
const (
	chartW, chartH             = 400, 190
	padL, padR, padT, padB     = 56, 14, 12, 40
	pointR, ringR              = 4, 7.5
	maxDateLabels, yTickTarget = 5, 4
)

// bandRuns is the number of earlier runs a point's noise band is drawn
// from, as `--against last` estimates it by default (compare's
// NoiseRuns); the page's series holds every run of a target, model and
// device, whatever its settings, so the band is the verdict's only when
// the settings did not change.
var bandRuns = compare.DefaultOptions().NoiseRuns

// Chart draws figure f of series s as an SVG document.
func Chart(s Series, f Figure) []byte {
	title := fmt.Sprintf("%s of %s · %s · %s over time", f.Title, s.Target, s.Model, s.Device)
	c := svg.New(chartW, chartH, title, svg.Class("trend"))
	var t0, t1 time.Time
	top := 0.0
	n := 0
	for _, r := range s.Runs {
		if t0.IsZero() || r.StartedAt.Before(t0) {
			t0 = r.StartedAt
		}
		if r.StartedAt.After(t1) {
			t1 = r.StartedAt
		}
		if v, ok := r.Values[f.Key]; ok {
			top = math.Max(top, v)
			n++
		}
		if l, ok := r.Limits[f.Key]; ok {
			top = math.Max(top, l)
		}
	}
	top = svg.NiceMax(top * 1.05)
	if f.Unit == "%" && top > 100 {
		top = 100 // a share: 100 % is the top
	}
	x := svg.Linear{D0: float64(t0.Unix()), D1: float64(t1.Unix()), R0: padL + 10, R1: chartW - padR - 10}
	if t0.Equal(t1) {
		x = svg.Linear{D0: float64(t0.Unix()) - 1, D1: float64(t0.Unix()) + 1, R0: padL + 10, R1: chartW - padR - 10}
	}
	y := svg.Linear{D0: 0, D1: top, R0: chartH - padB, R1: padT}
	xOf := func(r Run) float64 { return x.Map(float64(r.StartedAt.Unix())) }

	// Axes and grid.
	c.Group(svg.Class("axis"))
	for _, v := range y.Ticks(yTickTarget) {
		c.Line(padL, y.Map(v), chartW-padR, y.Map(v), svg.Class("grid"))
		c.Text(padL-6, y.Map(v)+4, svg.Label(v)+" "+f.Unit, svg.A("text-anchor", "end"))
	}
	c.Line(padL, chartH-padB, chartW-padR, chartH-padB)
	// Days first; within a day and a half, hours first.
	big, small := "Jan 2", "15:04"
	if t1.Sub(t0) < 36*time.Hour {
		big, small = small, big
	}
	for _, r := range dateLabels(s.Runs) {
		c.Line(xOf(r), chartH-padB, xOf(r), chartH-padB+4)
		c.Text(xOf(r), chartH-padB+17, r.StartedAt.Local().Format(big), svg.A("text-anchor", "middle"))
		c.Text(xOf(r), chartH-padB+30, r.StartedAt.Local().Format(small), svg.A("text-anchor", "middle"), svg.Class("sub"))
	}
	c.End()

	// Thresholds: each run's limit, as a step line across the runs.
	c.Group(svg.Class("threshold"))
	var th svg.PathData
	open := false
	for i, r := range s.Runs {
		l, ok := r.Limits[f.Key]
		if !ok {
			open = false
			continue
		}
		x0, x1 := xOf(r), xOf(r)
		if i > 0 {
			x0 = (xOf(s.Runs[i-1]) + xOf(r)) / 2
		} else {
			x0 = padL
		}
		if i+1 < len(s.Runs) {
			x1 = (xOf(r) + xOf(s.Runs[i+1])) / 2
		} else {
			x1 = chartW - padR
		}
		if open {
			th.LineTo(x0, y.Map(l))
		} else {
			th.MoveTo(x0, y.Map(l))
		}
		th.LineTo(x1, y.Map(l))
		open = true
	}
	if th.String() != "" {
		c.Path(&th)
	}
	c.End()

	if n == 0 {
		c.Text(chartW/2, chartH/2, "no run has this figure", svg.A("text-anchor", "middle"), svg.Class("none"))
		return c.Bytes()
	}

	// The noise band: at each run with bandRuns earlier runs that have
	// the figure, the band those runs give (compare.NoiseBand), shaded
	// from run to run.
	var band svg.PathData
	var upper, lower [][2]float64
	flush := func() {
		if len(upper) >= 2 {
			band.MoveTo(upper[0][0], upper[0][1])
			for _, p := range upper[1:] {
				band.LineTo(p[0], p[1])
			}
			for i := len(lower) - 1; i >= 0; i-- {
				band.LineTo(lower[i][0], lower[i][1])
			}
			band.Close()
		}
		upper, lower = upper[:0], lower[:0]
	}
	var prev []float64
	for _, r := range s.Runs {
		v, ok := r.Values[f.Key]
		if !ok {
			continue
		}
		if len(prev) >= bandRuns {
			b := compare.NoiseBand(prev[len(prev)-bandRuns:], compare.DefaultOptions().BandAlpha)
			upper = append(upper, [2]float64{xOf(r), y.Map(math.Min(b.Hi, top))})
			lower = append(lower, [2]float64{xOf(r), y.Map(math.Max(b.Lo, 0))})
		}
		prev = append(prev, v)
	}
	flush()
	if band.String() != "" {
		c.Path(&band, svg.Class("band"))
	}

	// The figure: a line through the runs that have it, then a point
	// each, linked to its report.
	var line svg.PathData
	first := true
	for _, r := range s.Runs {
		v, ok := r.Values[f.Key]
		if !ok {
			continue
		}
		if first {
			line.MoveTo(xOf(r), y.Map(v))
			first = false
		} else {
			line.LineTo(xOf(r), y.Map(v))
		}
	}
	c.Path(&line, svg.Class("series"))
	for _, r := range s.Runs {
		v, ok := r.Values[f.Key]
		if !ok {
			continue
		}
		cls := "point"
		note := ""
		if in := r.Crossed[f.Key]; len(in) > 0 {
			cls += " crossed"
			note += ", threshold crossed: " + strings.Join(in, "; ")
		}
		if in := r.Regressed[f.Key]; len(in) > 0 {
			note += ", regressed against its base in " + strings.Join(in, ", ")
		}
		if r.ReportURL != "" {
			c.Raw(`<a href="` + svg.Escape(r.ReportURL) + `" target="_blank">` + "\n")
			note += " (click: its report)"
		}
		c.Group(svg.Class(cls))
		c.Title(fmt.Sprintf("run %d, %s: %s %s%s", r.ID, r.StartedAt.Local().Format("2006-01-02 15:04"), fmtValue(v), f.Unit, note))
		if len(r.Regressed[f.Key]) > 0 {
			c.Circle(xOf(r), y.Map(v), ringR, svg.Class("regressed"))
		}
		c.Circle(xOf(r), y.Map(v), pointR)
		c.End()
		if r.ReportURL != "" {
			c.Raw("</a>\n")
		}
	}
	return c.Bytes()
}

// dateLabels picks at most maxDateLabels runs, spread evenly, first and
// last included, to label the time axis with.
func dateLabels(runs []Run) []Run {
	if len(runs) <= maxDateLabels {
		return runs
	}
	out := make([]Run, 0, maxDateLabels)
	for i := range maxDateLabels {
		out = append(out, runs[i*(len(runs)-1)/(maxDateLabels-1)])
	}
	return out
}

func fmtValue(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// HTML writes the trend page of runs; source names the history in its
// heading (printable: no password).
func HTML(w io.Writer, runs []Run, source string) error {
	type panel struct {
		Title string
		SVG   template.HTML
	}
	type section struct {
		Target, Model, Device string
		Runs, Crossed, Regr   int
		First, Last           string
		Panels                []panel
	}
	var secs []section
	for _, s := range Group(runs) {
		sec := section{Target: s.Target, Model: s.Model, Device: s.Device, Runs: len(s.Runs),
			First: s.Runs[0].StartedAt.Local().Format("2006-01-02"), Last: s.Runs[len(s.Runs)-1].StartedAt.Local().Format("2006-01-02")}
		for _, r := range s.Runs {
			if len(r.Crossed) > 0 {
				sec.Crossed++
			}
			if r.Regressions > 0 {
				sec.Regr++
			}
		}
		for _, f := range Figures {
			// The SVG is our own writer's output, its text escaped.
			sec.Panels = append(sec.Panels, panel{Title: f.Title, SVG: template.HTML(Chart(s, f))})
		}
		secs = append(secs, sec)
	}
	return page.Execute(w, map[string]any{"Source": source, "Sections": secs, "Runs": len(runs), "BandRuns": bandRuns})
}

var page = template.Must(template.New("trend").Funcs(template.FuncMap{"dash": func(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}}).Parse(pageHTML))

const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>tokenpulse trend</title>
<style>
body { font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px; color: #1f2328; background: #fff; }
h1 { font-size: 20px; margin: 0 0 4px; }
h2 { font-size: 16px; margin: 28px 0 2px; word-break: break-all; }
.meta { color: #57606a; margin: 0 0 10px; }
.legend { display: flex; gap: 18px; flex-wrap: wrap; align-items: center; color: #57606a; margin: 8px 0 0; }
.legend svg { vertical-align: middle; }
.grid6 { display: grid; grid-template-columns: repeat(auto-fill, minmax(400px, 1fr)); gap: 12px 18px; }
figure { margin: 0; }
figcaption { font-weight: 600; margin: 0 0 2px; }
svg.trend { max-width: 100%; height: auto; }
svg text { font: 11px system-ui, sans-serif; fill: #57606a; }
svg text.sub { font-size: 10px; fill: #8c959f; }
svg text.none { font-size: 13px; fill: #8c959f; }
.axis line { stroke: #8c959f; stroke-width: 1; }
.axis line.grid { stroke: #eaeef2; }
path.band { fill: #0969da; fill-opacity: 0.12; stroke: none; }
.threshold path { fill: none; stroke: #cf222e; stroke-width: 1.5; stroke-dasharray: 6 4; }
path.series { fill: none; stroke: #0969da; stroke-width: 2; }
.point circle { fill: #0969da; stroke: #fff; stroke-width: 1.5; }
.point.crossed circle { fill: #cf222e; }
.point circle.regressed { fill: none; stroke: #bf8700; stroke-width: 2.5; }
a .point circle { cursor: pointer; }
.empty { color: #57606a; }
</style>
</head>
<body>
<h1>tokenpulse trend</h1>
<p class="meta">{{.Runs}} run{{if ne .Runs 1}}s{{end}} from the history {{.Source}}. Hover a point for its run; a point with a published report links to it.</p>
<div class="legend">
<span><svg width="34" height="12"><path d="M2 6 H32" stroke="#0969da" stroke-width="2"/><circle cx="17" cy="6" r="4" fill="#0969da"/></svg> the run's figure</span>
<span><svg width="34" height="12"><path d="M2 6 H32" stroke="#cf222e" stroke-width="1.5" stroke-dasharray="6 4"/></svg> its threshold</span>
<span><svg width="14" height="12"><circle cx="7" cy="6" r="4" fill="#cf222e"/></svg> threshold crossed</span>
<span><svg width="20" height="20"><circle cx="10" cy="10" r="7.5" fill="none" stroke="#bf8700" stroke-width="2.5"/><circle cx="10" cy="10" r="4" fill="#0969da"/></svg> regressed against its base</span>
<span><svg width="34" height="12"><rect x="2" y="1" width="30" height="10" fill="#0969da" fill-opacity="0.12"/></svg> noise band of the {{.BandRuns}} runs before</span>
</div>
<p class="meta">Runs are grouped by target, model and device, whatever their settings (suite, concurrency, arrival, max tokens); a regression verdict's band takes only the earlier runs with the run's own settings, so the two agree only while the settings stay the same.</p>
{{if not .Sections}}<p class="empty">No run recorded.</p>{{end}}
{{range .Sections}}
<section>
<h2>{{.Target}} · model {{dash .Model}} · device {{dash .Device}}</h2>
<p class="meta">{{.Runs}} run{{if ne .Runs 1}}s{{end}}, {{.First}} to {{.Last}}{{if .Crossed}}; {{.Crossed}} crossed a threshold{{end}}{{if .Regr}}; {{.Regr}} regressed{{end}}</p>
<div class="grid6">
{{range .Panels}}<figure><figcaption>{{.Title}}</figcaption>
{{.SVG}}</figure>
{{end}}
</div>
</section>
{{end}}
</body>
</html>
`
