package runfile

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// The bounds every reader of a run holds it to (Load, Decode, ReadJournal:
// report, compare, the history). A run file is input like any other: a
// hand-edited or corrupted one must be refused, not averaged.
const (
	// MaxRequestNS bounds every time of a request (ns from its start):
	// 24 hours. No answer streams for a day; a figure past it is a
	// corrupted file (INT64_MAX read as 5,072,854,620,276 ms).
	MaxRequestNS = int64(24 * time.Hour)
	// MaxScheduleNS bounds an open loop's scheduled instants (ns from the
	// measured phase's start): 30 days.
	MaxScheduleNS = int64(30 * 24 * time.Hour)
	// MaxFileBytes is the largest run file or journal the readers take:
	// 512 MiB, checked before the file is read.
	MaxFileBytes = 512 << 20
	// MaxRequests is the most requests a run file or journal may hold:
	// 100,000, counted as they are decoded, so that a file of a million
	// small requests is refused before it takes gigabytes (README,
	// "report and compare": the memory this bound allows).
	MaxRequests = 100_000
)

// InvalidError says why a run was refused: the file, where in it (the
// first offending request, or the journal line), the field and what is
// wrong with it. Readers return it wrapped; errors.As finds it.
type InvalidError struct {
	// Path is the file ("" when decoded from bytes with no name).
	Path string
	// Where names the request ("request 3 (id tp-…)") or the journal line
	// ("line 7 (measure slot 3, id tp-…)"); "" for the file as a whole.
	Where string
	// Field is the JSON field ("ttft_ns", "token_times_ns[4]"); "" when
	// the fault is not one field's.
	Field string
	// Msg says what is wrong.
	Msg string
}

// Error names the file, the request and the field refused.
func (e *InvalidError) Error() string {
	s := "invalid run"
	if e.Path != "" {
		s = e.Path + ": " + s
	}
	if e.Where != "" {
		s += ": " + e.Where
	}
	if e.Field != "" {
		s += ": " + e.Field
	}
	return s + ": " + e.Msg
}

// fieldError is a request's fault before it is placed in a file.
type fieldError struct{ field, msg string }

func (e *fieldError) Error() string { return e.field + ": " + e.msg }

func fault(field, format string, args ...any) error {
	return &fieldError{field: field, msg: fmt.Sprintf(format, args...)}
}

// place turns a request's fault into an InvalidError naming path and where.
func place(err error, path, where string) error {
	var fe *fieldError
	if errors.As(err, &fe) {
		return &InvalidError{Path: path, Where: where, Field: fe.field, Msg: fe.msg}
	}
	var ie *InvalidError
	if errors.As(err, &ie) {
		ie.Path = path
		if ie.Where == "" {
			ie.Where = where
		}
		return ie
	}
	return &InvalidError{Path: path, Where: where, Msg: err.Error()}
}

// span checks that v, a time of field, is in [0, limit].
func span(field string, v, limit int64) error {
	switch {
	case v < 0:
		return fault(field, "%d is negative: times are ns after the request's start", v)
	case v > limit:
		return fault(field, "%d ns (%s) is beyond the %s a run file may hold", v, time.Duration(v), time.Duration(limit))
	}
	return nil
}

