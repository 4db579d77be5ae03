package measure

import (
	"encoding/json"
	"testing"

	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stats"
)

// thinker is a reasoning answer: thinking events at 10, 20, 30 ms, answer
// events at 100, 110, 130 ms.
func thinker() *runfile.Request {
	times := []int64{10e6, 20e6, 30e6, 100e6, 110e6, 130e6}
	return &runfile.Request{
		Status: 200, Category: "c", TTFTNS: times[0], E2ENS: 131e6, TokenTimesNS: times,
		OutputTokens: 6, ContentEvents: 6, ReasoningEvents: 3, ReasoningRuns: [][2]int{{0, 3}},
		TokenSource: runfile.TokensServer,
	}
}

func one(t *testing.T, v *View, m Metric) float64 {
	t.Helper()
	xs := v.Values(m)
	if len(xs) != 1 {
		t.Fatalf("%s: %v, want one value", m, xs)
	}
	return xs[0]
}

func TestPhases(t *testing.T) {
	v := Of(thinker(), stats.DefaultDisplay)
	for _, c := range []struct {
		m    Metric
		want float64
	}{
		{TTFT, 10}, {ReasoningTTFT, 10}, {AnswerTTFT, 100},
		{ReasoningSpan, 20}, {AnswerSpan, 30},
		{ReasoningTPOT, 10}, {AnswerTPOT, 15},
	} {
		if got := one(t, &v, c.m); got != c.want {
			t.Errorf("%s = %v, want %v", c.m, got, c.want)
		}
	}
	if got := v.Values(AnswerInterval); len(got) != 2 || got[0] != 10 || got[1] != 20 {
		t.Errorf("answer intervals %v, want [10 20]", got)
	}
	if got := v.Values(ReasoningInterval); len(got) != 2 || got[0] != 10 || got[1] != 10 {
		t.Errorf("reasoning intervals %v, want [10 10]", got)
	}
	// The phases' per-token figures leave out the wait between them.
	if got := one(t, &v, TPOT); got != 24 {
		t.Errorf("tpot = %v, want 24 (120 ms over 5 tokens)", got)
	}
}

// The thinking is hidden by default: what a person sees starts with the
// answer. A suite that shows it sees the first thinking token.
func TestVisibleFollowsShowThinking(t *testing.T) {
	d := stats.Display{FrameHz: 100} // frames every 10 ms, no batching
	hidden := Of(thinker(), d)
	shown := OfShown(thinker(), d, true)
	if h, s := one(t, &hidden, VisibleTTFT), one(t, &shown, VisibleTTFT); h < 100 || s >= 100 {
		t.Errorf("visible ttft hidden %v, shown %v; want ≥ 100 (the answer) and < 100 (the thinking)", h, s)
	}
	if got := len(hidden.VisibleGapsMs); got != 2 {
		t.Errorf("hidden thinking: %d visible gaps, want the answer's 2", got)
	}
	run := &runfile.Run{Requests: []runfile.Request{*thinker()}, Config: runfile.Config{FrameHz: 100, ShowThinking: map[string]bool{"c": true}}}
	if vs := Views(run, Overall); one(t, &vs[0], VisibleTTFT) >= 100 {
		t.Errorf("a run whose category shows thinking: visible ttft %v, want the thinking's", one(t, &vs[0], VisibleTTFT))
	}
}

// Thinking only (cut by max_tokens before the answer): no answer figure,
// nothing visible when the thinking is hidden.
func TestThinkingOnly(t *testing.T) {
	q := thinker()
	q.ReasoningEvents, q.ReasoningRuns = 6, [][2]int{{0, 6}}
	v := Of(q, stats.DefaultDisplay)
	if v.Values(AnswerTTFT) != nil || v.Values(VisibleTTFT) != nil {
		t.Errorf("answer ttft %v, visible ttft %v; want none", v.Values(AnswerTTFT), v.Values(VisibleTTFT))
	}
	if one(t, &v, ReasoningSpan) != 120 {
		t.Errorf("reasoning span %v, want 120", v.Values(ReasoningSpan))
	}
}

// A run file written before reasoning_runs counts reasoning events
// without saying which: no phase figures, and the visible model reads
// every event, as it did.
func TestOldReasoningRecord(t *testing.T) {
	q := thinker()
	q.ReasoningRuns = nil
	d := stats.Display{FrameHz: 100}
	v := Of(q, d)
	if v.Values(AnswerTTFT) != nil || v.Values(ReasoningTTFT) != nil {
		t.Errorf("phases of an unknown split: %v, %v; want none", v.Values(AnswerTTFT), v.Values(ReasoningTTFT))
	}
	if got := one(t, &v, VisibleTTFT); got >= 100 {
		t.Errorf("visible ttft %v, want the first event's frame, as before", got)
	}
}

// A run without thinking keeps no phase figures in its summary (old
// readers and the golden files see the same summary); one with thinking
// keeps both phases.
func TestSummaryPhases(t *testing.T) {
	plain := thinker()
	plain.ReasoningEvents, plain.ReasoningRuns = 0, nil
	run := &runfile.Run{Requests: []runfile.Request{*plain}}
	Summarize(run)
	b, _ := json.Marshal(run.Summary.Overall)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	for _, k := range []string{"answer_ttft_ms", "reasoning_ttft_ms"} {
		if _, ok := m[k]; ok {
			t.Errorf("a run without thinking writes %s", k)
		}
	}
	run = &runfile.Run{Requests: []runfile.Request{*thinker()}}
	Summarize(run)
	g := run.Summary.Overall
	if !Reasoned(g) || g.AnswerTTFTMs.P50 != 100 || g.ReasoningTTFTMs.P50 != 10 || g.ReasoningTokenIntervalMs.Count != 2 {
		t.Errorf("summary: answer ttft %+v, reasoning ttft %+v", g.AnswerTTFTMs, g.ReasoningTTFTMs)
	}
}

// Per-event token counts split between the phases as the events do.
func TestPhaseTokenCounts(t *testing.T) {
	q := thinker()
	q.TokenCounts = []int{1, 2, 2, 1, 3, 3}
	q.OutputTokens = 12
	v := Of(q, stats.DefaultDisplay)
	if v.Reasoning.Tokens != 5 || v.Answer.Tokens != 7 {
		t.Errorf("tokens %v + %v, want 5 + 7", v.Reasoning.Tokens, v.Answer.Tokens)
	}
	if got := one(t, &v, AnswerTPOT); got != 5 {
		t.Errorf("answer tpot %v, want 30 ms / 6 tokens = 5", got)
	}
}
