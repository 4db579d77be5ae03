package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/report/svg"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// The server's own gauges (bench --scrape) in the load chart: one panel
// each, on the chart's time axis, under a panel of each request's TTFT
// at its start.

// serverPanelH is the height of each of those panels.
const serverPanelH = 80.0

// maxNamedPanels bounds the panels of series named by --scrape-series.
const maxNamedPanels = 4

// seriesColours colour the lines of a panel in turn.
var seriesColours = []string{"#d62728", "#4a7fc1", "#8e5bd6", "#2a9d5c", "#e0a030", "#555"}

// serverPoint is a value at AtS seconds on the load chart's time axis.
type serverPoint struct{ AtS, V float64 }

// serverLine is one series drawn in a panel.
type serverLine struct {
	key, label, role, col string
	pts                   []serverPoint
}

// serverPanel is one panel: lines of one unit, or the TTFT dots.
type serverPanel struct {
	name  string
	lines []serverLine
	ttft  []serverPoint // the client's TTFT panel
	pct   bool          // values are fractions, shown as %
	count bool          // values are counts of requests
	// holeS is the time between two points past which the line breaks:
	// the samples between failed.
	holeS float64
}

// serverPanels returns the panels of r's scrape over the load chart's
// time axis (seconds from origin, up to spanS): none when the run has no
// scrape or no point of it falls within the run.
func serverPanels(r *runfile.Run, views []measure.View, origin time.Time, spanS float64) []serverPanel {
	sc := r.Scrape
	if sc == nil || origin.IsZero() {
		return nil
	}
	off := sc.StartedAt.Sub(origin).Seconds()
	line := func(s *runfile.ScrapeSeries, label string, scale float64) (serverLine, bool) {
		l := serverLine{key: s.Key(), label: label, role: s.Role}
		for _, p := range s.Points {
			at := off + p.MS/1000
			if at >= 0 && at <= spanS {
				l.pts = append(l.pts, serverPoint{at, p.V * scale})
			}
		}
		return l, len(l.pts) > 0
	}
	var queue, kv, tokens serverPanel
	queue.name, kv.name, tokens.name = "server: requests", "server: KV cache usage, %", "server: tokens/s"
	kv.pct, queue.count = true, true
	named := map[string]*serverPanel{}
	var order []string
	for i := range sc.Series {
		s := &sc.Series[i]
		switch s.Role {
		case runfile.RoleQueue, runfile.RoleRunning:
			word := "queued"
			if s.Role == runfile.RoleRunning {
				word = "running"
			}
			if l, ok := line(s, word, 1); ok {
				l.col = colFlight
				if s.Role == runfile.RoleQueue {
					l.col = colStall
				}
				queue.lines = append(queue.lines, l)
			}
		case runfile.RoleKV:
			if l, ok := line(s, "KV", 100); ok {
				l.col = colPrefill
				kv.lines = append(kv.lines, l)
			}
		case runfile.RoleTokens:
			word, col := "output", colModel
			if strings.Contains(s.Name, "prompt") {
				word, col = "prompt", colQueue
			}
			if l, ok := line(s, word, 1); ok {
				l.col = col
				tokens.lines = append(tokens.lines, l)
			}
		default:
			l, ok := line(s, "", 1)
			if !ok {
				continue
			}
			p := named[s.Name]
			if p == nil {
				if len(order) == maxNamedPanels {
					continue
				}
				name := "server: " + s.Name
				switch s.Kind {
				case runfile.KindRate:
					name += ", per s"
				case runfile.KindMean:
					name += ", mean per interval"
				}
				p = &serverPanel{name: name}
				named[s.Name] = p
				order = append(order, s.Name)
			}
			p.lines = append(p.lines, l)
		}
	}
	var out []serverPanel
	for _, p := range []serverPanel{queue, kv, tokens} {
		if len(p.lines) > 0 {
			out = append(out, p)
		}
	}
	for _, n := range order {
		out = append(out, *named[n])
	}
	if len(out) == 0 {
		return nil
	}
	for i := range out {
		out[i].holeS = 2.5 * sc.IntervalMS / 1000
		for k := range out[i].lines {
			if out[i].lines[k].col == "" {
				out[i].lines[k].col = seriesColours[k%len(seriesColours)]
			}
		}
	}
	ttft := serverPanel{name: "TTFT of each request at its start, ms"}
	for i := range views {
		v := &views[i]
		if v.HasTTFT && !v.Req.StartedAt.IsZero() {
			ttft.ttft = append(ttft.ttft, serverPoint{v.Req.StartedAt.Sub(origin).Seconds(), v.TTFTMs})
		}
	}
	return append([]serverPanel{ttft}, out...)
}

// legendRow is the height of a row of a panel's key.
const legendRow = 14.0

// legendItem is one entry of a panel's key, placed.
type legendItem struct {
	x, row    float64
	text, col string
}

// panelKey lays out p's key above it between x0 and x1: its name, then
// each line's label, peak and series, wrapping onto more rows.
func panelKey(p serverPanel, x0, x1 float64) (items []legendItem, rows int) {
	x, row := x0+4, 0.0
	put := func(text, col string) {
		w := textWidth(text, fontSize)
		if x > x0+4 && x+w > x1 {
			x, row = x0+4, row+1
		}
		items = append(items, legendItem{x, row, text, col})
		x += w + 12
	}
	put(p.name, colText)
	for _, l := range p.lines {
		text := l.key
		if l.label != "" {
			text = l.label + " " + text
		}
		put(text+", peak "+svg.Label(math.Round(l.peak()*100)/100), l.col)
	}
	return items, int(row) + 1
}