// Validate checks that q is a request tokenpulse could have measured: its
// times non-negative, at most MaxRequestNS and in order (start ≤ first
// byte ≤ first token, token times ascending, the last ≤ the end), TTFT
// the first token's time, and its counts consistent with its tokens. The
// error names the first offending field.
func (q *Request) Validate() error {
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"sent_ns", q.SentNS}, {"headers_ns", q.HeadersNS}, {"first_byte_ns", q.FirstByteNS},
		{"ttft_ns", q.TTFTNS}, {"e2e_ns", q.E2ENS}, {"schedule_lag_ns", q.ScheduleLagNS},
		{"slot_wait_ns", q.SlotWaitNS}, {"think_ns", q.ThinkNS},
	} {
		if err := span(f.name, f.v, MaxRequestNS); err != nil {
			return err
		}
	}
	if q.ScheduledNS != nil {
		if err := span("scheduled_ns", *q.ScheduledNS, MaxScheduleNS); err != nil {
			return err
		}
	}
	if q.SlotWaitNS > q.ScheduleLagNS {
		return fault("slot_wait_ns", "%d exceeds schedule_lag_ns %d, of which it is a part", q.SlotWaitNS, q.ScheduleLagNS)
	}
	if q.Status < 0 || q.Status > 999 {
		return fault("status", "%d is not an HTTP status", q.Status)
	}
	if q.Turn < 0 {
		return fault("turn", "%d is negative", q.Turn)
	}
	times := q.TokenTimesNS
	for i, t := range times {
		field := "token_times_ns[" + strconv.Itoa(i) + "]"
		if err := span(field, t, MaxRequestNS); err != nil {
			return err
		}
		if i > 0 && t < times[i-1] {
			return fault(field, "%d is before the previous token's %d: token times must ascend", t, times[i-1])
		}
	}
	if n := len(times); n > 0 {
		if q.TTFTNS != times[0] {
			return fault("ttft_ns", "%d differs from the first token's time %d", q.TTFTNS, times[0])
		}
		// A team's own page (render "page") dates a token by its
		// insertion when no network chunk preceded it: it may come before
		// the first chunk.
		if q.FirstByteNS > times[0] && (q.Paint == nil || q.Paint.Render != "page") {
			return fault("first_byte_ns", "%d is after the first token's %d", q.FirstByteNS, times[0])
		}
		if q.E2ENS < times[n-1] {
			return fault("e2e_ns", "%d is before the last token's %d", q.E2ENS, times[n-1])
		}
	} else if q.TTFTNS != 0 {
		return fault("ttft_ns", "%d with no token_times_ns: a request without tokens has no TTFT", q.TTFTNS)
	}
	if q.ContentEvents != len(times) {
		return fault("content_events", "%d, but token_times_ns holds %d", q.ContentEvents, len(times))
	}
	if q.ReasoningEvents < 0 || q.ReasoningEvents > q.ContentEvents {
		return fault("reasoning_events", "%d is outside 0..content_events (%d)", q.ReasoningEvents, q.ContentEvents)
	}
	if err := reasoningRuns(q); err != nil {
		return err
	}
	if q.ForeignEvents < 0 {
		return fault("foreign_events", "%d is negative", q.ForeignEvents)
	}
	if c := len(q.TokenCounts); c != 0 && c != len(times) {
		return fault("token_counts", "holds %d counts for %d token times", c, len(times))
	}
	sum := 0
	for i, k := range q.TokenCounts {
		if k < 0 {
			return fault("token_counts["+strconv.Itoa(i)+"]", "%d is negative", k)
		}
		sum += k
	}
	if q.TokenCounts == nil {
		sum = len(times)
	}
	if c := len(q.ServerTimesNS); c != 0 && c != len(times) {
		return fault("server_times_ns", "holds %d times for %d token times", c, len(times))
	}
	for i, t := range q.ServerTimesNS {
		if t < 0 {
			return fault("server_times_ns["+strconv.Itoa(i)+"]", "%d is negative", t)
		}
	}
	if q.OutputTokens < 0 {
		return fault("output_tokens", "%d is negative", q.OutputTokens)
	}
	if q.PromptTokens < 0 {
		return fault("prompt_tokens", "%d is negative", q.PromptTokens)
	}
	// Counted from the events, the total is the events' count; the
	// server's usage or a tokenizer may say otherwise.
	if q.TokenSource == TokensEvents && q.OutputTokens != sum {
		return fault("output_tokens", "%d, but its events (token_source \"events\") carry %d", q.OutputTokens, sum)
	}
	if s := q.Server; s != nil {
		for _, f := range []struct {
			name string
			v    int64
		}{{"server.queue_ns", s.QueueNS}, {"server.prefill_ns", s.PrefillNS}, {"server.decode_ns", s.DecodeNS}} {
			if err := span(f.name, f.v, MaxRequestNS); err != nil {
				return err
			}
		}
		if s.PromptTokens < 0 || s.DecodeTokens < 0 || s.CachedTokens < 0 {
			return fault("server", "negative token counts (%d prompt, %d cached, %d decode)", s.PromptTokens, s.CachedTokens, s.DecodeTokens)
		}
	}
	if p := q.Paint; p != nil {
		if err := p.validate(len(times)); err != nil {
			return err
		}
	}
	return nil
}

// validate checks a browser run's paint record of a request with events
// content events: insertion and paint times within bounds (-1: none).
func (p *Paint) validate(events int) error {
	for _, s := range []struct {
		name string
		ts   []int64
	}{{"paint.insert_ns", p.InsertNS}, {"paint.paint_ns", p.PaintNS}} {
		if len(s.ts) != 0 && len(s.ts) != events {
			return fault(s.name, "holds %d times for %d token times", len(s.ts), events)
		}
		for i, t := range s.ts {
			if t == -1 {
				continue
			}
			if err := span(s.name+"["+strconv.Itoa(i)+"]", t, MaxRequestNS); err != nil {
				return err
			}
		}
	}
	for i, f := range append(append([]LongFrame(nil), p.LongFrames...), p.LongTasks...) {
		field := "paint.long_frames[" + strconv.Itoa(i) + "]"
		if f.StartNS < -MaxRequestNS || f.StartNS > MaxRequestNS {
			return fault(field, "start %d ns is beyond %s of the request", f.StartNS, time.Duration(MaxRequestNS))
		}
		if err := span(field+".duration_ns", f.DurationNS, MaxRequestNS); err != nil {
			return err
		}
	}
	return nil
}

