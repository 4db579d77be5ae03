package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"
)

// DefaultMaxEventSize is the largest event a [Decoder] accepts unless
// told otherwise: 16 MiB.
const DefaultMaxEventSize = 16 << 20

// ErrEventTooLarge is returned (wrapped) when one event, or one line of it,
// exceeds the decoder's maximum size.
var ErrEventTooLarge = errors.New("sse: event too large")

const initialBufSize = 8 << 10

var bom = []byte("\xEF\xBB\xBF")

// Decoder reads events from a text/event-stream, following the WHATWG
// "interpreting an event stream" rules:
//
//   - lines end with CRLF, LF or CR; a CR that ends one read and an LF that
//     starts the next are one line end;
//   - a UTF-8 byte order mark at the very start is skipped;
//   - a line starting with ':' is a comment and is ignored;
//   - a line with a colon is a field: the name is what precedes the first
//     colon, the value what follows it, less one leading space; a line
//     without a colon is a field with an empty value;
//   - "data" appends its value and a line feed to the data buffer, "event"
//     sets the type, "id" sets the id unless the value holds a NUL, "retry"
//     sets the reconnection time when the value is ASCII digits only; other
//     fields are ignored;
//   - a blank line dispatches the event, less the data buffer's last line
//     feed, unless no data field was seen since the last dispatch (an
//     id-only or retry-only block, such as the stream contract's first
//     "retry: 0" frame, is not an event; its id and retry are still kept,
//     see [Decoder.LastEventID] and [Decoder.Retry]).
//
// The end of the stream. WHATWG discards an event that the stream's end
// cuts short. Real servers sometimes end with "data: [DONE]" and no blank
// line, and a measurement must not lose it, so this decoder departs from
// the standard on purpose: at the end of the input a last, unterminated
// line is read as a line, and an event that has data is returned with a
// nil error (flagged [RawEvent.Unterminated] by [Decoder.NextRaw], so a
// caller can still treat it as the standard does); the call after it
// returns [io.ErrUnexpectedEOF]. A stream that ends in the middle of a
// block without data also gives
// [io.ErrUnexpectedEOF]; a stream that ends after a blank line (or a
// comment) gives [io.EOF]. Whether a stream is complete is for the
// caller's protocol to say (OpenAI: a "[DONE]" event or a finish reason),
// not the decoder.
//
// Arrival. Next and NextRaw return as soon as the blank line that ends an
// event has been read, without waiting for more input. The decoder reads
// the clock right after each Read of the underlying reader that returns
// bytes, and [RawEvent.At] is the instant of the Read that delivered the
// event's last byte: events that one Read delivered together share its
// instant, which is when they all became available, and nothing the
// caller does between two events (parsing, a GC assist, being
// descheduled) moves a later event's stamp.
//
// Allocation. NextRaw allocates nothing per event in the steady state:
// Data is a view of the decoder's buffer, and ID and Type are new strings
// only when they change. Next allocates the Data string.
//
// A Decoder is not safe for concurrent use.
type Decoder struct {
	rd  io.Reader
	buf []byte
	r   int // start of unread bytes in buf
	w   int // end of valid bytes in buf
	max int

	eof     bool  // rd returned io.EOF
	rerr    error // rd's error other than io.EOF, returned once no complete line is left
	err     error // sticky error to return from Next
	started bool  // BOM check done
	skipLF  bool  // the last line ended with CR: an LF next is part of it
	pending bool  // a field line was seen since the last dispatch
	hasData bool  // a data field was seen since the last dispatch
	size    int   // bytes of the current event so far
	data    []byte
	evType  string
	evID    string
	hasID   bool
	lastID  string
	evRetry int
	retry   int
	unterm  bool             // an unterminated event was returned: next is ErrUnexpectedEOF
	total   int64            // bytes read from rd
	readAt  time.Time        // when the last Read that returned bytes returned
	now     func() time.Time // the clock; nil is time.Now
}

// RawEvent is an event as [Decoder.NextRaw] returns it, without copying
// its data.
type RawEvent struct {
	// ID, Type and Retry are as in [Event].
	ID    string
	Type  string
	Retry int
	// Data is the data, its lines joined with "\n". It is a view of the
	// decoder's buffer, valid until the next call to the decoder.
	Data []byte
	// At is when the Read that delivered the event's last byte returned
	// (Go's clock, with its monotonic reading).
	At time.Time
	// Unterminated is true for an event that the end of the stream cut
	// short: its data lines came but the blank line that dispatches it did
	// not. WHATWG drops such an event; this decoder returns it (see
	// [Decoder]) and leaves the choice to the caller.
	Unterminated bool
}

