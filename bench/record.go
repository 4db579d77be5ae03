package bench

import (
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stream"
)

// Record returns the run file's record of the request that t traced. Index, Category,
// PromptID, Cold and Warmup are left for the caller.
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
		r.ErrorKind = string(t.Err.Kind)
	}
	if t.Usage != nil {
		r.PromptTokens = t.Usage.PromptTokens
		if t.Usage.CompletionTokens > 0 {
			r.TokenSource = "usage"
		}
	}
	for i, at := range t.TokenTimes {
		r.TokenTimesNS[i] = int64(at)
	}
	for _, c := range t.TokenCounts {
		if c != 1 {
			r.TokenCounts = append([]int(nil), t.TokenCounts...)
			break
		}
	}
	for _, s := range t.ServerTimes {
		if s != 0 {
			r.ServerTimesNS = append([]int64(nil), t.ServerTimes...)
			break
		}
	}
	if t.Timings != nil {
		r.Server = &runfile.ServerTimings{
			QueueNS:   t.Timings.QueueNS,
			PrefillNS: t.Timings.PrefillNS,
			DecodeNS:  t.Timings.DecodeNS,
		}
	}
	return r
}
