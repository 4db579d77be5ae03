// Package sse reads and writes server-sent events (the text/event-stream
// format of the WHATWG HTML standard), the transport of OpenAI-compatible
// streaming.
//
// The decoder is on tokenpulse's measurement hot path: it hands each event
// to the caller as soon as its terminating blank line is read, so the
// caller's timestamp is the event's arrival.
//
// Encoder and decoder are not safe for concurrent use; use one per stream.
package sse
