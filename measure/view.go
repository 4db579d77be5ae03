package measure

import (
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stats"
)

// Counting says how a request's output tokens were counted, and so
// whether its per-token figures are exact.
type Counting string

// The ways of counting tokens, from the most exact.
const (
	// CountPerEvent: the number of tokens of every event is known (the
	// server's tokenpulse.tokens extension, or --tokenizer).
	CountPerEvent Counting = "per-event"
	// CountTotal: only the total is known (the server's usage). Where the
	// events carry more than BatchedAbove tokens on average, each event is
	// taken to carry the average; otherwise one each.
	CountTotal Counting = "total"
	// CountEvents: no count was given: one token per event is assumed.
	// Figures are per event; where the endpoint batches tokens
	// unannounced they are not per token.
	CountEvents Counting = "events"
)

// BatchedAbove is the tokens-per-event ratio above which a server's total
// count (usage) is read as batching. A ratio a little over 1 is normal for
// a one-token-per-event server: a token that completes no character (half
// of a UTF-8 sequence) or ends the answer carries no visible text and so
// no content event.
const BatchedAbove = 1.05

// View is one request's metrics, derived from its raw times as DESIGN.md
// defines them. Times are milliseconds. A metric that is undefined for
// the request (no token, one token) is absent: its Has flag is false or
// its slice empty.
type View struct {
	// Req is the request the view was derived from.
	Req *runfile.Request
	// OK is true when the request succeeded; a failed request's metrics
	// are in no sample.
	OK bool

	// HasTTFT is true when a content event arrived.
	HasTTFT bool
	// TTFTMs is t_token[0] − t_start.
	TTFTMs float64
	// E2EMs is t_last_event − t_start.
	E2EMs float64

	// Counting says how the token counts below were known.
	Counting Counting
	// OutputTokens is the request's output token count; Events its
	// content events; FirstEventTokens the tokens of the first content
	// event (fractional under CountTotal).
	OutputTokens     int
	Events           int
	FirstEventTokens float64

	// HasTPOT is true when TPOT is defined: at least one token after the
	// first event.
	HasTPOT bool
	// TPOTMs is the time per output token after the first event:
	// (t_last − t_first) / (n_tokens − tokens of the first event).
	TPOTMs float64
	// TokenIntervalsMs are the per-token intervals: each gap after the
	// first event divided by the tokens of the event that ended it, once
	// per token of that event (under CountTotal, once per event). Their
	// mean is TPOTMs; tpot.pNN and tpot.std are their percentiles and std.
	TokenIntervalsMs []float64
	// GapsMs are the gaps between content events, t_event[i] −
	// t_event[i−1]: per event, whatever each event carried. The largest is
	// the worst stall a reader sees.
	GapsMs []float64

	// VisibleTTFTMs and VisibleGapsMs are what a reader sees on the run's
	// display model (stats.Display): the frame that first showed text,
	// and the pauses between frames that showed new text.
	VisibleTTFTMs float64
	VisibleGapsMs []float64

	// HasServerSplit is true when the server gave its own account of the
	// request (tokenpulse's timings, llama-server's timings). Then
	// ServerTTFTMs is its queue + prefill (both servers count the first
	// token's computation in the prefill), and NetworkTTFTMs the rest of
	// TTFT: sending, the network, the server's HTTP path, reading.
	HasServerSplit bool
	ServerTTFTMs   float64
	NetworkTTFTMs  float64
	// HasServerTPOT is true when the server's decode time covers a token
	// after the first event; ServerTPOTMs is then its decode time per
	// token after the first event, the server's own TPOT.
	HasServerTPOT bool
	ServerTPOTMs  float64

	// Scheduled is true for a request of an open loop (it had a
	// scheduled send time). ScheduleLagMs is then how late it started:
	// t_start less the scheduled instant. TTFT and E2E stay from t_start;
	// ScheduleLagMs + TTFTMs is the TTFT from the scheduled instant.
	Scheduled     bool
	ScheduleLagMs float64

	// Painted is what a browser run measured of the request's paints.
	Painted Painted

	// HasVisible is true when an event showed text on the display
	// model: any content event when the request's thinking is shown, an
	// answer event when it is not (ShowThinking).
	HasVisible bool
	// Split is true when it is known which events were thinking (a
	// request with no reasoning event, or one whose record holds its
	// reasoning_runs); Reasoning and Answer are then the two phases'
	// figures, each over its own events.
	Split     bool
	Reasoning Phase
	Answer    Phase
}

