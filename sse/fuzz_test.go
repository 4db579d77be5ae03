package sse

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// refDecode is a deliberately plain reading of the same rules as Decoder
// (WHATWG plus this package's end-of-stream rule), over the whole input at
// once. The fuzz test holds the streaming decoder to it.
func refDecode(in []byte) ([]Event, error) {
	evs, _, err := refDecodeCut(in)
	return evs, err
}

// refDecodeCut is refDecode that also says whether the last event was
// cut short by the end of the input (WHATWG would drop it).
func refDecodeCut(in []byte) ([]Event, bool, error) {
	s := string(in)
	s = strings.TrimPrefix(s, "\xEF\xBB\xBF")
	var (
		evs                     []Event
		data                    strings.Builder
		hasData, pending, hasID bool
		typ, id                 string
		retry                   = -1
	)
	reset := func() {
		data.Reset()
		hasData, pending, hasID = false, false, false
		typ, id, retry = "", "", -1
	}
	take := func() Event {
		e := Event{Type: typ, Data: strings.TrimSuffix(data.String(), "\n"), Retry: retry}
		if hasID {
			e.ID = id
		}
		reset()
		return e
	}
	for len(s) > 0 {
		i := strings.IndexAny(s, "\r\n")
		terminated := i >= 0
		var line string
		if !terminated {
			line, s = s, ""
			pending = true
		} else {
			line = s[:i]
			if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
				i++
			}
			s = s[i+1:]
		}
		switch {
		case line == "":
			if hasData {
				evs = append(evs, take())
			}
			reset()
			continue
		case line[0] == ':':
			continue
		}
		pending = true
		name, value, found := strings.Cut(line, ":")
		if found {
			value = strings.TrimPrefix(value, " ")
		}
		switch name {
		case "data":
			data.WriteString(value)
			data.WriteByte('\n')
			hasData = true
		case "event":
			typ = value
		case "id":
			if !strings.Contains(value, "\x00") {
				id, hasID = value, true
			}
		case "retry":
			if n, err := strconv.ParseUint(value, 10, 63); err == nil && value != "" && !strings.ContainsAny(value, "+-") {
				retry = int(n)
			}
		}
	}
	if hasData {
		return append(evs, take()), true, io.ErrUnexpectedEOF
	}
	if pending {
		return evs, false, io.ErrUnexpectedEOF
	}
	return evs, false, io.EOF
}

// FuzzDecoder holds four properties: any input decodes, through reads of
// any size, exactly as the plain reference reading does (so the decoder
// never panics and never loses a line end split across reads); NextRaw
// gives the same events and flags exactly the one the end cut short; a
// small size limit only ever cuts that reading short; and events built
// from the input survive a trip through the Encoder.
func FuzzDecoder(f *testing.F) {
	seeds := []string{
		"data: hello\n\n",
		"retry: 0\n\nid: r1\nevent: e\ndata: a\ndata: b\n\n",
		"data: a\r\ndata: b\r\n\r\n",
		"data: a\rdata: b\r\r",
		"\xEF\xBB\xBFdata: x\n\n",
		": comment\ndata\n\n",
		"id: a\x00b\ndata: x\n\n",
		"retry: 12a\ndata: x\n\n",
		"data: [DONE]",
		"data: a\n\nid: 7\n",
		"field without colon\n\n",
	}
	for i, s := range seeds {
		f.Add([]byte(s), uint8(i+1))
	}
	f.Fuzz(func(t *testing.T, in []byte, chunk uint8) {
		// Property 1: the streaming decoder agrees with the reference.
		want, wantCut, wantErr := refDecodeCut(in)
		size := int(chunk%16) + 1
		r := &splitReader{data: in, sizes: []int{size, size + 3, 1}}
		got, err := decodeAll(t, NewDecoder(r))
		if !errors.Is(err, wantErr) {
			t.Fatalf("err = %v, want %v", err, wantErr)
		}
		if len(got) != len(want) || (len(got) > 0 && !reflect.DeepEqual(got, want)) {
			t.Fatalf("events =\n%#v\nwant\n%#v", got, want)
		}

		// Property 1b: NextRaw agrees, and flags only a cut last event.
		raw := NewDecoder(&splitReader{data: in, sizes: []int{size + 1, 2}})
		for i := 0; ; i++ {
			ev, err := raw.NextRaw()
			if err != nil {
				if i != len(want) || !errors.Is(err, wantErr) {
					t.Fatalf("NextRaw: %d events then %v, want %d then %v", i, err, len(want), wantErr)
				}
				break
			}
			if i >= len(want) {
				t.Fatalf("NextRaw: more than %d events", len(want))
			}
			w := want[i]
			if ev.ID != w.ID || ev.Type != w.Type || ev.Retry != w.Retry || string(ev.Data) != w.Data {
				t.Fatalf("NextRaw event %d = %+v, want %#v", i, ev, w)
			}
			if cut := wantCut && i == len(want)-1; ev.Unterminated != cut {
				t.Fatalf("NextRaw event %d: Unterminated = %v, want %v", i, ev.Unterminated, cut)
			}
			if ev.At.IsZero() {
				t.Fatalf("NextRaw event %d: At not set", i)
			}
		}

		// Property 2: with a small limit, decoding agrees with the
		// reference up to the point where it fails with ErrEventTooLarge.
		small := NewDecoder(&splitReader{data: in, sizes: []int{size}})
		small.SetMaxEventSize(size * 4)
		limited, err := decodeAll(t, small)
		if !errors.Is(err, wantErr) && !errors.Is(err, ErrEventTooLarge) {
			t.Fatalf("limited: err = %v, want %v or ErrEventTooLarge", err, wantErr)
		}
		if len(limited) > len(want) || (len(limited) > 0 && !reflect.DeepEqual(limited, want[:len(limited)])) {
			t.Fatalf("limited events =\n%#v\nwant a prefix of\n%#v", limited, want)
		}

		// Property 3: the Encoder's output of events made from the input
		// decodes back to them.
		var events []Event
		for i, part := range bytes.Split(in, []byte{0x1e}) {
			fields := strings.SplitN(string(part), "\x1f", 3)
			e := Event{Data: fields[0], Retry: -1}
			if len(fields) > 1 {
				e.ID = fields[1]
			}
			if len(fields) > 2 {
				e.Type = fields[2]
			}
			if i%3 == 1 {
				e.Retry = i
			}
			events = append(events, e)
		}
		var buf bytes.Buffer
		enc := NewEncoder(&buf)
		var sent []Event
		for _, e := range events {
			if err := enc.Encode(e); err != nil {
				if !errors.Is(err, ErrBadField) {
					t.Fatalf("Encode: %v", err)
				}
				continue
			}
			sent = append(sent, encoded(e))
		}
		if err := enc.Flush(); err != nil {
			t.Fatal(err)
		}
		back, err := decodeAll(t, NewDecoder(&splitReader{data: buf.Bytes(), sizes: []int{size}}))
		if !errors.Is(err, io.EOF) {
			t.Fatalf("round trip err = %v, want io.EOF", err)
		}
		if len(back) != len(sent) || (len(back) > 0 && !reflect.DeepEqual(back, sent)) {
			t.Fatalf("round trip =\n%#v\nwant\n%#v", back, sent)
		}
	})
}
