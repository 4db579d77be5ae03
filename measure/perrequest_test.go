package measure

import (
	"testing"

	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stats"
)

// TestPerRequestStat: a request's own statistic is taken over its own
// values (gap.p95 of a request: the interpolated p95 of its gaps), and a
// request without a value of the metric gives none.
func TestPerRequestStat(t *testing.T) {
	run := &runfile.Run{Requests: []runfile.Request{
		{Index: 0, Category: "a", Status: 200, TTFTNS: 10e6, E2ENS: 70e6, OutputTokens: 5,
			TokenTimesNS: []int64{10e6, 20e6, 25e6, 45e6, 70e6}}, // gaps 10, 5, 20, 25 ms
		{Index: 1, Category: "a", Status: 200, TTFTNS: 12e6, E2ENS: 12e6, OutputTokens: 1, TokenTimesNS: []int64{12e6}},
		{Index: 2, Category: "a", Status: 500, Error: "http 500"},
	}}
	views := Views(run, Overall)
	want := stats.Percentile([]float64{5, 10, 20, 25}, 95)
	if got, ok := views[0].Stat(Gap, "p95"); !ok || got != want {
		t.Errorf("request 0 gap.p95 = %v, %v; want %v", got, ok, want)
	}
	if got, ok := views[0].Stat(Gap, "max"); !ok || got != 25 {
		t.Errorf("request 0 gap.max = %v, %v; want 25", got, ok)
	}
	if _, ok := views[1].Stat(Gap, "p95"); ok {
		t.Error("a one-token answer has a gap p95")
	}
	if _, ok := views[0].Stat(Gap, "p42"); ok {
		t.Error("an unknown stat was taken")
	}
	if got := PerRequest(views, Gap, "max"); len(got) != 1 || got[0] != 25 {
		t.Errorf("PerRequest gap.max = %v, want [25]", got)
	}
	if got := PerRequest(views, TTFT, "mean"); len(got) != 2 || got[0] != 10 || got[1] != 12 {
		t.Errorf("PerRequest ttft = %v, want [10 12]", got)
	}
	// Goodput's objective reads the same statistic.
	o := Objective{Scope: Overall, Metric: Gap, Stat: "p95", Limit: want}
	if !o.Met(&views[0]) || (Objective{Scope: Overall, Metric: Gap, Stat: "p95", Limit: want, Strict: true}).Met(&views[0]) {
		t.Error("the objective gap.p95 <= its own p95 is not met exactly at the limit")
	}
}
