package measure

import (
	"time"

	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stats"
)

// Metric names a sample a scope's figures are computed from.
type Metric string

// The metrics. A per-request metric gives at most one value per request;
// a pooled one gives many (one per gap or per token) and a scope's sample
// pools them over its requests.
const (
	// TTFT: per request, TTFT in ms.
	TTFT Metric = "ttft"
	// E2E: per request, t_last_event − t_start in ms.
	E2E Metric = "e2e"
	// VisibleTTFT: per request, the first frame that showed text.
	VisibleTTFT Metric = "visible_ttft"
	// TPOT: per request, the time per output token after the first event.
	TPOT Metric = "tpot"
	// TPOTStd: per request, the std of its per-token intervals.
	TPOTStd Metric = "tpot_std"
	// MaxGap: per request, its longest gap between events.
	MaxGap Metric = "max_gap"
	// TokensPerEvent: per request, output tokens ÷ content events.
	TokensPerEvent Metric = "tokens_per_event"
	// Gap: pooled, every gap between content events (per event).
	Gap Metric = "gap"
	// TokenInterval: pooled, every per-token interval (per token; the
	// same as Gap where each event carries one token).
	TokenInterval Metric = "token_interval"
	// VisibleGap: pooled, every pause between frames that showed text.
	VisibleGap Metric = "visible_gap"
	// TTFTNetwork: per request, TTFT less the server's own queue and
	// prefill, where the server gave them: the network's and client's
	// share.
	TTFTNetwork Metric = "ttft_network"
	// ServerTPOT: per request, the server's own decode time per token.
	ServerTPOT Metric = "server_tpot"
	// ScheduleLag: per request of an open loop, t_start less its
	// scheduled send time: how late the client sent it (timer and
	// scheduling delay, and the wait for a slot under the concurrency
	// ceiling). The one metric of a failed request too: it measures the
	// client's keeping of the schedule, not the target.
	ScheduleLag Metric = "schedule_lag"
	// ScheduledTTFT and ScheduledE2E: per request of an open loop, TTFT
	// and E2E from the scheduled send time (lag + TTFT, lag + E2E): what
	// a user arriving on the schedule waited, where a client that fell
	// behind would otherwise omit the delay it caused.
	ScheduledTTFT Metric = "scheduled_ttft"
	ScheduledE2E  Metric = "scheduled_e2e"
	// PromptTokens: per request, the prompt tokens the server counted
	// (usage.prompt_tokens), where it sent a count.
	PromptTokens Metric = "prompt_tokens"
)

// Pooled reports whether m gives many values per request.
func (m Metric) Pooled() bool {
	switch m {
	case Gap, TokenInterval, VisibleGap, PaintGap, RenderOverhead, LongFrame, ReasoningInterval, AnswerInterval:
		return true
	}
	return false
}

// Values returns the request's values of m: none when m is undefined for
// it or it failed, one for a per-request metric, all of them for a pooled
// one. The slice must not be modified.
func (v *View) Values(m Metric) []float64 {
	one := func(x float64, ok bool) []float64 {
		if !ok {
			return nil
		}
		return []float64{x}
	}
	if m == ScheduleLag {
		return one(v.ScheduleLagMs, v.Scheduled)
	}
	if !v.OK {
		return nil
	}
	if xs, ok := v.phaseValues(m); ok {
		return xs
	}
	switch m {
	case TTFT:
		return one(v.TTFTMs, v.HasTTFT)
	case E2E:
		return one(v.E2EMs, true)
	case VisibleTTFT:
		return one(v.VisibleTTFTMs, v.HasVisible)
	case TPOT:
		return one(v.TPOTMs, v.HasTPOT)
	case TPOTStd:
		return one(v.GapStdMs())
	case MaxGap:
		return one(v.MaxGapMs())
	case TokensPerEvent:
		return one(v.TokensPerEvent())
	case TTFTNetwork:
		return one(v.NetworkTTFTMs, v.HasServerSplit)
	case ServerTPOT:
		return one(v.ServerTPOTMs, v.HasServerTPOT)
	case ScheduledTTFT:
		return one(v.ScheduleLagMs+v.TTFTMs, v.Scheduled && v.HasTTFT)
	case ScheduledE2E:
		return one(v.ScheduleLagMs+v.E2EMs, v.Scheduled)
	case PromptTokens:
		return one(float64(v.Req.PromptTokens), v.Req.PromptTokens > 0)
	case Gap:
		return v.GapsMs
	case TokenInterval:
		return v.TokenIntervalsMs
	case VisibleGap:
		return v.VisibleGapsMs
	case PaintedTTFT, PaintGap, RenderOverhead, LongFrame:
		return v.Painted.values(m)
	}
	return nil
}

