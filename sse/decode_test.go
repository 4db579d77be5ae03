package sse

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// decodeAll reads every event from r and the error that ended the stream.
func decodeAll(t testing.TB, d *Decoder) ([]Event, error) {
	t.Helper()
	var evs []Event
	for i := 0; ; i++ {
		ev, err := d.Next()
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
		if i > 1<<20 {
			t.Fatal("decoder does not terminate")
		}
	}
}

func ev(data string) Event { return Event{Data: data, Retry: -1} }

func TestDecoderRules(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []Event
		wantErr error
	}{
		{"single data line", "data: hello\n\n", []Event{ev("hello")}, io.EOF},
		{"multi-line data joined with LF", "data: a\ndata: b\ndata:c\n\n", []Event{ev("a\nb\nc")}, io.EOF},
		{"empty data line dispatches empty event", "data:\n\n", []Event{ev("")}, io.EOF},
		{"two empty data lines", "data\ndata\n\n", []Event{ev("\n")}, io.EOF},
		{"only one leading space stripped", "data:  two\n\n", []Event{ev(" two")}, io.EOF},
		{"no space after colon", "data:x\n\n", []Event{ev("x")}, io.EOF},
		{"value keeps later colons", "data: a: b\n\n", []Event{ev("a: b")}, io.EOF},
		{"field without colon is empty value", "data\n\n", []Event{ev("")}, io.EOF},
		{"CRLF line ends", "data: a\r\ndata: b\r\n\r\n", []Event{ev("a\nb")}, io.EOF},
		{"CR line ends", "data: a\rdata: b\r\r", []Event{ev("a\nb")}, io.EOF},
		{"mixed line ends", "data: a\r\ndata: b\rdata: c\n\r\n", []Event{ev("a\nb\nc")}, io.EOF},
		{"BOM at start skipped", "\xEF\xBB\xBFdata: x\n\n", []Event{ev("x")}, io.EOF},
		{"BOM later is data", "data: \xEF\xBB\xBFx\n\n", []Event{ev("\xEF\xBB\xBFx")}, io.EOF},
		{"second BOM at start is a field name", "\xEF\xBB\xBF\xEF\xBB\xBFdata: x\n\n", nil, io.EOF},
		{"comment ignored", ": keep-alive\ndata: x\n\n", []Event{ev("x")}, io.EOF},
		{"comment-only block is no event", ": ping\n\ndata: x\n\n", []Event{ev("x")}, io.EOF},
		{"event type", "event: update\ndata: x\n\n", []Event{{Type: "update", Data: "x", Retry: -1}}, io.EOF},
		{"event type resets after dispatch", "event: a\ndata: 1\n\ndata: 2\n\n", []Event{{Type: "a", Data: "1", Retry: -1}, ev("2")}, io.EOF},
		{"id", "id: req-1\ndata: x\n\n", []Event{{ID: "req-1", Data: "x", Retry: -1}}, io.EOF},
		{"id with NUL ignored", "id: a\x00b\ndata: x\n\n", []Event{ev("x")}, io.EOF},
		{"empty id", "id\ndata: x\n\n", []Event{ev("x")}, io.EOF},
		{"id is per block", "id: 1\ndata: a\n\ndata: b\n\n", []Event{{ID: "1", Data: "a", Retry: -1}, ev("b")}, io.EOF},
		{"retry digits", "retry: 3000\ndata: x\n\n", []Event{{Data: "x", Retry: 3000}}, io.EOF},
		{"retry zero", "retry: 0\ndata: x\n\n", []Event{{Data: "x", Retry: 0}}, io.EOF},
		{"retry non-digits ignored", "retry: 3s\ndata: x\n\n", []Event{ev("x")}, io.EOF},
		{"retry signed ignored", "retry: -1\ndata: x\n\n", []Event{ev("x")}, io.EOF},
		{"retry empty ignored", "retry:\ndata: x\n\n", []Event{ev("x")}, io.EOF},
		{"retry overflow ignored", "retry: 999999999999999999999999\ndata: x\n\n", []Event{ev("x")}, io.EOF},
		{"retry-only block is no event", "retry: 0\n\ndata: x\n\n", []Event{ev("x")}, io.EOF},
		{"unknown field ignored", "foo: bar\ndata: x\n\n", []Event{ev("x")}, io.EOF},
		{"field names are case-sensitive", "Data: x\n\n", nil, io.EOF},
		{"blank lines between events", "\n\n\ndata: x\n\n\n\n", []Event{ev("x")}, io.EOF},
		{"empty stream", "", nil, io.EOF},
		{"DONE", "data: {\"a\":1}\n\ndata: [DONE]\n\n", []Event{ev(`{"a":1}`), ev("[DONE]")}, io.EOF},
		{"last event without blank line", "data: a\n\ndata: [DONE]\n", []Event{ev("a"), ev("[DONE]")}, io.ErrUnexpectedEOF},
		{"last line without line end", "data: a\n\ndata: [DONE]", []Event{ev("a"), ev("[DONE]")}, io.ErrUnexpectedEOF},
		{"cut inside field block without data", "data: a\n\nid: 7\n", []Event{ev("a")}, io.ErrUnexpectedEOF},
		{"cut inside a field name", "data: a\n\nda", []Event{ev("a")}, io.ErrUnexpectedEOF},
		{"ending with a comment is clean", "data: a\n\n: bye\n", []Event{ev("a")}, io.EOF},
		{"ending inside a comment line is not", "data: a\n\n: by", []Event{ev("a")}, io.ErrUnexpectedEOF},
		{"trailing CR ends the event", "data: a\r\r", []Event{ev("a")}, io.EOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, mode := range []struct {
				name string
				r    func(string) io.Reader
			}{
				{"whole", func(s string) io.Reader { return strings.NewReader(s) }},
				{"byte by byte", func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) }},
			} {
				got, err := decodeAll(t, NewDecoder(mode.r(tt.in)))
				if !errors.Is(err, tt.wantErr) {
					t.Errorf("%s: err = %v, want %v", mode.name, err, tt.wantErr)
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("%s: events = %#v, want %#v", mode.name, got, tt.want)
				}
			}
		})
	}
}

