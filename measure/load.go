package measure

import (
	"sort"
	"time"

	"github.com/tokenpulse/tokenpulse/runfile"
)

// End returns the instant q ended: its start plus its last event, or for
// a failed request the last instant it recorded.
func End(q *runfile.Request) time.Time {
	return q.StartedAt.Add(time.Duration(max(q.E2ENS, q.SentNS, q.HeadersNS, q.FirstByteNS)))
}

// InputThroughput returns the prompt tokens of the successful requests
// of views (the server's usage.prompt_tokens) and their rate over spanS
// seconds. Both are 0 unless every successful request has a count: a
// partial sum would understate the rate.
func InputThroughput(views []View, spanS float64) (tokens int, perS float64) {
	for i := range views {
		if !views[i].OK {
			continue
		}
		n := views[i].Req.PromptTokens
		if n <= 0 {
			return 0, 0
		}
		tokens += n
	}
	if spanS <= 0 {
		return tokens, 0
	}
	return tokens, float64(tokens) / spanS
}

// Step is one step of a count over time: from AtS, seconds from the
// first request's start, the count is N.
type Step struct {
	AtS float64
	N   int
}

// InFlight returns how many requests of views were in flight over time:
// each counts from its start to its end ([End]), failed ones too (they
// held the target). Steps are in time order, one per instant at which
// the count changed; at an instant where one request ends and another
// starts, the ending one is out first. The last step is 0, at the last
// end. Requests without a start are left out.
func InFlight(views []View) []Step {
	type edge struct {
		at time.Time
		d  int
	}
	var edges []edge
	for i := range views {
		q := views[i].Req
		if q.StartedAt.IsZero() {
			continue
		}
		edges = append(edges, edge{q.StartedAt, +1}, edge{End(q), -1})
	}
	if len(edges) == 0 {
		return nil
	}
	sort.SliceStable(edges, func(i, j int) bool {
		if !edges[i].at.Equal(edges[j].at) {
			return edges[i].at.Before(edges[j].at)
		}
		return edges[i].d < edges[j].d
	})
	origin := edges[0].at
	var out []Step
	n := 0
	for _, e := range edges {
		n += e.d
		at := e.at.Sub(origin).Seconds()
		if k := len(out); k > 0 && out[k-1].AtS == at {
			out[k-1].N = n
			continue
		}
		out = append(out, Step{AtS: at, N: n})
	}
	return out
}

// Concurrency returns the achieved concurrency of views: the requests in
// flight averaged over the span from the first start to the last end
// (the time-weighted mean of [InFlight]), and the most in flight at once.
func Concurrency(views []View) (mean float64, peak int) {
	steps := InFlight(views)
	if len(steps) < 2 {
		return 0, 0
	}
	area := 0.0
	for i, s := range steps[:len(steps)-1] {
		area += float64(s.N) * (steps[i+1].AtS - s.AtS)
		peak = max(peak, s.N)
	}
	if span := steps[len(steps)-1].AtS; span > 0 {
		mean = area / span
	}
	return mean, peak
}

// Bin is one stretch of a scope's span, [FromS, ToS) in seconds from the
// first request's start (the last bin includes its end): the requests
// that ended in it, successful and failed, and the output tokens of the
// successful ones.
type Bin struct {
	FromS, ToS   float64
	OK, Failed   int
	OutputTokens int
}

// Rates splits the span of views (first start to last end) into n equal
// bins and counts the requests by the bin their end falls in: divided by
// the bin's width, the achieved requests/s and output tokens/s over time.
// Nil when the span is empty or n < 1.
func Rates(views []View, n int) []Bin {
	first, last, ok := bounds(views)
	if !ok || n < 1 {
		return nil
	}
	span := last.Sub(first).Seconds()
	out := make([]Bin, n)
	for i := range out {
		out[i].FromS, out[i].ToS = span*float64(i)/float64(n), span*float64(i+1)/float64(n)
	}
	for i := range views {
		q := views[i].Req
		if q.StartedAt.IsZero() {
			continue
		}
		k := min(int(End(q).Sub(first).Seconds()/span*float64(n)), n-1)
		if views[i].OK {
			out[k].OK++
			out[k].OutputTokens += views[i].OutputTokens
		} else {
			out[k].Failed++
		}
	}
	return out
}

// Lag is one open-loop request's schedule lag at its start.
type Lag struct {
	// AtS is the request's start, seconds from the first request's start.
	AtS float64
	// Ms is its schedule lag.
	Ms float64
}

// Lags returns the schedule lag of every scheduled request of views
// (failed ones too: the lag measures the client) against its start, in
// run order; nil in a closed loop.
func Lags(views []View) []Lag {
	first, _, ok := bounds(views)
	if !ok {
		return nil
	}
	var out []Lag
	for i := range views {
		v := &views[i]
		if v.Scheduled && !v.Req.StartedAt.IsZero() {
			out = append(out, Lag{AtS: v.Req.StartedAt.Sub(first).Seconds(), Ms: v.ScheduleLagMs})
		}
	}
	return out
}

// bounds returns the first start and the last end of views, and false
// when they span no time.
func bounds(views []View) (first, last time.Time, ok bool) {
	for i := range views {
		q := views[i].Req
		if q.StartedAt.IsZero() {
			continue
		}
		if first.IsZero() || q.StartedAt.Before(first) {
			first = q.StartedAt
		}
		if e := End(q); e.After(last) {
			last = e
		}
	}
	return first, last, !first.IsZero() && last.After(first)
}

// Turns returns the turn numbers that counted warm requests of run have,
// in order: empty for a run without conversations.
func Turns(run *runfile.Run) []int {
	seen := map[int]bool{}
	var out []int
	for i := range run.Requests {
		q := &run.Requests[i]
		if q.Turn > 0 && Counted(q) && !q.Cold && !seen[q.Turn] {
			seen[q.Turn] = true
			out = append(out, q.Turn)
		}
	}
	sort.Ints(out)
	return out
}
