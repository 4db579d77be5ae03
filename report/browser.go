package report

import (
	"fmt"
	"html/template"
	"text/tabwriter"

	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/report/svg"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stats"
)

// browserView is the HTML report's section of a browser run: the
// modelled visible metrics beside the measured ones per render strategy,
// and a three-layer timeline (server emit, arrival in the page, paint)
// per drawn request.
type browserView struct {
	Note    string
	Columns []string
	Rows    [][]string
	Layers  []chartView
}

// newBrowserView returns the browser section of r, nil when r is no
// browser run.
func newBrowserView(r *runfile.Run, o Options) *browserView {
	b := r.Config.Browser
	renders := measure.Renders(r)
	if b == nil && len(renders) == 0 {
		return nil
	}
	if b == nil {
		// A run rebuilt from its journal keeps every request's paints but
		// not the session's record.
		b = &runfile.Browser{Chromium: "Chromium", Page: "a page (the session's record was lost)"}
		for _, q := range r.Requests {
			if q.Paint != nil {
				b.CPUThrottle = q.Paint.CPUThrottle
				break
			}
		}
	}
	v := &browserView{
		Note: fmt.Sprintf("Measured in %s (CPU throttle %g×) on %s; the relay that served the page held each request and chunk %.2f ms at p50 (%.2f ms at max); the page's clock was aligned with the Unix clock to ±%.2f ms. Painted times are Element Timing's renderTime of each token's span where the browser reported one, else the end of the first frame after its insertion.",
			b.Chromium, b.CPUThrottle, pageName(b), b.RelayHoldMs.P50, b.RelayHoldMs.Max, stats.Millis(b.ClockUncertaintyNS)),
		Columns: []string{"render", "reqs", "ttft p50 (network)", "visible ttft p50 model", "painted ttft p50 measured", "visible gap p95 model", "paint gap p95 measured", "paint gap max", "render overhead p50 / p95", "long frames"},
	}
	row := func(name string, g runfile.Group) []string {
		return []string{name, fmt.Sprint(g.Requests), ms(g.TTFTMs, g.TTFTMs.P50), ms(g.VisibleTTFTMs, g.VisibleTTFTMs.P50), ms(g.PaintedTTFTMs, g.PaintedTTFTMs.P50),
			ms(g.VisibleGapMs, g.VisibleGapMs.P95), ms(g.PaintGapMs, g.PaintGapMs.P95), ms(g.PaintGapMs, g.PaintGapMs.Max),
			ms(g.RenderOverheadMs, g.RenderOverheadMs.P50) + " / " + ms(g.RenderOverheadMs, g.RenderOverheadMs.P95),
			longFrames(g.LongFrameMs)}
	}
	for _, name := range renders {
		g, ok := r.Summary.Renders[name]
		if !ok {
			g = r.Summary.Overall
		}
		v.Rows = append(v.Rows, row(name, g))
	}
	for _, q := range layerRequests(r, o, renders) {
		c := layers(q, r)
		v.Layers = append(v.Layers, chartView{c.Name, c.Title, template.HTML(c.SVG)})
	}
	return v
}

func pageName(b *runfile.Browser) string {
	if b.Page == "embedded" {
		return "tokenpulse's chat page"
	}
	return b.Page
}

// layerRequests picks the requests drawn in layers: the offenders of the
// crossed thresholds that were measured in the page, or when there are
// none, each render strategy's request with the longest paint gap.
func layerRequests(r *runfile.Run, o Options, renders []string) []*runfile.Request {
	var out []*runfile.Request
	for _, t := range timelines(r, o) {
		if t.Req.Paint != nil && !t.Worst {
			out = append(out, t.Req)
		}
	}
	if len(out) > 0 {
		return out
	}
	for _, name := range renders {
		var worst *runfile.Request
		longest := -1.0
		for _, v := range measure.RenderViews(r, name) {
			for _, g := range v.Painted.GapsMs {
				if g > longest {
					longest, worst = g, v.Req
				}
			}
		}
		if worst != nil {
			out = append(out, worst)
		}
	}
	return out
}

