package measure

import (
	"testing"

	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stats"
)

// readBatched returns the shape of request #27 of a `bench --suite
// zh-medical -n 60 -c 4` run against `tokenpulse serve`: a stream of 5 ms
// per token, one token per event, that the client read in bursts (57 of
// its 63 gaps are 0 ns), with a 60.8 ms gap before a read of one event.
func readBatched() *runfile.Request {
	const tok = 5_000_000
	reads := []int{10, 11, 10, 1, 11, 11, 10}
	q := &runfile.Request{TTFTNS: 80_000_000}
	t := int64(q.TTFTNS)
	for r, n := range reads {
		switch {
		case r == 3:
			t += 60_800_000
		case r > 0:
			t += int64(n) * tok
		}
		for range n {
			q.TokenTimesNS = append(q.TokenTimesNS, t)
			q.TokenCounts = append(q.TokenCounts, 1)
		}
	}
	q.OutputTokens = len(q.TokenTimesNS)
	q.E2ENS = t
	return q
}

func TestStallsOfAReadBatchedStream(t *testing.T) {
	q := readBatched()
	v := Of(q, stats.DefaultDisplay)
	zero := 0
	for _, g := range v.GapsMs {
		if g == 0 {
			zero++
		}
	}
	if zero != 57 || len(v.GapsMs) != 63 {
		t.Fatalf("shape: %d of %d gaps are 0, want 57 of 63", zero, len(v.GapsMs))
	}
	if p50, _ := v.GapStat("p50"); p50 != 0 {
		t.Fatalf("median gap %v, want 0 (the case of the bug)", p50)
	}
	rule := v.StallRule(0, 3)
	if rule.PaceMs < 4.9 || rule.PaceMs > 5.1 {
		t.Errorf("pace %v ms, want 5 (the stream's time per token)", rule.PaceMs)
	}
	got := v.Stalls(rule)
	if len(got) != 1 || got[0].After != 31 || got[0].GapMs != 60.8 || !got[0].OverPace {
		t.Fatalf("stalls %+v, want the 60.8 ms gap before event 31 alone (the 50–55 ms gaps before reads of 10–11 tokens are on pace)", got)
	}
}

func TestStallRuleKeepsTheMedianGapWhereEventsAreReadAlone(t *testing.T) {
	// Gaps 20 20 50 20 130 ms, one token per event: the pace is the
	// median gap, as before reads were taken together.
	q := &runfile.Request{TokenTimesNS: []int64{0, 20e6, 40e6, 90e6, 110e6, 240e6}}
	v := Of(q, stats.DefaultDisplay)
	for _, tt := range []struct {
		limit, factor float64
		want          []int
	}{
		{0, 3, []int{5}},
		{40, 3, []int{3, 5}},
		{0, 2, []int{3, 5}},
		{0, 0, nil},
	} {
		var after []int
		for _, s := range v.Stalls(v.StallRule(tt.limit, tt.factor)) {
			after = append(after, s.After)
		}
		if len(after) != len(tt.want) || (len(after) > 0 && (after[0] != tt.want[0] || after[len(after)-1] != tt.want[len(tt.want)-1])) {
			t.Errorf("limit %v factor %v: stalls after %v, want %v", tt.limit, tt.factor, after, tt.want)
		}
	}
	if p := v.StallRule(0, 3).PaceMs; p != 20 {
		t.Errorf("pace %v, want the median gap 20", p)
	}
}

func TestStallRuleBatchedEvents(t *testing.T) {
	// Two tokens per event every 10 ms (5 ms per token), jitter to 14 ms,
	// one gap of 40 ms: only the 40 ms gap is over 3 × 5 ms × 2 tokens.
	times := []int64{0, 10e6, 24e6, 34e6, 74e6, 84e6, 94e6}
	q := &runfile.Request{TokenTimesNS: times, TokenCounts: []int{2, 2, 2, 2, 2, 2, 2}, OutputTokens: 14}
	v := Of(q, stats.DefaultDisplay)
	got := v.Stalls(v.StallRule(0, 3))
	if len(got) != 1 || got[0].After != 4 || got[0].Tokens != 2 {
		t.Errorf("stalls %+v, want the 40 ms gap before event 4 alone", got)
	}
}