// NewDecoder returns a decoder reading from r, with the default maximum
// event size ([DefaultMaxEventSize]).
func NewDecoder(r io.Reader) *Decoder {
	return &Decoder{rd: r, max: DefaultMaxEventSize, retry: -1, evRetry: -1}
}

// SetMaxEventSize sets the largest event the decoder accepts, in bytes of
// its lines (line ends not counted); n ≤ 0 restores the default. An event
// or line beyond it makes Next fail with an error wrapping
// [ErrEventTooLarge]. Call it before the first Next.
func (d *Decoder) SetMaxEventSize(n int) {
	if n <= 0 {
		n = DefaultMaxEventSize
	}
	d.max = n
}

// SetClock sets the clock read right after each Read of the underlying
// reader that returns bytes, whose reading becomes the [RawEvent.At] of
// the events those bytes complete; nil restores time.Now. A caller that
// knows better when the bytes reached the process, such as a connection
// that notes when its own reads return beneath a buffering reader, can
// supply that instant; it must not be later than the call. Call it before
// the first Next.
func (d *Decoder) SetClock(now func() time.Time) { d.now = now }

// LastEventID returns the stream's last event ID as WHATWG defines it: the
// value of the last valid id field seen, kept across events.
func (d *Decoder) LastEventID() string { return d.lastID }

// Retry returns the reconnection time, in ms, of the last valid retry
// field seen, or -1 when none was.
func (d *Decoder) Retry() int { return d.retry }

// Offset returns how many bytes of the stream the decoder has consumed:
// those up to the end of the last line it read (after NextRaw returns a
// terminated event, the end of its blank line; an LF after a CR that
// ended it not yet counted). A relay that forwards the stream event by
// event forwards the bytes up to Offset.
func (d *Decoder) Offset() int64 { return d.total - int64(d.w-d.r) }

// Next returns the next event. It returns io.EOF at a clean end of the
// stream and io.ErrUnexpectedEOF when the stream ends inside an event (see
// the type's documentation for the last, unterminated event). An error from
// the underlying reader is returned as it is, once the complete events
// read before it have been returned; the block it cut short is dropped.
// After an error, Next keeps returning it.
func (d *Decoder) Next() (Event, error) {
	raw, err := d.NextRaw()
	if err != nil {
		return Event{}, err
	}
	return Event{ID: raw.ID, Type: raw.Type, Data: string(raw.Data), Retry: raw.Retry}, nil
}

// NextRaw is [Decoder.Next] without the copy of the data: the event's
// Data is valid until the next call to the decoder. It also says when the
// event arrived and whether the stream's end cut it short.
func (d *Decoder) NextRaw() (RawEvent, error) {
	if d.err != nil {
		return RawEvent{}, d.err
	}
	if d.unterm {
		d.err = io.ErrUnexpectedEOF
		return RawEvent{}, d.err
	}
	for {
		line, ok, err := d.readLine()
		if err != nil {
			d.err = err
			return RawEvent{}, err
		}
		if !ok {
			// End of input, no more lines.
			if d.hasData {
				d.unterm = true
				ev := d.take()
				ev.Unterminated = true
				return ev, nil
			}
			if d.pending {
				d.err = io.ErrUnexpectedEOF
			} else {
				d.err = io.EOF
			}
			return RawEvent{}, d.err
		}
		if len(line) == 0 {
			d.size = 0
			if d.hasData {
				return d.take(), nil
			}
			d.reset()
			continue
		}
		d.size += len(line)
		if d.size > d.max {
			d.err = fmt.Errorf("%w: more than %d bytes without a blank line", ErrEventTooLarge, d.max)
			return RawEvent{}, d.err
		}
		d.field(line)
	}
}

// take builds the pending event and resets the buffers. The event's data
// is a view of d.data, which the next event overwrites.
//
// Its arrival is the last Read's: a line is only ever taken from the
// buffer once no complete line is left in it before a Read (fill is
// called only then), so the line ends of every line read since the last
// Read, the blank line that dispatches this event among them, came in
// that Read.
func (d *Decoder) take() RawEvent {
	ev := RawEvent{Type: d.evType, Retry: d.evRetry, At: d.readAt}
	if d.hasID {
		ev.ID = d.evID
	}
	n := len(d.data)
	if n > 0 && d.data[n-1] == '\n' {
		n--
	}
	ev.Data = d.data[:n:n]
	d.reset()
	return ev
}

func (d *Decoder) reset() {
	d.data = d.data[:0]
	d.evType = ""
	d.hasID = false
	d.hasData = false
	d.pending = false
	d.evRetry = -1
	d.size = 0
}

