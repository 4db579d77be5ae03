package sweep

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/runfile"
)

// saturating is a scripted target that completes at most capRate
// requests/s and meets every threshold: the queue of 30 requests never
// grows far enough in one step to cross one (the 2026-12-03 report:
// "capacity 52" where every step from 32 up achieved 34–39/s).
func saturating(capRate float64) func(rate float64) Step {
	return func(rate float64) Step {
		done := math.Min(rate, capRate)
		return Step{Load: rate, Requests: 30, AchievedPerS: done, AskedPerS: rate, CompletedPerS: done, Passed: true}
	}
}

func TestSearchSaturatedTargetIsNoCapacity(t *testing.T) {
	const capRate = 39.15
	p := Plan{Kind: KindRate, Search: &Search{Start: 1, Resolution: 0.1, MaxSteps: 12, MinRate: 0.1}}
	sw := &Sweep{Kind: KindRate}
	step := saturating(capRate)
	for r, ok := p.Search.Next(); ok; r, ok = p.Search.Next() {
		sw.record(p, step(r))
	}
	res := sw.searchResult(p)
	if res.Capacity == 0 || res.Capacity*KeepUpShare > capRate {
		t.Fatalf("capacity %g requests/s: a target that completes %g/s did not keep up there (%s)", res.Capacity, capRate, res)
	}
	if res.AchievedPerS == 0 || res.AchievedPerS > res.Capacity {
		t.Errorf("achieved at the capacity %g, want the step's achieved rate (%s)", res.AchievedPerS, res)
	}
	if !strings.Contains(res.String(), "(achieved ") {
		t.Errorf("capacity %q does not say the achieved rate", res)
	}
	sw.Search = res
	sw.Warnings = sw.KeepUpWarnings()
	if len(sw.Warnings) != 1 || !strings.Contains(sw.Warnings[0], "could not keep up") || !strings.Contains(sw.Warnings[0], "64 (completed 39.15/s") {
		t.Fatalf("warnings %q: want one naming the steps the target could not keep up with", sw.Warnings)
	}
	var text, page bytes.Buffer
	if err := sw.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := sw.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string]string{"text": text.String(), "page": page.String()} {
		if !strings.Contains(b, "could not keep up") || !strings.Contains(b, "[keep-up]") {
			t.Errorf("the %s does not say where the target could not keep up:\n%s", name, b)
		}
	}
}

func TestKeptUpClosedLoopNotJudged(t *testing.T) {
	p := Plan{Kind: KindConcurrency}
	sw := &Sweep{Kind: KindConcurrency}
	st := sw.record(p, Step{Load: 8, AchievedPerS: 5, AskedPerS: 0, Passed: true})
	if !st.Passed || len(sw.KeepUpWarnings()) != 0 {
		t.Errorf("a closed loop's step was judged on keeping up: %+v", st)
	}
}

// TestOpenLoopRates: the asked rate is the schedule's spacing and the
// completed rate the ends' spacing, whatever the requests' durations.
func TestOpenLoopRates(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
	run := &runfile.Run{}
	// 11 requests scheduled every 20 ms (50/s), each 500 ms long: kept up.
	// Then the same schedule served one at a time every 40 ms (25/s).
	build := func(service time.Duration, queued bool) {
		run.Requests = nil
		for i := 0; i < 11; i++ {
			at := int64(i) * int64(20*time.Millisecond)
			e2e := 500 * time.Millisecond
			if queued {
				e2e = time.Duration(i+1)*service - time.Duration(at)
			}
			run.Requests = append(run.Requests, runfile.Request{Status: 200, StartedAt: t0.Add(time.Duration(at)), ScheduledNS: &at, E2ENS: int64(e2e)})
		}
	}
	build(0, false)
	if a, c := openLoopRates(run); math.Abs(a-50) > 1e-9 || math.Abs(c-50) > 1e-9 {
		t.Errorf("kept up: asked %g, completed %g; want 50, 50", a, c)
	}
	build(40*time.Millisecond, true)
	a, c := openLoopRates(run)
	if math.Abs(a-50) > 1e-9 || math.Abs(c-25) > 1e-9 {
		t.Errorf("queued: asked %g, completed %g; want 50, 25", a, c)
	}
	if (Step{AskedPerS: a, CompletedPerS: c}).KeptUp() {
		t.Error("a target completing half the rate asked kept up")
	}
}
