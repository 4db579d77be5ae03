package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/report/svg"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stats"
)

// Chart is one SVG chart of a report.
type Chart struct {
	// Name is the chart's file name without ".svg": "waterfall", "gaps",
	// "timeline-7-complex-02".
	Name string
	// Title says what the chart shows, for a caption.
	Title string
	// SVG is the standalone SVG document.
	SVG []byte
}

// Charts returns every chart of the HTML report of r, in page order: the
// TTFT waterfall, the distribution of TTFT and E2E (CDFChart), their
// course over the run (TimeChart), TTFT by turn (a run with
// conversations only), the gap histogram, one token-arrival timeline per offending request (see
// Timelines), the load over the run (LoadChart), then the flame graph of
// the run's CPU profile when it has one (see FlameGraph).
func Charts(r *runfile.Run, o Options) []Chart {
	out := []Chart{Waterfall(r, o), CDFChart(r, o), TimeChart(r, o)}
	if tc, ok := TurnChart(r, o); ok {
		out = append(out, tc)
	}
	out = append(out, GapHistogram(r, o))
	out = append(out, Timelines(r, o)...)
	out = append(out, LoadChart(r, o))
	if fd, ok := FlameGraph(r, o); ok && fd.Chart.SVG != nil {
		out = append(out, fd.Chart)
	}
	return out
}

// Colours of the charts.
const (
	colText    = "#222"
	colMuted   = "#666"
	colGrid    = "#e3e3e3"
	colAxis    = "#999"
	colSend    = "#a9b8c8"
	colWait    = "#d5dee8"
	colBody    = "#7fa7d4"
	colModel   = "#2b6cb0"
	colQueue   = "#e0a030"
	colPrefill = "#8e5bd6"
	colBar     = "#4a7fc1"
	colStall   = "#d62728"
	fontAttr   = "font-family:system-ui,-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;font-size:11px"
)

func newChart(w, h float64, title, class string, extra ...svg.Attr) *svg.Canvas {
	attrs := append([]svg.Attr{svg.Class(class), svg.A("style", fontAttr+";background:#fff")}, extra...)
	c := svg.New(w, h, title, attrs...)
	c.Rect(0, 0, w, h, svg.A("fill", "#fff"))
	return c
}

// legendEntry is one swatch of a legend.
type legendEntry struct{ col, label string }

// legend draws entries from (10, y), wrapping before the width w, and
// returns the y of its last line.
func legend(c *svg.Canvas, y, w float64, entries []legendEntry) float64 {
	x := 10.0
	for _, e := range entries {
		size := 14 + textWidth(e.label, fontSize) + 16
		if x > 10 && x+size > w {
			x, y = 10, y+16
		}
		c.Rect(x, y-8, 10, 10, svg.A("fill", e.col))
		c.Text(x+14, y, e.label, svg.A("fill", colText))
		x += size
	}
	return y
}

// ---- TTFT waterfall ----

type waterfallRow struct {
	Label string
	Q     *runfile.Request
}

// waterfallRows returns the requests the waterfall shows: every measured
// request with a first token when there are at most o.MaxWaterfall of them,
// otherwise the cold ones and the warm ones at the TTFT median, p95, p99
// and max.
func waterfallRows(r *runfile.Run, o Options) []waterfallRow {
	withTokens := func(qs []*runfile.Request) []*runfile.Request {
		return slices.DeleteFunc(qs, func(q *runfile.Request) bool { return len(q.TokenTimesNS) == 0 })
	}
	cold := withTokens(measure.Requests(r, measure.Cold))
	warm := withTokens(measure.Requests(r, measure.Overall))
	label := func(q *runfile.Request) string {
		s := fmt.Sprintf("#%d %s", q.Index, q.PromptID)
		if q.Turn > 0 {
			s += fmt.Sprintf(" turn %d", q.Turn)
		}
		if q.Cold {
			s += " (cold)"
		}
		return s
	}
	var rows []waterfallRow
	if len(cold)+len(warm) <= o.maxWaterfall() {
		for i := range r.Requests {
			q := &r.Requests[i]
			if measure.Counted(q) && len(q.TokenTimesNS) > 0 {
				rows = append(rows, waterfallRow{label(q), q})
			}
		}
		return rows
	}
	for _, q := range cold {
		rows = append(rows, waterfallRow{label(q), q})
	}
	// The requests nearest the percentiles the summary states.
	names := []string{"p50", "p95", "p99", "max"}
	seen := map[int]bool{}
	for i, v := range measure.AtRanks(measure.Views(r, measure.Overall), measure.TTFT, 50, 95, 99, 100) {
		q := v.Req
		if seen[q.Index] {
			continue
		}
		seen[q.Index] = true
		rows = append(rows, waterfallRow{names[i] + " " + label(q), q})
	}
	return rows
}

