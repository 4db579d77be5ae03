package report

import (
	"fmt"
	"math"
	"strconv"

	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/report/svg"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// Colours of the load and turn charts.
const (
	colFlight = "#4a7fc1"
	colArea   = "#dbe6f3"
	colLag    = "#e0a030"
	colTokens = "#e8e8e8"
)

// loadColumns are the columns of the per-scope throughput table.
var loadColumns = []string{"span s", "requests/s", "output tok/s", "input tok/s", "in flight mean", "in flight max"}

// loadRow returns the cells of g under loadColumns.
func loadRow(g runfile.Group) []string {
	if g.SpanS <= 0 {
		return []string{"-", "-", "-", "-", "-", "-"}
	}
	in := "-"
	if g.InputTokensPerS > 0 {
		in = strconv.FormatFloat(g.InputTokensPerS, 'f', 1, 64)
	}
	return []string{
		strconv.FormatFloat(g.SpanS, 'f', 1, 64),
		strconv.FormatFloat(g.RequestsPerS, 'f', 2, 64),
		strconv.FormatFloat(g.OutputTokensPerS, 'f', 1, 64),
		in,
		strconv.FormatFloat(g.ConcurrencyMean, 'f', 2, 64),
		strconv.Itoa(g.ConcurrencyMax),
	}
}

// lagColumns are the columns of an open loop's schedule table.
var lagColumns = []string{"lag p50", "lag p99", "lag max", "slot waits", "ttft from due p50", "ttft from due p95"}

// lagRow returns the cells of g under lagColumns; nil in a closed loop.
func lagRow(g runfile.Group) []string {
	d := g.ScheduleLagMs
	if d.Count == 0 {
		return nil
	}
	return []string{fmtMS(d.P50), fmtMS(d.P99), fmtMS(d.Max), strconv.Itoa(g.SlotWaits),
		ms(g.ScheduledTTFTMs, g.ScheduledTTFTMs.P50), ms(g.ScheduledTTFTMs, g.ScheduledTTFTMs.P95)}
}

// turnColumns are the columns of the TTFT-by-turn table.
var turnColumns = []string{"turn", "reqs", "errors", "ttft p50", "ttft p95", "ttft max", "prompt tokens", "e2e p50"}

// turnRows returns the rows of the TTFT-by-turn table, one per turn
// number of the run's summary; nil for a run without conversations.
func turnRows(r *runfile.Run) [][]string {
	var out [][]string
	for _, t := range r.Summary.Turns {
		g := t.Group
		prompt := "-"
		if g.PromptTokens.Count > 0 {
			prompt = strconv.FormatFloat(g.PromptTokens.Mean, 'f', 0, 64)
		}
		out = append(out, []string{strconv.Itoa(t.Turn), strconv.Itoa(g.Requests), strconv.Itoa(g.Errors),
			ms(g.TTFTMs, g.TTFTMs.P50), ms(g.TTFTMs, g.TTFTMs.P95), ms(g.TTFTMs, g.TTFTMs.Max), prompt, ms(g.E2EMs, g.E2EMs.P50)})
	}
	return out
}

// flightPx is the width in pixels of one slice of the in-flight panel.
const flightPx = 4.0

// rateBins is how many bins the load chart's rate panel splits the span
// into for n requests: about four requests a bin, 4 to 40 bins.
func rateBins(n int) int { return max(4, min(40, (n+2)/4)) }

// LoadChart draws the load of the warm requests over the run's time, on
// one time axis (seconds from the first warm request's start): the
// requests in flight (the achieved concurrency: the most in flight as a
// step line over the mean as an area, a slice every few pixels, with the
// -c limit dashed when it is near), the requests completed per second
// (bars by the time they ended, failed ones in red), and for an open
// loop each request's schedule lag at its start. The key under the title
// gives the scope's throughput. Its SVG carries class "load" and
// data-peak; each step of the in-flight line is in its path, each rate
// bar a <rect class="rate"> with data-ok and data-failed, each lag a
// <circle class="lag"> with data-lag-ms. A run with a scrape (bench
// --scrape) adds, on the same axis, each request's TTFT at its start and
// the server's own gauges (see drawServerPanels).
func LoadChart(r *runfile.Run, o Options) Chart {
	const (
		w, left, right, top  = 760.0, 56.0, 24.0, 58.0
		flightH, rateH, lagH = 120.0, 90.0, 90.0
		gap, bottom          = 26.0, 40.0
	)
	views := measure.Views(r, measure.Overall)
	steps := measure.InFlight(views)
	lags := measure.Lags(views)
	h := top + flightH + gap + rateH + bottom
	if len(lags) > 0 {
		h += gap + lagH
	}
	var server []serverPanel
	if len(steps) >= 2 {
		server = serverPanels(r, views, measure.Origin(views), steps[len(steps)-1].AtS)
	}
	h += serverPanelsHeight(server, left, w-right, gap)
	title := "Load over the run (warm requests)"
	if len(server) > 0 {
		title += ", beside the server's own gauges"
	}
	g := r.Summary.Overall
	c := newChart(w, h, title, "chart load", svg.A("data-peak", strconv.Itoa(g.ConcurrencyMax)))
	c.Text(10, 16, title, svg.A("fill", colText), svg.A("font-weight", "600"))
	if len(steps) < 2 {
		c.Text(left, top+16, "no warm request with a start and an end", svg.A("fill", colMuted))
		return Chart{Name: "load", Title: title, SVG: c.Bytes()}
	}
	key := fmt.Sprintf("in flight: peak %d, mean %.2f · %.2f requests/s · %.1f output tokens/s", g.ConcurrencyMax, g.ConcurrencyMean, g.RequestsPerS, g.OutputTokensPerS)
	if g.InputTokensPerS > 0 {
		key += fmt.Sprintf(" · %.1f input tokens/s", g.InputTokensPerS)
	}
	key += fmt.Sprintf(" · over %.1f s", g.SpanS)
	fittedText(c, 10, 34, key, w-20, fontSize, svg.A("fill", colText))
	span := steps[len(steps)-1].AtS
	xs := svg.Linear{D0: 0, D1: span, R0: left, R1: w - right}

	// Requests in flight.
	y0 := top
	limit := r.Config.Concurrency
	yMax := svg.NiceMax(float64(g.ConcurrencyMax))
	showLimit := limit > 0 && float64(limit) <= 2*yMax
	if showLimit {
		yMax = math.Max(yMax, svg.NiceMax(float64(limit)))
	}
	ys := svg.Linear{D0: 0, D1: yMax, R0: y0 + flightH, R1: y0}
	panelAxis(c, ys, left, w-right, 4, "requests in flight")
	// Drawn at the chart's resolution (measure.InFlightBuckets, a slice
	// every flightPx pixels): the area is the mean in flight over each
	// slice, the line the most; the instants between one request's end
	// and the next one's start would otherwise draw a barcode.
	buckets := measure.InFlightBuckets(steps, int((w-left-right)/flightPx))
	var area, line svg.PathData
	area.MoveTo(xs.Map(0), ys.Map(0))
	for i, b := range buckets {
		area.V(ys.Map(b.Mean)).H(xs.Map(b.ToS))
		switch {
		case i == 0:
			line.MoveTo(xs.Map(0), ys.Map(float64(b.Max)))
		case b.Max != buckets[i-1].Max:
			line.H(xs.Map(b.FromS)).V(ys.Map(float64(b.Max)))
		}
	}
	line.H(xs.Map(span))
	area.V(ys.Map(0)).Close()
	c.Path(&area, svg.A("fill", colArea), svg.Class("inflight-mean"))
	c.Path(&line, svg.A("fill", "none"), svg.A("stroke", colFlight), svg.A("stroke-width", "1.5"), svg.Class("inflight"))
	if showLimit {
		c.Line(left, ys.Map(float64(limit)), w-right, ys.Map(float64(limit)), svg.A("stroke", colStall), svg.A("stroke-dasharray", "6,3"), svg.Class("ceiling"))
		c.Text(w-right, ys.Map(float64(limit))-4, "-c "+strconv.Itoa(limit), svg.A("fill", colStall), svg.A("text-anchor", "end"))
	}

	// Requests completed per second, by the bin their end falls in.
	y0 += flightH + gap
	bins := measure.Rates(views, rateBins(len(views)))
	peak := 0.0
	for _, b := range bins {
		peak = math.Max(peak, float64(b.OK+b.Failed)/(b.ToS-b.FromS))
	}
	ys = svg.Linear{D0: 0, D1: svg.NiceMax(peak), R0: y0 + rateH, R1: y0}
	panelAxis(c, ys, left, w-right, 3, "completed requests/s")
	for _, b := range bins {
		wd := b.ToS - b.FromS
		x0, x1 := xs.Map(b.FromS)+0.5, xs.Map(b.ToS)-0.5
		okTop := ys.Map(float64(b.OK) / wd)
		c.Group(svg.Class("rate"), svg.A("data-ok", strconv.Itoa(b.OK)), svg.A("data-failed", strconv.Itoa(b.Failed)))
		c.Title(fmt.Sprintf("%s–%s s: %d completed, %d failed, %d output tokens", svg.Label(b.FromS), svg.Label(b.ToS), b.OK, b.Failed, b.OutputTokens))
		c.Rect(x0, okTop, x1-x0, ys.Map(0)-okTop, svg.A("fill", colBar))
		if b.Failed > 0 {
			ft := ys.Map(float64(b.OK+b.Failed) / wd)
			c.Rect(x0, ft, x1-x0, okTop-ft, svg.A("fill", colStall))
		}
		c.End()
	}

	// Schedule lag of each open-loop request at its start.
	if len(lags) > 0 {
		y0 += rateH + gap
		hi := 0.0
		for _, l := range lags {
			hi = math.Max(hi, l.Ms)
		}
		ys = svg.Linear{D0: 0, D1: svg.NiceMax(hi), R0: y0 + lagH, R1: y0}
		panelAxis(c, ys, left, w-right, 3, "schedule lag, ms")
		for _, l := range lags {
			c.Circle(xs.Map(l.AtS), ys.Map(l.Ms), 2.5, svg.A("fill", colLag), svg.Class("lag"), svg.A("data-lag-ms", svg.Num(l.Ms)))
		}
	}

	// The shared time axis.
	yb := y0 + rateH
	if len(lags) > 0 {
		yb = y0 + lagH
	}
	yb = drawServerPanels(c, server, xs, left, w-right, yb, gap)
	for _, t := range xs.Ticks(8) {
		c.Line(xs.Map(t), yb, xs.Map(t), yb+4, svg.A("stroke", colAxis))
		c.Text(xs.Map(t), yb+16, svg.Label(t), svg.A("fill", colMuted), svg.A("text-anchor", "middle"))
	}
	c.Text(w-right, yb+32, "s from the first warm request's start", svg.A("fill", colMuted), svg.A("text-anchor", "end"))
	return Chart{Name: "load", Title: title, SVG: c.Bytes()}
}

// panelAxis draws a panel's horizontal grid lines and value labels on
// scale ys between x0 and x1, its base line, and its name at its top
// left.
func panelAxis(c *svg.Canvas, ys svg.Linear, x0, x1 float64, ticks int, name string) {
	for _, v := range (svg.Linear{D0: ys.D0, D1: ys.D1}).Ticks(ticks) {
		if name == "requests in flight" && v != math.Trunc(v) {
			continue // a count of requests: whole numbers only
		}
		c.Line(x0, ys.Map(v), x1, ys.Map(v), svg.A("stroke", colGrid))
		c.Text(x0-6, ys.Map(v)+4, svg.Label(v), svg.A("fill", colMuted), svg.A("text-anchor", "end"))
	}
	c.Line(x0, ys.Map(0), x1, ys.Map(0), svg.A("stroke", colAxis))
	if name != "" {
		c.Text(x0+4, ys.R1-4, name, svg.A("fill", colText))
	}
}

// TurnChart draws how TTFT grows with the conversation: the TTFT p50
// (solid) and p95 (dashed) of the warm requests of each turn number
// against the turn, over grey bars of the turn's mean prompt tokens
// (right axis) when the server counted them. Each point is a <g
// class="p50"> or "p95" with data-turn and data-ms. ok is false for a
// run without conversations (then there is no chart).
func TurnChart(r *runfile.Run, o Options) (Chart, bool) {
	turns := r.Summary.Turns
	if len(turns) == 0 {
		return Chart{}, false
	}
	const (
		w, h, left, right, top, bottom = 760.0, 300.0, 56.0, 64.0, 58.0, 48.0
	)
	title := "TTFT by turn of the conversation (warm requests)"
	c := newChart(w, h, title, "chart turns")
	c.Text(10, 16, title, svg.A("fill", colText), svg.A("font-weight", "600"))
	hi, tokHi := 0.0, 0.0
	for _, t := range turns {
		hi = math.Max(hi, t.TTFTMs.P95)
		tokHi = math.Max(tokHi, t.PromptTokens.Mean)
	}
	first, last := turns[0].TTFTMs, turns[len(turns)-1].TTFTMs
	key := fmt.Sprintf("turn %d: TTFT p50 %s ms → turn %d: %s ms", turns[0].Turn, ms(first, first.P50), turns[len(turns)-1].Turn, ms(last, last.P50))
	c.Text(10, 34, key, svg.A("fill", colText))
	entries := []legendEntry{{colModel, "TTFT p50, ms"}, {colLag, "TTFT p95, ms"}}
	if tokHi > 0 {
		entries = append(entries, legendEntry{colTokens, "mean prompt tokens (right axis)"})
	}
	legend(c, 50, w, entries)
	slot := (w - left - right) / float64(len(turns))
	xOf := func(i int) float64 { return left + slot*(float64(i)+0.5) }
	ys := svg.Linear{D0: 0, D1: svg.NiceMax(hi), R0: h - bottom, R1: top + 12}
	panelAxis(c, ys, left, w-right, 5, "")
	if tokHi > 0 {
		ts := svg.Linear{D0: 0, D1: svg.NiceMax(tokHi), R0: h - bottom, R1: top + 12}
		for _, v := range (svg.Linear{D0: 0, D1: ts.D1}).Ticks(5) {
			c.Text(w-right+6, ts.Map(v)+4, svg.Label(v), svg.A("fill", colMuted))
		}
		for i, t := range turns {
			if t.PromptTokens.Count == 0 {
				continue
			}
			y := ts.Map(t.PromptTokens.Mean)
			c.Group(svg.Class("prompt-tokens"), svg.A("data-turn", strconv.Itoa(t.Turn)))
			c.Title(fmt.Sprintf("turn %d: %.0f prompt tokens on average", t.Turn, t.PromptTokens.Mean))
			c.Rect(xOf(i)-slot*0.3, y, slot*0.6, ts.Map(0)-y, svg.A("fill", colTokens))
			c.End()
		}
	}
	for _, s := range []struct {
		class, col, dash string
		v                func(runfile.TurnGroup) float64
	}{
		{"p95", colLag, "5,3", func(t runfile.TurnGroup) float64 { return t.TTFTMs.P95 }},
		{"p50", colModel, "", func(t runfile.TurnGroup) float64 { return t.TTFTMs.P50 }},
	} {
		var p svg.PathData
		started := false
		for i, t := range turns {
			if t.TTFTMs.Count == 0 {
				continue
			}
			if started {
				p.LineTo(xOf(i), ys.Map(s.v(t)))
			} else {
				p.MoveTo(xOf(i), ys.Map(s.v(t)))
				started = true
			}
		}
		attrs := []svg.Attr{svg.A("fill", "none"), svg.A("stroke", s.col), svg.A("stroke-width", "2")}
		if s.dash != "" {
			attrs = append(attrs, svg.A("stroke-dasharray", s.dash))
		}
		if started {
			c.Path(&p, attrs...)
		}
		for i, t := range turns {
			if t.TTFTMs.Count == 0 {
				continue
			}
			c.Group(svg.Class(s.class), svg.A("data-turn", strconv.Itoa(t.Turn)), svg.A("data-ms", svg.Num(s.v(t))))
			c.Title(fmt.Sprintf("turn %d: TTFT %s %s ms over %d requests", t.Turn, s.class, fmtMS(s.v(t)), t.TTFTMs.Count))
			c.Circle(xOf(i), ys.Map(s.v(t)), 3.5, svg.A("fill", s.col))
			c.End()
		}
	}
	for i, t := range turns {
		c.Text(xOf(i), h-bottom+16, strconv.Itoa(t.Turn), svg.A("fill", colMuted), svg.A("text-anchor", "middle"))
	}
	c.Text(w-right, h-10, "turn of the conversation", svg.A("fill", colMuted), svg.A("text-anchor", "end"))
	return Chart{Name: "turns", Title: title, SVG: c.Bytes()}, true
}

// conversationLine says how the run's conversations were held, for the
// methodology; "" for a run without conversations.
func conversationLine(r *runfile.Run) string {
	turns := r.Summary.Turns
	if len(turns) == 0 {
		return ""
	}
	return fmt.Sprintf("Conversations: %s reached turn 1, %d the last turn (%d). Each turn is a request carrying the system prompt, "+
		"the earlier user turns and the answers streamed to them, sent when the previous answer ended plus the turn's think time; "+
		"every turn counts in its category and overall, the first turn is not cold, and a failed turn ends its conversation.",
		plural(turns[0].Requests, "conversation"), turns[len(turns)-1].Requests, turns[len(turns)-1].Turn)
}
