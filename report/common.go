package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tokenpulse/tokenpulse/gate"
	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stats"
)

// scopedGroup is a summary group with its scope name.
type scopedGroup struct {
	Scope string // "category:NAME", "overall" or "cold"
	Name  string // what a table shows: the category name, "overall", "cold"
	G     runfile.Group
}

// groups returns the categories in name order, then overall
// (measure.Groups).
func groups(r *runfile.Run) []scopedGroup {
	var out []scopedGroup
	for _, g := range measure.Groups(&r.Summary) {
		name := g.Scope.Category
		if name == "" {
			name = g.Scope.String()
		}
		out = append(out, scopedGroup{g.Scope.String(), name, g.Group})
	}
	return out
}

// counts is how many requests the run holds by kind.
type counts measure.Tally

// breakdown is the "(2 warm-up, 1 cold, 30 warm)" part of the header.
func (c counts) breakdown() string {
	s := fmt.Sprintf("%d warm-up, %d cold, %d warm", c.Warmup, c.Cold, c.Measured-c.Cold)
	if c.Aborted > 0 {
		s += fmt.Sprintf(", %d aborted on purpose", c.Aborted)
	}
	return s
}

func countRequests(r *runfile.Run) counts { return counts(measure.Count(r)) }

// ms formats a millisecond figure, "-" when the distribution is empty.
func ms(d stats.Distribution, v float64) string {
	if d.Count == 0 {
		return "-"
	}
	return fmtMS(v)
}

