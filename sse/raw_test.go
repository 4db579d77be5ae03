package sse

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// countingClock is a reader that hands out one chunk per Read and a clock
// whose reading is the number of Reads so far, so a test can tell exactly
// which Read an event's instant came from.
type countingClock struct {
	chunks []string
	reads  int64
}

func (c *countingClock) Read(p []byte) (int, error) {
	if len(c.chunks) == 0 {
		return 0, io.EOF
	}
	c.reads++
	n := copy(p, c.chunks[0])
	c.chunks = c.chunks[1:]
	return n, nil
}

func (c *countingClock) now() time.Time { return time.Unix(0, c.reads) }

func TestNextRawStampsTheReadThatDeliveredTheEvent(t *testing.T) {
	c := &countingClock{chunks: []string{
		"data: a\n\ndata: b\n\ndata: c", // a and b complete in Read 1
		"\n",                            // c's line ends: no event yet
		"\ndata: d\r",                   // c's blank line; d's line
		"\r",                            // d's blank line
		": comment\n\ndata: e\n\n",      // e
	}}
	d := NewDecoder(c)
	d.SetClock(c.now)
	want := []struct {
		data string
		read int64
	}{{"a", 1}, {"b", 1}, {"c", 3}, {"d", 4}, {"e", 5}}
	for _, w := range want {
		ev, err := d.NextRaw()
		if err != nil {
			t.Fatalf("NextRaw: %v", err)
		}
		if string(ev.Data) != w.data || ev.Unterminated {
			t.Errorf("event %q (unterminated %v), want %q", ev.Data, ev.Unterminated, w.data)
		}
		if got := ev.At.UnixNano(); got != w.read {
			t.Errorf("event %q: At is Read %d's instant, want Read %d's (the Read that delivered its blank line)", w.data, got, w.read)
		}
	}
	if _, err := d.NextRaw(); !errors.Is(err, io.EOF) {
		t.Errorf("err = %v, want io.EOF", err)
	}
}

func TestNextRawFlagsAnEventTheEndCutShort(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []bool // Unterminated of each event
		err  error
	}{
		{"data: a\n\ndata: b", []bool{false, true}, io.ErrUnexpectedEOF},
		{"data: a\n\ndata: {\"choices\":[{\"de\n", []bool{false, true}, io.ErrUnexpectedEOF},
		{"data: [DONE]", []bool{true}, io.ErrUnexpectedEOF},
		{"data: a\n\n", []bool{false}, io.EOF},
		{"data: a\n\nid: 1\n", []bool{false}, io.ErrUnexpectedEOF},
	} {
		d := NewDecoder(bytes.NewReader([]byte(tt.in)))
		var got []bool
		var err error
		for {
			var ev RawEvent
			if ev, err = d.NextRaw(); err != nil {
				break
			}
			got = append(got, ev.Unterminated)
		}
		if !errors.Is(err, tt.err) || len(got) != len(tt.want) {
			t.Errorf("%q: unterminated %v, err %v; want %v, %v", tt.in, got, err, tt.want, tt.err)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("%q: unterminated %v, want %v", tt.in, got, tt.want)
			}
		}
	}
}

// loopReader repeats its data for ever.
type loopReader struct {
	data []byte
	off  int
}

func (l *loopReader) Read(p []byte) (int, error) {
	n := copy(p, l.data[l.off:])
	l.off = (l.off + n) % len(l.data)
	return n, nil
}

func TestNextRawAllocatesNothingPerEvent(t *testing.T) {
	frame := []byte("id: req-1\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" lorem\"}}]}\n\n")
	d := NewDecoder(&loopReader{data: frame})
	for range 100 { // warm the buffers
		if _, err := d.NextRaw(); err != nil {
			t.Fatal(err)
		}
	}
	allocs := testing.AllocsPerRun(1000, func() {
		ev, err := d.NextRaw()
		if err != nil || ev.ID != "req-1" || len(ev.Data) == 0 {
			t.Fatalf("NextRaw = %q, %v", ev.Data, err)
		}
	})
	if allocs != 0 {
		t.Errorf("NextRaw allocates %v times per event, want 0", allocs)
	}
}

// TestOffset: after each event, Offset is the end of its blank line,
// whatever the reads' boundaries.
func TestOffset(t *testing.T) {
	const stream = "\xEF\xBB\xBFretry: 0\n\ndata: a\n\n: ping\n\ndata: bb\r\n\r\ndata: c\r\rdata: [DONE]"
	ends := []int64{int64(strings.Index(stream, "data: a\n\n") + 9), int64(strings.Index(stream, "\r\n\r\n") + 3), int64(strings.Index(stream, "c\r\r") + 3), int64(len(stream))}
	for _, chunk := range []int{1, 3, len(stream)} {
		d := NewDecoder(iotest.HalfReader(&chunked{s: stream, n: chunk}))
		for i, want := range ends {
			if _, err := d.NextRaw(); err != nil {
				t.Fatalf("chunk %d, event %d: %v", chunk, i, err)
			}
			if got := d.Offset(); got != want {
				t.Errorf("chunk %d, event %d: Offset %d, want %d", chunk, i, got, want)
			}
		}
	}
}

// chunked reads s n bytes at a time.
type chunked struct {
	s string
	n int
}

func (c *chunked) Read(p []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), c.n)], c.s)
	c.s = c.s[k:]
	return k, nil
}
