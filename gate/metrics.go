package gate

import (
	"slices"
	"sort"
	"strings"

	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stats"
)

// distStats are the statistics of a stats.Distribution.
var distStats = []string{"count", "mean", "std", "min", "p50", "p90", "p95", "p99", "max"}

var statAliases = map[string]string{"avg": "mean", "median": "p50", "stddev": "std"}

// source says how a metric's per-request values are found, for offenders.
type source int

const (
	// perRequest: one value per request (TTFT, E2E, TPOT).
	perRequest source = iota
	// perGap: the metric pools the gaps of every request; a request's own
	// value is the same stat over its own gaps.
	perGap
	// perError: the metric counts failed requests.
	perError
	// perRatio: tokens per event.
	perRatio
)

// binding is what one metric.stat reads.
type binding struct {
	src  source
	dist func(g *runfile.Group) stats.Distribution
	// req returns a request's single value (perRequest) or its gaps in ms
	// (perGap, as xs).
	req func(q *runfile.Request, d stats.Display) (x float64, xs []float64, ok bool)
}

type metricDef struct {
	stats map[string]bool
	kind  unitKind
	bind  func(stat string) binding
}

func (m metricDef) unitFor(stat string) unitKind {
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

func reqTTFT(q *runfile.Request, _ stats.Display) (float64, []float64, bool) {
	if len(q.TokenTimesNS) == 0 {
		return 0, nil, false
	}
	return stats.Millis(q.TTFTNS), nil, true
}

func reqE2E(q *runfile.Request, _ stats.Display) (float64, []float64, bool) {
	return stats.Millis(q.E2ENS), nil, true
}

func reqVisibleTTFT(q *runfile.Request, d stats.Display) (float64, []float64, bool) {
	if len(q.TokenTimesNS) == 0 {
		return 0, nil, false
	}
	return stats.Millis(d.Visible(q.TokenTimesNS)[0]), nil, true
}

func reqTPOT(q *runfile.Request, _ stats.Display) (float64, []float64, bool) {
	v, ok := stats.TPOT(q.TokenTimesNS)
	return v / 1e6, nil, ok
}

func millis(ns []int64) []float64 {
	out := make([]float64, len(ns))
	for i, v := range ns {
		out[i] = stats.Millis(v)
	}
	return out
}

func reqGaps(q *runfile.Request, _ stats.Display) (float64, []float64, bool) {
	g := stats.Gaps(q.TokenTimesNS)
	return 0, millis(g), len(g) > 0
}

func reqVisibleGaps(q *runfile.Request, d stats.Display) (float64, []float64, bool) {
	g := d.VisibleGaps(q.TokenTimesNS)
	return 0, millis(g), len(g) > 0
}

func reqGapStd(q *runfile.Request, _ stats.Display) (float64, []float64, bool) {
	g := millis(stats.Gaps(q.TokenTimesNS))
	if len(g) < 2 {
		return 0, nil, false
	}
	return stats.Std(g), nil, true
}

func simple(src source, dist func(g *runfile.Group) stats.Distribution, req func(*runfile.Request, stats.Display) (float64, []float64, bool)) func(string) binding {
	return func(string) binding { return binding{src: src, dist: dist, req: req} }
}

// metrics is the table documented on Parse.
var metrics = map[string]metricDef{
	"ttft": {stats: setOf(distStats...), kind: timeUnit,
		bind: simple(perRequest, func(g *runfile.Group) stats.Distribution { return g.TTFTMs }, reqTTFT)},
	"e2e": {stats: setOf(distStats...), kind: timeUnit,
		bind: simple(perRequest, func(g *runfile.Group) stats.Distribution { return g.E2EMs }, reqE2E)},
	"visible_ttft": {stats: setOf(distStats...), kind: timeUnit,
		bind: simple(perRequest, func(g *runfile.Group) stats.Distribution { return g.VisibleTTFTMs }, reqVisibleTTFT)},
	"gap": {stats: setOf(distStats...), kind: timeUnit,
		bind: simple(perGap, func(g *runfile.Group) stats.Distribution { return g.GapMs }, reqGaps)},
	"visible_gap": {stats: setOf(distStats...), kind: timeUnit,
		bind: simple(perGap, func(g *runfile.Group) stats.Distribution { return g.VisibleGapMs }, reqVisibleGaps)},
	"tpot_std": {stats: setOf(distStats...), kind: timeUnit,
		bind: simple(perRequest, func(g *runfile.Group) stats.Distribution { return g.TPOTStdMs }, reqGapStd)},
	"tpot": {stats: setOf(distStats...), kind: timeUnit, bind: func(stat string) binding {
		switch stat {
		case "mean", "min", "max", "count":
			return binding{src: perRequest, dist: func(g *runfile.Group) stats.Distribution { return g.TPOTMs }, req: reqTPOT}
		}
		// DESIGN: "TPOT std" and "TPOT pNN" are statistics of the gaps.
		return binding{src: perGap, dist: func(g *runfile.Group) stats.Distribution { return g.GapMs }, req: reqGaps}
	}},
	"errors": {stats: setOf("rate", "count"), kind: percentUnit,
		bind: func(string) binding { return binding{src: perError} }},
	"tokens_per_event": {stats: setOf("mean", "max"), kind: plainUnit,
		bind: func(string) binding {
			return binding{src: perRatio, req: func(q *runfile.Request, _ stats.Display) (float64, []float64, bool) {
				if q.ContentEvents == 0 {
					return 0, nil, false
				}
				return float64(q.OutputTokens) / float64(q.ContentEvents), nil, true
			}}
		}},
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

// statOf returns the named stat of xs (unsorted), as stats.Describe would.
func statOf(xs []float64, stat string) float64 {
	v, _ := stats.Describe(xs).Field(stat)
	return v
}

// measure returns the rule's value on group g (and the requests the group
// was built from, for the stats the group does not hold), and false when
// the scope has nothing to measure.
func measure(r Rule, g *runfile.Group, reqs []*runfile.Request, d stats.Display) (float64, bool) {
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
		best, ok := 0.0, false
		for _, q := range reqs {
			if !q.OK() {
				continue
			}
			if v, _, has := b.req(q, d); has && (!ok || v > best) {
				best, ok = v, true
			}
		}
		return best, ok
	}
	dist := b.dist(g)
	if r.Stat == "count" {
		return float64(dist.Count), true
	}
	if dist.Count == 0 {
		return 0, false
	}
	v, _ := dist.Field(r.Stat)
	return v, true
}
