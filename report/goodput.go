package report

import (
	"fmt"

	"github.com/tokenpulse/tokenpulse/runfile"
)

// goodputLine states the run's goodput, "" when it has none (a run judged
// before goodput existed, or no warm request).
func goodputLine(r *runfile.Run) string {
	g := r.Summary.Goodput
	if g == nil || g.Requests == 0 {
		return ""
	}
	s := fmt.Sprintf("goodput: %d of %d warm requests (%.0f%%) met every per-request objective", g.Good, g.Requests, 100*g.Share)
	if g.PerS > 0 {
		s += fmt.Sprintf(", %.2f/s", g.PerS)
	}
	if len(g.Objectives) == 0 {
		s += " (no threshold states one: every successful request counts)"
	}
	return s
}
