// Package measure is the one owner of two rules that every figure of
// tokenpulse rests on:
//
//   - which requests of a run count in a scope (overall, cold, a category,
//     and the uncounted ones: warm-up, aborted on purpose, failed), and
//   - how a request's metrics (TTFT, TPOT per token, gaps per event,
//     visible times, token counts) are derived from its raw times.
//
// The run file's summary ([Summarize]), the gate's verdicts, compare's
// samples and the reports' tables and charts all ask this package; none
// derives a figure of its own. DESIGN.md ("Definitions") states the same
// rules in prose; where the two differ, that is a bug in one of them.
//
//	views := measure.Views(run, measure.Category("complex"))
//	ttfts := measure.Sample(views, measure.TTFT) // one value per successful request
//
// Every function here is pure: it reads the run and never changes it,
// except [Summarize], which writes run.Summary.
package measure

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/tokenpulse/tokenpulse/runfile"
)

// Kind is the kind of a scope.
type Kind int

// The kinds of scope. Overall, Cold and Category are the measured scopes
// that summaries, thresholds and comparisons speak of; Warmup, Aborted
// and Failed name the requests that no figure counts (Failed ones count
// only in error rates).
const (
	// KindOverall: every counted request that is not cold.
	KindOverall Kind = iota
	// KindCold: the counted cold requests (the target's first answer).
	KindCold
	// KindCategory: the counted warm requests of one prompt category.
	KindCategory
	// KindWarmup: the warm-up requests, recorded and never counted.
	KindWarmup
	// KindAborted: requests the client aborted on purpose (rapid-fire's
	// interrupted answers), recorded and never counted.
	KindAborted
	// KindFailed: the counted requests (cold or warm) that failed.
	KindFailed
	// KindTurn: the counted warm requests that were one turn of a
	// conversation (the same turn number of every conversation). Turns
	// count in their category and overall like any request; a
	// conversation's first turn is turn 1, not cold (the cold request is
	// never a turn).
	KindTurn
)

// Scope is a set of a run's requests.
type Scope struct {
	Kind Kind
	// Category is the category's name for KindCategory.
	Category string
	// Turn is the turn number (from 1) for KindTurn.
	Turn int
}

// The scopes without a parameter.
var (
	Overall = Scope{Kind: KindOverall}
	Cold    = Scope{Kind: KindCold}
	Warmup  = Scope{Kind: KindWarmup}
	Aborted = Scope{Kind: KindAborted}
	Failed  = Scope{Kind: KindFailed}
)

// Category returns the scope of one prompt category's warm requests.
func Category(name string) Scope { return Scope{Kind: KindCategory, Category: name} }

// Turn returns the scope of the warm requests that were turn k (from 1)
// of their conversation.
func Turn(k int) Scope { return Scope{Kind: KindTurn, Turn: k} }

// String is the scope's name as the run file writes it: "overall",
// "cold", "category:NAME", "turn:N", "warmup", "aborted" or "failed".
func (s Scope) String() string {
	switch s.Kind {
	case KindCold:
		return "cold"
	case KindCategory:
		return "category:" + s.Category
	case KindWarmup:
		return "warmup"
	case KindAborted:
		return "aborted"
	case KindFailed:
		return "failed"
	case KindTurn:
		return "turn:" + strconv.Itoa(s.Turn)
	}
	return "overall"
}

// ParseScope reads a scope's name as [Scope.String] writes it (spaces
// around a category's name or a turn's number are dropped).
func ParseScope(name string) (Scope, error) {
	switch name {
	case "overall", "":
		return Overall, nil
	case "cold":
		return Cold, nil
	case "warmup":
		return Warmup, nil
	case "aborted":
		return Aborted, nil
	case "failed":
		return Failed, nil
	}
	if c, ok := strings.CutPrefix(name, "category:"); ok {
		if c = strings.TrimSpace(c); c == "" {
			return Scope{}, fmt.Errorf("scope %q needs a category name", name)
		}
		return Category(c), nil
	}
	if t, ok := strings.CutPrefix(name, "turn:"); ok {
		if k, err := strconv.Atoi(strings.TrimSpace(t)); err == nil && k >= 1 {
			return Turn(k), nil
		}
		return Scope{}, fmt.Errorf("scope %q needs a turn number from 1, as turn:2", name)
	}
	return Scope{}, fmt.Errorf("unknown scope %q (want overall, cold, category:NAME, turn:N, warmup, aborted or failed)", name)
}

// Judged reports whether s is a scope that figures are judged and
// compared on: overall, cold, a category or a turn (not the uncounted
// warm-up and aborted requests, nor the failed ones).
func (s Scope) Judged() bool {
	switch s.Kind {
	case KindOverall, KindCold, KindCategory, KindTurn:
		return true
	}
	return false
}

