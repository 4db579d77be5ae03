package report

import (
	"fmt"
	"math"
	"strconv"

	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/report/svg"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stats"
)

// catColours are the lines of the categories, in the order of
// measure.Categories; overall is drawn in colText.
var catColours = []string{"#2b6cb0", "#e0a030", "#2e7d32", "#8e5bd6", "#c05621", "#0097a7", "#ad1457", "#6d4c41"}

// cdfPoints is the most points one line of a CDF chart holds.
const cdfPoints = 200

// CDFChart draws the distribution of TTFT and of E2E over every warm
// successful request, overall and per category: for each a line of the
// share of requests (y) done within a time (x), from stats.CDF. Unlike
// the waterfall's few sample bars, it shows every request; the p50 and
// p95 are where a line crosses 0.5 and 0.95 (dotted). Each line is a
// <path class="cdf"> with data-metric, data-scope and data-n.
func CDFChart(r *runfile.Run, o Options) Chart {
	const (
		w, h, left, right, top, bottom, gapX = 760.0, 300.0, 48.0, 16.0, 58.0, 44.0, 34.0
		panelW                               = (w - 2*left - gapX - right) / 2
	)
	title := "Distribution of TTFT and E2E over all warm requests (CDF)"
	c := newChart(w, h, title, "chart cdf")
	c.Text(10, 16, title, svg.A("fill", colText), svg.A("font-weight", "600"))
	type line struct {
		scope, col string
		width      string
		scoped     measure.Scope
	}
	lines := []line{{"overall", colText, "2.5", measure.Overall}}
	for i, cat := range measure.Categories(r) {
		lines = append(lines, line{cat, catColours[i%len(catColours)], "1.5", measure.Category(cat)})
	}
	var entries []legendEntry
	for _, l := range lines {
		entries = append(entries, legendEntry{l.col, l.scope})
	}
	legend(c, 36, w, entries)
	for p, m := range []struct {
		metric measure.Metric
		name   string
	}{{measure.TTFT, "TTFT"}, {measure.E2E, "E2E"}} {
		x0 := left + float64(p)*(panelW+gapX+left) // each panel has its own axis labels at its left
		samples := make([][]float64, len(lines))
		hi := 0.0
		for i, l := range lines {
			samples[i] = measure.Sample(measure.Views(r, l.scoped), m.metric)
			for _, v := range samples[i] {
				hi = math.Max(hi, v)
			}
		}
		xTop, xStep := svg.Fit(hi, 0.02, 6)
		xs := svg.Linear{D0: 0, D1: xTop, R0: x0, R1: x0 + panelW}
		ys := svg.Linear{D0: 0, D1: 1, R0: h - bottom, R1: top}
		for _, v := range []float64{0, 0.25, 0.5, 0.75, 0.95, 1} {
			attrs := []svg.Attr{svg.A("stroke", colGrid)}
			if v == 0.5 || v == 0.95 {
				attrs = append(attrs, svg.A("stroke-dasharray", "2,3"), svg.A("stroke", colAxis))
			}
			c.Line(x0, ys.Map(v), x0+panelW, ys.Map(v), attrs...)
			if v == 0.95 { // named in the caption; its label would meet the 1's
				continue
			}
			c.Text(x0-6, ys.Map(v)+4, strconv.FormatFloat(v, 'f', -1, 64), svg.A("fill", colMuted), svg.A("text-anchor", "end"), svg.A("font-size", "10"), svg.Class("ytick"))
		}
		for _, t := range xs.Every(xStep) {
			c.Line(xs.Map(t), h-bottom, xs.Map(t), h-bottom+4, svg.A("stroke", colAxis))
			c.Text(xs.Map(t), h-bottom+16, svg.Label(t), svg.A("fill", colMuted), svg.A("text-anchor", "middle"), svg.Class("xtick"))
		}
		c.Line(x0, h-bottom, x0+panelW, h-bottom, svg.A("stroke", colAxis))
		c.Text(x0+panelW, h-10, m.name+", ms", svg.A("fill", colMuted), svg.A("text-anchor", "end"))
		c.Text(x0+4, top-4, m.name+": share of requests within", svg.A("fill", colText))
		// Categories first, overall on top.
		for i := len(lines) - 1; i >= 0; i-- {
			pts := stats.CDF(samples[i], cdfPoints)
			if len(pts) == 0 {
				continue
			}
			var d svg.PathData
			d.MoveTo(xs.Map(pts[0].X), ys.Map(0))
			for _, pt := range pts { // a step up at each value
				d.H(xs.Map(pt.X)).V(ys.Map(pt.P))
			}
			c.Group(svg.Class("cdf-line"), svg.A("data-metric", string(m.metric)), svg.A("data-scope", lines[i].scope), svg.A("data-n", strconv.Itoa(len(samples[i]))))
			d50 := stats.Describe(samples[i])
			c.Title(fmt.Sprintf("%s %s: %d requests, p50 %s ms, p95 %s ms, max %s ms", lines[i].scope, m.name, d50.Count, fmtMS(d50.P50), fmtMS(d50.P95), fmtMS(d50.Max)))
			c.Path(&d, svg.A("fill", "none"), svg.A("stroke", lines[i].col), svg.A("stroke-width", lines[i].width))
			c.End()
		}
		if hi == 0 {
			c.Text(x0+10, top+30, "no successful request", svg.A("fill", colMuted))
		}
	}
	return Chart{Name: "cdf", Title: title, SVG: c.Bytes()}
}

