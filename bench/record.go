package bench

import (
	"math"

	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stream"
)

// Record returns the run file's record of the request that t traced. Index, Category,
// PromptID, Cold and Warmup are left for the caller. The per-event token
// counts are recorded when the server sent them (t.CountsSent), all of
// them, however many each is.
func Record(t *stream.Trace) runfile.Request {
	r := runfile.Request{
		RequestID:       t.RequestID,
		Status:          t.Status,
		Retried:         t.Retried,
		StartedAt:       t.Start,
		SentNS:          int64(t.Sent),
		HeadersNS:       int64(t.Headers),
		FirstByteNS:     int64(t.FirstByte),
		TTFTNS:          int64(t.TTFT()),
		E2ENS:           int64(t.LastEvent),
		OutputTokens:    t.OutputTokens(),
		TokenSource:     "events",
		ContentEvents:   len(t.TokenTimes),
		ReasoningEvents: t.ReasoningEvents,
		ForeignEvents:   t.ForeignEvents,
		FinishReason:    t.FinishReason,
		TokenTimesNS:    make([]int64, len(t.TokenTimes)),
	}
	if t.Err != nil {
		r.Error = t.Err.Error()
		r.ErrorKind = t.Err.Kind
	}
	if t.Usage != nil {
		r.PromptTokens = t.Usage.PromptTokens
		if t.Usage.CompletionTokens > 0 {
			r.TokenSource = runfile.TokensUsage
		}
	}
	for i, at := range t.TokenTimes {
		r.TokenTimesNS[i] = int64(at)
	}
	// The counts are kept as the server sent them, ones included; where
	// it sent none they are not known, and are left out.
	if t.CountsSent && len(t.TokenCounts) == len(t.TokenTimes) {
		r.TokenCounts = append([]int(nil), t.TokenCounts...)
	}
	for _, s := range t.ServerTimes {
		if s != 0 {
			r.ServerTimesNS = append([]int64(nil), t.ServerTimes...)
			break
		}
	}
	r.Server = serverTimings(t)
	if len(t.ReasoningRuns) > 0 {
		r.ReasoningRuns = append([][2]int(nil), t.ReasoningRuns...)
	}
	return r
}

// serverTimings is the server's own account of the request: tokenpulse's
// timings when sent (the server spoken to, even when it is a gateway in
// front of llama.cpp), else llama-server's; nil when neither came. See
// [runfile.ServerTimings] for what each source's figures cover.
func serverTimings(t *stream.Trace) *runfile.ServerTimings {
	switch {
	case t.Timings != nil:
		return &runfile.ServerTimings{
			QueueNS:      t.Timings.QueueNS,
			PrefillNS:    t.Timings.PrefillNS,
			DecodeNS:     t.Timings.DecodeNS,
			PromptTokens: max(t.Timings.PromptTokens-t.Timings.CachedTokens, 0),
			CachedTokens: t.Timings.CachedTokens,
			DecodeTokens: t.Timings.OutputTokens,
			Source:       "tokenpulse",
		}
	case t.LlamaTimings != nil:
		lt := t.LlamaTimings
		return &runfile.ServerTimings{
			PrefillNS:    msToNS(lt.PromptMS),
			DecodeNS:     msToNS(lt.PredictedMS),
			PromptTokens: lt.PromptN,
			DecodeTokens: lt.PredictedN,
			Source:       "llama.cpp",
		}
	}
	return nil
}

// msToNS converts llama.cpp's float milliseconds to ns, to the nearest;
// what is not a plausible duration (negative, not a number) is 0.
func msToNS(ms float64) int64 {
	ns := math.Round(ms * 1e6)
	if !(ns >= 0 && ns < math.MaxInt64) {
		return 0
	}
	return int64(ns)
}