// Sample returns the scope sample of m over views: the values of every
// successful request, in order.
func Sample(views []View, m Metric) []float64 {
	var out []float64
	for i := range views {
		out = append(out, views[i].Values(m)...)
	}
	return out
}

// Stat returns stat ("p95", "max", "mean", ... as stats.Distribution
// names them) over the request's own values of m: the one per-request
// statistic that a threshold's offenders, goodput's objectives and
// compare's per-request samples read ("gap.p95" of a request is the p95
// of its own gaps). ok is false when the request has no value of m, or
// stat is not a distribution's.
func (v *View) Stat(m Metric, stat string) (float64, bool) { return statOf(v.Values(m), stat) }

// statOf is stat over one request's values xs (see [View.Stat]).
func statOf(xs []float64, stat string) (float64, bool) {
	if len(xs) == 0 {
		return 0, false
	}
	return stats.Describe(xs).Field(stat)
}

// PerRequest returns [View.Stat] of each view that has one, in order:
// one value per request.
func PerRequest(views []View, m Metric, stat string) []float64 {
	var out []float64
	for i := range views {
		if x, ok := views[i].Stat(m, stat); ok {
			out = append(out, x)
		}
	}
	return out
}

// Aggregate summarises views as DESIGN.md defines: TTFT, TPOT, E2E one
// value per successful request, gaps and per-token intervals pooled over
// the successful requests; failed requests count in Requests and Errors
// only.
func Aggregate(views []View) runfile.Group {
	g := runfile.Group{Requests: len(views)}
	events := 0
	counting := CountPerEvent
	for i := range views {
		v := &views[i]
		if !v.OK {
			g.Errors++
			if g.ErrorKinds == nil {
				g.ErrorKinds = map[string]int{}
			}
			g.ErrorKinds[string(v.Req.ErrorKind)]++
			continue
		}
		g.OutputTokens += v.OutputTokens
		events += v.Events
		if v.Events > 0 && weaker(v.Counting, counting) {
			counting = v.Counting
		}
	}
	if events > 0 {
		g.TokensPerEvent = float64(g.OutputTokens) / float64(events)
		g.Counting = string(counting)
	}
	thought := Thought(views)
	for _, m := range summarised {
		if phaseMetric(m) && !thought {
			continue // the answer is the whole stream: ttft, tpot
		}
		*Field(&g, m) = stats.Describe(Sample(views, m))
	}
	for i := range views {
		if views[i].Req.SlotWaitNS > 0 {
			g.SlotWaits++
		}
	}
	g.SpanS, g.RequestsPerS, g.OutputTokensPerS = Throughput(views)
	g.InputTokens, g.InputTokensPerS = InputThroughput(views, g.SpanS)
	g.ConcurrencyMean, g.ConcurrencyMax = Concurrency(views)
	return g
}

// summarised are the metrics whose distribution a summary group keeps.
var summarised = []Metric{TTFT, TPOT, TPOTStd, Gap, TokenInterval, E2E, VisibleTTFT, VisibleGap,
	TTFTNetwork, ServerTPOT, ScheduleLag, ScheduledTTFT, ScheduledE2E, PromptTokens,
	PaintedTTFT, PaintGap, RenderOverhead, LongFrame,
	ReasoningTTFT, AnswerTTFT, ReasoningSpan, AnswerSpan, ReasoningTPOT, AnswerTPOT, ReasoningInterval, AnswerInterval}

