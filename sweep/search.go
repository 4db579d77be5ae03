package sweep

import (
	"errors"
	"fmt"
	"math"
)

// Search looks for the highest rate at which a step passes (every judged
// threshold holds): from Start it doubles the rate until a step fails
// (or halves it until one passes), then bisects between the highest
// passing and the lowest failing rate until they are within Resolution
// of each other, relative to the passing one, or MaxSteps steps have run.
// It assumes that a step passes at every rate below one that passes; a
// step near the boundary is noisy, so the result is a rate that passed
// with a failing rate at most Resolution above it, not a sharp edge.
//
// Use it as a loop: for r, ok := s.Next(); ok; r, ok = s.Next() { s.Record(r, passed(r)) }.
type Search struct {
	Start      float64
	Resolution float64
	MaxSteps   int
	// MinRate bounds the halving: below it the search gives up.
	MinRate float64

	lo, hi float64 // highest pass, lowest fail (0: none yet)
	steps  int
}

// Validate checks the search's settings.
func (s *Search) Validate() error {
	switch {
	case !(s.Start > 0) || math.IsInf(s.Start, 0):
		return fmt.Errorf("the search's start rate must be > 0, not %v", s.Start)
	case !(s.Resolution > 0 && s.Resolution < 1):
		return fmt.Errorf("the search's resolution must be in (0, 1), not %v", s.Resolution)
	case s.MaxSteps < 2:
		return errors.New("the search needs at least 2 steps")
	}
	return nil
}

// Next returns the next rate to measure, and false when the search is
// done.
func (s *Search) Next() (float64, bool) {
	if s.steps >= s.MaxSteps {
		return 0, false
	}
	switch {
	case s.lo == 0 && s.hi == 0:
		return s.Start, true
	case s.hi == 0:
		return 2 * s.lo, true
	case s.lo == 0:
		r := s.hi / 2
		if r < s.MinRate {
			return 0, false
		}
		return r, true
	case s.hi-s.lo <= s.Resolution*s.lo:
		return 0, false
	}
	return (s.lo + s.hi) / 2, true
}

// Record records whether the step at rate passed.
func (s *Search) Record(rate float64, passed bool) {
	s.steps++
	if passed {
		s.lo = math.Max(s.lo, rate)
		return
	}
	if s.hi == 0 || rate < s.hi {
		s.hi = rate
	}
}

// Result is the search's outcome so far.
func (s *Search) Result() SearchResult {
	r := SearchResult{Start: s.Start, Resolution: s.Resolution, MaxSteps: s.MaxSteps, Steps: s.steps, Capacity: s.lo, FailedAt: s.hi}
	r.Converged = s.lo > 0 && s.hi > 0 && s.hi-s.lo <= s.Resolution*s.lo
	return r
}

// SearchResult is a search's settings and outcome, as the sweep file
// writes it.
type SearchResult struct {
	Start      float64 `json:"start"`
	Resolution float64 `json:"resolution"`
	MaxSteps   int     `json:"max_steps"`
	Steps      int     `json:"steps"`
	// Capacity is the highest rate that passed (0: none did); FailedAt
	// the lowest that failed (0: none did, the capacity is at least
	// Capacity).
	Capacity float64 `json:"capacity"`
	FailedAt float64 `json:"failed_at,omitempty"`
	// Converged is true when the two are within the resolution.
	Converged bool `json:"converged"`
	// AchievedPerS is the successful requests per second the step at the
	// capacity achieved (0: unknown), said beside the asked rate.
	AchievedPerS float64 `json:"achieved_per_s,omitempty"`
}

// String says what the search found.
func (r SearchResult) String() string {
	switch {
	case r.Capacity == 0 && r.FailedAt > 0:
		return fmt.Sprintf("no rate passed: the thresholds failed down to %g requests/s", r.FailedAt)
	case r.Capacity == 0:
		return "no rate was measured"
	case r.FailedAt == 0:
		return fmt.Sprintf("at least %g requests/s%s: every rate up to it passed (no failing rate within %d steps)", r.Capacity, r.achieved(), r.MaxSteps)
	case !r.Converged:
		return fmt.Sprintf("between %g%s (passed) and %g requests/s (failed), not narrowed to %g%% within %d steps", r.Capacity, r.achieved(), r.FailedAt, r.Resolution*100, r.MaxSteps)
	}
	return fmt.Sprintf("%g requests/s%s: the thresholds held there and failed at %g (within %g%%)", r.Capacity, r.achieved(), r.FailedAt, r.Resolution*100)
}

// achieved is the achieved rate at the capacity as the result says it.
func (r SearchResult) achieved() string {
	if r.AchievedPerS <= 0 {
		return ""
	}
	return fmt.Sprintf(" (achieved %.2f/s)", r.AchievedPerS)
}
