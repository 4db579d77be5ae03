package server

import (
	"net/http"
	"strings"
	"time"

	"github.com/tokenpulse/tokenpulse/api"
	"github.com/tokenpulse/tokenpulse/sse"
)

// output writes one request's answer: a text/event-stream under the
// stream contract, or one JSON body at the end for a non-streamed request.
// Headers are written with the first piece (or at the end), so that a
// backend can still reject the request with a 4xx before any output,
// unless the backend checked the request beforehand (see [Checker]) and
// the server opened the stream at once.
type output struct {
	w            http.ResponseWriter
	flusher      http.Flusher // w's Flush; nil when w has none
	rc           *http.ResponseController
	stream       bool
	chat         bool
	includeUsage bool
	id           string // request id, on every event
	chunkID      string
	model        string
	created      int64
	received     time.Time
	timeout      time.Duration

	started bool
	text    strings.Builder // non-streamed answer

	// A stream's frames are built in pending, then written to w with one
	// Write and flushed: token events by tok, the others ("retry: 0", the
	// finish, usage, [DONE] and error events) by enc.
	pending frames
	enc     *sse.Encoder
	tok     tokenEvent
	renewed time.Time        // when the write deadline was last set
	now     func() time.Time // the clock renewDeadline reads: time.Now, or a test's
	err     error            // the first failed write: nothing is written after it
}

// frames is a stream's frames not yet written; [sse.Encoder] writes into
// it.
type frames []byte

// Write implements io.Writer.
func (f *frames) Write(p []byte) (int, error) {
	*f = append(*f, p...)
	return len(p), nil
}

func newOutput(w http.ResponseWriter, p *parsed, chat bool, timeout time.Duration) *output {
	o := &output{
		w: w, rc: http.NewResponseController(w), stream: p.stream, chat: chat,
		includeUsage: p.includeUsage, id: p.gen.ID, model: p.gen.Model,
		created: p.gen.Received.Unix(), received: p.gen.Received, timeout: timeout,
		now: time.Now,
	}
	if chat {
		o.chunkID = "chatcmpl-" + p.gen.ID
	} else {
		o.chunkID = "cmpl-" + p.gen.ID
	}
	return o
}

// begun reports whether a stream's headers are out (after which errors
// can only be sent as events).
func (o *output) begun() bool { return o.started && o.stream }

// open writes a stream's headers and "retry: 0" and flushes them to the
// socket at once.
func (o *output) open() error {
	if o.started {
		return nil
	}
	o.begin()
	if !o.stream {
		return nil
	}
	return o.flush(true)
}

// begin writes the stream's headers and its first frame, "retry: 0".
func (o *output) begin() {
	o.started = true
	if !o.stream {
		return
	}
	h := o.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	o.w.WriteHeader(http.StatusOK)
	o.flusher, _ = o.w.(http.Flusher)
	o.pending = make(frames, 0, 1024)
	o.enc = sse.NewEncoder(&o.pending)
	o.enc.Retry(0)
	o.enc.Flush()
	o.tok = newTokenEvent(o.id, o.chunkID, o.object(), o.created, o.model, o.chat)
}

// flush writes the pending frames to the client with one Write and
// flushes them to the socket, renewing the write deadline first when
// renew is set. After a failed write it writes nothing and returns that
// write's error, as sse.Encoder does.
func (o *output) flush(renew bool) error {
	defer func() { o.pending = o.pending[:0] }()
	if o.err != nil {
		return o.err
	}
	if renew {
		o.renewDeadline()
	}
	if _, err := o.w.Write(o.pending); err != nil {
		o.err = err
		return err
	}
	if o.flusher != nil {
		o.flusher.Flush()
	}
	return nil
}

// renewDeadline keeps the connection's write deadline at least timeout
// ahead of every write. Setting a deadline updates a runtime timer (about
// 0.3 µs here, on every token), so it is set timeout + timeout/16 ahead
// and renewed only once a sixteenth of timeout has passed since: a write
// may then wait between timeout and 17/16 of it.
func (o *output) renewDeadline() {
	now := o.now()
	if !o.renewed.IsZero() && now.Sub(o.renewed) < o.timeout/16 {
		return
	}
	o.renewed = now
	o.rc.SetWriteDeadline(o.renewed.Add(o.timeout + o.timeout/16))
}

