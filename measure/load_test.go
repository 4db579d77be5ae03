package measure

import (
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stats"
)

// interval is a successful request from a to b ms after t0.
func interval(t0 time.Time, a, b int64) runfile.Request {
	return runfile.Request{Category: "c", StartedAt: t0.Add(time.Duration(a) * time.Millisecond), E2ENS: (b - a) * 1e6,
		TTFTNS: 1e6, TokenTimesNS: []int64{1e6}, OutputTokens: 1}
}

func TestInFlightFromKnownIntervals(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := &runfile.Run{Requests: []runfile.Request{
		interval(t0, 0, 1000),    // [0, 1 s)
		interval(t0, 500, 1500),  // [0.5, 1.5)
		interval(t0, 1000, 2000), // starts as the first ends: the count stays 2
		interval(t0, 1200, 1300), // [1.2, 1.3)
		{Category: "c", StartedAt: t0.Add(3000 * time.Millisecond), HeadersNS: 500e6, Error: "boom", ErrorKind: "http"}, // failed, [3, 3.5)
		{Category: "c", Warmup: true, StartedAt: t0.Add(-time.Second), E2ENS: 10e9},                                     // in no scope
	}}
	views := Views(r, Overall)
	got := InFlight(views)
	want := []Step{{0, 1}, {0.5, 2}, {1, 2}, {1.2, 3}, {1.3, 2}, {1.5, 1}, {2, 0}, {3, 1}, {3.5, 0}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("in flight:\n got  %v\n want %v", got, want)
	}
	mean, peak := Concurrency(views)
	// Area: 1·0.5 + 2·0.5 + 2·0.2 + 3·0.1 + 2·0.2 + 1·0.5 + 0·1 + 1·0.5 = 3.6 over 3.5 s.
	if peak != 3 || math.Abs(mean-3.6/3.5) > 1e-9 {
		t.Errorf("concurrency mean %v, peak %d; want %v, 3", mean, peak, 3.6/3.5)
	}
	bins := Rates(views, 4) // 0.875 s each
	var ok, failed []int
	for _, b := range bins {
		ok, failed = append(ok, b.OK), append(failed, b.Failed)
	}
	// Ends: 1.0, 1.5, 2.0, 1.3 (successful), 3.5 (failed, the last end, in the last bin).
	if !reflect.DeepEqual(ok, []int{0, 3, 1, 0}) || !reflect.DeepEqual(failed, []int{0, 0, 0, 1}) {
		t.Errorf("bins: ok %v failed %v; want [0 3 1 0] and [0 0 0 1]", ok, failed)
	}
	if b := bins[3]; b.FromS != 2.625 || b.ToS != 3.5 {
		t.Errorf("last bin [%v, %v), want [2.625, 3.5)", b.FromS, b.ToS)
	}
	g := Aggregate(views)
	if g.ConcurrencyMax != 3 || g.ConcurrencyMean != mean {
		t.Errorf("summary concurrency %v/%d, want %v/3", g.ConcurrencyMean, g.ConcurrencyMax, mean)
	}
}

func TestInputThroughput(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a, b := interval(t0, 0, 1000), interval(t0, 1000, 2000)
	a.PromptTokens, b.PromptTokens = 30, 50
	fail := runfile.Request{Category: "c", StartedAt: t0, HeadersNS: 1e6, Error: "x", ErrorKind: "http"} // no count, failed: ignored
	g := Aggregate(Views(&runfile.Run{Requests: []runfile.Request{a, b, fail}}, Overall))
	if g.InputTokens != 80 || g.InputTokensPerS != 40 {
		t.Errorf("input %d tokens, %v/s; want 80 and 40 over 2 s", g.InputTokens, g.InputTokensPerS)
	}
	if g.PromptTokens.Count != 2 || g.PromptTokens.Mean != 40 {
		t.Errorf("prompt tokens %+v, want 2 values of mean 40", g.PromptTokens)
	}
	b.PromptTokens = 0 // one successful request without a count: no rate at all
	g = Aggregate(Views(&runfile.Run{Requests: []runfile.Request{a, b}}, Overall))
	if g.InputTokens != 0 || g.InputTokensPerS != 0 {
		t.Errorf("with a count missing: %d tokens, %v/s; want none", g.InputTokens, g.InputTokensPerS)
	}
}