// Display returns the run's display model (60 Hz and 16 ms when the run
// names none).
func Display(run *runfile.Run) stats.Display {
	d := stats.Display{FrameHz: run.Config.FrameHz, BatchNS: int64(run.Config.RenderBatchMS * 1e6)}
	if d.FrameHz == 0 {
		d = stats.DefaultDisplay
	}
	return d
}

// Of derives the view of q on display d, its thinking not shown.
func Of(q *runfile.Request, d stats.Display) View { return OfShown(q, d, false) }

// ViewOf derives the view of q, a request of run, on the run's display
// and with its category's choice of showing the thinking.
func ViewOf(run *runfile.Run, q *runfile.Request) View {
	return OfShown(q, Display(run), ShowsThinking(run, q.Category))
}

// OfShown derives the view of q on display d; showThinking says whether
// the app shows the thinking, and so whether thinking events are visible.
func OfShown(q *runfile.Request, d stats.Display, showThinking bool) View {
	v := View{Req: q, OK: q.OK(), E2EMs: stats.Millis(q.E2ENS), Events: len(q.TokenTimesNS)}
	v.OutputTokens, v.Counting = tokens(q)
	if q.ScheduledNS != nil {
		v.Scheduled = true
		v.ScheduleLagMs = stats.Millis(q.ScheduleLagNS)
	}
	v.Painted = paintedOf(q)
	times := q.TokenTimesNS
	if len(times) == 0 {
		return v
	}
	// TTFT is the first token's time, derived here like every figure
	// (runfile's validation holds a loaded ttft_ns to it).
	v.HasTTFT = true
	v.TTFTMs = stats.Millis(times[0])
	gaps := stats.Gaps(times)
	v.GapsMs = make([]float64, len(gaps))
	for i, g := range gaps {
		v.GapsMs[i] = stats.Millis(g)
	}

	// Tokens per event: exact, the average, or one. An exact count may be
	// 0 (a tokenizer's count for an event that completed no token): its
	// gap is carried into the next event's tokens.
	per := v.eventTokens
	v.FirstEventTokens = per(0)
	v.TokenIntervalsMs, v.TPOTMs, v.HasTPOT = perToken(times, per, v.Counting == CountPerEvent)

	if s := q.Server; s != nil && (s.QueueNS > 0 || s.PrefillNS > 0) {
		v.HasServerSplit = true
		v.ServerTTFTMs = stats.Millis(s.QueueNS + s.PrefillNS)
		v.NetworkTTFTMs = v.TTFTMs - v.ServerTTFTMs
		// Both servers time the decode from the first token (or piece)
		// they sent to the last: it covers the tokens after the first
		// event.
		if after := float64(s.DecodeTokens) - v.FirstEventTokens; after > 0 && s.DecodeNS > 0 {
			v.HasServerTPOT = true
			v.ServerTPOTMs = stats.Millis(s.DecodeNS) / after
		}
	}

	shown := times
	v.Split = splitKnown(q)
	if v.Split {
		answer := phaseEvents(q, false)
		v.Reasoning = phaseOf(times, phaseEvents(q, true), per, v.Counting == CountPerEvent)
		v.Answer = phaseOf(times, answer, per, v.Counting == CountPerEvent)
		if !showThinking {
			shown = pick(times, answer)
		}
	}
	if len(shown) == 0 {
		return v
	}
	v.HasVisible = true
	vis := d.Visible(shown)
	v.VisibleTTFTMs = stats.Millis(vis[0])
	for _, g := range d.VisibleGaps(shown) {
		v.VisibleGapsMs = append(v.VisibleGapsMs, stats.Millis(g))
	}
	return v
}

