package gate

import (
	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// Objectives returns the per-request objectives that rules state, as
// DESIGN.md defines goodput: every upper bound (< or <=) on a time
// metric's mean, min, percentile or max, scoped overall or to a
// category, is read as "each request of the scope has that stat of its
// own values within the limit" (ttft.p95 < 250ms: each request's TTFT;
// gap.p95 <= 90ms: each request's own gap p95; gap.max <= 120ms: each
// request's longest stall). Counts, stds, lower bounds, the error budget
// (a failed request is never good anyway), tokens_per_event, cold-scoped
// rules and goodput's own rules state no per-request objective and are
// left out.
func Objectives(rules []Rule) []measure.Objective {
	var out []measure.Objective
	seen := map[string]bool{}
	for _, r := range rules {
		def, ok := metrics[r.Metric]
		if !ok || def.kind != timeUnit || !r.Op.upper() {
			continue
		}
		switch r.Stat {
		case "count", "std":
			continue
		}
		b := def.bind(r.Stat)
		if b.src != fromSample {
			continue
		}
		scope := r.Scope
		if scope.Kind != measure.KindOverall && scope.Kind != measure.KindCategory {
			continue
		}
		key := scope.String() + "\x00" + r.Text()
		if seen[key] {
			continue
		}
		seen[key] = true
		text := r.Text()
		if scope.Kind == measure.KindCategory {
			text = "[" + scope.String() + "] " + text
		}
		out = append(out, measure.Objective{
			Scope: scope, Metric: b.metric, Stat: r.Stat,
			Limit: r.Limit, Strict: r.Op == Less, Text: text,
		})
	}
	return out
}

// Goodput returns the overall goodput of run under the objectives of its
// recorded rules (its suite's thresholds and --threshold flags) and
// extra (a tier's): see [Objectives] and measure.Goodput.
func Goodput(run *runfile.Run, extra []Rule) *runfile.Goodput {
	recorded, _ := RecordedRules(run)
	g := measure.Goodput(run, measure.Overall, Objectives(append(recorded, extra...)))
	return &g
}

// judgeGoodput judges a goodput rule on scope of run, the objectives
// being those of rules (see [Objectives]). A run file with no requests is
// judged on its summary's overall goodput.
func judgeGoodput(r Rule, scope measure.Scope, run *runfile.Run, rules []Rule) runfile.Verdict {
	v := r.verdict(scope)
	var g runfile.Goodput
	switch {
	case len(run.Requests) > 0:
		g = measure.Goodput(run, scope, Objectives(rules))
	case run.Summary.Goodput != nil && scope.Kind == measure.KindOverall:
		g = *run.Summary.Goodput
	}
	if g.Requests == 0 || scope.Kind == measure.KindCold {
		v.NoData = "no data: the run has no " + scope.String() + " request counted in goodput"
		return v
	}
	val := g.Share * 100
	if r.Stat == "rate" {
		val = g.PerS
	}
	v.Value = val
	v.Passed = r.Op.Holds(val, r.Limit)
	return v
}
