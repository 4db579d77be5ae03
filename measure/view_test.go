package measure

import (
	"encoding/json"
	"math"
	"slices"
	"testing"

	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stats"
)

// evenly returns n event times from first, step apart (ms → ns).
func evenly(firstMS, stepMS float64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = int64((firstMS + float64(i)*stepMS) * 1e6)
	}
	return out
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestTPOTIsPerTokenWhereCountsAreKnown(t *testing.T) {
	// 10 events 80 ms apart, 4 tokens each: a server emitting a token
	// every 20 ms and sending them four at a time.
	times := evenly(150, 80, 10)
	tests := []struct {
		name      string
		q         runfile.Request
		counting  Counting
		tpot      float64
		intervals int
	}{
		{"per-event counts (tokenpulse.tokens)", runfile.Request{TokenTimesNS: times, TTFTNS: times[0],
			TokenCounts: slices.Repeat([]int{4}, 10), OutputTokens: 40, TokenSource: "events"}, CountPerEvent, 20, 36},
		{"usage total only", runfile.Request{TokenTimesNS: times, TTFTNS: times[0], OutputTokens: 40, TokenSource: "usage"},
			CountTotal, 20, 9},
		{"no counts: per event", runfile.Request{TokenTimesNS: times, TTFTNS: times[0], OutputTokens: 10, TokenSource: "events"},
			CountEvents, 80, 9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Of(&tt.q, stats.DefaultDisplay)
			if v.Counting != tt.counting {
				t.Errorf("counting = %s, want %s", v.Counting, tt.counting)
			}
			if !v.HasTPOT || !near(v.TPOTMs, tt.tpot) {
				t.Errorf("TPOT = %v (defined %v), want %v ms", v.TPOTMs, v.HasTPOT, tt.tpot)
			}
			if len(v.TokenIntervalsMs) != tt.intervals || !near(stats.Mean(v.TokenIntervalsMs), tt.tpot) {
				t.Errorf("token intervals: %d with mean %v, want %d with mean %v", len(v.TokenIntervalsMs), stats.Mean(v.TokenIntervalsMs), tt.intervals, tt.tpot)
			}
			// Gaps stay per event, whatever the count.
			if len(v.GapsMs) != 9 || !near(v.GapsMs[0], 80) {
				t.Errorf("gaps = %v, want 9 gaps of 80 ms", v.GapsMs)
			}
		})
	}
}

func TestTPOTUnevenEvents(t *testing.T) {
	// Events of 1, 3 and 2 tokens at 0, 30 and 50 ms: 5 tokens after the
	// first event over 50 ms = 10 ms per token; intervals 10,10,10 (30/3)
	// and 10,10 (20/2).
	q := runfile.Request{TokenTimesNS: []int64{0, 30e6, 50e6}, TokenCounts: []int{1, 3, 2}}
	v := Of(&q, stats.DefaultDisplay)
	if !near(v.TPOTMs, 10) || v.OutputTokens != 6 || v.FirstEventTokens != 1 {
		t.Errorf("TPOT %v tokens %d first %v, want 10 ms, 6, 1", v.TPOTMs, v.OutputTokens, v.FirstEventTokens)
	}
	if want := []float64{10, 10, 10, 10, 10}; !slices.EqualFunc(v.TokenIntervalsMs, want, near) {
		t.Errorf("intervals = %v, want %v", v.TokenIntervalsMs, want)
	}
	// One event of several tokens: no token after the first event.
	one := runfile.Request{TokenTimesNS: []int64{5e6}, TokenCounts: []int{4}}
	if v := Of(&one, stats.DefaultDisplay); v.HasTPOT {
		t.Errorf("TPOT defined (%v) for a single event", v.TPOTMs)
	}
}

func TestUsageNearOnePerEventIsNotBatching(t *testing.T) {
	// 20 events and a usage of 21 (the end token carried no text): one
	// token per event, not 1.05 each.
	times := evenly(100, 20, 20)
	q := runfile.Request{TokenTimesNS: times, OutputTokens: 21, TokenSource: "usage"}
	v := Of(&q, stats.DefaultDisplay)
	if !near(v.TPOTMs, 20) {
		t.Errorf("TPOT = %v, want 20", v.TPOTMs)
	}
}

