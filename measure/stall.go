package measure

import "github.com/tokenpulse/tokenpulse/stats"

// StallRule says when a gap of one request counts as a stall (DESIGN.md,
// "stall"): a gap longer than an absolute limit, or longer than Factor
// times the request's pace for each token of the read that the gap ends. The
// pace is the median token interval of the request's reads (events that
// arrived at one instant taken as one): where every event is read alone
// it is the median token interval (the median gap, one token per event),
// and where a client reads several events at once, so that most gaps are
// 0 ns and their median is 0, it is still the time per token.
type StallRule struct {
	// LimitMS is the absolute limit in ms; 0: none.
	LimitMS float64
	// Factor is the multiple of the pace per token over which a gap is a
	// stall; 0: no relative rule.
	Factor float64
	// PaceMs is the request's pace (see StallRule); 0 when no token came
	// after the first read, and then the relative rule does not apply.
	PaceMs float64
}

// Stall is a gap that a [StallRule] marks.
type Stall struct {
	// After is the index of the content event that ends the gap.
	After int
	// GapMs is the gap, t_event[After] − t_event[After−1].
	GapMs float64
	// Tokens are the tokens of the read the gap ends: the event that
	// ends it and the events at the same instant after it (at least one
	// is counted).
	Tokens float64
	// OverLimit is true when the gap is longer than the absolute limit,
	// OverPace when it is longer than Factor × PaceMs × Tokens.
	OverLimit, OverPace bool
}

// Relative reports whether the relative rule applies: a factor and a
// non-zero pace.
func (s StallRule) Relative() bool { return s.Factor > 0 && s.PaceMs > 0 }

// Judge returns whether a gap of gapMs that ends a read of tokens tokens
// is over the limit and over the pace rule.
func (s StallRule) Judge(gapMs, tokens float64) (overLimit, overPace bool) {
	overLimit = s.LimitMS > 0 && gapMs > s.LimitMS
	overPace = s.Relative() && gapMs > s.Factor*s.PaceMs*max(tokens, 1)
	return overLimit, overPace
}

// StallRule returns the stall rule of the request: limitMS (0: none) and
// factor (0: no relative rule) with the request's pace.
func (v *View) StallRule(limitMS, factor float64) StallRule {
	return StallRule{LimitMS: limitMS, Factor: factor, PaceMs: v.paceMs()}
}

// reads returns the request's reads: the index of each read's first
// content event and its tokens, the events after it at the same instant
// taken into it.
func (v *View) reads() (first []int, tokens []float64) {
	times := v.Req.TokenTimesNS
	for i, t := range times {
		if i > 0 && t == times[i-1] {
			tokens[len(tokens)-1] += v.eventTokens(i)
			continue
		}
		first = append(first, i)
		tokens = append(tokens, v.eventTokens(i))
	}
	return first, tokens
}

// paceMs returns the median token interval of the request's reads, by
// the token intervals' own rule (perToken) over the reads; 0 when no
// token came after the first read.
func (v *View) paceMs() float64 {
	first, tokens := v.reads()
	times := make([]int64, len(first))
	for r, i := range first {
		times[r] = v.Req.TokenTimesNS[i]
	}
	intervals, _, ok := perToken(times, func(r int) float64 { return tokens[r] }, v.Counting == CountPerEvent)
	if !ok || len(intervals) == 0 {
		return 0
	}
	p50, _ := stats.Describe(intervals).Field("p50")
	return p50
}

// Stalls returns the request's gaps that rule marks, in order, whether
// the request succeeded or not (a failed request's timeline marks its
// stalls too). A gap is judged with the tokens of the read it ends; the
// 0 ns gaps inside a read are none.
func (v *View) Stalls(rule StallRule) []Stall {
	var out []Stall
	first, tokens := v.reads()
	for r := 1; r < len(first); r++ {
		i := first[r]
		g := v.GapsMs[i-1]
		k := max(tokens[r], 1)
		lim, pace := rule.Judge(g, k)
		if lim || pace {
			out = append(out, Stall{After: i, GapMs: g, Tokens: k, OverLimit: lim, OverPace: pace})
		}
	}
	return out
}
