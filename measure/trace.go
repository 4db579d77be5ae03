package measure

import (
	"slices"

	"gonum.org/v1/gonum/stat"

	"github.com/tokenpulse/tokenpulse/runfile"
)

// TraceMatch returns how closely a trace replay (arrival "trace") kept
// its trace, from its measured requests alone (so a merged or rebuilt
// run gets it too); nil for any other run. The arrival match is the
// two-sample Kolmogorov–Smirnov distance between the inter-arrivals of
// the scheduled times (the recorded ones, scaled by the speed) and those
// of the actual starts (scheduled time plus schedule lag); the length
// match counts the successful answers whose output tokens reached the
// max_tokens asked (the recorded output length).
func TraceMatch(run *runfile.Run) *runfile.TraceMatch {
	if run.Config.Arrival != runfile.ArrivalTrace {
		return nil
	}
	m := &runfile.TraceMatch{}
	var due, began []float64
	for i := range run.Requests {
		r := &run.Requests[i]
		if r.Cold || r.Warmup || r.Aborted || r.ScheduledNS == nil {
			continue
		}
		due = append(due, float64(*r.ScheduledNS)/1e6)
		began = append(began, float64(*r.ScheduledNS+r.ScheduleLagNS)/1e6)
		if r.OK() {
			m.Answered++
			if r.MaxTokens > 0 && r.OutputTokens >= r.MaxTokens {
				m.AtLength++
			}
		}
	}
	m.Arrivals = len(due)
	if len(due) >= 2 {
		x, y := interArrivals(due), interArrivals(began)
		m.KS = stat.KolmogorovSmirnov(x, nil, y, nil)
	}
	return m
}

// interArrivals returns the sorted gaps between the sorted times ts.
func interArrivals(ts []float64) []float64 {
	slices.Sort(ts)
	gaps := make([]float64, len(ts)-1)
	for i := range gaps {
		gaps[i] = ts[i+1] - ts[i]
	}
	slices.Sort(gaps)
	return gaps
}