func TestLags(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a, b := interval(t0, 0, 100), interval(t0, 250, 400)
	a.ScheduledNS, b.ScheduledNS, b.ScheduleLagNS = at(0), at(200e6), 50e6
	got := Lags(Views(&runfile.Run{Requests: []runfile.Request{a, b}}, Overall))
	if want := []Lag{{0, 0}, {0.25, 50}}; !reflect.DeepEqual(got, want) {
		t.Errorf("lags %v, want %v", got, want)
	}
	if got := Lags(Views(&runfile.Run{Requests: []runfile.Request{interval(t0, 0, 100)}}, Overall)); got != nil {
		t.Errorf("closed loop lags %v, want none", got)
	}
}

// turn is a successful warm turn whose TTFT is ttft ms and whose prompt
// had prompt tokens.
func turn(conv string, k int, ttft int64, prompt int) runfile.Request {
	return runfile.Request{Category: "chat", ConversationID: conv, Turn: k, PromptTokens: prompt,
		TTFTNS: ttft * 1e6, E2ENS: (ttft + 10) * 1e6, TokenTimesNS: []int64{ttft * 1e6, (ttft + 10) * 1e6}}
}

func TestSummaryShowsTTFTGrowingByTurn(t *testing.T) {
	r := &runfile.Run{Requests: []runfile.Request{
		// The cold request is a conversation's first turn alone: cold, not a turn.
		{Category: "chat", Cold: true, TTFTNS: 900e6, E2ENS: 950e6, TokenTimesNS: []int64{900e6}},
		// A warm-up conversation is recorded and never counted.
		func() runfile.Request { q := turn("w", 1, 5, 10); q.Warmup = true; return q }(),
		turn("a", 1, 100, 20), turn("a", 2, 150, 60), turn("a", 3, 210, 110),
		turn("b", 1, 110, 22), turn("b", 2, 170, 64),
		// b's third turn failed: an error of turn 3, no TTFT.
		{Category: "chat", ConversationID: "b", Turn: 3, Error: "cut", ErrorKind: "cut"},
		// A single prompt counts overall and in no turn.
		{Category: "short", TTFTNS: 50e6, E2ENS: 60e6, TokenTimesNS: []int64{50e6}},
	}}
	Summarize(r)
	ts := r.Summary.Turns
	if len(ts) != 3 {
		t.Fatalf("%d turns in the summary, want 3", len(ts))
	}
	want := []struct {
		turn, reqs, errs int
		ttft50, prompt   float64
	}{{1, 2, 0, 105, 21}, {2, 2, 0, 160, 62}, {3, 2, 1, 210, 110}}
	for i, w := range want {
		g := ts[i]
		if g.Turn != w.turn || g.Requests != w.reqs || g.Errors != w.errs || g.TTFTMs.P50 != w.ttft50 || g.PromptTokens.Mean != w.prompt {
			t.Errorf("turn %d: %d requests, %d errors, TTFT p50 %v, prompt tokens %v; want %+v",
				g.Turn, g.Requests, g.Errors, g.TTFTMs.P50, g.PromptTokens.Mean, w)
		}
	}
	if r.Summary.Overall.Requests != 7 || r.Summary.Categories["chat"].Requests != 6 {
		t.Errorf("overall %d, chat %d requests; want every turn counted: 7 and 6", r.Summary.Overall.Requests, r.Summary.Categories["chat"].Requests)
	}
	if r.Summary.Cold == nil || r.Summary.Cold.Requests != 1 {
		t.Errorf("cold %+v, want the one cold request", r.Summary.Cold)
	}
	for _, s := range []string{"turn:2", "turn:13"} {
		if sc, err := ParseScope(s); err != nil || sc.String() != s {
			t.Errorf("ParseScope(%q) = %v, %v", s, sc, err)
		}
	}
	for _, s := range []string{"turn:0", "turn:x", "turn:"} {
		if _, err := ParseScope(s); err == nil {
			t.Errorf("ParseScope(%q) accepted", s)
		}
	}
	if got := stats.Describe(Sample(Views(r, Turn(2)), TTFT)); got.Min != 150 || got.Max != 170 {
		t.Errorf("turn 2 TTFTs %+v, want 150 and 170", got)
	}
}

func TestNoTurnsWithoutConversations(t *testing.T) {
	r := &runfile.Run{Requests: []runfile.Request{{Category: "a", TTFTNS: 1e6, E2ENS: 2e6, TokenTimesNS: []int64{1e6}}}}
	Summarize(r)
	if r.Summary.Turns != nil {
		t.Errorf("turns %+v in a run without conversations", r.Summary.Turns)
	}
}
