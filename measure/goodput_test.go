package measure

import (
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/runfile"
)

// goodputRun is a run of warm requests started 1 s apart: each given by
// its category, TTFT and gaps (ms), or failed.
func goodputRun(reqs ...runfile.Request) *runfile.Run {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	run := &runfile.Run{}
	for i, q := range reqs {
		q.Index = i
		q.StartedAt = t0.Add(time.Duration(i) * time.Second)
		run.Requests = append(run.Requests, q)
	}
	return run
}

func answer(cat string, ttftMS float64, gapsMS ...float64) runfile.Request {
	times := []int64{int64(ttftMS * 1e6)}
	at := ttftMS
	for _, g := range gapsMS {
		at += g
		times = append(times, int64(at*1e6))
	}
	return runfile.Request{Category: cat, TTFTNS: times[0], E2ENS: times[len(times)-1], TokenTimesNS: times, OutputTokens: len(times), TokenSource: "server"}
}

func TestGoodputReadsThresholdsPerRequest(t *testing.T) {
	objs := []Objective{
		{Scope: Category("short"), Metric: TTFT, Stat: "p95", Limit: 250, Strict: true, Text: "[category:short] ttft.p95 < 250ms"},
		{Scope: Category("long"), Metric: Gap, Stat: "max", Limit: 120, Text: "[category:long] gap.max <= 120ms"},
		{Scope: Overall, Metric: TTFT, Stat: "max", Limit: 1000, Text: "ttft.max <= 1s"},
	}
	failed := answer("short", 10)
	failed.Error, failed.TokenTimesNS, failed.E2ENS = "http 500", nil, 0
	cold := answer("short", 10)
	cold.Cold = true
	run := goodputRun(
		answer("short", 249.9, 500),     // good: TTFT under 250; short has no gap objective
		answer("short", 250, 5),         // not good: strict bound, TTFT = 250
		answer("long", 900, 120, 120),   // good: longest gap = 120, inclusive; TTFT under the overall 1 s
		answer("long", 100, 20, 120.01), // not good: one stall over 120
		answer("long", 1000.5),          // not good: the overall objective binds every category
		answer("other", 40),             // good: only the overall objective binds it; one token, no gap
		failed,                          // never good
		cold,                            // not in the warm scope at all
	)
	g := Goodput(run, Overall, objs)
	if g.Requests != 7 || g.Good != 3 {
		t.Fatalf("good %d of %d, want 3 of 7", g.Good, g.Requests)
	}
	if want := 3.0 / 7; !near(g.Share, want) {
		t.Errorf("share %v, want %v", g.Share, want)
	}
	// The span runs from the first start (t0) to the end of the last warm
	// request (the failed one at t0+6 s, which recorded no time: 6 s).
	if want := 3.0 / 6; !near(g.PerS, want) {
		t.Errorf("rate %v/s, want %v/s", g.PerS, want)
	}
	if len(g.Objectives) != 3 || g.Objectives[1] != "[category:long] gap.max <= 120ms" {
		t.Errorf("objectives %q", g.Objectives)
	}
	short := Goodput(run, Category("short"), objs)
	if short.Requests != 3 || short.Good != 1 {
		t.Errorf("short: good %d of %d, want 1 of 3", short.Good, short.Requests)
	}
	if none := Goodput(run, Overall, nil); none.Good != 6 {
		t.Errorf("without objectives every successful warm request is good: got %d, want 6", none.Good)
	}
}

func TestGoodputPercentileIsTheRequestsOwn(t *testing.T) {
	// gap.p95 <= 90ms reads each request's own gap p95: 19 gaps of 50 ms
	// and one of 400 ms have a p95 of 50 + 0.05·(400−50) = 67.5 ms (linear
	// interpolation), under 90, though the request has a 400 ms stall.
	gaps := make([]float64, 20)
	for i := range gaps {
		gaps[i] = 50
	}
	gaps[19] = 400
	run := goodputRun(answer("long", 10, gaps...))
	p95 := []Objective{{Scope: Overall, Metric: Gap, Stat: "p95", Limit: 90}}
	if g := Goodput(run, Overall, p95); g.Good != 1 {
		t.Errorf("gap p95 objective: good %d, want 1", g.Good)
	}
	p95[0].Limit = 67
	if g := Goodput(run, Overall, p95); g.Good != 0 {
		t.Errorf("gap p95 objective at 67 ms: good %d, want 0 (own p95 is 67.5)", g.Good)
	}
}
