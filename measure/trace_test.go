package measure

import (
	"math"
	"testing"

	"github.com/tokenpulse/tokenpulse/runfile"
)

func TestTraceMatch(t *testing.T) {
	due := []int64{0, 100e6, 200e6, 300e6}
	lag := []int64{0, 0, 50e6, 0}
	run := &runfile.Run{Config: runfile.Config{Arrival: runfile.ArrivalTrace}}
	run.Requests = append(run.Requests, runfile.Request{Warmup: true, OutputTokens: 1, MaxTokens: 1})
	for i := range due {
		r := runfile.Request{ScheduledNS: &due[i], ScheduleLagNS: lag[i], MaxTokens: 8, OutputTokens: 8}
		switch i {
		case 1:
			r.OutputTokens = 5 // ended early
		case 3:
			r.Error, r.ErrorKind = "http 500", runfile.ErrorHTTP
		}
		run.Requests = append(run.Requests, r)
	}
	m := TraceMatch(run)
	// Recorded gaps 100, 100, 100 ms; achieved 100, 150, 50: the
	// empirical distributions are 1/3 apart at 50 and at 100 ms.
	if m == nil || math.Abs(m.KS-1.0/3) > 1e-12 || m.Arrivals != 4 || m.Answered != 3 || m.AtLength != 2 {
		t.Errorf("TraceMatch = %+v, want KS 1/3 over 4 arrivals, 2 of 3 answers at length", m)
	}
	for i := range lag {
		lag[i] = 0
	}
	for i := range run.Requests[1:] {
		run.Requests[i+1].ScheduleLagNS = 7e6 // late alike: the same gaps
	}
	if m := TraceMatch(run); m.KS != 0 {
		t.Errorf("a constant lag: KS %v, want 0", m.KS)
	}
	run.Config.Arrival = runfile.ArrivalPoisson
	if TraceMatch(run) != nil {
		t.Error("a Poisson run has a trace match")
	}
}