// peak is the line's highest value.
func (l serverLine) peak() float64 {
	hi := 0.0
	for _, p := range l.pts {
		hi = math.Max(hi, p.V)
	}
	return hi
}

// serverPanelsHeight is the height panels take between x0 and x1, each
// with gap and its key above it.
func serverPanelsHeight(panels []serverPanel, x0, x1, gap float64) float64 {
	h := 0.0
	for _, p := range panels {
		_, rows := panelKey(p, x0, x1)
		h += gap + float64(rows-1)*legendRow + serverPanelH
	}
	return h
}

// drawServerPanels draws panels one under the other from y (the bottom
// of the panel above) on the time scale xs between x0 and x1, and
// returns the bottom of the last. A line breaks where samples are
// missing (more than two and a half intervals apart). Each line is a <path class="gauge">
// with data-series (the series with its labels), data-role and data-max;
// each TTFT a <circle class="ttft"> with data-ttft-ms.
func drawServerPanels(c *svg.Canvas, panels []serverPanel, xs svg.Linear, x0, x1, y, gap float64) float64 {
	for _, p := range panels {
		items, rows := panelKey(p, x0, x1)
		y0 := y + gap + float64(rows-1)*legendRow
		hi := 0.0
		for _, t := range p.ttft {
			hi = math.Max(hi, t.V)
		}
		for _, l := range p.lines {
			for _, pt := range l.pts {
				hi = math.Max(hi, pt.V)
			}
		}
		top := svg.NiceMax(hi)
		if p.pct {
			top = 100
		}
		if p.count {
			top = svg.NiceMax(math.Max(hi, 4)) // whole requests on the ticks
		}
		if top <= 0 {
			top = 1
		}
		ys := svg.Linear{D0: 0, D1: top, R0: y0 + serverPanelH, R1: y0}
		panelAxis(c, ys, x0, x1, 3, "")
		for _, it := range items {
			c.Text(it.x, y0-4-float64(rows-1-int(it.row))*legendRow, it.text, svg.A("fill", it.col))
		}
		for _, t := range p.ttft {
			c.Circle(xs.Map(t.AtS), ys.Map(t.V), 2.5, svg.A("fill", colModel), svg.Class("ttft"), svg.A("data-ttft-ms", svg.Num(t.V)))
		}
		for i, l := range p.lines {
			col := l.col
			if col == "" {
				col = seriesColours[i%len(seriesColours)]
			}
			peak := 0.0
			var d svg.PathData
			for k, pt := range l.pts {
				if k == 0 || (p.holeS > 0 && pt.AtS-l.pts[k-1].AtS > p.holeS) {
					d.MoveTo(xs.Map(pt.AtS), ys.Map(pt.V))
				} else {
					d.LineTo(xs.Map(pt.AtS), ys.Map(pt.V))
				}
				peak = math.Max(peak, pt.V)
			}
			c.Group(svg.Class("gauge"), svg.A("data-series", l.key), svg.A("data-role", l.role), svg.A("data-max", svg.Num(peak)), svg.A("data-points", strconv.Itoa(len(l.pts))))
			c.Title(fmt.Sprintf("%s: peak %s", l.key, svg.Label(peak)))
			c.Path(&d, svg.A("fill", "none"), svg.A("stroke", col), svg.A("stroke-width", "1.5"))
			if len(l.pts) <= 120 {
				for _, pt := range l.pts {
					c.Circle(xs.Map(pt.AtS), ys.Map(pt.V), 1.8, svg.A("fill", col))
				}
			}
			c.End()
		}
		y = y0 + serverPanelH
	}
	return y
}

// serverLineAt says what the server's gauges said at a request's start,
// for its timeline ("" without a scrape, or with nothing sampled then).
func serverLineAt(sc *runfile.Scrape, at time.Time) (string, measure.Server) {
	s := measure.ServerAt(sc, at)
	var parts []string
	if s.HasQueue {
		parts = append(parts, fmt.Sprintf("%s queued", svg.Label(s.Queue)))
	}
	if s.HasRunning {
		parts = append(parts, fmt.Sprintf("%s running", svg.Label(s.Running)))
	}
	if s.HasKV {
		parts = append(parts, fmt.Sprintf("KV cache %.0f%%", 100*s.KV))
	}
	if len(parts) == 0 {
		return "", s
	}
	return "server at its start: " + strings.Join(parts, ", "), s
}

// gaugesLine states what the server's own gauges (bench --scrape) peaked
// at while the run lasted; "" without a scrape.
func gaugesLine(r *runfile.Run) string {
	sc := r.Scrape
	if sc == nil {
		return ""
	}
	peak := map[string]float64{}
	for i := range sc.Series {
		s := &sc.Series[i]
		for _, p := range s.Points {
			if v, ok := peak[s.Role]; !ok || p.V > v {
				peak[s.Role] = p.V
			}
		}
	}
	var parts []string
	if v, ok := peak[runfile.RoleQueue]; ok {
		parts = append(parts, "queued peak "+svg.Label(v))
	}
	if v, ok := peak[runfile.RoleRunning]; ok {
		parts = append(parts, "running peak "+svg.Label(v))
	}
	if v, ok := peak[runfile.RoleKV]; ok {
		parts = append(parts, fmt.Sprintf("KV cache peak %.0f%%", 100*v))
	}
	s := fmt.Sprintf("server's own gauges (%s, %d samples", sc.URL, sc.Samples)
	if sc.Failed > 0 {
		s += fmt.Sprintf(", %d failed", sc.Failed)
	}
	s += ")"
	if len(parts) == 0 {
		return s + ": none of the known gauges"
	}
	return s + ": " + strings.Join(parts, ", ")
}