// Margins of the waterfall's label column, in pixels.
const (
	chartPad = 10.0 // between the chart's edge and its text
	labelGap = 8.0  // between a row's label and its bars
)

// waterfallLeft returns the x where the waterfall's bars start: just
// right of the widest row label, so that no label is clipped, but at
// least 90 px and at most 45% of the width w, beyond which labels are cut
// with an ellipsis (see fittedText).
func waterfallLeft(rows []waterfallRow, w float64) float64 {
	widest := 0.0
	for _, row := range rows {
		widest = max(widest, textWidth(row.Label, fontSize))
	}
	return math.Ceil(min(max(chartPad+widest+labelGap, 90), 0.45*w))
}

// Waterfall draws the TTFT waterfall: for each shown request a bar from the
// user action to the first token, split into sending the request, waiting
// for the response headers, headers to the first body byte, and the first
// byte to the first token; under it, when the server reported them, its
// queue and prefill times (placed from t_sent, since the two clocks are
// not aligned). The label column is as wide as the longest row label
// needs (see waterfallLeft); a label too long even for its widest is cut
// with an ellipsis and carries the whole text in a <title>.
func Waterfall(r *runfile.Run, o Options) Chart {
	rows := waterfallRows(r, o)
	const (
		w, right, top, rowH = 760.0, 96.0, 68.0, 26.0
	)
	left := waterfallLeft(rows, w)
	h := top + rowH*float64(max(len(rows), 1)) + 40
	title := "TTFT waterfall: where the time to the first token goes"
	c := newChart(w, h, title, "chart waterfall")
	c.Text(10, 16, title, svg.A("fill", colText), svg.A("font-weight", "600"))
	c.Text(w-10, 16, "server times start at t_sent (the clocks are not aligned)", svg.A("fill", colMuted), svg.A("text-anchor", "end"))
	// The client's phases on one line, the server's own times on the next.
	y := legend(c, 36, w, []legendEntry{
		{colSend, "send request"}, {colWait, "wait for headers"}, {colBody, "headers → first byte"},
		{colModel, "first byte → first token"},
	})
	legend(c, y+16, w, []legendEntry{{colQueue, "server queue"}, {colPrefill, "server prefill"}})
	if len(rows) == 0 {
		c.Text(left, top+16, "no request produced a token", svg.A("fill", colMuted))
		return Chart{Name: "waterfall", Title: title, SVG: c.Bytes()}
	}
	var maxNS int64
	for _, row := range rows {
		maxNS = max(maxNS, row.Q.TTFTNS)
	}
	xs := svg.Linear{D0: 0, D1: svg.NiceMax(stats.Millis(maxNS)), R0: left, R1: w - right}
	bottom := top + rowH*float64(len(rows))
	for _, t := range xs.Ticks(6) {
		c.Line(xs.Map(t), top-4, xs.Map(t), bottom, svg.A("stroke", colGrid))
		c.Text(xs.Map(t), bottom+14, svg.Label(t), svg.A("fill", colMuted), svg.A("text-anchor", "middle"))
	}
	c.Text(w-right, bottom+30, "ms from the user action", svg.A("fill", colMuted), svg.A("text-anchor", "end"))
	for i, row := range rows {
		q := row.Q
		y := top + rowH*float64(i)
		c.Group(svg.Class("request"), svg.A("data-request-id", q.RequestID))
		c.Title(fmt.Sprintf("%s %s: sent %s ms, headers %s ms, first byte %s ms, first token %s ms",
			q.RequestID, q.PromptID, fmtMS(stats.Millis(q.SentNS)), fmtMS(stats.Millis(q.HeadersNS)),
			fmtMS(stats.Millis(q.FirstByteNS)), fmtMS(stats.Millis(q.TTFTNS))))
		fittedText(c, left-labelGap, y+11, row.Label, left-labelGap-chartPad, fontSize, svg.A("fill", colText), svg.A("text-anchor", "end"))
		// Phases in order; a phase whose end is unknown (0) or out of
		// order is drawn as empty.
		prev := int64(0)
		for _, ph := range []struct {
			end int64
			col string
		}{{q.SentNS, colSend}, {q.HeadersNS, colWait}, {q.FirstByteNS, colBody}, {q.TTFTNS, colModel}} {
			end := ph.end
			if end < prev {
				end = prev
			}
			c.Rect(xs.Map(stats.Millis(prev)), y+2, xs.Map(stats.Millis(end))-xs.Map(stats.Millis(prev)), 11, svg.A("fill", ph.col))
			prev = end
		}
		if s := q.Server; s != nil && (s.QueueNS > 0 || s.PrefillNS > 0) {
			q0 := q.SentNS
			c.Rect(xs.Map(stats.Millis(q0)), y+15, xs.Map(stats.Millis(q0+s.QueueNS))-xs.Map(stats.Millis(q0)), 5, svg.A("fill", colQueue))
			p0 := q0 + s.QueueNS
			c.Rect(xs.Map(stats.Millis(p0)), y+15, xs.Map(stats.Millis(p0+max(s.PrefillNS, 0)))-xs.Map(stats.Millis(p0)), 5, svg.A("fill", colPrefill))
		}
		c.Text(xs.Map(stats.Millis(q.TTFTNS))+6, y+11, "TTFT "+fmtMS(stats.Millis(q.TTFTNS))+" ms", svg.A("fill", colText))
		c.End()
	}
	return Chart{Name: "waterfall", Title: title, SVG: c.Bytes()}
}