// timeBuckets is how many slices the latency-over-time chart's medians
// split the run into for n requests: about five requests a slice, 2 to
// 40 slices.
func timeBuckets(n int) int { return max(2, min(40, n/5)) }

// TimeChart draws the latency of each warm request against the time it
// started (seconds from the first warm request's start): a dot per
// request's TTFT (top panel) and E2E (bottom), failed requests as red
// marks at the base, and the median of each slice of time
// (measure.TimeBuckets) as a line, so that a drift over the run or a
// slow warm-up shows. Dots are <circle class="ttft"> or "e2e" with
// data-ms; the medians <path class="p50">.
func TimeChart(r *runfile.Run, o Options) Chart {
	const (
		w, left, right, top, panelH, gap, bottom = 760.0, 56.0, 24.0, 52.0, 120.0, 30.0, 40.0
	)
	h := top + 2*panelH + gap + bottom
	title := "Latency over the run (warm requests, by when they started)"
	c := newChart(w, h, title, "chart overtime")
	c.Text(10, 16, title, svg.A("fill", colText), svg.A("font-weight", "600"))
	views := measure.Views(r, measure.Overall)
	ts := measure.OverTime(views)
	if len(ts) == 0 {
		c.Text(left, top+16, "no warm request with a start", svg.A("fill", colMuted))
		return Chart{Name: "overtime", Title: title, SVG: c.Bytes()}
	}
	span := ts[len(ts)-1].AtS
	if span <= 0 {
		span = 1
	}
	buckets := measure.TimeBuckets(ts, span, timeBuckets(len(ts)))
	first, last := buckets[0], buckets[len(buckets)-1]
	key := fmt.Sprintf("TTFT median %s ms in the first %s s, %s ms in the last · %d requests over %s s",
		fmtMS(first.TTFTP50), svg.Label(first.ToS-first.FromS), fmtMS(last.TTFTP50), len(ts), svg.Label(span))
	fittedText(c, 10, 34, key, w-20, fontSize, svg.A("fill", colText))
	xs := svg.Linear{D0: 0, D1: span, R0: left, R1: w - right}
	for p, m := range []struct {
		class, name string
		v           func(measure.Timed) (float64, bool)
		p50         func(measure.TimeBucket) (float64, bool)
	}{
		{"ttft", "TTFT, ms", func(t measure.Timed) (float64, bool) { return t.TTFTMs, t.HasTTFT },
			func(b measure.TimeBucket) (float64, bool) { return b.TTFTP50, b.TTFTCount > 0 }},
		{"e2e", "E2E, ms", func(t measure.Timed) (float64, bool) { return t.E2EMs, t.OK },
			func(b measure.TimeBucket) (float64, bool) { return b.E2EP50, b.E2ECount > 0 }},
	} {
		y0 := top + float64(p)*(panelH+gap)
		hi := 0.0
		for _, t := range ts {
			if v, ok := m.v(t); ok {
				hi = math.Max(hi, v)
			}
		}
		ys := svg.Linear{D0: 0, D1: svg.NiceMax(hi), R0: y0 + panelH, R1: y0}
		panelAxis(c, ys, left, w-right, 4, m.name)
		for _, t := range ts {
			v, ok := m.v(t)
			if !ok {
				if !t.OK {
					c.Rect(xs.Map(t.AtS)-1, ys.Map(0)-6, 2, 6, svg.A("fill", colStall), svg.Class("failed"))
				}
				continue
			}
			c.Circle(xs.Map(t.AtS), ys.Map(v), 2.2, svg.A("fill", colBar), svg.A("fill-opacity", "0.55"), svg.Class(m.class), svg.A("data-ms", svg.Num(v)))
		}
		var d svg.PathData
		started := false
		for _, b := range buckets {
			v, ok := m.p50(b)
			if !ok {
				continue
			}
			x := xs.Map((b.FromS + b.ToS) / 2)
			if started {
				d.LineTo(x, ys.Map(v))
			} else {
				d.MoveTo(x, ys.Map(v))
				started = true
			}
		}
		if started {
			c.Path(&d, svg.A("fill", "none"), svg.A("stroke", colQueue), svg.A("stroke-width", "2"), svg.Class("p50"))
		}
	}
	yb := top + 2*panelH + gap
	for _, t := range xs.Ticks(8) {
		c.Line(xs.Map(t), yb, xs.Map(t), yb+4, svg.A("stroke", colAxis))
		c.Text(xs.Map(t), yb+16, svg.Label(t), svg.A("fill", colMuted), svg.A("text-anchor", "middle"))
	}
	c.Text(w-right, yb+32, "s from the first warm request's start · orange: median of each slice", svg.A("fill", colMuted), svg.A("text-anchor", "end"))
	return Chart{Name: "overtime", Title: title, SVG: c.Bytes()}
}
