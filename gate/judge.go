package gate

import (
	"errors"
	"math"
	"sort"

	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stats"
)

// MaxOffenders caps the offenders listed on one verdict.
const MaxOffenders = 20

// Sources of rules, as written in runfile.Verdict.Source.
const (
	SourceSuite = "suite"
	SourceFlag  = "flag"
)

// RecordedRules returns the thresholds a run carries with it: those of its
// suite (run.Config.SuiteThresholds, each scoped to its category unless
// the expression names a scope; Source "suite"), then run.Config.Thresholds
// (the --threshold flags; overall unless scoped; Source "flag"). Suite
// categories are taken in name order. Invalid expressions are skipped and
// their errors joined.
func RecordedRules(run *runfile.Run) ([]Rule, error) {
	var rules []Rule
	var errs []error
	cats := make([]string, 0, len(run.Config.SuiteThresholds))
	for c := range run.Config.SuiteThresholds {
		cats = append(cats, c)
	}
	sort.Strings(cats)
	for _, c := range cats {
		for _, e := range run.Config.SuiteThresholds[c] {
			r, err := Parse(e)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if r.Scope.Kind == ScopeUnset {
				r.Scope = Category(c)
			}
			r.Source = SourceSuite
			rules = append(rules, r)
		}
	}
	flags, err := ParseAll(run.Config.Thresholds)
	if err != nil {
		errs = append(errs, err)
	}
	for _, r := range flags {
		r.Source = SourceFlag
		rules = append(rules, r)
	}
	return rules, errors.Join(errs...)
}

// Judge checks rules against run and returns one verdict per rule, in
// order: first the run's recorded rules (RecordedRules: its suite's
// thresholds and its --threshold flags), then rules. A rule that appears
// twice (same scope and text) is judged once. Recorded expressions that do
// not parse are left out; validate them with RecordedRules.
//
// Figures are recomputed from run.Requests exactly as runfile.Summarize
// computes the summary (so a stale summary cannot mislead a gate); a run
// without requests is judged on its Summary. A rule with an unset scope is
// judged on the overall (warm) requests.
//
// A rule whose scope has nothing to measure (no such category, no cold
// request, no token) fails with value 0: a gate never passes on no
// evidence.
//
// A failed verdict lists its offenders, worst first, at most MaxOffenders:
//   - for a per-request metric (ttft, e2e, visible_ttft, tpot.mean/min/max,
//     tpot_std), the requests whose own value breaks the limit; for its std,
//     the requests farther from the scope's mean than the limit;
//   - for a gap metric (gap, visible_gap, tpot.std and tpot.pNN), the
//     requests for which the same stat over their own gaps breaks the
//     limit (for gap.max: the requests whose own worst stall does);
//   - for errors, the failed requests, with their HTTP status as value;
//   - for tokens_per_event, the requests whose own ratio breaks it.
func Judge(run *runfile.Run, rules []Rule) []runfile.Verdict {
	recorded, _ := RecordedRules(run)
	all := append(recorded, rules...)
	seen := map[string]bool{}
	d := display(run)
	var out []runfile.Verdict
	for _, r := range all {
		scope := r.Scope
		if scope.Kind == ScopeUnset {
			scope = Overall
		}
		key := scope.String() + "\x00" + r.Text()
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, judgeOne(run, r, scope, d))
	}
	return out
}

// Passed reports whether every verdict passed.
func Passed(vs []runfile.Verdict) bool {
	for _, v := range vs {
		if !v.Passed {
			return false
		}
	}
	return true
}

// Failed returns the verdicts that did not pass.
func Failed(vs []runfile.Verdict) []runfile.Verdict {
	var out []runfile.Verdict
	for _, v := range vs {
		if !v.Passed {
			out = append(out, v)
		}
	}
	return out
}

func display(run *runfile.Run) stats.Display {
	d := stats.Display{FrameHz: run.Config.FrameHz, BatchNS: int64(run.Config.RenderBatchMS * 1e6)}
	if d.FrameHz == 0 {
		d = stats.DefaultDisplay
	}
	return d
}

