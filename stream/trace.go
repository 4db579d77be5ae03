package stream

import (
	"fmt"
	"time"

	"github.com/tokenpulse/tokenpulse/api"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// Kind classifies a failed request: the run file's error_kind, whose
// vocabulary package runfile owns.
type Kind = runfile.ErrorKind

// The kinds of failure, runfile's.
const (
	// KindHTTP: the server answered with an error status, or reported an
	// error object inside the stream.
	KindHTTP = runfile.ErrorHTTP
	// KindConnect: no response came (refused, reset, closed before any
	// response byte), or the request could not be built (an unknown API).
	KindConnect = runfile.ErrorConnect
	// KindCut: the stream ended without "[DONE]" or a finish reason.
	KindCut = runfile.ErrorCut
	// KindMalformed: an event's data was not the JSON of a chunk, or the
	// response was not an event stream.
	KindMalformed = runfile.ErrorMalformed
	// KindTimeout: the context's deadline (or the HTTP client's timeout)
	// passed.
	KindTimeout = runfile.ErrorTimeout
	// KindCancelled: the context was cancelled.
	KindCancelled = runfile.ErrorCancelled
	// KindOverflow: the response crossed one of the client's limits on
	// what one request may receive (events, content events, bytes, the
	// size of one event; see [Client.MaxEvents]); the message names it.
	KindOverflow = runfile.ErrorOverflow
)

// Error is the failure of one request.
type Error struct {
	Kind Kind
	// Status is the HTTP status when a response came (0 otherwise).
	Status int
	// Message says what went wrong; for KindHTTP it is the server's
	// OpenAI error message when it sent one.
	Message string
	// Err is the underlying error, if any.
	Err error
}

// Error gives the failure's kind and reason.
func (e *Error) Error() string {
	if e.Status != 0 && e.Kind == KindHTTP {
		return fmt.Sprintf("%s %d: %s", e.Kind, e.Status, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.Kind, e.Message)
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Trace is what one request became: its phase times and the arrival of
// every content event, as offsets from Start on the monotonic clock.
// A Trace is written by [Client.Do] and is plain data once returned.
type Trace struct {
	// RequestID is the id sent as X-Request-ID.
	RequestID string
	// EchoedID is the X-Request-ID the server echoed ("" when none).
	EchoedID string
	// Start is t_start: taken before the body is serialised. It holds a
	// monotonic reading; Start.UnixNano() + an offset is the wall-clock
	// instant of that offset.
	Start time.Time
	// Retried is true when the first attempt failed on a reused
	// connection before any response byte and the request was sent again
	// on a fresh one; Start and all offsets are then the retry's.
	Retried bool
	// Status is the HTTP status (0 when no response came).
	Status int
	// Err is nil on success.
	Err *Error

	// Conn is when a connection was obtained; Sent when the request was
	// fully written (httptrace WroteRequest); GotFirstByte when the first
	// response byte arrived (httptrace GotFirstResponseByte); Headers when
	// the bytes that completed the response headers arrived; FirstByte
	// when the first byte of the body arrived; LastEvent when the last
	// event (of any kind, "[DONE]" included) arrived. Zero when not
	// reached.
	//
	// "Arrived" is the arrival of the bytes of the connection read that
	// delivered them (see [NewTransport]): with the default transport, on
	// Linux the kernel's receive timestamp, elsewhere when that read
	// returned; with another transport, when the read of the response
	// (body) returned. So a first event sent with the headers shares
	// their instant.
	Conn, Sent, GotFirstByte, Headers, FirstByte, LastEvent time.Duration

	// TokenTimes is the arrival of each content event: the arrival (see
	// above) of the read that delivered its terminating blank line.
	// Events that one read delivered share its instant.
	TokenTimes []time.Duration
	// TokenCounts is, parallel to TokenTimes, the number of tokens each
	// event carried (tokenpulse.tokens; 1 when not sent).
	TokenCounts []int
	// ServerTimes is, parallel to TokenTimes, the server's emit time of
	// each event as Unix ns (tokenpulse.server_ns; 0 when not sent).
	ServerTimes []int64
	// TextEnds is, parallel to TokenTimes, the length in bytes of Text
	// once each content event's text was added: event i's text is
	// Text[TextEnds[i-1]:TextEnds[i]] (from 0 for the first). Reasoning
	// is not in Text, so a reasoning-only event's entry equals the one
	// before it (0 for a first event).
	TextEnds []int
	// ReasoningEvents counts content events that were reasoning deltas.
	ReasoningEvents int
	// ReasoningRuns are the runs of thinking events: each [from, to) of
	// indexes into TokenTimes of consecutive events that carried a
	// reasoning delta and no answer text (an event with both is the
	// answer's). Nil when there was none.
	ReasoningRuns [][2]int
	// ForeignEvents counts events dropped because their id named another
	// request (see [Client] for when ids are compared).
	ForeignEvents int
	// Events counts every event decoded, foreign ones included.
	Events int

	// Done is true when "[DONE]" was seen.
	Done bool
	// FinishReason is the last finish reason the server sent.
	FinishReason string
	// Usage is the server's usage, when it sent one.
	Usage *api.Usage
	// Timings is the server's own split (tokenpulse.timings), when sent.
	Timings *api.Timings
	// LlamaTimings is llama.cpp llama-server's own account of the request
	// (the "timings" object of its final chunk), when sent; the last one
	// sent counts.
	LlamaTimings *api.LlamaTimings
	// Text is the concatenated content (reasoning excluded).
	Text string
	// CountsSent is true when every content event carried the server's
	// tokenpulse extension, so that TokenCounts are the server's own
	// counts (1 where the extension leaves tokens out, as its contract
	// says) rather than one per event for want of any.
	CountsSent bool
}

// OK reports whether the request succeeded.
func (t *Trace) OK() bool { return t.Err == nil }

// ContentEvents is the number of content events.
func (t *Trace) ContentEvents() int { return len(t.TokenTimes) }

// OutputTokens is the server's completion token count when it sent usage,
// otherwise the tokens counted from the events.
func (t *Trace) OutputTokens() int {
	if t.Usage != nil && t.Usage.CompletionTokens > 0 {
		return t.Usage.CompletionTokens
	}
	return t.eventTokens()
}

func (t *Trace) eventTokens() int {
	n := 0
	for _, c := range t.TokenCounts {
		n += c
	}
	return n
}

// TokensPerEvent is output tokens ÷ content events (0 without events).
// Above 1 the endpoint batches tokens, and gaps are per event, not per
// token.
func (t *Trace) TokensPerEvent() float64 {
	if len(t.TokenTimes) == 0 {
		return 0
	}
	return float64(t.OutputTokens()) / float64(len(t.TokenTimes))
}

// TTFT is the arrival of the first content event (0 without one).
func (t *Trace) TTFT() time.Duration {
	if len(t.TokenTimes) == 0 {
		return 0
	}
	return t.TokenTimes[0]
}