func TestDecoderLastEventIDAndRetry(t *testing.T) {
	d := NewDecoder(strings.NewReader("retry: 0\n\nid: r1\ndata: a\n\ndata: b\n\n"))
	if got, want := d.Retry(), -1; got != want {
		t.Fatalf("Retry before reading = %d, want %d", got, want)
	}
	e1, err := d.Next()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := d.Retry(), 0; got != want {
		t.Errorf("Retry = %d, want %d", got, want)
	}
	if got, want := e1.ID, "r1"; got != want {
		t.Errorf("first event ID = %q, want %q", got, want)
	}
	e2, err := d.Next()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := e2.ID, ""; got != want {
		t.Errorf("second event ID = %q, want %q (its block had no id field)", got, want)
	}
	if got, want := d.LastEventID(), "r1"; got != want {
		t.Errorf("LastEventID = %q, want %q (kept across events)", got, want)
	}
}

// splitReader returns its input in chunks whose sizes cycle through sizes.
type splitReader struct {
	data  []byte
	sizes []int
	i     int
}

func (s *splitReader) Read(p []byte) (int, error) {
	if len(s.data) == 0 {
		return 0, io.EOF
	}
	n := s.sizes[s.i%len(s.sizes)]
	s.i++
	n = min(n, len(p), len(s.data))
	copy(p, s.data[:n])
	s.data = s.data[n:]
	return n, nil
}

func TestDecoderCRLFSplitAcrossReads(t *testing.T) {
	// "data: a\r" ends one read, "\n" starts the next: one line end, so
	// the event needs a second blank line.
	in := []byte("data: a\r\ndata: b\r\n\r\n")
	r := &splitReader{data: in, sizes: []int{8, 1, 9, 1, 100}}
	got, err := decodeAll(t, NewDecoder(r))
	if !errors.Is(err, io.EOF) {
		t.Fatalf("err = %v, want io.EOF", err)
	}
	if want := []Event{ev("a\nb")}; !reflect.DeepEqual(got, want) {
		t.Errorf("events = %#v, want %#v", got, want)
	}
}

// blockingReader hands out its chunks one per Read and then blocks on a
// channel, so a test can check Next returns without more input.
type blockingReader struct {
	chunks chan []byte
}

func (b *blockingReader) Read(p []byte) (int, error) {
	c, ok := <-b.chunks
	if !ok {
		return 0, io.EOF
	}
	return copy(p, c), nil
}