// ---- gap histogram ----

// gapLimit returns the smallest limit in ms of the run's gap thresholds,
// 0 when there is none.
func gapLimit(r *runfile.Run) float64 {
	lim := 0.0
	for _, v := range r.Verdicts {
		if v.Metric == "gap" && v.Statistic == "max" && v.Unit == "ms" && v.Limit > 0 {
			if lim == 0 || v.Limit < lim {
				lim = v.Limit
			}
		}
	}
	return lim
}

// warmGaps returns every gap (ms) of every successful warm request: the
// overall scope's gap sample.
func warmGaps(r *runfile.Run) []float64 {
	return measure.Sample(measure.Views(r, measure.Overall), measure.Gap)
}

// GapHistogram draws the distribution of every warm gap with log-spaced
// bins (ten per decade) on a logarithmic time axis, so that the steady
// gaps and a rare long stall show on one chart; the count axis is
// logarithmic too, so that one stall among thousands of gaps stays
// visible. Bins above the run's gap.max limit are red; lines mark the
// median, the p99 and the limit. No two labels overlap and no count
// covers a bar: counts are placed most telling first (bins over the
// limit, the longest gaps, the tallest bin), and one with no free place
// is left off; every bar's <title> holds its count.
func GapHistogram(r *runfile.Run, o Options) Chart {
	const (
		w, h, left, right, top, bottom = 760.0, 300.0, 56.0, 24.0, 66.0, 48.0
	)
	title := "Gaps between tokens (per event; warm requests, log scale)"
	c := newChart(w, h, title, "chart gaps")
	c.Text(10, 16, title, svg.A("fill", colText), svg.A("font-weight", "600"))
	gaps := warmGaps(r)
	if len(gaps) == 0 {
		c.Text(left, top+20, "no gaps: no warm request produced two tokens", svg.A("fill", colMuted))
		return Chart{Name: "gaps", Title: title, SVG: c.Bytes()}
	}
	d := stats.Describe(gaps)
	// Gaps under the floor (tokens read together, often 0 ms) have no
	// place on a log axis: they get a bar of their own left of it,
	// labelled "< 0.01".
	const floor = 0.01 // ms
	under, lo := 0, math.Inf(1)
	for _, g := range gaps {
		if g < floor {
			under++
		} else {
			lo = math.Min(lo, g)
		}
	}
	if math.IsInf(lo, 1) {
		lo = floor
	}
	limit := gapLimit(r)
	hi := math.Max(math.Max(d.Max, limit), lo)
	edges := svg.LogBins(lo, hi, binsPerDecade)
	counts := make([]int, len(edges)-1)
	for _, g := range gaps {
		if g < floor {
			continue
		}
		k := sort.SearchFloat64s(edges, g*(1+1e-12)) - 1 // edges[k] ≤ g < edges[k+1]
		counts[max(0, min(k, len(counts)-1))]++
	}
	maxCount := under
	for _, n := range counts {
		maxCount = max(maxCount, n)
	}
	const underW = 34.0 // the underflow bar's slot
	x0 := left
	if under > 0 {
		x0 += underW
	}
	xs := svg.Log{D0: edges[0], D1: edges[len(edges)-1], R0: x0, R1: w - right}
	yTop := math.Pow(10, math.Ceil(math.Log10(float64(maxCount)+1)))
	// A count of 1 stands oneBar px above the base line, and counts above
	// it on a log scale: so 0 and 1 are two labels apart, and a single
	// stall is a bar one can see.
	const oneBar = 18.0
	ys := func(n float64) float64 {
		if n <= 0 {
			return h - bottom
		}
		return h - bottom - oneBar - math.Log10(n)/math.Log10(yTop)*(h-bottom-top-oneBar)
	}
	xOf := func(v float64) float64 { // a marker's x; under the floor, the underflow bar's middle
		if v < floor && under > 0 {
			return left + underW/2
		}
		return xs.Map(math.Max(v, floor))
	}
	for v := 1.0; v <= yTop; v *= 10 {
		c.Line(left, ys(v), w-right, ys(v), svg.A("stroke", colGrid))
		c.Text(left-6, ys(v)+4, svg.Label(v), svg.A("fill", colMuted), svg.A("text-anchor", "end"), svg.Class("ytick"))
	}
	c.Text(left-6, ys(0)+4, "0", svg.A("fill", colMuted), svg.A("text-anchor", "end"), svg.Class("ytick"))
	underLabel := box{}
	if under > 0 { // the underflow bar's label, drawn with its bar
		underLabel = textBox(left+underW/2-1, h-bottom+16, "<"+svg.Label(floor), fontSize, "middle")
	}
	for _, t := range xs.Ticks() {
		c.Line(xs.Map(t), h-bottom, xs.Map(t), h-bottom+4, svg.A("stroke", colAxis))
		if under > 0 && textBox(xs.Map(t), h-bottom+16, svg.Label(t), fontSize, "middle").overlaps(underLabel) {
			continue // its tick stays; "<0.01" beside it says where the axis starts
		}
		c.Text(xs.Map(t), h-bottom+16, svg.Label(t), svg.A("fill", colMuted), svg.A("text-anchor", "middle"), svg.Class("xtick"))
	}
	c.Line(left, h-bottom, w-right, h-bottom, svg.A("stroke", colAxis))
	c.Text(w-right, h-10, "gap, ms (log scale)", svg.A("fill", colMuted), svg.A("text-anchor", "end"))
	mid := (top + h - bottom) / 2 // the count axis's caption runs up beside it
	c.Text(14, mid, "gaps (log scale)", svg.A("fill", colMuted), svg.A("text-anchor", "middle"), svg.A("transform", "rotate(-90 14 "+svg.Num(mid)+")"))
	// Bars first; every label placed later keeps clear of them.
	var pl placer
	var bins []histBin
	if under > 0 {
		bx0, bx1 := left+4, left+underW-6
		c.Group(svg.Class("bin underflow"), svg.A("data-count", strconv.Itoa(under)))
		c.Title(fmt.Sprintf("under %s ms (tokens read together): %d gaps", svg.Label(floor), under))
		c.Rect(bx0, ys(float64(under)), bx1-bx0, ys(0)-ys(float64(under)), svg.A("fill", colMuted))
		c.End()
		c.Text((bx0+bx1)/2, h-bottom+16, "<"+svg.Label(floor), svg.A("fill", colMuted), svg.A("text-anchor", "middle"), svg.Class("xtick underflow"))
		pl.take(box{bx0, ys(float64(under)), bx1, ys(0)})
		bins = append(bins, histBin{x0: bx0 - 0.5, x1: bx1 + 0.5, n: under})
	}
	for i, n := range counts {
		if n == 0 {
			continue
		}
		x0, x1 := xs.Map(edges[i]), xs.Map(edges[i+1])
		over := limit > 0 && edges[i+1] > limit && edges[i] >= limit*(1-1e-9)
		red := over || (limit > 0 && edges[i] < limit && edges[i+1] > limit && anyAbove(gaps, limit, edges[i], edges[i+1]))
		col := colBar
		if red {
			col = colStall
		}
		c.Group(svg.Class("bin"), svg.A("data-count", strconv.Itoa(n)))
		c.Title(fmt.Sprintf("%s–%s ms: %d gaps", svg.Label(edges[i]), svg.Label(edges[i+1]), n))
		c.Rect(x0+0.5, ys(float64(n)), x1-x0-1, ys(0)-ys(float64(n)), svg.A("fill", col))
		c.End()
		pl.take(box{x0 + 0.5, ys(float64(n)), x1 - 0.5, ys(0)})
		bins = append(bins, histBin{x0: x0, x1: x1, n: n, red: red})
	}
	// Marker lines, named in a key under the title and by a short tag at
	// the head of each line; a tag that would cover another moves up a
	// row.
	key := fmt.Sprintf("%d gaps · p50 %s ms · p99 %s ms · max %s ms", d.Count, fmtMS(d.P50), fmtMS(d.P99), fmtMS(d.Max))
	if limit > 0 {
		key += " · limit " + fmtLimit(limit, "ms")
	}
	c.Text(10, 34, key, svg.A("fill", colText))
	type marker struct {
		v              float64
		tag, col, dash string
	}
	var markers []marker
	if limit > 0 {
		markers = append(markers, marker{limit, "limit", colStall, "6,3"})
	}
	markers = append(markers, marker{d.P50, "p50", colMuted, "3,3"})
	if xOf(d.P99)-xOf(d.P50) > 24 {
		markers = append(markers, marker{d.P99, "p99", colMuted, "3,3"})
	}
	// The lines are taken too, so that no count label is cut by one.
	for _, m := range markers {
		x := xOf(m.v)
		c.Line(x, top, x, h-bottom, svg.A("stroke", m.col), svg.A("stroke-dasharray", m.dash), svg.Class("marker"))
		pl.take(box{x - 1, top + 1, x + 1, h - bottom})
	}
	// Labels, each where it covers no bar and no other label; the most
	// telling counts first, then the marker tags (which can move up a
	// row), then the other counts. A count left off shows on hover.
	placeCount := func(b histBin) {
		s := strconv.Itoa(b.n)
		y := ys(float64(b.n)) - 3
		for _, cand := range []struct {
			x      float64
			anchor string
		}{{(b.x0 + b.x1) / 2, "middle"}, {b.x1, "end"}, {b.x0, "start"}, {b.x1 + 3, "start"}, {b.x0 - 3, "end"}} {
			bx := textBox(cand.x, y, s, smallSize, cand.anchor)
			if bx.X0 < left-4 || bx.X1 > w-2 || !pl.free(bx) {
				continue
			}
			pl.take(bx)
			c.Text(cand.x, y, s, svg.A("fill", colText), svg.A("text-anchor", cand.anchor), svg.A("font-size", "10"), svg.Class("count"),
				svg.A("stroke", "#fff"), svg.A("stroke-width", "3"), svg.A("stroke-linejoin", "round"), svg.A("paint-order", "stroke"))
			return
		}
	}
	order, nKey := labelOrder(bins)
	for _, b := range order[:nKey] {
		placeCount(b)
	}
	for _, m := range markers {
		x := xOf(m.v)
		for _, y := range []float64{top - 2, top - 14} { // a second row when the first is taken
			if b := textBox(x, y, m.tag, smallSize, "middle"); pl.free(b) {
				pl.take(b)
				c.Text(x, y, m.tag, svg.A("fill", m.col), svg.A("text-anchor", "middle"), svg.A("font-size", "10"), svg.Class("tag"))
				break
			}
		}
	}
	for _, b := range order[nKey:] {
		placeCount(b)
	}
	return Chart{Name: "gaps", Title: title, SVG: c.Bytes()}
}