func fmtMS(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// fmtValue formats a verdict or experience value with its unit.
func fmtValue(v float64, unit string) string {
	switch unit {
	case "ms":
		return fmtMS(v) + " ms"
	case "%":
		return strconv.FormatFloat(v, 'f', 1, 64) + "%"
	case "":
		return strconv.FormatFloat(v, 'g', 4, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64) + " " + unit
}

// fmtLimit formats a limit briefly (120 ms, 5%): stats.FormatLimit.
func fmtLimit(v float64, unit string) string { return stats.FormatLimit(v, unit) }

// maxErrorGroups is how many error messages a report lists before "and
// N other messages".
const maxErrorGroups = 5

// errorLines is the run's failed requests grouped by message
// (measure.ErrorGroups), most frequent first, one line each: what every
// writer shows so that a dead target reads "connection refused ×20", not
// twenty offenders each "error: connect". Nil when nothing failed.
func errorLines(r *runfile.Run) []string {
	gs := measure.ErrorGroups(r)
	var out []string
	for i, g := range gs {
		if i == maxErrorGroups {
			rest := 0
			for _, g := range gs[i:] {
				rest += g.Count
			}
			out = append(out, fmt.Sprintf("and %d other messages (%s)", len(gs)-i, plural(rest, "request")))
			break
		}
		out = append(out, g.String())
	}
	return out
}

// offenderList formats up to n offenders: "complex-02 (req-0007) 300.0 ms".
func offenderList(r *runfile.Run, v runfile.Verdict, n int) string {
	var parts []string
	for i, o := range v.Offenders {
		if i == n {
			parts = append(parts, fmt.Sprintf("and %d more", len(v.Offenders)-n))
			break
		}
		parts = append(parts, fmt.Sprintf("%s (%s) %s", o.PromptID, o.RequestID, offenderValue(r, v, o)))
	}
	return strings.Join(parts, ", ")
}

// offenderValue is what an offender contributed: its value in the
// verdict's unit, or for a failed request the kind of its error.
func offenderValue(r *runfile.Run, v runfile.Verdict, o runfile.Offender) string {
	if q := findRequest(r, o); q != nil && !q.OK() {
		return "error: " + orDash(q.ErrorKind)
	}
	return fmtValue(o.Value, v.Unit)
}

// timelineFor is a request whose arrival timeline the reports draw, with
// why it is drawn.
type timelineFor struct {
	Req *runfile.Request
	// Rules are the crossed thresholds that named the request.
	Rules []string
	// LimitMS is the smallest limit of a crossed gap threshold that named
	// it, 0 when none.
	LimitMS float64
	// Worst is true when no threshold was crossed and this is the request
	// with the longest gap, shown for reference.
	Worst bool
	// Scrape is the run's scrape of the server's gauges (bench
	// --scrape), for what they said at the request's start; nil without.
	Scrape *runfile.Scrape
}

// timelines picks the requests whose timelines are drawn: every offender
// of a crossed threshold, in verdict order, at most opts.MaxTimelines; when
// nothing was crossed, the warm request with the longest gap.
func timelines(r *runfile.Run, o Options) []timelineFor {
	byIndex := map[int]int{}
	var out []timelineFor
	for _, v := range gate.Failed(r.Verdicts) {
		for _, off := range v.Offenders {
			q := findRequest(r, off)
			if q == nil || len(q.TokenTimesNS) == 0 {
				continue
			}
			k, ok := byIndex[q.Index]
			if !ok {
				if len(out) == o.maxTimelines() {
					continue
				}
				k = len(out)
				byIndex[q.Index] = k
				out = append(out, timelineFor{Req: q})
			}
			t := &out[k]
			if !slices.Contains(t.Rules, v.Rule) {
				t.Rules = append(t.Rules, v.Rule)
			}
			if v.Metric == "gap" && v.Unit == "ms" && v.Limit > 0 {
				if t.LimitMS == 0 || v.Limit < t.LimitMS {
					t.LimitMS = v.Limit
				}
			}
		}
	}
	if len(out) > 0 || len(gate.Failed(r.Verdicts)) > 0 {
		return out
	}
	var worst *runfile.Request
	worstGap := -1.0
	for _, v := range measure.Views(r, measure.Overall) {
		if g, ok := v.MaxGapMs(); ok && v.OK && g > worstGap {
			worst, worstGap = v.Req, g
		}
	}
	if worst == nil {
		return nil
	}
	return []timelineFor{{Req: worst, Worst: true}}
}

// findRequest returns the request an offender names: by index when it
// matches, otherwise by request id.
func findRequest(r *runfile.Run, o runfile.Offender) *runfile.Request {
	if o.Index >= 0 && o.Index < len(r.Requests) {
		q := &r.Requests[o.Index]
		if q.Index == o.Index && (o.RequestID == "" || q.RequestID == o.RequestID) {
			return q
		}
	}
	for i := range r.Requests {
		if o.RequestID != "" && r.Requests[i].RequestID == o.RequestID {
			return &r.Requests[i]
		}
	}
	return nil
}

// stall is a gap that a timeline marks: measure's stall with the times
// of its two events.
type stall struct {
	measure.Stall
	FromNS, ToNS int64
}

// ruleText says in words when a gap counts as a stall under s, or "no
// stall rule".
func ruleText(s measure.StallRule) string {
	var parts []string
	if s.LimitMS > 0 {
		parts = append(parts, "over "+fmtLimit(s.LimitMS, "ms"))
	}
	if s.Relative() {
		parts = append(parts, fmt.Sprintf("over %s× the pace (%s ms) per token it brought", strconv.FormatFloat(s.Factor, 'g', -1, 64), fmtMS(s.PaceMs)))
	}
	if len(parts) == 0 {
		return "no stall rule"
	}
	return "a stall is a gap " + strings.Join(parts, " or ")
}

// findStalls returns the rule for q and the gaps of q it marks as stalls
// (measure.View.Stalls).
func findStalls(q *runfile.Request, limitMS float64, o Options) (measure.StallRule, []stall) {
	if o.StallMS > 0 {
		limitMS = o.StallMS
	}
	v := measure.Of(q, stats.DefaultDisplay) // the display plays no part in gaps
	rule := v.StallRule(limitMS, o.stallFactor())
	var out []stall
	for _, s := range v.Stalls(rule) {
		out = append(out, stall{Stall: s, FromNS: q.TokenTimesNS[s.After-1], ToNS: q.TokenTimesNS[s.After]})
	}
	return rule, out
}

// deviceLine describes the device in one line.
func deviceLine(d runfile.Device) string {
	var parts []string
	if d.Label != "" {
		parts = append(parts, d.Label)
	}
	if d.Hostname != "" {
		parts = append(parts, d.Hostname)
	}
	var sys []string
	if d.OS != "" || d.Arch != "" {
		sys = append(sys, d.OS+"/"+d.Arch)
	}
	if d.CPUCores > 0 {
		sys = append(sys, fmt.Sprintf("%d cores", d.CPUCores))
	}
	if d.CPUModel != "" {
		sys = append(sys, d.CPUModel)
	}
	if d.MemoryBytes > 0 {
		sys = append(sys, fmtBytes(d.MemoryBytes))
	}
	s := strings.Join(parts, " ")
	if len(sys) > 0 {
		s += " (" + strings.Join(sys, ", ") + ")"
	}
	if d.Tier != "" {
		s += ", tier " + d.Tier
	}
	return strings.TrimSpace(s)
}

func fmtBytes(b uint64) string {
	const gib = 1 << 30
	if b >= gib {
		return strconv.FormatFloat(float64(b)/gib, 'f', 1, 64) + " GiB"
	}
	return strconv.FormatFloat(float64(b)/(1<<20), 'f', 0, 64) + " MiB"
}

// orDash returns s, or "-" when it is empty.
func orDash[S ~string](s S) string {
	if s == "" {
		return "-"
	}
	return string(s)
}

// serverAccount states the server's own account of the warm requests
// beside the client's (measure.ServerAccount); "" when no server gave
// one.
func serverAccount(r *runfile.Run) string {
	a, ok := measure.ServerAccount(r, measure.Overall)
	if !ok {
		return ""
	}
	s := fmt.Sprintf("server's own account (%s, %d warm requests): TTFT mean %s ms = server %s ms (queue and prefill) + network and client %s ms (%.0f%%)",
		a.Source, a.Requests, fmtMS(a.TTFTMs), fmtMS(a.ServerTTFTMs), fmtMS(a.NetworkTTFTMs), 100*a.NetworkTTFTMs/a.TTFTMs)
	if a.TPOTRequests > 0 {
		s += fmt.Sprintf("; TPOT mean: client %s ms, server %s ms (%+.1f%%)", fmtMS2(a.ClientTPOTMs), fmtMS2(a.ServerTPOTMs), 100*(a.ClientTPOTMs-a.ServerTPOTMs)/a.ServerTPOTMs)
	}
	if a.CachedTokens > 0 {
		s += fmt.Sprintf("; prompt cache: %.0f%% of prompt tokens reused, not prefilled", 100*float64(a.CachedTokens)/float64(a.PromptTokens))
	}
	return s
}

func fmtMS2(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// loadLine states the overall scope's throughput and, for an open loop,
// how well the client kept its schedule: "" when the run measured no
// span.
func loadLine(r *runfile.Run) string {
	o := r.Summary.Overall
	if o.SpanS <= 0 {
		return ""
	}
	input := ""
	if o.InputTokensPerS > 0 {
		input = fmt.Sprintf(", %.1f input tokens/s", o.InputTokensPerS)
	}
	s := fmt.Sprintf("throughput (warm): %.2f requests/s, %.1f output tokens/s%s over %.1f s", o.RequestsPerS, o.OutputTokensPerS, input, o.SpanS)
	if o.ConcurrencyMax > 0 {
		s += fmt.Sprintf(", %.2f in flight on average (peak %d)", o.ConcurrencyMean, o.ConcurrencyMax)
	}
	if d := o.ScheduleLagMs; d.Count > 0 && r.Config.Arrival == runfile.ArrivalTrace {
		s += fmt.Sprintf("; trace arrivals: schedule lag p50 %s ms, p99 %s ms, max %s ms; TTFT from the due time p95 %s ms",
			fmtMS(d.P50), fmtMS(d.P99), fmtMS(d.Max), ms(o.ScheduledTTFTMs, o.ScheduledTTFTMs.P95))
	} else if d.Count > 0 {
		s += fmt.Sprintf("; %s arrivals at %s/s: schedule lag p50 %s ms, p99 %s ms, max %s ms; TTFT from the due time p95 %s ms",
			r.Config.Arrival, strconv.FormatFloat(r.Config.Rate, 'g', -1, 64), fmtMS(d.P50), fmtMS(d.P99), fmtMS(d.Max), ms(o.ScheduledTTFTMs, o.ScheduledTTFTMs.P95))
		if o.SlotWaits > 0 {
			s += fmt.Sprintf("; %d requests waited for a slot (-c)", o.SlotWaits)
		}
	}
	return s
}

// traceLine states how closely a trace replay kept its trace: the
// arrival match (KS distance of the inter-arrivals) and the length
// match (answers at their recorded length).
func traceLine(r *runfile.Run) string {
	t := r.Summary.Trace
	if t == nil {
		return ""
	}
	s := "trace replay"
	if c := r.Config.Trace; c != nil {
		s += fmt.Sprintf(" of %s (%s, %d requests, speed ×%s, prompts in %s)", c.File, c.Format, c.Entries, strconv.FormatFloat(c.Speed, 'g', -1, 64), c.Vocabulary)
	}
	return s + fmt.Sprintf(": arrival match KS %.3f over %d inter-arrivals (recorded vs achieved); length match %d of %d answers at their recorded length",
		t.KS, max(t.Arrivals-1, 0), t.AtLength, t.Answered)
}
