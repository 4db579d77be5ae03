// Package sse reads and writes server-sent events (the text/event-stream
// format of the WHATWG HTML standard), the transport of OpenAI-compatible
// streaming.
//
// The decoder is on tokenpulse's measurement hot path: it hands each event
// to the caller as soon as its terminating blank line is read, so the
// caller's timestamp is the event's arrival. It allocates nothing per line
// beyond the strings of the event it returns.
//
//	d := sse.NewDecoder(resp.Body)
//	for {
//		ev, err := d.Next()
//		at := time.Since(start) // the event's arrival: read it first
//		if err != nil {
//			break // io.EOF: clean end; io.ErrUnexpectedEOF: cut inside an event
//		}
//		if ev.Data == "[DONE]" {
//			break
//		}
//		handle(ev, at)
//	}
//
// The encoder writes the same format; the stream contract's first frame is
// [Encoder.Retry](0), then one [Encoder.Encode] and [Encoder.Flush] per
// event.
//
// Encoder and decoder are not safe for concurrent use; use one per stream.
package sse
