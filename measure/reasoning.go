package measure

import (
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stats"
)

// The metrics of a reasoning model's two phases (DESIGN.md, "Reasoning
// models"). Each is computed over the phase's own events, as TTFT, TPOT
// and the token intervals are over all of them.
const (
	// ReasoningTTFT and AnswerTTFT: per request, the arrival of the
	// first thinking event and of the first answer event, from t_start.
	ReasoningTTFT Metric = "reasoning_ttft"
	AnswerTTFT    Metric = "answer_ttft"
	// ReasoningSpan and AnswerSpan: per request that thought, the last
	// event of the phase less its first.
	ReasoningSpan Metric = "reasoning_span"
	AnswerSpan    Metric = "answer_span"
	// ReasoningTPOT and AnswerTPOT: per request, the phase's span ÷ its
	// tokens after its first event.
	ReasoningTPOT Metric = "reasoning_tpot"
	AnswerTPOT    Metric = "answer_tpot"
	// ReasoningInterval and AnswerInterval: pooled, the per-token
	// intervals within the phase (reasoning_tpot.pNN, answer_tpot.pNN).
	ReasoningInterval Metric = "reasoning_token_interval"
	AnswerInterval    Metric = "answer_token_interval"
)

// A request that did not think has one phase, its answer: its
// answer_ttft, answer_tpot and answer intervals are its ttft, tpot and
// token intervals; reasoning_* and answer_span are figures of requests
// that thought only.

// Phase is what one phase of a request (its thinking, or its answer)
// gave, over the phase's own events. Times are ms.
type Phase struct {
	// Events is the phase's content events; Tokens their tokens.
	Events int
	Tokens float64
	// FirstMs is the arrival of the phase's first event from t_start;
	// SpanMs its last event less its first. Both need Events > 0.
	FirstMs float64
	SpanMs  float64
	// HasTPOT is true when a token came after the phase's first event;
	// TPOTMs is then SpanMs ÷ those tokens, and TokenIntervalsMs its
	// per-token intervals.
	HasTPOT          bool
	TPOTMs           float64
	TokenIntervalsMs []float64
}

// values returns the phase's values of the phase metric m (named by its
// reasoning twin).
func (p *Phase) values(m Metric) []float64 {
	if p.Events == 0 {
		return nil
	}
	switch m {
	case ReasoningTTFT:
		return []float64{p.FirstMs}
	case ReasoningSpan:
		return []float64{p.SpanMs}
	case ReasoningTPOT:
		if p.HasTPOT {
			return []float64{p.TPOTMs}
		}
	case ReasoningInterval:
		return p.TokenIntervalsMs
	}
	return nil
}

// phaseMetric reports whether m is one of a phase's metrics.
func phaseMetric(m Metric) bool {
	switch m {
	case ReasoningTTFT, ReasoningSpan, ReasoningTPOT, ReasoningInterval,
		AnswerTTFT, AnswerSpan, AnswerTPOT, AnswerInterval:
		return true
	}
	return false
}

// phaseValues returns v's values of a phase metric, and whether m is one.
func (v *View) phaseValues(m Metric) ([]float64, bool) {
	if !phaseMetric(m) {
		return nil, false
	}
	if !v.Split {
		return nil, true
	}
	switch m {
	case ReasoningTTFT, ReasoningSpan, ReasoningTPOT, ReasoningInterval:
		return v.Reasoning.values(m), true
	case AnswerTTFT:
		return v.Answer.values(ReasoningTTFT), true
	case AnswerSpan:
		if v.Reasoning.Events == 0 {
			return nil, true // no thinking: the span of no phase
		}
		return v.Answer.values(ReasoningSpan), true
	case AnswerTPOT:
		return v.Answer.values(ReasoningTPOT), true
	case AnswerInterval:
		return v.Answer.values(ReasoningInterval), true
	}
	return nil, true
}

// splitKnown reports whether it is known which of q's events were
// thinking: none were (no reasoning event), or its record says which. A
// run file written before reasoning_runs existed counts reasoning events
// without saying which they were.
func splitKnown(q *runfile.Request) bool {
	return q.ReasoningEvents == 0 || len(q.ReasoningRuns) > 0
}

// phaseEvents returns the indexes of q's thinking events (reasoning) or
// of its answer events (!reasoning), in order.
func phaseEvents(q *runfile.Request, reasoning bool) []int {
	var out []int
	next := 0
	for i := range q.TokenTimesNS {
		for next < len(q.ReasoningRuns) && q.ReasoningRuns[next][1] <= i {
			next++
		}
		in := next < len(q.ReasoningRuns) && q.ReasoningRuns[next][0] <= i
		if in == reasoning {
			out = append(out, i)
		}
	}
	return out
}

// pick returns times at the indexes idx.
func pick(times []int64, idx []int) []int64 {
	out := make([]int64, len(idx))
	for j, i := range idx {
		out[j] = times[i]
	}
	return out
}

// phaseOf derives the phase of the events at idx of times, event i
// carrying per(i) tokens.
func phaseOf(times []int64, idx []int, per func(int) float64, exact bool) Phase {
	p := Phase{Events: len(idx)}
	if len(idx) == 0 {
		return p
	}
	ts := pick(times, idx)
	sub := func(j int) float64 { return per(idx[j]) }
	for j := range idx {
		p.Tokens += sub(j)
	}
	p.FirstMs = stats.Millis(ts[0])
	p.SpanMs = stats.Millis(ts[len(ts)-1] - ts[0])
	p.TokenIntervalsMs, p.TPOTMs, p.HasTPOT = perToken(ts, sub, exact)
	return p
}

// ShowsThinking reports whether the app of run shows the thinking of a
// request of category: the suite's choice (show_thinking), recorded in
// the run's config; not shown when it says nothing.
func ShowsThinking(run *runfile.Run, category string) bool {
	return run.Config.ShowThinking[category]
}

// Reasoned reports whether g's requests had a thinking phase; without
// one g keeps no phase figures, the answer being the whole stream.
func Reasoned(g runfile.Group) bool { return g.ReasoningTTFTMs.Count > 0 }

// PhaseFallback returns, for a phase metric, the metric whose figures a
// group with no thinking phase (Reasoned false) holds instead: the
// answer's are the whole stream's (answer_ttft is ttft, answer_tpot
// tpot, answer_token_interval token_interval); the reasoning ones and
// the spans have none ("" ).
func PhaseFallback(m Metric) Metric {
	switch m {
	case AnswerTTFT:
		return TTFT
	case AnswerTPOT:
		return TPOT
	case AnswerInterval:
		return TokenInterval
	}
	return ""
}

// Thought reports whether any of views is a request that thought (a
// reasoning model's, with a first thinking token): only then do a scope's
// figures split into a thinking and an answer phase.
func Thought(views []View) bool { return len(Sample(views, ReasoningTTFT)) > 0 }