func (o *output) object() string {
	if o.chat {
		return "chat.completion.chunk"
	}
	return "text_completion"
}

// choice builds the single choice of an event.
func (o *output) choice(text string, reasoning, first bool, finish *string) api.Choice {
	c := api.Choice{FinishReason: finish}
	if !o.chat {
		c.Text = &text
		return c
	}
	d := &api.Delta{}
	if first {
		d.Role = "assistant"
	}
	if reasoning {
		d.ReasoningContent = text
	} else {
		d.Content = text
	}
	c.Delta = d
	return c
}

// send writes one event and flushes it to the socket.
func (o *output) send(c *api.Chunk) error {
	buf, err := marshal(c)
	if err != nil {
		return err
	}
	defer bufPool.Put(buf)
	o.enc.Encode(sseEvent(o.id, buf.String()))
	o.enc.Flush()
	return o.flush(true)
}

// piece sends one piece of output (tokens index … index+n−1).
func (o *output) piece(p Piece, index, n int) error {
	if !o.started {
		o.begin()
	}
	if !o.stream {
		o.text.WriteString(p.Text)
		return nil
	}
	o.pending = o.tok.append(o.pending, p.Text, p.Reasoning, index == 0, p.At.UnixNano(), int64(p.At.Sub(o.received)), index, n)
	return o.flush(true)
}

// end finishes the answer: for a stream, the event with the finish reason
// and the server's timings, the usage event when asked for, and [DONE];
// otherwise the whole JSON body.
func (o *output) end(finish string, usage *api.Usage, t *api.Timings) {
	if !o.started {
		o.begin()
	}
	now := time.Now()
	ext := &api.Extension{ServerNS: now.UnixNano(), OffsetNS: int64(now.Sub(o.received)), Index: usage.CompletionTokens, Timings: t}
	if !o.stream {
		text := o.text.String()
		c := api.CompletionChoice{FinishReason: finish}
		if o.chat {
			c.Message = &api.Message{Role: "assistant", Content: api.Content(text)}
		} else {
			c.Text = &text
		}
		obj := "chat.completion"
		if !o.chat {
			obj = "text_completion"
		}
		writeJSON(o.w, http.StatusOK, api.Completion{
			ID: o.chunkID, Object: obj, Created: o.created, Model: o.model,
			Choices: []api.CompletionChoice{c}, Usage: *usage, Tokenpulse: ext,
		})
		return
	}
	last := &api.Chunk{
		ID: o.chunkID, Object: o.object(), Created: o.created, Model: o.model,
		Choices:    []api.Choice{o.choice("", false, usage.CompletionTokens == 0, &finish)},
		Tokenpulse: ext,
	}
	if o.send(last) != nil {
		return
	}
	if o.includeUsage {
		u := &api.Chunk{ID: o.chunkID, Object: o.object(), Created: o.created, Model: o.model, Choices: []api.Choice{}, Usage: usage}
		if o.send(u) != nil {
			return
		}
	}
	o.enc.Encode(sseEvent(o.id, "[DONE]"))
	o.enc.Flush()
	o.flush(true)
}

// fail ends a stream that has begun with e as an error event (OpenAI's
// shape: a data line holding {"error": ...}, the body the same failure
// gets before the stream: RequestError.answer); no [DONE] follows.
func (o *output) fail(e *RequestError) {
	if !o.stream {
		// Headers are out only for streams; a non-streamed answer is
		// written whole at the end, so this cannot happen.
		return
	}
	_, d := e.answer()
	buf, err := marshal(api.ErrorBody{Error: d})
	if err != nil {
		return
	}
	defer bufPool.Put(buf)
	o.enc.Encode(sseEvent(o.id, buf.String()))
	o.enc.Flush()
	// Renewed like any write: the backend may have been silent for longer
	// than the timeout before failing, and the error event must still go.
	o.flush(true)
}

func sseEvent(id, data string) sse.Event { return sse.Event{ID: id, Data: data, Retry: -1} }
