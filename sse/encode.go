package sse

import (
	"bufio"
	"errors"
	"io"
	"strconv"
	"strings"
)

// Event is one server-sent event.
type Event struct {
	// ID is the event's id field ("" = none sent).
	ID string
	// Type is the event field ("" = the default "message").
	Type string
	// Data is the data, its lines joined with "\n".
	Data string
	// Retry is the reconnection time in ms from a retry field; -1 when the
	// event had none. The encoder writes it only when > 0; use
	// [Encoder.Retry] for the stream contract's "retry: 0".
	Retry int
}

// Encoder writes events to a stream in the text/event-stream format. It
// is not safe for concurrent use.
type Encoder struct {
	w   *bufio.Writer
	f   interface{ Flush() }
	err error
}

// NewEncoder returns an encoder writing to w. When w has a Flush method
// (http.ResponseWriter does), Flush calls it after the buffer is written,
// so each event reaches the network at once.
func NewEncoder(w io.Writer) *Encoder {
	e := &Encoder{w: bufio.NewWriterSize(w, 4096)}
	if f, ok := w.(interface{ Flush() }); ok {
		e.f = f
	}
	return e
}

// ErrBadField is returned for an id or event type with a line break, which
// the format cannot carry.
var ErrBadField = errors.New("sse: field contains a line break")

// Retry writes a "retry:" field on its own (the stream contract's first
// frame is "retry: 0").
func (e *Encoder) Retry(ms int) error {
	if e.err != nil {
		return e.err
	}
	e.w.WriteString("retry: ")
	e.w.WriteString(strconv.Itoa(ms))
	e.w.WriteString("\n\n")
	return nil
}

// Comment writes a comment line (": text"), used as a keep-alive.
func (e *Encoder) Comment(text string) error {
	if e.err != nil {
		return e.err
	}
	for _, line := range strings.Split(text, "\n") {
		e.w.WriteString(": ")
		e.w.WriteString(strings.TrimSuffix(line, "\r"))
		e.w.WriteByte('\n')
	}
	e.w.WriteByte('\n')
	return nil
}

// Encode writes ev: id, event, retry (when ≥ 0) and one data line per line
// of Data, then the blank line that ends it. It buffers; call Flush.
func (e *Encoder) Encode(ev Event) error {
	if e.err != nil {
		return e.err
	}
	if strings.ContainsAny(ev.ID, "\r\n\x00") || strings.ContainsAny(ev.Type, "\r\n") {
		return ErrBadField
	}
	if ev.ID != "" {
		e.w.WriteString("id: ")
		e.w.WriteString(ev.ID)
		e.w.WriteByte('\n')
	}
	if ev.Type != "" {
		e.w.WriteString("event: ")
		e.w.WriteString(ev.Type)
		e.w.WriteByte('\n')
	}
	if ev.Retry > 0 {
		e.w.WriteString("retry: ")
		e.w.WriteString(strconv.Itoa(ev.Retry))
		e.w.WriteByte('\n')
	}
	data := ev.Data
	for {
		i := strings.IndexAny(data, "\r\n")
		if i < 0 {
			break
		}
		e.w.WriteString("data: ")
		e.w.WriteString(data[:i])
		e.w.WriteByte('\n')
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
	e.w.WriteString("data: ")
	e.w.WriteString(data)
	e.w.WriteString("\n\n")
	return nil
}

// Flush writes buffered events to the underlying writer and flushes it.
func (e *Encoder) Flush() error {
	if e.err != nil {
		return e.err
	}
	if err := e.w.Flush(); err != nil {
		e.err = err
		return err
	}
	if e.f != nil {
		e.f.Flush()
	}
	return nil
}