func TestCountsAreAsRecorded(t *testing.T) {
	// Per-event counts come from the record alone: a record of today
	// holds the server's counts, ones included.
	times := evenly(10, 5, 4)
	q := runfile.Request{TokenTimesNS: times, TokenCounts: []int{1, 1, 1, 1}, ServerTimesNS: []int64{1, 2, 3, 4}, OutputTokens: 4, TokenSource: "usage"}
	if v := Of(&q, stats.DefaultDisplay); v.Counting != CountPerEvent {
		t.Errorf("counting = %s, want per-event", v.Counting)
	}
	// Without counts, emit times do not make them up: the usage's total.
	q.TokenCounts = nil
	if v := Of(&q, stats.DefaultDisplay); v.Counting != CountTotal {
		t.Errorf("no counts: counting = %s, want total", v.Counting)
	}
}

func TestOldShapeReadsPerEvent(t *testing.T) {
	// A file of before left the counts out when all were 1; runfile reads
	// it with them, so its figures are per event as they were.
	var q runfile.Request
	if err := json.Unmarshal([]byte(`{"token_times_ns":[10000000,15000000,20000000],"content_events":3,"output_tokens":2,"token_source":"usage","server_times_ns":[1,2,3]}`), &q); err != nil {
		t.Fatal(err)
	}
	v := Of(&q, stats.DefaultDisplay)
	if v.Counting != CountPerEvent || v.OutputTokens != 3 {
		t.Errorf("counting %s, output tokens %d; want per-event, 3 (at least the events, as read before)", v.Counting, v.OutputTokens)
	}
}

func TestScopes(t *testing.T) {
	run := &runfile.Run{Requests: []runfile.Request{
		{Index: 0, Category: "a", Cold: true},
		{Index: 1, Category: "a", Warmup: true},
		{Index: 2, Category: "a"},
		{Index: 3, Category: "b", Error: "x"},
		{Index: 4, Category: "b", Aborted: true},
		{Index: 5, Category: "a", Cold: true, Error: "y"},
	}}
	idx := func(s Scope) []int {
		var out []int
		for _, q := range Requests(run, s) {
			out = append(out, q.Index)
		}
		return out
	}
	for _, tt := range []struct {
		s    Scope
		want []int
	}{
		{Overall, []int{2, 3}},
		{Cold, []int{0, 5}},
		{Category("a"), []int{2}},
		{Category("b"), []int{3}},
		{Warmup, []int{1}},
		{Aborted, []int{4}},
		{Failed, []int{3, 5}},
	} {
		if got := idx(tt.s); !slices.Equal(got, tt.want) {
			t.Errorf("%s = %v, want %v", tt.s, got, tt.want)
		}
		back, err := ParseScope(tt.s.String())
		if err != nil || back != tt.s {
			t.Errorf("ParseScope(%q) = %v, %v", tt.s.String(), back, err)
		}
	}
	if got := scopeNames(Measured(run)); !slices.Equal(got, []string{"overall", "cold", "category:a", "category:b"}) {
		t.Errorf("Measured = %v", got)
	}
	c := Count(run)
	if c != (Tally{Total: 6, Warmup: 1, Aborted: 1, Measured: 4, Cold: 2, Errors: 2}) || c.AllFailed() {
		t.Errorf("Count = %+v", c)
	}
	if _, err := ParseScope("category:"); err == nil {
		t.Error("an empty category name was accepted")
	}
}

// scopeNames names scopes.
func scopeNames(s []Scope) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = x.String()
	}
	return out
}

func TestZeroTokenEventCarriesItsGap(t *testing.T) {
	// A tokenizer's counts: the event at 10 ms completed no token (half a
	// character), so its 10 ms belong to the token that the event at 20
	// ms completed; the trailing event of no token adds no time.
	q := runfile.Request{TokenTimesNS: []int64{0, 10e6, 20e6, 40e6, 45e6}, TokenCounts: []int{1, 0, 1, 2, 0}, TokenSource: "tokenizer"}
	v := Of(&q, stats.DefaultDisplay)
	if want := []float64{20, 10, 10}; !slices.EqualFunc(v.TokenIntervalsMs, want, near) {
		t.Errorf("intervals = %v, want %v", v.TokenIntervalsMs, want)
	}
	if !near(v.TPOTMs, 40.0/3) {
		t.Errorf("TPOT = %v, want 40/3 ms (3 tokens after the first over 40 ms)", v.TPOTMs)
	}
}

