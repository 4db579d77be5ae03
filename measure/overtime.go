package measure

import (
	"sort"

	"github.com/tokenpulse/tokenpulse/stats"
)

// Timed is one request at its start: seconds from the first request's
// start of its views, and its TTFT and E2E when it succeeded.
type Timed struct {
	AtS float64
	// OK is true when the request succeeded; TTFTMs is set when, in
	// addition, a content event arrived (HasTTFT).
	OK            bool
	HasTTFT       bool
	TTFTMs, E2EMs float64
	Index         int
	PromptID, Cat string
	RequestID     string
}

// OverTime returns each request of views that has a start, in order of
// start: its time into the run and its latencies, for a chart of
// latency against the run's time (drift, warm-up).
func OverTime(views []View) []Timed {
	first, _, ok := bounds(views)
	if !ok {
		return nil
	}
	var out []Timed
	for i := range views {
		v := &views[i]
		q := v.Req
		if q.StartedAt.IsZero() {
			continue
		}
		out = append(out, Timed{AtS: q.StartedAt.Sub(first).Seconds(), OK: v.OK, HasTTFT: v.OK && v.HasTTFT,
			TTFTMs: v.TTFTMs, E2EMs: v.E2EMs, Index: q.Index, PromptID: q.PromptID, Cat: q.Category, RequestID: q.RequestID})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].AtS < out[j].AtS })
	return out
}

// TimeBucket is the requests that started in one slice of the run's
// time, [FromS, ToS): how many, how many failed, and the TTFT and E2E
// medians and p95 of the successful ones (0 when none).
type TimeBucket struct {
	FromS, ToS          float64
	Requests, Failed    int
	TTFTP50, TTFTP95    float64
	E2EP50, E2EP95      float64
	TTFTCount, E2ECount int
}

// TimeBuckets splits [0, spanS] into n equal slices and gives each the
// figures of the requests of ts that started in it (the last slice
// includes its end), so that a run's drift and warm-up show: the first
// slices against the last.
func TimeBuckets(ts []Timed, spanS float64, n int) []TimeBucket {
	if n < 1 || spanS <= 0 {
		return nil
	}
	out := make([]TimeBucket, n)
	w := spanS / float64(n)
	ttft := make([][]float64, n)
	e2e := make([][]float64, n)
	for i := range out {
		out[i].FromS, out[i].ToS = float64(i)*w, float64(i+1)*w
	}
	out[n-1].ToS = spanS
	for _, t := range ts {
		k := max(0, min(int(t.AtS/w), n-1))
		out[k].Requests++
		if !t.OK {
			out[k].Failed++
			continue
		}
		e2e[k] = append(e2e[k], t.E2EMs)
		if t.HasTTFT {
			ttft[k] = append(ttft[k], t.TTFTMs)
		}
	}
	for k := range out {
		if d := stats.Describe(ttft[k]); d.Count > 0 {
			out[k].TTFTP50, out[k].TTFTP95, out[k].TTFTCount = d.P50, d.P95, d.Count
		}
		if d := stats.Describe(e2e[k]); d.Count > 0 {
			out[k].E2EP50, out[k].E2EP95, out[k].E2ECount = d.P50, d.P95, d.Count
		}
	}
	return out
}