// requestWhere names request i of a run in an error.
func requestWhere(i int, q *Request) string {
	if q.RequestID == "" {
		return fmt.Sprintf("request %d", i)
	}
	return fmt.Sprintf("request %d (id %s)", i, q.RequestID)
}

// Validate checks that r is a run tokenpulse could have written: at
// most MaxRequests requests, each valid (Request.Validate), indexed by
// its place, ids unique, at most one cold request, no more measured
// draws than the run was configured for, and a scenario's follow-ups
// naming requests of the run. The error is an *InvalidError naming the
// first offending request and field (its Path left for the caller).
func (r *Run) Validate() error {
	if len(r.Requests) > MaxRequests {
		return &InvalidError{Msg: tooMany(len(r.Requests))}
	}
	for i := range r.Requests {
		q := &r.Requests[i]
		if err := q.Validate(); err != nil {
			return place(err, "", requestWhere(i, q))
		}
		if q.Index != i {
			return &InvalidError{Where: requestWhere(i, q), Field: "index", Msg: fmt.Sprintf("%d, but the request is at place %d: requests are indexed from 0 in order", q.Index, i)}
		}
	}
	if err := checkSet(r.Requests, r.Config, func(i int) string { return requestWhere(i, &r.Requests[i]) }); err != nil {
		return err
	}
	if sc := r.Scrape; sc != nil {
		if err := sc.validate(); err != nil {
			return err
		}
	}
	if s := r.Scenario; s != nil {
		for k, f := range s.FollowUps {
			for _, ix := range []int{f.Interrupted, f.FollowUp} {
				if ix < 0 || ix >= len(r.Requests) {
					return &InvalidError{Where: fmt.Sprintf("scenario follow-up %d", k), Msg: fmt.Sprintf("names request %d of %d", ix, len(r.Requests))}
				}
			}
		}
	}
	return nil
}

// tooMany is the refusal of a run of n requests.
func tooMany(n int) string {
	return fmt.Sprintf("%d requests or more: tokenpulse reads runs of at most %d (runfile.MaxRequests), which bounds the memory report and compare take; split the run into several", n, MaxRequests)
}

// checkSet checks the rules that span a run's requests, whatever their
// order: ids unique, one cold request at most, and the measured draws
// (single prompts and first turns, neither cold nor warm-up) no more
// than cfg.Requests (times the render strategies of a browser run) when
// the run was a plain sample of the suite. where names request i.
func checkSet(reqs []Request, cfg Config, where func(int) string) error {
	seen := make(map[string]int, len(reqs))
	cold, draws := 0, 0
	for i := range reqs {
		q := &reqs[i]
		if q.RequestID != "" {
			if j, ok := seen[q.RequestID]; ok {
				return &InvalidError{Where: where(i), Field: "request_id", Msg: fmt.Sprintf("repeats %s: %s", where(j), "every request has its own id")}
			}
			seen[q.RequestID] = i
		}
		switch {
		case q.Cold:
			if cold++; cold > 1 {
				return &InvalidError{Where: where(i), Field: "cold", Msg: "a second cold request: only the target's first request is cold"}
			}
		case q.Warmup:
		case q.Turn <= 1:
			draws++
			limit := cfg.Requests
			if cfg.Browser != nil && len(cfg.Browser.Renders) > 1 {
				limit *= len(cfg.Browser.Renders)
			}
			if cfg.Scenario == "" && cfg.Requests > 0 && draws > limit {
				return &InvalidError{Where: where(i), Msg: fmt.Sprintf("measured request %d of a run configured for %d (config.requests): more requests than were asked for", draws, limit)}
			}
		}
	}
	return nil
}

// reasoningRuns checks q's reasoning_runs: ascending, disjoint, non-empty
// ranges of its content events, holding no more events than
// reasoning_events counts.
func reasoningRuns(q *Request) error {
	end, n := 0, 0
	for i, r := range q.ReasoningRuns {
		field := "reasoning_runs[" + strconv.Itoa(i) + "]"
		if r[0] < end || r[1] <= r[0] || r[1] > q.ContentEvents {
			return fault(field, "[%d, %d) is not a range of content events after the previous run's end %d, within 0..content_events (%d)", r[0], r[1], end, q.ContentEvents)
		}
		end, n = r[1], n+r[1]-r[0]
	}
	if n > q.ReasoningEvents {
		return fault("reasoning_runs", "hold %d events, more than reasoning_events (%d)", n, q.ReasoningEvents)
	}
	return nil
}
