package report

import (
	"io"
	"testing"

	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/report/reporttest"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// bigRun returns the stall run grown to n warm requests of 256 tokens.
func bigRun(n int) *runfile.Run {
	run := reporttest.StallRun()
	base := run.Requests[3]
	for i := 0; i < n; i++ {
		q := base
		q.Index = len(run.Requests)
		q.TokenTimesNS = make([]int64, 256)
		t := int64(90e6 + i%17*1e6)
		for k := range q.TokenTimesNS {
			t += int64(18e6 + (k*7919+i*104729)%5e6)
			q.TokenTimesNS[k] = t
		}
		q.TTFTNS = q.TokenTimesNS[0]
		q.OutputTokens, q.ContentEvents = 256, 256
		run.Requests = append(run.Requests, q)
	}
	measure.Summarize(run)
	return run
}

// BenchmarkHTML renders the HTML report of a run of 1000 requests of 256
// tokens each (about 255,000 gaps).
func BenchmarkHTML(b *testing.B) {
	run := bigRun(1000)
	b.ResetTimer()
	for b.Loop() {
		if err := HTML(io.Discard, run, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/report")
}

// BenchmarkText renders the terminal summary of the same run.
func BenchmarkText(b *testing.B) {
	run := bigRun(1000)
	b.ResetTimer()
	for b.Loop() {
		if err := Text(io.Discard, run, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/report")
}
