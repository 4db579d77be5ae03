// Package reporttest builds run files for tests of reports, alerts and
// publishing: hand-made runfile.Run values with seeded token times, so the
// same call always gives the same run and golden files stay stable.
//
//	run := reporttest.StallRun()
//	report.HTML(&buf, run, report.Options{}) // shows the 300 ms stall
//
// Every call returns a fresh Run that the caller may change.
package reporttest

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// StallPromptID, StallRequestID and StallIndex name the request of
// StallRun whose stream stalls for StallMS after its tenth token.
const (
	StallPromptID  = "complex-02"
	StallRequestID = "req-0007"
	StallIndex     = 7
	StallMS        = 300
)

// StallRun returns a run of a mock-like target at about 20 ms per token:
// one warm-up request, one cold request, ten warm requests in the
// categories "short" and "complex" (one of which, StallRequestID, stalls
// for 300 ms), and one cut stream. It is summarised, judged against
// "gap.max <= 120ms" on category complex (crossed, with the stalled
// request as offender), "ttft.p95 < 250ms" overall (held) and
// "errors.rate < 5%" overall (crossed), and carries the experience row
// that the stall triggers.
func StallRun() *runfile.Run {
	rng := rand.New(rand.NewPCG(42, 7))
	start := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	r := &runfile.Run{
		SchemaVersion: runfile.SchemaVersion,
		Tool:          runfile.Tool{Name: "tokenpulse", Version: "v0.1.0", Commit: "0123abc", GoVersion: "go1.26.8"},
		StartedAt:     start,
		FinishedAt:    start.Add(9 * time.Second),
		CommandLine: []string{"tokenpulse", "bench", "--target", "http://127.0.0.1:8080", "--suite", "default",
			"--seed", "42", "--requests", "12", "--cold", "--warmup", "1", "--tier", "mainstream",
			"--threshold", "ttft.p95 < 250ms", "--report", "html"},
		Target: runfile.Target{
			URL: "http://127.0.0.1:8080/v1/chat/completions", API: "chat", Model: "stories260K", Backend: "embedded",
			ModelFile: "stories260K.gguf", ModelSHA256: "5b7c3f0e9a1d2c4b6e8f0a1b3c5d7e9f1a2b4c6d8e0f1a3b5c7d9e1f2a4b6c8d",
			Quantization: "F32", ContextLength: 512, Threads: 2, BatchSize: 32,
		},
		Device: runfile.Device{
			Hostname: "bench-01", OS: "linux", Kernel: "6.1.0-28-amd64", Arch: "amd64",
			CPUModel: "Example CPU @ 2.00GHz", CPUCores: 2, MemoryBytes: 8 << 30, GoVersion: "go1.26.8",
			Tier: "mainstream",
		},
		Config: runfile.Config{
			Suite: "default", Seed: 42, Requests: 12, Concurrency: 1, Arrival: "closed", Warmup: 1, Cold: true,
			MaxTokens: 24, TimeoutMS: 30000, Thresholds: []string{"ttft.p95 < 250ms"},
			FrameHz: 60, RenderBatchMS: 16,
			SuiteThresholds: map[string][]string{"complex": {"gap.max <= 120ms"}, "short": {"ttft.p95 < 200ms"}},
		},
		ColdStart: &runfile.ColdStart{LoadMS: 12.5, PageInMS: 31.2, KVInitMS: 4.1, FirstForwardMS: 40.3, TotalMS: 88.1, ProcessStartMS: 140.0},
	}
	add := func(category, prompt string, cold, warmup bool, tokens int, ttftMS float64, stallAt int) {
		i := len(r.Requests)
		q := runfile.Request{
			Index: i, RequestID: fmt.Sprintf("req-%04d", i), Category: category, PromptID: prompt,
			Cold: cold, Warmup: warmup, Status: 200, StartedAt: start.Add(time.Duration(i) * 700 * time.Millisecond),
			TokenSource: runfile.TokensEvents, FinishReason: "length", PromptTokens: 18,
		}
		q.SentNS = int64(300_000 + rng.IntN(200_000))
		q.HeadersNS = q.SentNS + int64(1_500_000+rng.IntN(1_000_000))
		q.FirstByteNS = q.HeadersNS + int64(200_000+rng.IntN(100_000))
		t := int64(ttftMS*1e6) + int64(rng.IntN(4_000_000))
		for k := range tokens {
			if k > 0 {
				t += int64(18_000_000 + rng.IntN(5_000_000))
				if k == stallAt {
					t += StallMS*1_000_000 - 20_000_000
				}
			}
			q.TokenTimesNS = append(q.TokenTimesNS, t)
		}
		q.TTFTNS = q.TokenTimesNS[0]
		q.E2ENS = t + 400_000
		q.OutputTokens, q.ContentEvents = tokens, tokens
		q.Server = &runfile.ServerTimings{
			QueueNS:   int64(100_000 + rng.IntN(300_000)),
			PrefillNS: q.TTFTNS - q.FirstByteNS - 2_000_000,
			DecodeNS:  q.TokenTimesNS[tokens-1] - q.TTFTNS,
		}
		r.Requests = append(r.Requests, q)
	}
	add("short", "short-01", false, true, 8, 60, -1) // warm-up
	add("short", "short-01", true, false, 8, 400, -1)
	add("short", "short-01", false, false, 8, 62, -1)
	add("complex", "complex-01", false, false, 24, 95, -1)
	add("short", "short-02", false, false, 10, 60, -1)
	add("complex", "complex-03", false, false, 24, 90, -1)
	add("short", "short-03", false, false, 6, 58, -1)
	add("complex", StallPromptID, false, false, 24, 92, 10) // index 7
	add("short", "short-01", false, false, 8, 61, -1)
	add("complex", "complex-01", false, false, 24, 96, -1)
	add("short", "short-02", false, false, 10, 59, -1)
	add("complex", "complex-03", false, false, 24, 93, -1)
	// A cut stream: some tokens, then the connection closed.
	add("complex", "complex-02", false, false, 5, 94, -1)
	cut := &r.Requests[len(r.Requests)-1]
	cut.Error, cut.ErrorKind, cut.FinishReason = "stream ended without [DONE] or a finish reason", "cut", ""

	measure.Summarize(r)

	stalled := r.Requests[StallIndex]
	var worst float64
	for i := 1; i < len(stalled.TokenTimesNS); i++ {
		worst = max(worst, float64(stalled.TokenTimesNS[i]-stalled.TokenTimesNS[i-1])/1e6)
	}
	complexMax := r.Summary.Categories["complex"].GapMs.Max
	r.Verdicts = []runfile.Verdict{
		{Rule: "gap.max <= 120ms", Metric: "gap", Statistic: "max", Operator: "<=", Scope: "category:complex", Source: "suite", Value: complexMax, Limit: 120, Unit: "ms",
			Offenders: []runfile.Offender{{Index: StallIndex, RequestID: StallRequestID, PromptID: StallPromptID, Category: "complex", Value: worst}}},
		{Rule: "ttft.p95 < 200ms", Metric: "ttft", Statistic: "p95", Operator: "<", Scope: "category:short", Source: "suite", Value: r.Summary.Categories["short"].TTFTMs.P95, Limit: 200, Unit: "ms", Passed: true},
		{Rule: "ttft.p95 < 250ms", Metric: "ttft", Statistic: "p95", Operator: "<", Scope: "overall", Source: "flag", Value: r.Summary.Overall.TTFTMs.P95, Limit: 250, Unit: "ms", Passed: true},
		{Rule: "errors.rate < 5%", Metric: "errors", Statistic: "rate", Operator: "<", Scope: "overall", Source: "flag", Value: 100 * r.Summary.Overall.ErrorRate(), Limit: 5, Unit: "%",
			Offenders: []runfile.Offender{{Index: cut.Index, RequestID: cut.RequestID, PromptID: cut.PromptID, Category: cut.Category, Value: 1}}},
	}
	r.Experience = []runfile.Experience{{
		Rule: "gap.max > 200ms", Scope: "category:complex", Value: complexMax, Unit: "ms",
		Experience: "freezes; users think it crashed", Impact: "abandoned sessions and crash reports that are not crashes",
	}}
	return r
}
