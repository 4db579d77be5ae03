package sweep

import (
	"fmt"
	"strings"
	"time"

	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// KeepUpShare is the rule of a target that kept up with an open loop: a
// step's completion rate (CompletedPerS) is at least this share of the
// rate its schedule asked (AskedPerS). Below it the target finished
// requests more slowly than they arrived, so its queue grew for the whole
// step: the step does not pass, whatever its thresholds say, as 30
// requests can end before a growing queue crosses one.
const KeepUpShare = 0.9

// openLoopRates returns, of run's scheduled (open-loop, measured)
// requests, the rate the schedule asked (requests less one over the span
// of their scheduled instants) and the rate the target completed them
// (successful requests less one over the span of their ends). Both rates
// measure spacing, not a span from the first send to the last end, so
// neither Poisson gaps nor the last request's own duration tilt one
// against the other. Either is 0 when fewer than two requests count.
func openLoopRates(run *runfile.Run) (asked, completed float64) {
	var lo, hi int64
	var first, last time.Time
	n, ok := 0, 0
	for i := range run.Requests {
		q := &run.Requests[i]
		if q.ScheduledNS == nil || q.Cold || q.Warmup {
			continue
		}
		if s := *q.ScheduledNS; n == 0 || s < lo {
			lo = s
		}
		if s := *q.ScheduledNS; n == 0 || s > hi {
			hi = s
		}
		n++
		if !q.OK() {
			continue
		}
		end := measure.End(q)
		if ok == 0 || end.Before(first) {
			first = end
		}
		if ok == 0 || end.After(last) {
			last = end
		}
		ok++
	}
	if n > 1 && hi > lo {
		asked = float64(n-1) / (float64(hi-lo) / 1e9)
	}
	if ok > 1 && last.After(first) {
		completed = float64(ok-1) / last.Sub(first).Seconds()
	}
	return asked, completed
}

// KeptUp reports whether the target kept up with the step's schedule
// (KeepUpShare). A step without both rates (a closed loop, a sweep file
// from before them, fewer than two successful requests) is not judged.
func (st Step) KeptUp() bool {
	if st.AskedPerS <= 0 || st.CompletedPerS <= 0 {
		return true
	}
	return st.CompletedPerS >= KeepUpShare*st.AskedPerS
}

// keepUpRule is the crossed entry of a step the target fell behind.
func (st Step) keepUpRule() string {
	return fmt.Sprintf("[keep-up] completed %.2f/s < %.0f%% of the %.2f/s asked", st.CompletedPerS, 100*KeepUpShare, st.AskedPerS)
}

// judgeKeepUp fails a step whose target did not keep up, naming why in
// its crossed list.
func (st *Step) judgeKeepUp() {
	if st.KeptUp() {
		return
	}
	st.Passed = false
	st.Crossed = append(st.Crossed, st.keepUpRule())
}

// record adds a measured step to the sweep, fails it if the target did
// not keep up with an open loop, and tells p's search whether it passed:
// what Measure does with each step.
func (s *Sweep) record(p Plan, st Step) Step {
	if p.Kind != KindConcurrency {
		st.judgeKeepUp()
	}
	s.Add(st)
	if p.Search != nil {
		p.Search.Record(st.Load, st.Passed)
	}
	return st
}

// searchResult is p's search result with the achieved rate of the step
// at its capacity.
func (s *Sweep) searchResult(p Plan) *SearchResult {
	r := p.Search.Result()
	for _, st := range s.Steps {
		if st.Load == r.Capacity && st.Passed {
			r.AchievedPerS = st.AchievedPerS
		}
	}
	return &r
}

// KeepUpWarnings names the steps at which the target could not keep up
// with the rate asked (KeepUpShare).
func (s *Sweep) KeepUpWarnings() []string {
	var behind []string
	for _, st := range s.ByLoad() {
		if !st.KeptUp() {
			behind = append(behind, fmt.Sprintf("%g (completed %.2f/s of %.2f/s asked)", st.Load, st.CompletedPerS, st.AskedPerS))
		}
	}
	if len(behind) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("the target could not keep up (completed under %.0f%% of the rate asked) at %s %s: its queue grew through the step, so these steps fail and no capacity lies there",
		100*KeepUpShare, strings.Join(behind, ", "), s.Unit())}
}