// layers draws request q's three layers on one time axis from the click:
// the server's emit times (when it sent them; aligned through the page's
// clock offset), the arrivals at the page, and the paints, with every
// paint gap over 50 ms marked, so a reader sees which layer made a stall.
func layers(q *runfile.Request, r *runfile.Run) Chart {
	const w, h, left, right, top = 760.0, 190.0, 96.0, 20.0, 44.0
	const rowH = 34.0
	title := fmt.Sprintf("Server, network and paint for %s (request #%d, render %s)", q.PromptID, q.Index, q.Paint.Render)
	c := newChart(w, h, title, "chart layers", svg.A("data-request-id", q.RequestID))
	c.Text(10, 16, title, svg.A("fill", colText), svg.A("font-weight", "600"))
	click := q.StartedAt.UnixNano()
	var emit []int64
	if r.Config.Browser != nil && len(q.ServerTimesNS) == len(q.TokenTimesNS) {
		for _, t := range q.ServerTimesNS {
			emit = append(emit, t-click)
		}
	}
	var maxNS int64
	for _, xs := range [][]int64{emit, q.TokenTimesNS, q.Paint.PaintNS} {
		for _, t := range xs {
			maxNS = max(maxNS, t)
		}
	}
	xs := svg.Linear{D0: 0, D1: svg.NiceMax(max(stats.Millis(maxNS), 1)), R0: left, R1: w - right}
	bottom := top + 3*rowH
	for _, t := range xs.Ticks(8) {
		c.Line(xs.Map(t), top-4, xs.Map(t), bottom, svg.A("stroke", colGrid))
		c.Text(xs.Map(t), bottom+14, svg.Label(t), svg.A("fill", colMuted), svg.A("text-anchor", "middle"))
	}
	c.Text(w-right, bottom+30, "ms from the click", svg.A("fill", colMuted), svg.A("text-anchor", "end"))
	rows := []struct {
		label string
		times []int64
		col   string
	}{{"server emit", emit, colQueue}, {"page arrival", q.TokenTimesNS, colBar}, {"paint", q.Paint.PaintNS, colModel}}
	for i, row := range rows {
		y := top + float64(i)*rowH
		c.Text(left-8, y+rowH/2+4, row.label, svg.A("fill", colText), svg.A("text-anchor", "end"))
		if len(row.times) == 0 {
			c.Text(left+4, y+rowH/2+4, "not sent by this server", svg.A("fill", colMuted))
			continue
		}
		prev := int64(-1)
		for _, t := range row.times {
			if t < 0 {
				continue
			}
			x := xs.Map(stats.Millis(t))
			if prev >= 0 && stats.Millis(t-prev) > 50 {
				c.Rect(xs.Map(stats.Millis(prev)), y+rowH/2-3, x-xs.Map(stats.Millis(prev)), 6, svg.A("fill", colStall), svg.A("opacity", "0.35"), svg.Class("stall"))
			}
			c.Line(x, y+6, x, y+rowH-6, svg.A("stroke", row.col))
			prev = max(prev, t)
		}
	}
	v := measure.Of(q, measure.Display(r))
	c.Text(10, 32, fmt.Sprintf("network TTFT %s ms · first paint %s ms · red: pauses over 50 ms", fmtMS(v.TTFTMs), fmtMS(v.Painted.TTFTMs)), svg.A("fill", colMuted))
	return Chart{Name: fmt.Sprintf("layers-%d", q.Index), Title: title, SVG: c.Bytes()}
}

// browser prints a browser run's model against measurement, one line per
// render strategy.
func (t *textWriter) browser(r *runfile.Run) {
	v := newBrowserView(r, Options{})
	if v == nil {
		return
	}
	b := r.Config.Browser
	if b == nil {
		b = &runfile.Browser{Chromium: "Chromium"}
	}
	t.printf("\nwhat the eye sees (%s, CPU throttle %g×; model: %g Hz frames + %g ms batching, from arrivals; measured: paints in the page)\n",
		b.Chromium, b.CPUThrottle, measure.Display(r).FrameHz, measure.Display(r).BatchMS())
	tw := tabwriter.NewWriter(t.w, 0, 0, 2, ' ', tabwriter.AlignRight)
	for i, c := range v.Columns {
		if i > 0 {
			fmt.Fprint(tw, "\t")
		}
		fmt.Fprint(tw, c)
	}
	fmt.Fprint(tw, "\t\n")
	for _, row := range v.Rows {
		for i, c := range row {
			if i > 0 {
				fmt.Fprint(tw, "\t")
			}
			fmt.Fprint(tw, c)
		}
		fmt.Fprint(tw, "\t\n")
	}
	tw.Flush()
	if b.RelayHoldMs.Count > 0 {
		t.printf("relay's added time: p50 %.2f ms, max %.2f ms per request or chunk; page clock aligned to ±%.2f ms\n", b.RelayHoldMs.P50, b.RelayHoldMs.Max, stats.Millis(b.ClockUncertaintyNS))
	}
}

// browserMethod says how a browser run measured what the eye sees.
func browserMethod(b *runfile.Browser) string {
	how := "tokenpulse's chat page, served from a local relay that also relayed /v1/* to the target, with each token in its own span whose paint is Element Timing's renderTime (else the end of the first frame after its insertion)"
	if b.Page != "embedded" {
		how = fmt.Sprintf("the page %s: the prompt typed into %s, %s clicked, and each growth of %s's text taken as an event, painted at the end of the first frame after it, arriving with the last streamed fetch chunk before it", b.Page, b.Input, b.Send, b.Output)
	}
	return fmt.Sprintf("This run was measured in headless %s (CPU throttle %g×) on %s. Each request began with a real click dispatched through Chromium's input pipeline; t_start is its event.timeStamp, and every time is in the page's clock from it: arrivals are the fetch reader's chunks. Painted TTFT is the first paint less the click; paint gaps are the pauses between successive paints that showed new text; render overhead is each token's paint less its arrival; long frames are the long animation frames (over 50 ms) meanwhile. The modelled visible metrics above are derived from the same arrivals, so model and measurement can be compared.",
		b.Chromium, b.CPUThrottle, how)
}

// browserScenarioSummary is the one-line verdict of a rapid-fire run in
// the browser: the page aborted the old answer (AbortController and
// /v1/abort, whose answer it does not read) and must paint none of its
// tokens after the new click.
func browserScenarioSummary(r *runfile.Run) string {
	stale, foreign := 0, 0
	for _, f := range r.Scenario.FollowUps {
		if f.OldPaintsAfterClick != nil {
			stale += *f.OldPaintsAfterClick
		}
		foreign += f.ForeignEvents
	}
	s := fmt.Sprintf("%s in the browser: %d follow-ups; %d tokens of the old answers painted after the new click, %d foreign events",
		r.Scenario.Name, len(r.Scenario.FollowUps), stale, foreign)
	if stale == 0 && foreign == 0 {
		s += ": no old token reached the screen"
	}
	return s
}

// longFrames is the long-frames cell: how many, and the longest.
func longFrames(d stats.Distribution) string {
	if d.Count == 0 {
		return "0"
	}
	return fmt.Sprintf("%d (max %s ms)", d.Count, fmtMS(d.Max))
}