// histBin is one non-empty bar of the gap histogram, in pixels.
type histBin struct {
	x0, x1 float64
	n      int
	red    bool
}

// labelOrder returns the bins in the order their counts are labelled,
// so that when labels would collide the telling ones win: bins over the
// limit, then the bin of the longest gaps, then by count, larger first,
// and of equal counts the longer gaps. The first key bins (those over
// the limit, the last and the tallest) are labelled before the marker
// tags.
func labelOrder(bins []histBin) (order []histBin, key int) {
	last := len(bins) - 1
	rank := func(i int) int {
		switch {
		case bins[i].red:
			return 0
		case i == last:
			return 1
		}
		return 2
	}
	idx := make([]int, len(bins))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		i, j := idx[a], idx[b]
		if rank(i) != rank(j) {
			return rank(i) < rank(j)
		}
		if bins[i].n != bins[j].n {
			return bins[i].n > bins[j].n
		}
		return i > j
	})
	for _, i := range idx {
		order = append(order, bins[i])
		if rank(i) < 2 {
			key++
		}
	}
	return order, min(key+1, len(order))
}

// binsPerDecade is the number of log-spaced histogram bins per factor of
// ten: each bin is 12% wider than the one before.
const binsPerDecade = 20

// anyAbove reports whether a gap in [lo, hi) is above limit.
func anyAbove(gaps []float64, limit, lo, hi float64) bool {
	for _, g := range gaps {
		if g >= lo && g < hi && g > limit {
			return true
		}
	}
	return false
}