// field interprets one non-blank line.
func (d *Decoder) field(line []byte) {
	if line[0] == ':' {
		return // comment
	}
	d.pending = true
	name, value := line, line[:0]
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) { // no allocation: compiler-optimised comparison
	case "data":
		d.data = append(d.data, value...)
		d.data = append(d.data, '\n')
		d.hasData = true
	case "event":
		if string(value) != d.evType {
			d.evType = string(value)
		}
	case "id":
		if bytes.IndexByte(value, 0) >= 0 {
			return
		}
		if string(value) != d.evID {
			d.evID = string(value)
		}
		d.hasID = true
		if d.lastID != d.evID {
			d.lastID = d.evID
		}
	case "retry":
		if n, ok := parseDigits(value); ok {
			d.retry = n
			d.evRetry = n
		}
	}
}

// parseDigits parses a non-empty run of ASCII digits; it fails on anything
// else and on overflow.
func parseDigits(b []byte) (int, bool) {
	if len(b) == 0 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		if n > (int(^uint(0)>>1)-9)/10 {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// readLine returns the next line without its line end. ok is false at the
// end of input when no bytes are left. The returned slice is valid until
// the next call.
func (d *Decoder) readLine() (line []byte, ok bool, err error) {
	if !d.started {
		if err := d.skipBOM(); err != nil {
			return nil, false, err
		}
	}
	for {
		if d.skipLF && d.w > d.r {
			if d.buf[d.r] == '\n' {
				d.r++
			}
			d.skipLF = false
		}
		win := d.buf[d.r:d.w]
		end := bytes.IndexByte(win, '\n')
		cr := win
		if end >= 0 {
			cr = win[:end]
		}
		if i := bytes.IndexByte(cr, '\r'); i >= 0 {
			line = win[:i]
			d.r += i + 1
			d.skipLF = true
			return line, true, nil
		}
		if end >= 0 {
			line = win[:end]
			d.r += end + 1
			return line, true, nil
		}
		if d.rerr != nil {
			// A broken stream: what is pending may be incomplete.
			return nil, false, d.rerr
		}
		if d.eof {
			if len(win) == 0 {
				return nil, false, nil
			}
			// Unterminated last line: read it as a line; the stream ended
			// inside an event.
			d.r = d.w
			d.pending = true
			return win, true, d.checkLine(len(win))
		}
		if err := d.checkLine(len(win)); err != nil {
			return nil, false, err
		}
		if err := d.fill(); err != nil {
			return nil, false, err
		}
	}
}

// checkLine fails when a line of n bytes would push the event over the
// limit.
func (d *Decoder) checkLine(n int) error {
	if d.size+n > d.max {
		return fmt.Errorf("%w: more than %d bytes without a blank line", ErrEventTooLarge, d.max)
	}
	return nil
}

// fill reads more input into buf, compacting or growing it as needed. It
// sets eof or rerr at the end of input.
func (d *Decoder) fill() error {
	if d.buf == nil {
		d.buf = make([]byte, initialBufSize)
	}
	if d.r > 0 && (d.r == d.w || d.w == len(d.buf)) {
		d.w = copy(d.buf, d.buf[d.r:d.w])
		d.r = 0
	}
	if d.w == len(d.buf) {
		n := 2 * len(d.buf)
		if limit := d.max + 2; n > limit {
			n = limit
		}
		if n <= len(d.buf) {
			return fmt.Errorf("%w: more than %d bytes without a blank line", ErrEventTooLarge, d.max)
		}
		nb := make([]byte, n)
		copy(nb, d.buf[:d.w])
		d.buf = nb
	}
	for tries := 0; tries < 100; tries++ {
		n, err := d.rd.Read(d.buf[d.w:])
		if n > 0 {
			// First, before anything else is done.
			if d.now != nil {
				d.readAt = d.now()
			} else {
				d.readAt = time.Now()
			}
		}
		if n < 0 || n > len(d.buf)-d.w {
			return errors.New("sse: reader returned an invalid count")
		}
		d.w += n
		d.total += int64(n)
		if err != nil {
			if err == io.EOF {
				d.eof = true
			} else {
				d.rerr = err
			}
			return nil
		}
		if n > 0 {
			return nil
		}
	}
	return io.ErrNoProgress
}

// skipBOM drops a UTF-8 byte order mark at the start of the stream.
func (d *Decoder) skipBOM() error {
	for d.w-d.r < len(bom) && bytes.HasPrefix(bom, d.buf[d.r:d.w]) && !d.eof && d.rerr == nil {
		if err := d.fill(); err != nil {
			return err
		}
	}
	if bytes.HasPrefix(d.buf[d.r:d.w], bom) {
		d.r += len(bom)
	}
	d.started = true
	return nil
}
