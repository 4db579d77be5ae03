package runfile

import (
	"sort"

	"github.com/tokenpulse/tokenpulse/stats"
)

// Summarize recomputes r.Summary from r.Requests with the display model of
// r.Config (60 Hz and 16 ms when unset).
func (r *Run) Summarize() {
	d := stats.Display{FrameHz: r.Config.FrameHz, BatchNS: int64(r.Config.RenderBatchMS * 1e6)}
	if d.FrameHz == 0 {
		d = stats.DefaultDisplay
	}
	var warm, cold []*Request
	cats := map[string][]*Request{}
	for i := range r.Requests {
		q := &r.Requests[i]
		if !q.Counted() {
			continue
		}
		if q.Cold {
			cold = append(cold, q)
			continue
		}
		warm = append(warm, q)
		cats[q.Category] = append(cats[q.Category], q)
	}
	r.Summary = Summary{Overall: Aggregate(warm, d), Categories: map[string]Group{}}
	if len(cold) > 0 {
		g := Aggregate(cold, d)
		r.Summary.Cold = &g
	}
	names := make([]string, 0, len(cats))
	for n := range cats {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		r.Summary.Categories[n] = Aggregate(cats[n], d)
	}
}

// Aggregate summarises reqs as DESIGN.md defines: TTFT, TPOT, E2E one value
// per successful request, gaps pooled over all successful requests.
func Aggregate(reqs []*Request, d stats.Display) Group {
	g := Group{Requests: len(reqs)}
	var ttft, tpot, tpotStd, e2e, gaps, vttft, vgaps []float64
	events := 0
	for _, q := range reqs {
		if !q.OK() {
			g.Errors++
			if g.ErrorKinds == nil {
				g.ErrorKinds = map[string]int{}
			}
			g.ErrorKinds[q.ErrorKind]++
			continue
		}
		g.OutputTokens += q.OutputTokens
		events += q.ContentEvents
		e2e = append(e2e, stats.Millis(q.E2ENS))
		if len(q.TokenTimesNS) == 0 {
			continue
		}
		ttft = append(ttft, stats.Millis(q.TTFTNS))
		if v, ok := stats.TPOT(q.TokenTimesNS); ok {
			tpot = append(tpot, v/1e6)
		}
		var mine []float64
		for _, gap := range stats.Gaps(q.TokenTimesNS) {
			mine = append(mine, stats.Millis(gap))
		}
		gaps = append(gaps, mine...)
		if len(mine) >= 2 {
			tpotStd = append(tpotStd, stats.Std(mine))
		}
		vis := d.Visible(q.TokenTimesNS)
		vttft = append(vttft, stats.Millis(vis[0]))
		for _, gap := range d.VisibleGaps(q.TokenTimesNS) {
			vgaps = append(vgaps, stats.Millis(gap))
		}
	}
	g.TTFTMs = stats.Describe(ttft)
	g.TPOTMs = stats.Describe(tpot)
	g.TPOTStdMs = stats.Describe(tpotStd)
	g.GapMs = stats.Describe(gaps)
	g.E2EMs = stats.Describe(e2e)
	g.VisibleTTFTMs = stats.Describe(vttft)
	g.VisibleGapMs = stats.Describe(vgaps)
	if events > 0 {
		g.TokensPerEvent = float64(g.OutputTokens) / float64(events)
	}
	return g
}

// ErrorRate returns errors ÷ requests of g, 0 when it has no requests.
func (g Group) ErrorRate() float64 {
	if g.Requests == 0 {
		return 0
	}
	return float64(g.Errors) / float64(g.Requests)
}

// BatchedAbove is the tokens-per-event ratio above which a group counts as
// batched. A ratio a little over 1 is normal for a one-token-per-event
// server: a token that completes no character (half of a UTF-8 sequence)
// or ends the answer may carry no visible text and so no content event.
const BatchedAbove = 1.05

// Batched reports whether the endpoint sent several tokens per event, so
// that gap figures are per event, not per token.
func (g Group) Batched() bool { return g.TokensPerEvent > BatchedAbove }