// ---- token-arrival timelines ----

// Timelines draws, for each request named by a crossed threshold (at most
// o.MaxTimelines), its token-arrival timeline as a staircase: time on x,
// tokens received on y. Stalls are marked in red and labelled: gaps over
// the crossed gap limit (or o.StallMS) or over o.StallFactor times the
// request's pace per token the gap brought (measure.StallRule). When no threshold was crossed it draws the warm
// request with the longest gap. Each SVG carries class "timeline" and
// data-request-id; each stall is a <g class="stall"> with data-gap-ms.
func Timelines(r *runfile.Run, o Options) []Chart {
	var out []Chart
	for _, t := range timelines(r, o) {
		t.Scrape = r.Scrape
		out = append(out, timeline(t, o))
	}
	return out
}

func timelineName(q *runfile.Request) string {
	var b strings.Builder
	for _, c := range q.PromptID {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_':
			b.WriteRune(c)
		default:
			b.WriteByte('_')
		}
	}
	name := fmt.Sprintf("timeline-%d", q.Index)
	if b.Len() > 0 {
		name += "-" + b.String()
	}
	return name
}

func timeline(t timelineFor, o Options) Chart {
	q := t.Req
	rule, stalls := findStalls(q, t.LimitMS, o)
	const (
		w, h, left, right, top, bottom = 760.0, 316.0, 56.0, 24.0, 92.0, 48.0
	)
	title := fmt.Sprintf("Tokens as they arrived for %s (request #%d, category %s, id %s)", q.PromptID, q.Index, q.Category, q.RequestID)
	attrs := []svg.Attr{svg.A("data-request-id", q.RequestID), svg.A("data-prompt-id", q.PromptID), svg.A("data-stalls", strconv.Itoa(len(stalls)))}
	server, at := serverLineAt(t.Scrape, q.StartedAt)
	if at.HasQueue {
		attrs = append(attrs, svg.A("data-server-queue", svg.Num(at.Queue)))
	}
	if at.HasKV {
		attrs = append(attrs, svg.A("data-server-kv", svg.Num(at.KV)))
	}
	c := newChart(w, h, title, "chart timeline", attrs...)
	// The heading names the prompt; the request's numbers go on a line of
	// their own, so that a long request id does not cut the heading.
	fittedText(c, chartPad, 16, "Tokens as they arrived for "+q.PromptID, w-2*chartPad, fontSize*boldWidth, svg.A("fill", colText), svg.A("font-weight", "600"), svg.Class("heading"))
	fittedText(c, chartPad, 32, fmt.Sprintf("request #%d · category %s · id %s", q.Index, q.Category, q.RequestID), w-2*chartPad, fontSize, svg.A("fill", colMuted), svg.Class("heading"))
	why := "crossed " + strings.Join(t.Rules, ", ")
	if t.Worst {
		why = "no threshold was crossed; this is the warm request with the longest gap"
	}
	fittedText(c, chartPad, 48, why+"; "+ruleText(rule), w-2*chartPad, fontSize, svg.A("fill", colMuted))
	v := measure.Of(q, stats.DefaultDisplay) // the display plays no part here
	key := fmt.Sprintf("TTFT %s ms · %s · E2E %s ms", fmtMS(v.TTFTMs), plural(v.Events, "event"), fmtMS(v.E2EMs))
	if len(stalls) > 0 {
		key += " · " + plural(len(stalls), "stall")
	}
	if server != "" {
		key += " · " + server
	}
	fittedText(c, 10, 64, key, w-20, fontSize, svg.A("fill", colText))

	// Tokens received after each event, counted as TPOT counts them.
	cum := v.CumulativeTokens()
	n := cum[len(cum)-1]
	endNS := max(q.E2ENS, q.TokenTimesNS[len(q.TokenTimesNS)-1])
	xs := svg.Linear{D0: 0, D1: svg.NiceMax(stats.Millis(endNS)), R0: left, R1: w - right}
	ys := svg.Linear{D0: 0, D1: max(n, 1), R0: h - bottom, R1: top}
	for _, v := range xs.Ticks(8) {
		c.Line(xs.Map(v), top, xs.Map(v), h-bottom, svg.A("stroke", colGrid))
		c.Text(xs.Map(v), h-bottom+16, svg.Label(v), svg.A("fill", colMuted), svg.A("text-anchor", "middle"))
	}
	for _, v := range ys.Ticks(4) {
		if v != math.Trunc(v) {
			continue
		}
		c.Line(left, ys.Map(v), w-right, ys.Map(v), svg.A("stroke", colGrid))
		c.Text(left-6, ys.Map(v)+4, svg.Label(v), svg.A("fill", colMuted), svg.A("text-anchor", "end"))
	}
	c.Line(left, h-bottom, w-right, h-bottom, svg.A("stroke", colAxis))
	c.Text(w-right, h-10, "ms from the user action", svg.A("fill", colMuted), svg.A("text-anchor", "end"))
	c.Text(12, top-12, "tokens", svg.A("fill", colMuted))

	// TTFT along the baseline, then the staircase.
	t0 := xs.Map(stats.Millis(q.TokenTimesNS[0]))
	c.Line(left, h-bottom, t0, h-bottom, svg.A("stroke", colModel), svg.A("stroke-width", "2"), svg.A("stroke-dasharray", "4,3"))
	ttft := "TTFT " + fmtMS(v.TTFTMs) + " ms"
	if t0-left > textWidth(ttft, fontSize)+8 { // otherwise the key above names it
		c.Text(t0-4, h-bottom-6, ttft, svg.A("fill", colModel), svg.A("text-anchor", "end"))
	}
	p := (&svg.PathData{}).MoveTo(left, ys.Map(0))
	prev := 0.0
	for i, tns := range q.TokenTimesNS {
		p.H(xs.Map(stats.Millis(tns))).V(ys.Map(cum[i]))
		prev = cum[i]
	}
	p.H(xs.Map(stats.Millis(endNS)))
	c.Path(p, svg.Class("staircase"), svg.A("fill", "none"), svg.A("stroke", colModel), svg.A("stroke-width", "1.5"))
	total := fmt.Sprintf("%s tokens", strconv.FormatFloat(math.Round(prev), 'f', -1, 64))
	c.Text(xs.Map(stats.Millis(endNS)), ys.Map(prev)-6, total, svg.A("fill", colText), svg.A("text-anchor", "end"))
	// Boxes a stall's label must not cover: the total, then each label
	// placed.
	taken := []box{textBox(xs.Map(stats.Millis(endNS)), ys.Map(prev)-6, total, fontSize, "end")}
	// Stalls over the line, so the red shows.
	for _, s := range stalls {
		x0, x1 := xs.Map(stats.Millis(s.FromNS)), xs.Map(stats.Millis(s.ToNS))
		c.Group(svg.Class("stall"), svg.A("data-gap-ms", fmtMS(s.GapMs)), svg.A("data-after-token", strconv.Itoa(s.After)))
		c.Title(fmt.Sprintf("stall of %s ms between tokens %d and %d", fmtMS(s.GapMs), s.After, s.After+1))
		c.Rect(x0, top, x1-x0, h-bottom-top, svg.A("fill", colStall), svg.A("fill-opacity", "0.12"))
		y := ys.Map(cum[s.After-1])
		c.Line(x0, y, x1, y, svg.A("stroke", colStall), svg.A("stroke-width", "3"))
		if lb, ok := placeStallLabel(taken, "stall "+fmtMS(s.GapMs)+" ms", (x0+x1)/2, y, left, w-right, top, h-bottom); ok {
			taken = append(taken, lb.box)
			// A white halo keeps a label that a free line put over the
			// staircase readable.
			c.Text(lb.X, lb.Y, lb.Text, svg.A("fill", colStall), svg.A("font-weight", "600"), svg.A("text-anchor", lb.Anchor), svg.Class("stall-label"),
				svg.A("stroke", "#fff"), svg.A("stroke-width", "3"), svg.A("stroke-linejoin", "round"), svg.A("paint-order", "stroke"))
		}
		c.End()
	}

	if !q.OK() {
		c.Text(xs.Map(stats.Millis(endNS))-4, ys.Map(prev)+14, "error: "+orDash(q.ErrorKind), svg.A("fill", colStall), svg.A("text-anchor", "end"))
	}
	return Chart{Name: timelineName(q), Title: title, SVG: c.Bytes()}
}

