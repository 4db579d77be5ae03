// Package stream is tokenpulse's streaming client: it sends one request to
// an OpenAI-compatible endpoint (chat or completions, stream: true) and
// turns it into a [Trace], the timestamps of DESIGN.md.
//
// All times are offsets from the request's start on Go's monotonic clock.
// The start is taken before the body is serialised; the connection and
// the request's end come from net/http/httptrace. Everything received is
// timed by the arrival of the bytes that completed it: the first response
// byte, the headers, the first body byte, and each event (its terminating
// blank line). The default transport ([NewTransport]) notes, for every
// read of the connection, when its bytes arrived: on Linux the kernel's
// receive timestamp, carried over to the monotonic clock, so that neither
// the reading goroutine's wake-up, nor the transport's hand-over of the
// response, nor a pause of the Go runtime enters a timestamp; elsewhere
// the instant the read returned. With another transport, events are timed
// when the read of the body that delivered them returns
// ([sse.RawEvent.At]). JSON is parsed after the stamp, without allocating
// per event.
//
// A content event is one whose delta carries non-empty content (or text,
// for completions) or a reasoning delta (reasoning_content, reasoning;
// counted as tokens and flagged). A role-only or empty delta, and a
// usage-only chunk with empty choices, are not tokens. When an event says
// it carries several tokens (tokenpulse.tokens), or the server's usage
// counts more tokens than there were events, the trace's TokensPerEvent
// is above 1 and gaps are per event.
//
// Failures are data: [Client.Do] never panics on what a server sends and
// always returns a trace; a failed one has Err set with a [Kind] (http,
// connect, cut, malformed, timeout, cancelled, overflow). A request that
// fails on a reused keep-alive connection before any response byte was
// never processed by the server; it is sent again once on a fresh
// connection.
//
// Bounds. What one request may receive is bounded (content events, all
// events, bytes, one event's size; see [Client.MaxEvents]), well above
// what the request asked for, so that a server that never stops cannot
// make the client's memory and the run file follow it: past a limit the
// request fails as overflow, keeping what was measured up to it.
//
// Example:
//
//	c := &stream.Client{BaseURL: "http://127.0.0.1:8080", Model: "mock"}
//	tr := c.Do(ctx, stream.Request{Prompt: "Why is the sky blue?", MaxTokens: 64})
//	if tr.OK() {
//		fmt.Println("TTFT", tr.TTFT(), "tokens", tr.OutputTokens())
//	}
//	rec := bench.Record(tr) // the run file's record of the request
//
// The package knows nothing of the run file: turning a Trace into a run
// file's request is the caller's (package bench does it).
//
// A Client is safe for concurrent use once configured; a Trace is plain
// data owned by the caller.
package stream
