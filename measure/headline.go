package measure

import "github.com/tokenpulse/tokenpulse/runfile"

// Figure is one headline figure: a statistic of one metric over a scope's
// requests, as the scope's summary group holds it, under the name that
// compare, repeats, the history, the sweep and the A/B give it
// ("ttft.p95"). The names and what each reads are written here only.
type Figure struct {
	// Name is the figure's name: metric.stat, "tpot" for the TPOT
	// figures, "gap.max" for the longest stall.
	Name string
	// Metric and Stat say which distribution of the group and which of
	// its statistics ("p50", "p95", "max", "mean").
	Metric Metric
	Stat   string
}

// The headline figures.
var (
	TTFTP50 = Figure{"ttft.p50", TTFT, "p50"}
	TTFTP95 = Figure{"ttft.p95", TTFT, "p95"}
	GapP50  = Figure{"gap.p50", Gap, "p50"}
	GapP95  = Figure{"gap.p95", Gap, "p95"}
	// LongestStall is the largest gap between two tokens of the scope.
	LongestStall = Figure{"gap.max", Gap, "max"}
	TPOTMean     = Figure{"tpot.mean", TPOT, "mean"}
	// TPOTP95 is the p95 of the per-token intervals (DESIGN: TPOT's
	// percentiles are of the intervals, its mean per request).
	TPOTP95 = Figure{"tpot.p95", TokenInterval, "p95"}
	E2EP95  = Figure{"e2e.p95", E2E, "p95"}
	// AnswerTTFTP50 and AnswerTTFTP95 are the time to the first answer
	// token of a reasoning model's requests: compared only where both
	// runs thought (Thought), so not among the headlines.
	AnswerTTFTP50 = Figure{"answer_ttft.p50", AnswerTTFT, "p50"}
	AnswerTTFTP95 = Figure{"answer_ttft.p95", AnswerTTFT, "p95"}
)

// Headlines are the time figures a run leads with, in the order compare
// and repeats list them.
var Headlines = []Figure{TTFTP50, TTFTP95, GapP50, GapP95, LongestStall, TPOTMean, E2EP95}

// Of returns the figure's value in group g, and false when g has no
// value of its metric (no successful request, no gap): not 0.
func (f Figure) Of(g *runfile.Group) (float64, bool) {
	d := Field(g, f.Metric)
	if d == nil || d.Count == 0 {
		return 0, false
	}
	return d.Field(f.Stat)
}

// Value returns the figure's statistic in group g as the group holds it
// (0 where it has no value).
func (f Figure) Value(g *runfile.Group) float64 {
	d := Field(g, f.Metric)
	if d == nil {
		return 0
	}
	v, _ := d.Field(f.Stat)
	return v
}
