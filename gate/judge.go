package gate

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/tokenpulse/tokenpulse/measure"
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
			if !r.Scoped {
				r = r.In(measure.Category(c))
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
// Figures are stats of package measure's samples of run.Requests, the
// same samples measure.Summarize builds the summary from (so a stale
// summary cannot mislead a gate); a run without requests is judged on its
// Summary. A rule with an unset scope is judged on the overall (warm)
// requests.
//
// A rule whose scope has nothing to measure (no such category, no cold
// request, every request failed, no token) is not judged: its verdict has
// NoData set to the reason and neither passes nor fails. The error budget
// (errors.rate) still judges a scope whose requests all failed.
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
//
// A goodput rule (goodput.share, goodput.rate) is judged on the scope's
// goodput under the objectives of every other rule judged with it (see
// [Objectives]); it lists no offenders.
func Judge(run *runfile.Run, rules []Rule) []runfile.Verdict {
	recorded, _ := RecordedRules(run)
	all := append(recorded, rules...)
	seen := map[string]bool{}
	cache := map[string]*scopeData{}
	var out []runfile.Verdict
	for _, r := range all {
		scope := r.Scope
		key := scope.String() + "\x00" + r.Text()
		if seen[key] {
			continue
		}
		seen[key] = true
		if r.Metric == "goodput" {
			out = append(out, judgeGoodput(r, scope, run, all))
			continue
		}
		out = append(out, judgeOne(r, scope, scopeOf(run, scope, cache)))
	}
	return out
}

// Passed reports whether no verdict failed. A verdict with no data
// neither passes nor fails: Judge gives the reason, and the reports show
// it as not judged.
func Passed(vs []runfile.Verdict) bool { return len(Failed(vs)) == 0 }

// Failed returns the verdicts that were judged and do not hold.
func Failed(vs []runfile.Verdict) []runfile.Verdict {
	var out []runfile.Verdict
	for _, v := range vs {
		if v.Failed() {
			out = append(out, v)
		}
	}
	return out
}

// NotJudged returns the verdicts whose scope had no data.
func NotJudged(vs []runfile.Verdict) []runfile.Verdict {
	var out []runfile.Verdict
	for _, v := range vs {
		if !v.Judged() {
			out = append(out, v)
		}
	}
	return out
}

// scopeData is what a scope holds: its aggregate, and the views of its
// requests (nil for a run file with a summary and no requests).
type scopeData struct {
	g     runfile.Group
	views []measure.View
}

// scopeOf returns the data of scope s of run, through cache.
func scopeOf(run *runfile.Run, s measure.Scope, cache map[string]*scopeData) *scopeData {
	key := s.String()
	if d, ok := cache[key]; ok {
		return d
	}
	d := &scopeData{}
	if len(run.Requests) == 0 {
		d.g, _ = measure.SummaryGroup(&run.Summary, s)
	} else {
		d.views = measure.Views(run, s)
		if d.views == nil {
			d.views = []measure.View{}
		}
		d.g = measure.Aggregate(d.views)
	}
	cache[key] = d
	return d
}

// noData says why rule r has nothing to measure in scope s (data d).
func noData(r Rule, s measure.Scope, d *scopeData) string {
	if d.g.Requests == 0 {
		if s.Kind != measure.KindOverall {
			return "no data: the run has no " + s.String() + " request"
		}
		return "no data: the run has no measured request"
	}
	if d.g.Errors == d.g.Requests {
		if d.g.Requests == 1 {
			return fmt.Sprintf("no data: the one request of %s failed", s)
		}
		return fmt.Sprintf("no data: all %d requests of %s failed", d.g.Requests, s)
	}
	return fmt.Sprintf("no data: no request of %s has a value of %s", s, r.Metric)
}

// verdict is r's verdict on scope before it is judged: what the rule
// measures, as fields, and its text for display.
func (r Rule) verdict(scope measure.Scope) runfile.Verdict {
	return runfile.Verdict{
		Rule: r.Text(), Scope: scope.String(), Source: r.Source,
		Metric: r.Metric, Statistic: r.Stat, Operator: r.Op.String(),
		Limit: r.Limit, Unit: r.Unit,
	}
}

func judgeOne(r Rule, scope measure.Scope, d *scopeData) runfile.Verdict {
	v := r.verdict(scope)
	val, ok := measureRule(r, &d.g, d.views)
	if !ok {
		v.NoData = noData(r, scope, d)
		return v
	}
	v.Value = val
	v.Passed = r.Op.Holds(val, r.Limit)
	if !v.Passed {
		v.Offenders = offenders(r, d.views)
	}
	return v
}

// offenders lists the requests that broke r, worst first, as documented on
// Judge.
func offenders(r Rule, views []measure.View) []runfile.Offender {
	b := metrics[r.Metric].bind(r.Stat)
	if r.Stat == "count" && b.src != perError {
		return nil
	}
	var out []runfile.Offender
	add := func(q *runfile.Request, v float64) {
		out = append(out, runfile.Offender{Index: q.Index, RequestID: q.RequestID, PromptID: q.PromptID, Category: q.Category, Value: v})
	}
	if b.src == perError {
		for i := range views {
			if q := views[i].Req; !views[i].OK {
				add(q, float64(q.Status))
			}
		}
		return capOffenders(out)
	}
	if !b.metric.Pooled() && r.Stat == "std" {
		// The std of per-request values: the requests farthest from
		// the scope's mean.
		if !r.Op.upper() {
			return nil
		}
		m := stats.Mean(measure.Sample(views, b.metric))
		for i := range views {
			for _, x := range views[i].Values(b.metric) {
				if dev := math.Abs(x - m); dev > r.Limit {
					add(views[i].Req, dev)
				}
			}
		}
		sortWorst(out, true)
		return capOffenders(out)
	}
	for i := range views {
		x, ok := views[i].Stat(b.metric, r.Stat)
		if !ok {
			continue
		}
		if !r.Op.Holds(x, r.Limit) {
			add(views[i].Req, x)
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