// stallLabel is where a stall's label is drawn.
type stallLabel struct {
	Text, Anchor string
	X, Y         float64
	box          box
}

// placeStallLabel places label centred over x, just above the staircase
// at y, within the plot [x0, x1]×[y0, y1], where it covers none of taken:
// failing that one line higher and so on to the top, then below the
// line; failing all of those it tries the bare figure ("60.8 ms" for
// "stall 60.8 ms"). ok is false when no place is free: the stall keeps its
// band and its hover title, unlabelled.
func placeStallLabel(taken []box, label string, x, y, x0, x1, y0, y1 float64) (stallLabel, bool) {
	const line = fontSize + 3
	size := fontSize * boldWidth
	texts := []string{label}
	if short := strings.TrimPrefix(label, "stall "); short != label {
		texts = append(texts, short)
	}
	for _, text := range texts {
		tw := textWidth(text, size)
		lx, anchor := x, "middle"
		switch {
		case lx+tw/2 > x1:
			lx, anchor = x1, "end"
		case lx-tw/2 < x0:
			lx, anchor = x0, "start"
		}
		var ys []float64
		for ly := y - 8; ly-0.93*size >= y0; ly -= line {
			ys = append(ys, ly)
		}
		for ly := y + 8 + 0.93*size; ly+0.24*size <= y1; ly += line {
			ys = append(ys, ly)
		}
	next:
		for _, ly := range ys {
			b := textBox(lx, ly, text, size, anchor)
			for _, t := range taken {
				if b.overlaps(t) {
					continue next
				}
			}
			return stallLabel{Text: text, Anchor: anchor, X: lx, Y: ly, box: b}, true
		}
	}
	return stallLabel{}, false
}
