package gate

import (
	"slices"
	"sort"
	"strings"

	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stats"
)

// distStats are the statistics of a stats.Distribution.
var distStats = []string{"count", "mean", "std", "min", "p50", "p90", "p95", "p99", "max"}

var statAliases = map[string]string{"avg": "mean", "median": "p50", "stddev": "std"}

// source says how a metric's scope figure is made from the requests.
type source int

const (
	// fromSample: a stat of the scope's sample of a measure.Metric (one
	// value per request, or pooled); a request's own value is the same
	// stat over its own values of the metric.
	fromSample source = iota
	// perError: the metric counts failed requests.
	perError
	// perRatio: tokens per event (mean: the pooled ratio).
	perRatio
	// perGoodput: the share or rate of requests that met every
	// per-request objective (measure.Goodput under Objectives).
	perGoodput
)

// binding is what one metric.stat reads.
type binding struct {
	src    source
	metric measure.Metric
}

type metricDef struct {
	stats map[string]bool
	kind  unitKind
	bind  func(stat string) binding
	// statKinds, when set, gives a stat a unit of its own.
	statKinds map[string]unitKind
}

func (m metricDef) unitFor(stat string) unitKind {
	if k, ok := m.statKinds[stat]; ok {
		return k
	}
	if stat == "count" {
		return plainUnit
	}
	return m.kind
}

func (m metricDef) statNames() string {
	var s []string
	for _, n := range distStats {
		if m.stats[n] {
			s = append(s, n)
		}
	}
	for n := range m.stats {
		if !slices.Contains(distStats, n) {
			s = append(s, n)
		}
	}
	return strings.Join(s, ", ")
}

func setOf(names ...string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

func sample(m measure.Metric) func(string) binding {
	return func(string) binding { return binding{src: fromSample, metric: m} }
}

// tpot binds a TPOT metric: its mean, min, max and count are of the
// per-request TPOTs (perRequest), its std and percentiles of the
// per-token intervals (intervals), as DESIGN.md defines "TPOT std" and
// "TPOT pNN".
func tpot(perRequest, intervals measure.Metric) func(string) binding {
	return func(stat string) binding {
		switch stat {
		case "mean", "min", "max", "count":
			return binding{src: fromSample, metric: perRequest}
		}
		return binding{src: fromSample, metric: intervals}
	}
}

// metrics is the table documented on Parse: each metric.stat is a stat of
// one of package measure's samples.
var metrics = map[string]metricDef{
	"ttft":         {stats: setOf(distStats...), kind: timeUnit, bind: sample(measure.TTFT)},
	"e2e":          {stats: setOf(distStats...), kind: timeUnit, bind: sample(measure.E2E)},
	"visible_ttft": {stats: setOf(distStats...), kind: timeUnit, bind: sample(measure.VisibleTTFT)},
	"gap":          {stats: setOf(distStats...), kind: timeUnit, bind: sample(measure.Gap)},
	"visible_gap":  {stats: setOf(distStats...), kind: timeUnit, bind: sample(measure.VisibleGap)},
	"tpot_std":     {stats: setOf(distStats...), kind: timeUnit, bind: sample(measure.TPOTStd)},
	"ttft_network": {stats: setOf(distStats...), kind: timeUnit, bind: sample(measure.TTFTNetwork)},
	"server_tpot":  {stats: setOf(distStats...), kind: timeUnit, bind: sample(measure.ServerTPOT)},
	// The measured visible metrics of a browser run (bench --browser).
	"painted_ttft":    {stats: setOf(distStats...), kind: timeUnit, bind: sample(measure.PaintedTTFT)},
	"paint_gap":       {stats: setOf(distStats...), kind: timeUnit, bind: sample(measure.PaintGap)},
	"render_overhead": {stats: setOf(distStats...), kind: timeUnit, bind: sample(measure.RenderOverhead)},
	"long_frame":      {stats: setOf(distStats...), kind: timeUnit, bind: sample(measure.LongFrame)},
	"tpot":            {stats: setOf(distStats...), kind: timeUnit, bind: tpot(measure.TPOT, measure.TokenInterval)},
	// A reasoning model's two phases (DESIGN.md, "Reasoning models").
	"reasoning_ttft": {stats: setOf(distStats...), kind: timeUnit, bind: sample(measure.ReasoningTTFT)},
	"answer_ttft":    {stats: setOf(distStats...), kind: timeUnit, bind: sample(measure.AnswerTTFT)},
	"reasoning_span": {stats: setOf(distStats...), kind: timeUnit, bind: sample(measure.ReasoningSpan)},
	"answer_span":    {stats: setOf(distStats...), kind: timeUnit, bind: sample(measure.AnswerSpan)},
	"reasoning_tpot": {stats: setOf(distStats...), kind: timeUnit, bind: tpot(measure.ReasoningTPOT, measure.ReasoningInterval)},
	"answer_tpot":    {stats: setOf(distStats...), kind: timeUnit, bind: tpot(measure.AnswerTPOT, measure.AnswerInterval)},
	"errors": {stats: setOf("rate", "count"), kind: percentUnit,
		bind: func(string) binding { return binding{src: perError} }},
	"tokens_per_event": {stats: setOf("mean", "max"), kind: plainUnit,
		bind: func(string) binding { return binding{src: perRatio, metric: measure.TokensPerEvent} }},
	"goodput": {stats: setOf("share", "rate"), kind: percentUnit, statKinds: map[string]unitKind{"rate": plainUnit},
		bind: func(string) binding { return binding{src: perGoodput} }},
}

func metricNames() string {
	names := make([]string, 0, len(metrics))
	for n := range metrics {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// Metrics returns the names of the metrics the language knows, sorted.
func Metrics() []string {
	return strings.Split(metricNames(), ", ")
}

// measure returns the rule's value on scope group g, whose requests'
// views are views, and false when the scope has nothing to measure.
func measureRule(r Rule, g *runfile.Group, views []measure.View) (float64, bool) {
	b := metrics[r.Metric].bind(r.Stat)
	switch b.src {
	case perError:
		if g.Requests == 0 {
			return 0, false
		}
		if r.Stat == "count" {
			return float64(g.Errors), true
		}
		return g.ErrorRate() * 100, true
	case perRatio:
		if r.Stat == "mean" {
			return g.TokensPerEvent, g.TokensPerEvent > 0
		}
		if views == nil {
			return 0, false
		}
		xs := measure.Sample(views, b.metric)
		if len(xs) == 0 {
			return 0, false
		}
		return slices.Max(xs), true
	}
	var dist stats.Distribution
	if views != nil {
		dist = stats.Describe(measure.Sample(views, b.metric))
	} else {
		dist = summaryDist(g, b.metric)
	}
	if r.Stat == "count" {
		// How many values there were is data even when there were none,
		// as long as the scope had requests.
		return float64(dist.Count), g.Requests > 0
	}
	if dist.Count == 0 {
		return 0, false
	}
	v, _ := dist.Field(r.Stat)
	return v, true
}

// summaryDist is the distribution of m that a summary group holds, for a
// run file that has a summary but no requests.
func summaryDist(g *runfile.Group, m measure.Metric) stats.Distribution {
	if m == measure.TokenInterval && g.TokenIntervalMs.Count == 0 {
		return g.GapMs // a run file written before per-token intervals
	}
	if fb := measure.PhaseFallback(m); fb != "" && !measure.Reasoned(*g) {
		return summaryDist(g, fb) // no thinking: the answer is the whole stream
	}
	if d := measure.Field(g, m); d != nil {
		return *d
	}
	return stats.Distribution{}
}