// ParseJudged reads the name of a scope that is judged ([Scope.Judged]),
// as a threshold names it.
func ParseJudged(name string) (Scope, error) {
	s, err := ParseScope(name)
	if err == nil && !s.Judged() || err != nil && !strings.Contains(name, ":") {
		return Scope{}, fmt.Errorf("unknown scope %q; use [overall], [cold], [category:NAME] or [turn:N]", name)
	}
	return s, err
}

// SummaryGroup returns the group of scope s in a run's summary: overall, cold,
// a category or a turn. ok is false when the summary has no such group
// (no cold request, no such category or turn, or a scope no summary
// holds).
func SummaryGroup(sum *runfile.Summary, s Scope) (g runfile.Group, ok bool) {
	switch s.Kind {
	case KindOverall:
		return sum.Overall, true
	case KindCold:
		if sum.Cold != nil {
			return *sum.Cold, true
		}
	case KindCategory:
		g, ok = sum.Categories[s.Category]
		return g, ok
	case KindTurn:
		for _, t := range sum.Turns {
			if t.Turn == s.Turn {
				return t.Group, true
			}
		}
	}
	return runfile.Group{}, false
}

// ScopedGroup is one group of a summary with its scope.
type ScopedGroup struct {
	Scope Scope
	Group runfile.Group
}

// Groups returns a summary's warm groups as its tables list them: each
// category in name order, then overall.
func Groups(sum *runfile.Summary) []ScopedGroup {
	names := make([]string, 0, len(sum.Categories))
	for n := range sum.Categories {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]ScopedGroup, 0, len(names)+1)
	for _, n := range names {
		out = append(out, ScopedGroup{Category(n), sum.Categories[n]})
	}
	return append(out, ScopedGroup{Overall, sum.Overall})
}

// Counted reports whether q counts in the measured scopes: it is neither
// a warm-up request nor one the client aborted on purpose.
func Counted(q *runfile.Request) bool { return !q.Warmup && !q.Aborted }

// Has reports whether q belongs to scope s.
func (s Scope) Has(q *runfile.Request) bool {
	switch s.Kind {
	case KindWarmup:
		return q.Warmup
	case KindAborted:
		return q.Aborted && !q.Warmup
	}
	if !Counted(q) {
		return false
	}
	switch s.Kind {
	case KindCold:
		return q.Cold
	case KindCategory:
		return !q.Cold && q.Category == s.Category
	case KindFailed:
		return !q.OK()
	case KindTurn:
		return !q.Cold && q.Turn == s.Turn
	}
	return !q.Cold
}

// Requests returns the requests of run in scope s, in run order.
func Requests(run *runfile.Run, s Scope) []*runfile.Request {
	var out []*runfile.Request
	for i := range run.Requests {
		if q := &run.Requests[i]; s.Has(q) {
			out = append(out, q)
		}
	}
	return out
}

// Measured returns the measured scopes run has requests in: overall
// (always), cold when a counted cold request exists, then each category
// with a counted warm request, in name order.
func Measured(run *runfile.Run) []Scope {
	out := []Scope{Overall}
	cats := map[string]bool{}
	cold := false
	for i := range run.Requests {
		q := &run.Requests[i]
		if !Counted(q) {
			continue
		}
		if q.Cold {
			cold = true
		} else {
			cats[q.Category] = true
		}
	}
	if cold {
		out = append(out, Cold)
	}
	names := make([]string, 0, len(cats))
	for c := range cats {
		names = append(names, c)
	}
	sort.Strings(names)
	for _, c := range names {
		out = append(out, Category(c))
	}
	return out
}

// Categories returns the names of the categories that have counted warm
// requests in run, sorted.
func Categories(run *runfile.Run) []string {
	var out []string
	for _, s := range Measured(run) {
		if s.Kind == KindCategory {
			out = append(out, s.Category)
		}
	}
	return out
}

// Tally counts a run's requests by what they are.
type Tally struct {
	// Total is every request of the run.
	Total int
	// Warmup and Aborted are the requests no figure counts.
	Warmup, Aborted int
	// Measured is the counted requests, Cold of them cold (so
	// Measured − Cold are warm); Errors the counted ones that failed.
	Measured, Cold, Errors int
}

// Count tallies run's requests.
func Count(run *runfile.Run) Tally {
	var t Tally
	for i := range run.Requests {
		q := &run.Requests[i]
		t.Total++
		switch {
		case Warmup.Has(q):
			t.Warmup++
		case Aborted.Has(q):
			t.Aborted++
		default:
			t.Measured++
			if q.Cold {
				t.Cold++
			}
			if !q.OK() {
				t.Errors++
			}
		}
	}
	return t
}

// AllFailed reports whether the run measured at least one request and
// every measured request failed: a run that says nothing of the target.
func (t Tally) AllFailed() bool { return t.Measured > 0 && t.Errors == t.Measured }