func TestDecoderReturnsWithoutWaitingForMoreInput(t *testing.T) {
	br := &blockingReader{chunks: make(chan []byte, 1)}
	d := NewDecoder(br)
	br.chunks <- []byte("data: a\n\ndata: b\n\n")
	for _, want := range []string{"a", "b"} {
		got, err := d.Next()
		if err != nil {
			t.Fatal(err)
		}
		if got.Data != want {
			t.Errorf("Data = %q, want %q", got.Data, want)
		}
	}
	// A CR at the end of the read dispatches at once, before the next
	// read shows whether an LF follows.
	br.chunks <- []byte("data: c\r\r")
	got, err := d.Next()
	if err != nil || got.Data != "c" {
		t.Errorf("Next = %q, %v; want %q, nil", got.Data, err, "c")
	}
	br.chunks <- []byte("\ndata: d\n\n")
	close(br.chunks)
	got, err = d.Next()
	if err != nil || got.Data != "d" {
		t.Errorf("Next = %q, %v; want %q, nil (the LF after CR is no blank line)", got.Data, err, "d")
	}
	if _, err := d.Next(); !errors.Is(err, io.EOF) {
		t.Errorf("final err = %v, want io.EOF", err)
	}
}

func TestDecoderMaxEventSize(t *testing.T) {
	tests := []struct {
		name    string
		max     int
		in      string
		wantOK  int
		wantErr error
	}{
		{"fits exactly", 10, "data: 1234\n\n", 1, io.EOF},
		{"line too long", 10, "data: 12345\n\n", 0, ErrEventTooLarge},
		{"many lines too long", 10, "data: 1\ndata: 2\n\n", 0, ErrEventTooLarge},
		{"limit is per event", 10, "data: 1\n\ndata: 2\n\ndata: 3\n\n", 3, io.EOF},
		{"huge line without line end", 10, strings.Repeat("x", 100000), 0, ErrEventTooLarge},
		{"long but allowed line", 1 << 20, "data: " + strings.Repeat("y", 100000) + "\n\n", 1, io.EOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := NewDecoder(strings.NewReader(tt.in))
			d.SetMaxEventSize(tt.max)
			got, err := decodeAll(t, d)
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
			if len(got) != tt.wantOK {
				t.Errorf("got %d events, want %d", len(got), tt.wantOK)
			}
		})
	}
}

func TestDecoderDefaultMaxHoldsALongLine(t *testing.T) {
	long := strings.Repeat("z", 3<<20)
	got, err := decodeAll(t, NewDecoder(strings.NewReader("data: "+long+"\n\n")))
	if !errors.Is(err, io.EOF) {
		t.Fatalf("err = %v, want io.EOF", err)
	}
	if len(got) != 1 || got[0].Data != long {
		t.Fatalf("got %d events, want the one 3 MiB event", len(got))
	}
}

func TestDecoderReaderError(t *testing.T) {
	boom := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader("data: a\n\ndata: b\n"), iotest.ErrReader(boom))
	got, err := decodeAll(t, NewDecoder(r))
	if !errors.Is(err, boom) {
		t.Errorf("err = %v, want %v", err, boom)
	}
	if want := []Event{ev("a")}; !reflect.DeepEqual(got, want) {
		t.Errorf("events = %#v, want %#v (the cut block is dropped)", got, want)
	}
}

func TestDecoderRoundTripsEncoder(t *testing.T) {
	events := []Event{
		{ID: "req-1", Data: `{"choices":[{"delta":{"content":"hi"}}]}`, Retry: -1},
		{Type: "error", Data: "line one\nline two\r\nline three\rend", Retry: 2500},
		{Data: "", Retry: -1},
		{ID: " spaced", Type: " t", Data: " lead", Retry: -1},
		{Data: "[DONE]", Retry: -1},
	}
	var buf bytes.Buffer
	enc := NewEncoder(&buf)
	if err := enc.Retry(0); err != nil {
		t.Fatal(err)
	}
	if err := enc.Comment("hello\nworld"); err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		if err := enc.Encode(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.Flush(); err != nil {
		t.Fatal(err)
	}
	d := NewDecoder(&buf)
	got, err := decodeAll(t, d)
	if !errors.Is(err, io.EOF) {
		t.Fatalf("err = %v, want io.EOF", err)
	}
	want := make([]Event, len(events))
	for i, e := range events {
		want[i] = encoded(e)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("events =\n%#v\nwant\n%#v", got, want)
	}
	if got, want := d.Retry(), 2500; got != want {
		t.Errorf("Retry = %d, want %d", got, want)
	}
}

// encoded is what decoding the Encoder's output of e gives back: line ends
// in Data become LF, and a retry ≤ 0 is not written.
func encoded(e Event) Event {
	e.Data = strings.ReplaceAll(e.Data, "\r\n", "\n")
	e.Data = strings.ReplaceAll(e.Data, "\r", "\n")
	if e.Retry <= 0 {
		e.Retry = -1
	}
	return e
}
