package measure

import (
	"math"
	"testing"

	"github.com/tokenpulse/tokenpulse/runfile"
)

func ms(v ...int64) []int64 {
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = x * 1_000_000
	}
	return out
}

func TestSummarizeSeparatesColdWarmupAndCategories(t *testing.T) {
	r := &runfile.Run{SchemaVersion: runfile.SchemaVersion, Config: runfile.Config{FrameHz: 1000, RenderBatchMS: 0}}
	r.Requests = []runfile.Request{
		{Category: "short", Cold: true, TTFTNS: 900e6, E2ENS: 1000e6, OutputTokens: 2, ContentEvents: 2, TokenTimesNS: ms(900, 1000)},
		{Category: "short", Warmup: true, TTFTNS: 500e6, E2ENS: 600e6, OutputTokens: 2, ContentEvents: 2, TokenTimesNS: ms(500, 600)},
		{Category: "short", TTFTNS: 100e6, E2ENS: 160e6, OutputTokens: 3, ContentEvents: 3, TokenTimesNS: ms(100, 120, 160)},
		{Category: "long", TTFTNS: 200e6, E2ENS: 230e6, OutputTokens: 4, ContentEvents: 2, TokenTimesNS: ms(200, 230)},
		{Category: "long", Error: "boom", ErrorKind: "http", Status: 500},
		{Category: "long", Aborted: true, TTFTNS: 1, TokenTimesNS: ms(1, 2)},
	}
	Summarize(r)
	o := r.Summary.Overall
	if o.Requests != 3 || o.Errors != 1 || o.ErrorKinds["http"] != 1 {
		t.Fatalf("overall requests/errors = %d/%d %v, want 3/1 http:1", o.Requests, o.Errors, o.ErrorKinds)
	}
	// TTFT over successful warm requests: 100, 200.
	if o.TTFTMs.Count != 2 || o.TTFTMs.Mean != 150 || o.TTFTMs.Max != 200 {
		t.Errorf("TTFT = %+v, want count 2 mean 150 max 200", o.TTFTMs)
	}
	// Gaps pooled: 20, 40, 30 → max 40, p50 30.
	if o.GapMs.Count != 3 || o.GapMs.Max != 40 || o.GapMs.P50 != 30 {
		t.Errorf("gaps = %+v, want count 3 max 40 p50 30", o.GapMs)
	}
	// Tokens per event: 7 tokens / 5 events.
	if math.Abs(o.TokensPerEvent-1.4) > 1e-12 {
		t.Errorf("tokens per event = %v, want 1.4", o.TokensPerEvent)
	}
	if r.Summary.Cold == nil || r.Summary.Cold.TTFTMs.Max != 900 {
		t.Errorf("cold = %+v, want the 900 ms request alone", r.Summary.Cold)
	}
	if got := r.Summary.Categories["long"]; got.Requests != 2 || got.Errors != 1 {
		t.Errorf("long = %d requests %d errors, want 2/1", got.Requests, got.Errors)
	}
	if got := r.Summary.Categories["short"].TPOTMs.Mean; got != 30 {
		t.Errorf("short TPOT = %v, want 30", got)
	}
	if math.Abs(o.ErrorRate()-1.0/3) > 1e-12 {
		t.Errorf("error rate = %v", o.ErrorRate())
	}
}
