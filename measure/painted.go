package measure

import (
	"sort"

	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stats"
)

// The measured visible metrics of a browser run (bench --browser), beside
// the modelled ones (visible_ttft, visible_gap) that every run derives
// from arrival times. All are in the page's clock, from the click that
// asked (t_start of a browser run).
const (
	// PaintedTTFT: per request, the click to the first paint of text.
	PaintedTTFT Metric = "painted_ttft"
	// PaintGap: pooled, every pause between successive paints that showed
	// new text (tokens painted together add no gap).
	PaintGap Metric = "paint_gap"
	// RenderOverhead: pooled, per painted event, its paint less its
	// arrival at the page: what the page's rendering added.
	RenderOverhead Metric = "render_overhead"
	// LongFrame: pooled, the duration of every long animation frame (over
	// 50 ms) that overlapped the request.
	LongFrame Metric = "long_frame"
)

// Painted is a request's measured visible metrics, derived from what the
// page recorded (runfile.Paint). Times are ms.
type Painted struct {
	// Has is true when the request was measured in a page and at least
	// one of its events was painted.
	Has bool
	// TTFTMs is the first paint less t_start (the click).
	TTFTMs float64
	// GapsMs are the gaps between successive distinct paint times.
	GapsMs []float64
	// OverheadMs are, per painted event, paint − arrival.
	OverheadMs []float64
	// LongFramesMs are the durations of the long animation frames that
	// overlapped the request.
	LongFramesMs []float64
}

// paintedOf derives q's measured visible metrics; zero when q has no
// paint record or nothing was painted.
func paintedOf(q *runfile.Request) Painted {
	p := q.Paint
	if p == nil {
		return Painted{}
	}
	var out Painted
	for _, f := range p.LongFrames {
		out.LongFramesMs = append(out.LongFramesMs, stats.Millis(f.DurationNS))
	}
	var paints []int64
	for i, t := range p.PaintNS {
		if t < 0 {
			continue
		}
		paints = append(paints, t)
		if i < len(q.TokenTimesNS) {
			out.OverheadMs = append(out.OverheadMs, stats.Millis(t-q.TokenTimesNS[i]))
		}
	}
	if len(paints) == 0 {
		return out
	}
	sort.Slice(paints, func(i, j int) bool { return paints[i] < paints[j] })
	out.Has = true
	out.TTFTMs = stats.Millis(paints[0])
	for i := 1; i < len(paints); i++ {
		if paints[i] != paints[i-1] {
			out.GapsMs = append(out.GapsMs, stats.Millis(paints[i]-paints[i-1]))
		}
	}
	return out
}

// values returns the request's values of one of the measured visible
// metrics, nil for any other metric.
func (p *Painted) values(m Metric) []float64 {
	switch m {
	case PaintedTTFT:
		if p.Has {
			return []float64{p.TTFTMs}
		}
	case PaintGap:
		return p.GapsMs
	case RenderOverhead:
		return p.OverheadMs
	case LongFrame:
		return p.LongFramesMs
	}
	return nil
}

// Renders returns the render strategies of the overall scope's requests
// of a browser run, in the order they first appear; nil for a run with
// none.
func Renders(run *runfile.Run) []string {
	var out []string
	seen := map[string]bool{}
	for _, q := range Requests(run, Overall) {
		if q.Paint != nil && !seen[q.Paint.Render] {
			seen[q.Paint.Render] = true
			out = append(out, q.Paint.Render)
		}
	}
	return out
}

// RenderViews returns the views of the overall scope's requests that
// were rendered with strategy render.
func RenderViews(run *runfile.Run, render string) []View {
	var out []View
	for _, v := range Views(run, Overall) {
		if v.Req.Paint != nil && v.Req.Paint.Render == render {
			out = append(out, v)
		}
	}
	return out
}

// renderGroups returns the aggregate of each render strategy of a run
// that ran several, nil otherwise.
func renderGroups(run *runfile.Run) map[string]runfile.Group {
	rs := Renders(run)
	if len(rs) < 2 {
		return nil
	}
	out := map[string]runfile.Group{}
	for _, r := range rs {
		out[r] = Aggregate(RenderViews(run, r))
	}
	return out
}

// StalePaints returns how many of the interrupted request's events were
// painted after the follow-up's click: the old answer's tokens a reader
// saw after asking again (0 in a correct page). Both requests' times are
// from their own clicks in one page clock, so the follow-up's click is at
// its StartedAt.
func StalePaints(old, follow *runfile.Request) int {
	if old.Paint == nil || follow.Paint == nil {
		return 0
	}
	click := follow.StartedAt.Sub(old.StartedAt).Nanoseconds()
	n := 0
	for _, t := range old.Paint.PaintNS {
		if t >= 0 && t > click {
			n++
		}
	}
	return n
}
