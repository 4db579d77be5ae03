package measure

import (
	"time"

	"github.com/tokenpulse/tokenpulse/runfile"
)

// Origin returns the first start of views: the instant the time axis of
// InFlight and Lags counts from (the zero time when none started).
func Origin(views []View) time.Time {
	first, _, _ := bounds(views)
	return first
}

// Server is what a server's own gauges said at one instant (bench
// --scrape): the requests it queued and ran, and its KV cache's usage.
type Server struct {
	// Queue is the requests waiting (the sum of the RoleQueue series);
	// Running those being generated (the RoleRunning series).
	Queue, Running float64
	// KV is the KV cache's usage from 0 to 1 (the highest RoleKV series).
	KV float64
	// HasQueue, HasRunning and HasKV say which of them were sampled.
	HasQueue, HasRunning, HasKV bool
}

// ServerAt returns what sc's gauges said at at: each series' last sample
// at or before it, none older than two and a half intervals (a scrape
// that failed leaves a hole, not a stale value).
func ServerAt(sc *runfile.Scrape, at time.Time) Server {
	var out Server
	if sc == nil {
		return out
	}
	t := float64(at.Sub(sc.StartedAt)) / float64(time.Millisecond)
	stale := 2.5 * sc.IntervalMS
	for i := range sc.Series {
		s := &sc.Series[i]
		v, ok := s.At(t, stale)
		if !ok {
			continue
		}
		switch s.Role {
		case runfile.RoleQueue:
			out.Queue += v
			out.HasQueue = true
		case runfile.RoleRunning:
			out.Running += v
			out.HasRunning = true
		case runfile.RoleKV:
			if !out.HasKV || v > out.KV {
				out.KV = v
			}
			out.HasKV = true
		}
	}
	return out
}