func TestServerAccount(t *testing.T) {
	// llama-server's split: 80 ms of prompt (first token included), 19
	// ms per token over 10 decoded tokens; the client saw the first token
	// at 83 ms.
	times := evenly(83, 19.5, 10)
	q := runfile.Request{TokenTimesNS: times, TTFTNS: times[0], OutputTokens: 10, TokenSource: "usage",
		Server: &runfile.ServerTimings{PrefillNS: 80e6, DecodeNS: 9 * 19e6, DecodeTokens: 10, Source: "llama.cpp"}}
	v := Of(&q, stats.DefaultDisplay)
	if !v.HasServerSplit || !near(v.ServerTTFTMs, 80) || !near(v.NetworkTTFTMs, 3) {
		t.Errorf("split %v: server %v network %v, want 80 and 3", v.HasServerSplit, v.ServerTTFTMs, v.NetworkTTFTMs)
	}
	if !v.HasServerTPOT || !near(v.ServerTPOTMs, 19) || !near(v.TPOTMs, 19.5) {
		t.Errorf("server TPOT %v (%v), client %v; want 19 and 19.5", v.ServerTPOTMs, v.HasServerTPOT, v.TPOTMs)
	}
	if got := v.Values(TTFTNetwork); len(got) != 1 || !near(got[0], 3) {
		t.Errorf("ttft_network values %v", got)
	}
	plain := runfile.Request{TokenTimesNS: times, TTFTNS: times[0]}
	if v := Of(&plain, stats.DefaultDisplay); v.HasServerSplit || len(v.Values(TTFTNetwork)) != 0 {
		t.Error("a request without the server's account has a split")
	}
}

func TestServerTPOTAfterABatchedFirstEvent(t *testing.T) {
	// The mock's account: 30 tokens, 4 an event, decode from the first
	// piece to the last (520 ms) covers the 26 tokens after the first.
	times := evenly(210, 80, 8)
	counts := []int{4, 4, 4, 4, 4, 4, 4, 2}
	q := runfile.Request{TokenTimesNS: times, TTFTNS: times[0], TokenCounts: counts, OutputTokens: 30,
		Server: &runfile.ServerTimings{PrefillNS: 210e6, DecodeNS: 520e6, DecodeTokens: 30, Source: "tokenpulse"}}
	v := Of(&q, stats.DefaultDisplay)
	if !near(v.ServerTPOTMs, 20) {
		t.Errorf("server TPOT = %v, want 20 ms (520 ms over the 26 tokens after the first event)", v.ServerTPOTMs)
	}
}

// TestTTFTIsDerivedFromTheTimes: a request's TTFT is its first token's
// time, whatever the recorder wrote in ttft_ns.
func TestTTFTIsDerivedFromTheTimes(t *testing.T) {
	q := &runfile.Request{Status: 200, TTFTNS: 0, E2ENS: 9e6, TokenTimesNS: []int64{5e6, 9e6}, OutputTokens: 2}
	if v := Of(q, stats.DefaultDisplay); !v.HasTTFT || v.TTFTMs != 5 {
		t.Errorf("TTFT %v (%v), want 5 ms from token_times_ns", v.TTFTMs, v.HasTTFT)
	}
}

// TestServerAccountPromptCache: the prompt tokens a server reused from its
// prompt cache are its usage's prompt tokens less those its prefill
// processed (llama-server's prompt_n, tokenpulse's timings), summed over
// the requests that say both.
func TestServerAccountPromptCache(t *testing.T) {
	times := evenly(40, 10, 4)
	req := func(prompt, processed int) runfile.Request {
		return runfile.Request{Status: 200, TokenTimesNS: times, TTFTNS: times[0], E2ENS: times[3], OutputTokens: 4, PromptTokens: prompt,
			Server: &runfile.ServerTimings{PrefillNS: 30e6, PromptTokens: processed, Source: "llama.cpp"}}
	}
	run := &runfile.Run{SchemaVersion: runfile.SchemaVersion, Requests: []runfile.Request{
		req(50, 50), // the first: nothing cached
		req(60, 25), // 35 reused
		req(40, 5),  // 35 reused
		req(30, 0),  // the server said nothing of its prefill: left out
	}}
	a, ok := ServerAccount(run, Overall)
	if !ok || a.PromptTokens != 150 || a.CachedTokens != 70 {
		t.Errorf("account %+v (%v): want 70 of 150 prompt tokens cached", a, ok)
	}
}
