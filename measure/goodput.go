package measure

import (
	"github.com/tokenpulse/tokenpulse/runfile"
)

// Objective is a per-request service objective: what one request must
// meet for a user to have been served well. A scope threshold such as
// "[category:short] ttft.p95 < 250ms" is read as the objective that each
// request of the category has its own TTFT below 250 ms; "gap.p95 <=
// 90ms" as each request's own gap p95 at most 90 ms; "gap.max <= 120ms"
// as each request's own longest stall at most 120 ms: the stat of the
// threshold taken over the request's own values of the metric (the same
// reading the gate uses to name a threshold's offenders).
type Objective struct {
	// Scope is the requests the objective binds: Overall binds every
	// warm request, Category(C) those of C. Other scopes bind none.
	Scope Scope
	// Metric and Stat: the request's value is Stat ("p95", "max",
	// "mean", ...) over its own values of Metric.
	Metric Metric
	Stat   string
	// Limit is the largest value that meets the objective (ms for time
	// metrics); Strict makes the bound exclusive (<).
	Limit  float64
	Strict bool
	// Text is the threshold the objective was read from, for reports.
	Text string
}

// binds reports whether o applies to the warm request q.
func (o Objective) binds(q *runfile.Request) bool {
	switch o.Scope.Kind {
	case KindOverall:
		return true
	case KindCategory:
		return q.Category == o.Scope.Category
	}
	return false
}

// Met reports whether the request of view v meets o. A failed request,
// or one that gave no token, meets no objective. A successful request
// with no value of the metric (a one-token answer has no gap) meets it:
// nothing it showed the user broke it.
func (o Objective) Met(v *View) bool {
	if !v.OK || !v.HasTTFT {
		return false
	}
	x, ok := v.Stat(o.Metric, o.Stat)
	if !ok {
		return true
	}
	if o.Strict {
		return x < o.Limit
	}
	return x <= o.Limit
}

// Good reports whether v's request meets every objective of objs that
// binds it.
func Good(v *View, objs []Objective) bool {
	if !v.OK || !v.HasTTFT {
		return false
	}
	for _, o := range objs {
		if o.binds(v.Req) && !o.Met(v) {
			return false
		}
	}
	return true
}

// Goodput returns the goodput of scope s of run under objs: of the
// scope's counted requests (failed ones included), how many met every
// objective that binds them, their share, and their rate per second of
// the scope's span (the span [Throughput] measures). Cold requests are
// in no warm scope and so in no goodput.
func Goodput(run *runfile.Run, s Scope, objs []Objective) runfile.Goodput {
	views := Views(run, s)
	g := runfile.Goodput{Requests: len(views)}
	for _, o := range objs {
		g.Objectives = append(g.Objectives, o.Text)
	}
	for i := range views {
		if Good(&views[i], objs) {
			g.Good++
		}
	}
	if g.Requests > 0 {
		g.Share = float64(g.Good) / float64(g.Requests)
	}
	if span, _, _ := Throughput(views); span > 0 {
		g.PerS = float64(g.Good) / span
	}
	return g
}
