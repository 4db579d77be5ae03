package compare_test

import (
	"fmt"

	"github.com/tokenpulse/tokenpulse/compare"
	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// run builds a summarised run of n requests of one category, the i-th
// with its first token at ttftMS + i ms and then one token every gapMS.
func run(n int, ttftMS, gapMS int64) *runfile.Run {
	r := &runfile.Run{SchemaVersion: runfile.SchemaVersion}
	for i := range n {
		q := runfile.Request{RequestID: fmt.Sprint("r", i), Category: "chat", Status: 200, FinishReason: "stop",
			OutputTokens: 20, ContentEvents: 20, TokenSource: runfile.TokensUsage}
		for k := range int64(20) {
			q.TokenTimesNS = append(q.TokenTimesNS, (ttftMS+int64(i)+k*gapMS)*1e6)
		}
		q.TTFTNS, q.E2ENS = q.TokenTimesNS[0], q.TokenTimesNS[19]
		r.Requests = append(r.Requests, q)
	}
	measure.Summarize(r)
	return r
}

// Compare a run against a base: the time to first token rose by half
// (beyond the tolerance, and every request's TTFT moved, so the
// per-request test agrees), while the pace between tokens held.
func ExampleRuns() {
	base, cur := run(12, 200, 20), run(12, 300, 20)
	rep := compare.Runs(base, cur, compare.DefaultOptions())
	for _, c := range rep.Changes {
		fmt.Printf("%-7s %-11s %7.1f → %7.1f  %s\n", c.Scope, c.Metric, c.Base, c.New, c.Status)
	}
	fmt.Println("regressed:", rep.Regressed())
	// Output:
	// overall ttft.p50      205.5 →   305.5  regressed
	// overall ttft.p95      210.4 →   310.4  regressed
	// overall gap.p50        20.0 →    20.0  within tolerance
	// overall gap.p95        20.0 →    20.0  within tolerance
	// overall gap.max        20.0 →    20.0  within tolerance
	// overall tpot.mean      20.0 →    20.0  within tolerance
	// overall e2e.p95       590.5 →   690.5  within tolerance
	// overall errors.rate     0.0 →     0.0  within tolerance
	// regressed: true
}