// Field returns the distribution of m that a summary group keeps, nil for
// a metric it keeps none of (max_gap, tokens_per_event: a group holds
// their per-request values only through its requests).
func Field(g *runfile.Group, m Metric) *stats.Distribution {
	switch m {
	case TTFT:
		return &g.TTFTMs
	case TPOT:
		return &g.TPOTMs
	case TPOTStd:
		return &g.TPOTStdMs
	case Gap:
		return &g.GapMs
	case TokenInterval:
		return &g.TokenIntervalMs
	case E2E:
		return &g.E2EMs
	case VisibleTTFT:
		return &g.VisibleTTFTMs
	case VisibleGap:
		return &g.VisibleGapMs
	case TTFTNetwork:
		return &g.TTFTNetworkMs
	case ServerTPOT:
		return &g.ServerTPOTMs
	case ScheduleLag:
		return &g.ScheduleLagMs
	case ScheduledTTFT:
		return &g.ScheduledTTFTMs
	case ScheduledE2E:
		return &g.ScheduledE2EMs
	case PaintedTTFT:
		return &g.PaintedTTFTMs
	case PaintGap:
		return &g.PaintGapMs
	case RenderOverhead:
		return &g.RenderOverheadMs
	case LongFrame:
		return &g.LongFrameMs
	case PromptTokens:
		return &g.PromptTokens
	case ReasoningTTFT:
		return &g.ReasoningTTFTMs
	case AnswerTTFT:
		return &g.AnswerTTFTMs
	case ReasoningSpan:
		return &g.ReasoningSpanMs
	case AnswerSpan:
		return &g.AnswerSpanMs
	case ReasoningTPOT:
		return &g.ReasoningTPOTMs
	case AnswerTPOT:
		return &g.AnswerTPOTMs
	case ReasoningInterval:
		return &g.ReasoningTokenIntervalMs
	case AnswerInterval:
		return &g.AnswerTokenIntervalMs
	}
	return nil
}

// Throughput returns the span of views in seconds, from the first
// request's start to the last one's end (its last event, or for a failed
// request the last instant it recorded), and over it the successful
// requests per second and their output tokens per second. All are 0 when
// the span is (no request, no start recorded).
func Throughput(views []View) (spanS, requestsPerS, tokensPerS float64) {
	var first, last time.Time
	ok, toks := 0, 0
	for i := range views {
		q := views[i].Req
		if q.StartedAt.IsZero() {
			continue
		}
		end := End(q)
		if first.IsZero() || q.StartedAt.Before(first) {
			first = q.StartedAt
		}
		if end.After(last) {
			last = end
		}
		if views[i].OK {
			ok++
			toks += views[i].OutputTokens
		}
	}
	if first.IsZero() || !last.After(first) {
		return 0, 0, 0
	}
	spanS = last.Sub(first).Seconds()
	return spanS, float64(ok) / spanS, float64(toks) / spanS
}

// weaker reports whether counting a is less exact than b.
func weaker(a, b Counting) bool {
	rank := map[Counting]int{CountPerEvent: 2, CountTotal: 1, CountEvents: 0}
	return rank[a] < rank[b]
}

// Group returns the aggregate of scope s of run.
func Group(run *runfile.Run, s Scope) runfile.Group { return Aggregate(Views(run, s)) }

// Summarize recomputes run.Summary from run.Requests: Overall and each
// category over the warm counted requests, Cold over the cold ones (nil
// when there is none).
func Summarize(run *runfile.Run) {
	run.Summary = runfile.Summary{Overall: Group(run, Overall), Categories: map[string]runfile.Group{}}
	for _, s := range Measured(run) {
		switch s.Kind {
		case KindCold:
			g := Group(run, s)
			run.Summary.Cold = &g
		case KindCategory:
			run.Summary.Categories[s.Category] = Group(run, s)
		}
	}
	run.Summary.Renders = renderGroups(run)
	for _, k := range Turns(run) {
		run.Summary.Turns = append(run.Summary.Turns, runfile.TurnGroup{Turn: k, Group: Group(run, Turn(k))})
	}
	run.Summary.Trace = TraceMatch(run)
}

// Batched reports whether g's requests carried several tokens per event on
// average, so that its gap figures (per event) are not per token.
func Batched(g runfile.Group) bool { return g.TokensPerEvent > BatchedAbove }

// PerEventOnly reports whether g's per-token figures rest on no token
// count at all: every event was taken as one token, which is right only
// if the endpoint sends one token per event.
func PerEventOnly(g runfile.Group) bool { return g.Counting == string(CountEvents) }
