// Package sse reads and writes server-sent events (the text/event-stream
// format of the WHATWG HTML standard), the transport of OpenAI-compatible
// streaming.
//
// The decoder is on tokenpulse's measurement hot path: it hands each event
// to the caller as soon as its terminating blank line is read, stamped
// with the instant of the Read that delivered that blank line
// ([RawEvent.At]), so the timestamp is the event's arrival whatever the
// caller does before asking for the next event. [Decoder.NextRaw]
// allocates nothing per event; [Decoder.Next] copies the data into a
// string.
//
//	d := sse.NewDecoder(resp.Body)
//	for {
//		ev, err := d.NextRaw()
//		if err != nil {
//			break // io.EOF: clean end; io.ErrUnexpectedEOF: cut inside an event
//		}
//		at := ev.At.Sub(start) // the event's arrival
//		if ev.Unterminated {
//			break // the stream ended before the event's blank line
//		}
//		if string(ev.Data) == "[DONE]" {
//			break
//		}
//		handle(ev.Data, at) // ev.Data is valid until the next call
//	}
//
// The encoder writes the same format; the stream contract's first frame is
// [Encoder.Retry](0), then one [Encoder.Encode] and [Encoder.Flush] per
// event.
//
// Encoder and decoder are not safe for concurrent use; use one per stream.
package sse
