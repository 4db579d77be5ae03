package measure_test

import (
	"fmt"

	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// request is one streamed answer: its first token at ttftMS, then one
// every gapMS, with one gap of stallMS at the middle.
func request(id, category string, ttftMS, gapMS, stallMS int64, tokens int) runfile.Request {
	q := runfile.Request{RequestID: id, Category: category, Status: 200, FinishReason: "stop",
		OutputTokens: tokens, ContentEvents: tokens, TokenSource: runfile.TokensUsage}
	t := ttftMS * 1e6
	for i := range tokens {
		if i == tokens/2 {
			t += (stallMS - gapMS) * 1e6
		}
		q.TokenTimesNS = append(q.TokenTimesNS, t)
		t += gapMS * 1e6
	}
	q.TTFTNS, q.E2ENS = q.TokenTimesNS[0], q.TokenTimesNS[tokens-1]
	return q
}

// Summarize a run built in memory: measure decides which requests count
// in which scope (overall is the warm requests; warm-up requests count
// nowhere) and derives each figure, the same way for a live run, a
// loaded file and a report.
func ExampleSummarize() {
	run := &runfile.Run{SchemaVersion: runfile.SchemaVersion}
	for i, ttft := range []int64{100, 120, 140, 160} {
		run.Requests = append(run.Requests, request(fmt.Sprint("r", i), "short", ttft, 20, 20, 10))
	}
	run.Requests = append(run.Requests, request("stalled", "long", 200, 20, 400, 10))
	warm := request("w", "short", 900, 20, 20, 10)
	warm.Warmup = true
	run.Requests = append(run.Requests, warm)

	measure.Summarize(run)
	o := &run.Summary.Overall
	fmt.Println("requests:", o.Requests)
	for _, f := range measure.Headlines {
		if v, ok := f.Of(o); ok {
			fmt.Printf("%s: %.1f ms\n", f.Name, v)
		}
	}
	long, _ := measure.SummaryGroup(&run.Summary, measure.Category("long"))
	fmt.Printf("category long: %d request, longest stall %.0f ms\n", long.Requests, measure.LongestStall.Value(&long))
	// Output:
	// requests: 5
	// ttft.p50: 140.0 ms
	// ttft.p95: 192.0 ms
	// gap.p50: 20.0 ms
	// gap.p95: 20.0 ms
	// gap.max: 400.0 ms
	// tpot.mean: 28.4 ms
	// e2e.p95: 676.0 ms
	// category long: 1 request, longest stall 400 ms
}

// A scope names which requests count: parsed from a threshold's or a
// report's name, and listed for a run in a fixed order.
func ExampleParseScope() {
	for _, name := range []string{"overall", "cold", "category:long", "turn:2"} {
		s, err := measure.ParseScope(name)
		fmt.Println(s, err)
	}
	_, err := measure.ParseScope("category:")
	fmt.Println(err != nil)
	// Output:
	// overall <nil>
	// cold <nil>
	// category:long <nil>
	// turn:2 <nil>
	// true
}