// perToken returns the per-token intervals of the events at times, each
// carrying per(i) tokens (exact: a count per event, an interval per
// token), their TPOT, and whether it is defined (a token after the first
// event). DESIGN.md, "token intervals" and "TPOT".
func perToken(times []int64, per func(int) float64, exact bool) (intervals []float64, tpot float64, ok bool) {
	after, pending := 0.0, 0.0
	for i := 1; i < len(times); i++ {
		k := per(i)
		after += k
		pending += stats.Millis(times[i] - times[i-1])
		switch {
		case k == 0:
			continue
		case exact && k > 1:
			for range int(k) {
				intervals = append(intervals, pending/k)
			}
		default:
			intervals = append(intervals, pending/k)
		}
		pending = 0
	}
	if after > 0 {
		return intervals, (stats.Millis(times[len(times)-1]-times[0]) - pending) / after, true
	}
	return intervals, 0, false
}

// eventTokens returns the tokens of content event i: its recorded count
// (which may be 0) under CountPerEvent, the request's average under
// CountTotal when its events batch tokens, else one.
func (v *View) eventTokens(i int) float64 {
	q := v.Req
	switch v.Counting {
	case CountPerEvent:
		if len(q.TokenCounts) == len(q.TokenTimesNS) {
			return float64(max(q.TokenCounts[i], 0))
		}
	case CountTotal:
		if avg := float64(v.OutputTokens) / float64(len(q.TokenTimesNS)); avg > BatchedAbove {
			return avg
		}
	}
	return 1
}

// CumulativeTokens returns, for each content event, the tokens received
// up to and including it, by the counting TPOT uses (see View.Counting):
// what a timeline's staircase climbs to.
func (v *View) CumulativeTokens() []float64 {
	out := make([]float64, v.Events)
	n := 0.0
	for i := range out {
		n += v.eventTokens(i)
		out[i] = n
	}
	return out
}

// tokens returns q's output token count and how it was known: per event
// when the record holds a count for every event (as recorded: bench keeps
// the server's or the tokenizer's counts, ones included, and runfile
// reads a file of before, which left ones out, with them), the total
// when the server's usage gave it, else the events.
func tokens(q *runfile.Request) (int, Counting) {
	events := len(q.TokenTimesNS)
	n := q.OutputTokens
	switch {
	case events > 0 && len(q.TokenCounts) == events:
		if n == 0 {
			for _, c := range q.TokenCounts {
				n += max(c, 0)
			}
		}
		return n, CountPerEvent
	case q.TokenSource == runfile.TokensUsage:
		return n, CountTotal
	}
	return max(n, events), CountEvents
}

// GapStdMs returns the sample std of the request's per-token intervals
// (tpot_std) and whether it is defined (two intervals or more).
func (v *View) GapStdMs() (float64, bool) {
	if len(v.TokenIntervalsMs) < 2 {
		return 0, false
	}
	return stats.Std(v.TokenIntervalsMs), true
}

// GapStat returns stat over the request's gaps between events, whether
// it succeeded or not (a failed request's timeline marks its stalls too),
// by the one per-request statistic ([View.Stat]); ok is false without
// gaps.
func (v *View) GapStat(stat string) (float64, bool) { return statOf(v.GapsMs, stat) }

// MaxGapMs returns the request's longest gap between events and whether
// it has one.
func (v *View) MaxGapMs() (float64, bool) {
	if len(v.GapsMs) == 0 {
		return 0, false
	}
	m := v.GapsMs[0]
	for _, g := range v.GapsMs[1:] {
		m = max(m, g)
	}
	return m, true
}

// TokensPerEvent returns the request's output tokens ÷ content events
// and whether it has events.
func (v *View) TokensPerEvent() (float64, bool) {
	if v.Events == 0 {
		return 0, false
	}
	return float64(v.OutputTokens) / float64(v.Events), true
}

// Views returns the views of the requests of run in scope s, on the run's
// display, in run order.
func Views(run *runfile.Run, s Scope) []View {
	d := Display(run)
	reqs := Requests(run, s)
	out := make([]View, len(reqs))
	for i, q := range reqs {
		out[i] = OfShown(q, d, ShowsThinking(run, q.Category))
	}
	return out
}
