package measure

import (
	"math"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/runfile"
)

func at(ns int64) *int64 { return &ns }

func TestOpenLoopScheduledFigures(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := &runfile.Run{SchemaVersion: runfile.SchemaVersion, Config: runfile.Config{Arrival: "poisson", Rate: 10}}
	r.Requests = []runfile.Request{
		// On time.
		{Category: "a", StartedAt: t0, ScheduledNS: at(0), TTFTNS: 100e6, E2ENS: 200e6, OutputTokens: 2, TokenTimesNS: ms(100, 200)},
		// 50 ms late, 30 of them waiting for a slot.
		{Category: "a", StartedAt: t0.Add(150 * time.Millisecond), ScheduledNS: at(100e6), ScheduleLagNS: 50e6, SlotWaitNS: 30e6,
			TTFTNS: 100e6, E2ENS: 300e6, OutputTokens: 3, TokenTimesNS: ms(100, 200, 300)},
		// Failed 10 ms late: its lag counts, its latencies do not.
		{Category: "a", StartedAt: t0.Add(210 * time.Millisecond), ScheduledNS: at(200e6), ScheduleLagNS: 10e6, Error: "boom", ErrorKind: "http", Status: 500, HeadersNS: 5e6},
		// A warm-up request is in no figure.
		{Category: "a", Warmup: true, StartedAt: t0.Add(-time.Second), TTFTNS: 1, E2ENS: 2, TokenTimesNS: ms(0)},
	}
	Summarize(r)
	o := r.Summary.Overall
	if o.ScheduleLagMs.Count != 3 || o.ScheduleLagMs.Max != 50 || o.ScheduleLagMs.Min != 0 || o.ScheduleLagMs.P50 != 10 {
		t.Errorf("schedule lag = %+v, want 0, 10, 50 (the failed request included)", o.ScheduleLagMs)
	}
	if o.ScheduledTTFTMs.Count != 2 || o.ScheduledTTFTMs.Min != 100 || o.ScheduledTTFTMs.Max != 150 {
		t.Errorf("TTFT from the schedule = %+v, want 100 and 150", o.ScheduledTTFTMs)
	}
	if o.TTFTMs.Max != 100 {
		t.Errorf("TTFT = %+v: it stays from t_start", o.TTFTMs)
	}
	if o.ScheduledE2EMs.Max != 350 || o.SlotWaits != 1 {
		t.Errorf("E2E from the schedule max %v, slot waits %d, want 350 and 1", o.ScheduledE2EMs.Max, o.SlotWaits)
	}
	// Span: t0 to the second request's end at 450 ms; 2 successes, 5 tokens.
	if math.Abs(o.SpanS-0.45) > 1e-9 || math.Abs(o.RequestsPerS-2/0.45) > 1e-9 || math.Abs(o.OutputTokensPerS-5/0.45) > 1e-9 {
		t.Errorf("span %v s, %v req/s, %v tok/s; want 0.45, %v, %v", o.SpanS, o.RequestsPerS, o.OutputTokensPerS, 2/0.45, 5/0.45)
	}
}

func TestRateClosedLoopHasNoScheduleFigures(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := &runfile.Run{SchemaVersion: runfile.SchemaVersion, Config: runfile.Config{Arrival: "closed"}}
	r.Requests = []runfile.Request{
		{Category: "a", StartedAt: t0, TTFTNS: 100e6, E2ENS: 1000e6, OutputTokens: 10, TokenTimesNS: ms(100, 1000)},
		{Category: "a", StartedAt: t0.Add(time.Second), TTFTNS: 100e6, E2ENS: 1000e6, OutputTokens: 10, TokenTimesNS: ms(100, 1000)},
	}
	Summarize(r)
	o := r.Summary.Overall
	if o.ScheduleLagMs.Count != 0 || o.ScheduledTTFTMs.Count != 0 || o.SlotWaits != 0 {
		t.Errorf("closed loop has schedule figures: %+v", o)
	}
	if o.SpanS != 2 || o.RequestsPerS != 1 || o.OutputTokensPerS != 10 {
		t.Errorf("span %v, %v req/s, %v tok/s; want 2, 1, 10", o.SpanS, o.RequestsPerS, o.OutputTokensPerS)
	}
	// No start recorded: no throughput rather than a made-up one.
	if s, rq, tk := Throughput(Views(&runfile.Run{Requests: []runfile.Request{{E2ENS: 5}}}, Overall)); s != 0 || rq != 0 || tk != 0 {
		t.Errorf("throughput without starts = %v %v %v", s, rq, tk)
	}
}