// scopeRequests returns the requests of scope, as runfile.Summarize groups
// them: warm-up never; cold only in the cold scope.
func scopeRequests(run *runfile.Run, s Scope) []*runfile.Request {
	var out []*runfile.Request
	for i := range run.Requests {
		q := &run.Requests[i]
		if !q.Counted() {
			continue
		}
		switch s.Kind {
		case ScopeCold:
			if !q.Cold {
				continue
			}
		case ScopeCategory:
			if q.Cold || q.Category != s.Category {
				continue
			}
		default:
			if q.Cold {
				continue
			}
		}
		out = append(out, q)
	}
	return out
}

// group returns the aggregate of scope s and its requests.
func group(run *runfile.Run, s Scope, d stats.Display) (runfile.Group, []*runfile.Request) {
	if len(run.Requests) == 0 {
		switch s.Kind {
		case ScopeCold:
			if run.Summary.Cold != nil {
				return *run.Summary.Cold, nil
			}
			return runfile.Group{}, nil
		case ScopeCategory:
			return run.Summary.Categories[s.Category], nil
		}
		return run.Summary.Overall, nil
	}
	reqs := scopeRequests(run, s)
	return runfile.Aggregate(reqs, d), reqs
}

// measureScope returns the value of r on scope s of run.
func measureScope(run *runfile.Run, r Rule, s Scope, d stats.Display) (float64, bool, []*runfile.Request) {
	g, reqs := group(run, s, d)
	v, ok := measure(r, &g, reqs, d)
	return v, ok, reqs
}

func judgeOne(run *runfile.Run, r Rule, scope Scope, d stats.Display) runfile.Verdict {
	v := runfile.Verdict{
		Rule:   r.Text(),
		Scope:  scope.String(),
		Source: r.Source,
		Limit:  r.Limit,
		Unit:   r.Unit,
	}
	val, ok, reqs := measureScope(run, r, scope, d)
	if !ok {
		return v
	}
	v.Value = val
	v.Passed = r.Op.Holds(val, r.Limit)
	if !v.Passed {
		v.Offenders = offenders(r, reqs, d)
	}
	return v
}

// offenders lists the requests that broke r, worst first, as documented on
// Judge.
func offenders(r Rule, reqs []*runfile.Request, d stats.Display) []runfile.Offender {
	b := metrics[r.Metric].bind(r.Stat)
	if r.Stat == "count" && b.src != perError {
		return nil
	}
	var out []runfile.Offender
	add := func(q *runfile.Request, v float64) {
		out = append(out, runfile.Offender{Index: q.Index, RequestID: q.RequestID, PromptID: q.PromptID, Category: q.Category, Value: v})
	}
	switch b.src {
	case perError:
		for _, q := range reqs {
			if !q.OK() {
				add(q, float64(q.Status))
			}
		}
		return capOffenders(out)
	case perRequest:
		if r.Stat == "std" {
			if !r.Op.upper() {
				return nil
			}
			var xs []float64
			var qs []*runfile.Request
			for _, q := range reqs {
				if x, _, ok := b.req(q, d); ok && q.OK() {
					xs, qs = append(xs, x), append(qs, q)
				}
			}
			m := stats.Mean(xs)
			for i, q := range qs {
				if dev := math.Abs(xs[i] - m); dev > r.Limit {
					add(q, dev)
				}
			}
			sortWorst(out, true)
			return capOffenders(out)
		}
	}
	for _, q := range reqs {
		if !q.OK() {
			continue
		}
		x, xs, ok := b.req(q, d)
		if !ok {
			continue
		}
		if b.src == perGap {
			x = statOf(xs, r.Stat)
		}
		if !r.Op.Holds(x, r.Limit) {
			add(q, x)
		}
	}
	sortWorst(out, r.Op.upper())
	return capOffenders(out)
}

func sortWorst(o []runfile.Offender, largerWorse bool) {
	sort.SliceStable(o, func(i, j int) bool {
		if o[i].Value != o[j].Value {
			if largerWorse {
				return o[i].Value > o[j].Value
			}
			return o[i].Value < o[j].Value
		}
		return o[i].Index < o[j].Index
	})
}

func capOffenders(o []runfile.Offender) []runfile.Offender {
	if len(o) > MaxOffenders {
		return o[:MaxOffenders]
	}
	return o
}
