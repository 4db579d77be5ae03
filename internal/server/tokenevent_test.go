package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/api"
	"github.com/tokenpulse/tokenpulse/sse"
)

// stdJSONString is encoding/json's encoding of s as the server writes its
// JSON (HTML escaping off).
func stdJSONString(t testing.TB, s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// jsonStringSeeds hold every kind of byte the encoder treats apart.
var jsonStringSeeds = []string{
	"", " token", "plain ASCII", `quote " and backslash \ and slash /`,
	"\b\f\n\r\t", "\x00\x01\x1f\x7f", "<script>&amp;</script>",
	"\u2028 line, \u2029 paragraph", "é, 日本語, 🙂", "\xff", "bad \xc3 utf-8",
	"\xe2\x80", "\xed\xa0\x80 (a surrogate)", "\uFFFD itself", "ok\xf0\x9f\x99",
}

func TestAppendJSONStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range jsonStringSeeds {
		if got, want := string(appendJSONString(nil, s)), stdJSONString(t, s); got != want {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
	}
	// Every single byte, and every byte after a multi-byte lead.
	for b := range 256 {
		for _, s := range []string{string([]byte{byte(b)}), "\xe2" + string([]byte{byte(b)}) + "\xa8"} {
			if got, want := string(appendJSONString(nil, s)), stdJSONString(t, s); got != want {
				t.Errorf("%q: got %s, want %s", s, got, want)
			}
		}
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range jsonStringSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		s := string(raw)
		prefix := []byte("kept")
		got := appendJSONString(prefix, s)
		if want := "kept" + stdJSONString(t, s); string(got) != want {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
	})
}

// referenceTokenFrame is a token event as the server wrote it before
// tokenEvent: an api.Chunk built by output.choice, marshalled by
// encoding/json and framed by sse.Encoder.
func referenceTokenFrame(t testing.TB, id, model string, chat bool, created int64, text string, reasoning, first bool, serverNS, offsetNS int64, index, tokens int) string {
	o := &output{chat: chat}
	chunkID := "cmpl-" + id
	if chat {
		chunkID = "chatcmpl-" + id
	}
	buf, err := marshal(&api.Chunk{
		ID: chunkID, Object: o.object(), Created: created, Model: model,
		Choices:    []api.Choice{o.choice(text, reasoning, first, nil)},
		Tokenpulse: &api.Extension{ServerNS: serverNS, OffsetNS: offsetNS, Index: index, Tokens: tokens},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer bufPool.Put(buf)
	var out bytes.Buffer
	enc := sse.NewEncoder(&out)
	if err := enc.Encode(sseEvent(id, buf.String())); err != nil {
		t.Fatal(err)
	}
	if err := enc.Flush(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// fastTokenFrame is the same event from tokenEvent.
func fastTokenFrame(id, model string, chat bool, created int64, text string, reasoning, first bool, serverNS, offsetNS int64, index, tokens int) string {
	o := &output{chat: chat}
	chunkID := "cmpl-" + id
	if chat {
		chunkID = "chatcmpl-" + id
	}
	te := newTokenEvent(id, chunkID, o.object(), created, model, chat)
	return string(te.append([]byte(nil), text, reasoning, first, serverNS, offsetNS, index, tokens))
}

func TestTokenEventMatchesReference(t *testing.T) {
	type event struct {
		id, model          string
		chat               bool
		created            int64
		text               string
		reasoning, first   bool
		serverNS, offsetNS int64
		index, tokens      int
	}
	events := []event{
		{"req-1", "bench", false, 1700000000, " token", false, true, 1700000000123456789, 2_000_000, 0, 1},
		{"req-1", "bench", false, 1700000000, "", false, false, 1, 1, 7, 1},
		{"my-id 42", "fake-1", true, 1700000000, "Once", false, true, 1700000000123456789, 5, 0, 1},
		{"my-id 42", "fake-1", true, 1700000000, " upon", false, false, 1700000000123456789, 5, 1, 1},
		{"my-id 42", "fake-1", true, 1700000000, "", false, true, 1, 5, 0, 1},  // role only
		{"my-id 42", "fake-1", true, 1700000000, "", false, false, 1, 5, 3, 1}, // empty delta
		{"r", "m", true, 0, "think", true, true, 0, 0, 0, 0},                   // reasoning, omitted numbers
		{"r", "m", true, -5, "think", true, false, -1, -2, 9, 4},               // negative offsets
		{`q"uo\te`, "m<&>\u2028\xff", true, 1, "<b>\"\\\n\u2029\x00é\xc3", false, false, 1, 1, 1, 1},
		{"", "m", false, 1, "no id", false, false, 1, 1, 1, 1},
	}
	for _, e := range events {
		want := referenceTokenFrame(t, e.id, e.model, e.chat, e.created, e.text, e.reasoning, e.first, e.serverNS, e.offsetNS, e.index, e.tokens)
		got := fastTokenFrame(e.id, e.model, e.chat, e.created, e.text, e.reasoning, e.first, e.serverNS, e.offsetNS, e.index, e.tokens)
		if got != want {
			t.Errorf("%+v:\ngot  %q\nwant %q", e, got, want)
		}
	}
}

func FuzzTokenEvent(f *testing.F) {
	f.Add("req-1", "bench", false, int64(1700000000), " token", false, true, int64(1700000000123456789), int64(2_000_000), 0, 1)
	f.Add("my-id 42", "fake-1", true, int64(1), "<\u2028\xff>", true, false, int64(0), int64(-3), 12, 0)
	f.Add(`q"\`, "m\x00", true, int64(-1), "", false, true, int64(1), int64(1), 1, 3)
	f.Fuzz(func(t *testing.T, id, model string, chat bool, created int64, text string, reasoning, first bool, serverNS, offsetNS int64, index, tokens int) {
		if !ValidRequestID(id) {
			return // the server never frames such an id
		}
		want := referenceTokenFrame(t, id, model, chat, created, text, reasoning, first, serverNS, offsetNS, index, tokens)
		got := fastTokenFrame(id, model, chat, created, text, reasoning, first, serverNS, offsetNS, index, tokens)
		if got != want {
			t.Fatalf("\ngot  %q\nwant %q", got, want)
		}
	})
}

func TestTokenEventAllocatesNothing(t *testing.T) {
	te := newTokenEvent("0123456789abcdef0123456789abcdef", "chatcmpl-0123456789abcdef0123456789abcdef", "chat.completion.chunk", 1700000000, "bench", true)
	buf := make([]byte, 0, 1024)
	allocs := testing.AllocsPerRun(1000, func() {
		buf = te.append(buf[:0], " to<k>en\u2028\xff", false, false, 1700000000123456789, 123_456_789, 4095, 1)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per token event, want 0", allocs)
	}
}

// flushRecorder is a ResponseWriter that keeps what is written and
// counts flushes, allocating nothing once its buffer is large enough.
type flushRecorder struct {
	header  http.Header
	body    []byte
	writes  int
	flushes int

	deadline  time.Time       // the write deadline set last
	deadlines int             // how many times it was set
	left      []time.Duration // per Write: the time left until the deadline
	clock     *time.Time      // the scripted now the time left is taken from
}

// SetWriteDeadline is what http.ResponseController calls.
func (r *flushRecorder) SetWriteDeadline(d time.Time) error {
	r.deadline = d
	r.deadlines++
	return nil
}

func (r *flushRecorder) Header() http.Header { return r.header }

func (r *flushRecorder) WriteHeader(int) {}

func (r *flushRecorder) Write(p []byte) (int, error) {
	r.body = append(r.body, p...)
	r.writes++
	if r.left != nil {
		r.left = append(r.left, r.deadline.Sub(*r.clock))
	}
	return len(p), nil
}

func (r *flushRecorder) Flush() { r.flushes++ }

// The server's per-token path past the backend, output.piece (the event's
// encoding, its frame, the write deadline, one Write and a Flush), writes
// each event once and allocates nothing.
func TestPieceOneWriteNoAllocation(t *testing.T) {
	rec := &flushRecorder{header: http.Header{}, body: make([]byte, 0, 1<<20)}
	received := time.Now()
	p := &parsed{stream: true, gen: GenRequest{ID: "req-7", Model: "bench", Received: received}}
	o := newOutput(rec, p, true, time.Minute)
	if err := o.piece(Piece{Text: "Once", At: received}, 0, 1); err != nil {
		t.Fatal(err)
	}
	if rec.writes != 1 || rec.flushes != 1 {
		t.Fatalf("first piece: %d writes, %d flushes, want 1 and 1", rec.writes, rec.flushes)
	}
	index := 1
	allocs := testing.AllocsPerRun(1000, func() {
		if err := o.piece(Piece{Text: " upon", At: time.Now()}, index, 1); err != nil {
			t.Fatal(err)
		}
		index++
	})
	if allocs != 0 {
		t.Errorf("%v allocations per piece, want 0", allocs)
	}
	if rec.writes != index || rec.flushes != index {
		t.Errorf("%d pieces: %d writes, %d flushes", index, rec.writes, rec.flushes)
	}
	// What was written: "retry: 0", then one event per piece, the first
	// with the assistant's role.
	body := string(rec.body)
	if !strings.HasPrefix(body, "retry: 0\n\nid: req-7\ndata: {\"id\":\"chatcmpl-req-7\"") || !strings.Contains(body, `"delta":{"role":"assistant","content":"Once"}`) {
		t.Errorf("stream begins %q", body[:min(len(body), 200)])
	}
	if n := strings.Count(body, "\n\nid: req-7\ndata: "); n != index {
		t.Errorf("%d events framed, want %d", n, index)
	}
}

// BenchmarkTokenEvent compares, in one run, a token event's frame built by
// tokenEvent with the same frame built as before it (an api.Chunk through
// encoding/json and sse.Encoder): ns per event and allocations.
func BenchmarkTokenEvent(b *testing.B) {
	const id = "0123456789abcdef0123456789abcdef"
	at := time.Now()
	b.Run("tokenEvent", func(b *testing.B) {
		te := newTokenEvent(id, "chatcmpl-"+id, "chat.completion.chunk", at.Unix(), "bench", true)
		buf := make([]byte, 0, 1024)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			buf = te.append(buf[:0], " token", false, false, at.UnixNano(), 123_456_789, i, 1)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		o := &output{chat: true}
		var out bytes.Buffer
		enc := sse.NewEncoder(&out)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			out.Reset()
			buf, err := marshal(&api.Chunk{
				ID: "chatcmpl-" + id, Object: o.object(), Created: at.Unix(), Model: "bench",
				Choices:    []api.Choice{o.choice(" token", false, false, nil)},
				Tokenpulse: &api.Extension{ServerNS: at.UnixNano(), OffsetNS: 123_456_789, Index: i, Tokens: 1},
			})
			if err != nil {
				b.Fatal(err)
			}
			enc.Encode(sseEvent(id, buf.String()))
			enc.Flush()
			bufPool.Put(buf)
		}
	})
}

// The write deadline is renewed a sixteenth of the timeout apart, not per
// token, and every write still has at least the timeout ahead of it. The
// output's clock is scripted: one token a millisecond.
func TestWriteDeadlineRenewedSparingly(t *testing.T) {
	const timeout = time.Minute
	now := time.Date(2026, 12, 1, 7, 0, 0, 0, time.UTC)
	rec := &flushRecorder{header: http.Header{}, left: make([]time.Duration, 0, 8000), clock: &now}
	p := &parsed{stream: true, gen: GenRequest{ID: "req-8", Model: "bench", Received: now}}
	o := newOutput(rec, p, false, timeout)
	o.now = func() time.Time { return now }
	renewedAt := []int{}
	for i := range 8000 {
		before := rec.deadlines
		if err := o.piece(Piece{Text: "x", At: now}, i, 1); err != nil {
			t.Fatal(err)
		}
		if rec.deadlines != before {
			renewedAt = append(renewedAt, i)
		}
		now = now.Add(time.Millisecond)
	}
	// timeout/16 is 3.75 s: 3750 tokens apart.
	if want := []int{0, 3750, 7500}; !slices.Equal(renewedAt, want) {
		t.Errorf("deadline set at tokens %v, want %v", renewedAt, want)
	}
	for i, left := range rec.left {
		if left < timeout || left > timeout+timeout/16 {
			t.Fatalf("write %d had %v left, want between %v and %v", i, left, timeout, timeout+timeout/16)
		}
	}
	if len(rec.left) != 8000 {
		t.Errorf("%d writes, want 8000", len(rec.left))
	}
}

// An error event after a silence longer than the write timeout (a
// backend that hung, then failed) still gets a whole timeout to be
// written: fail renews the deadline as every other write does.
func TestFailAfterSilenceRenewsDeadline(t *testing.T) {
	const timeout = time.Minute
	now := time.Date(2026, 12, 1, 7, 0, 0, 0, time.UTC)
	rec := &flushRecorder{header: http.Header{}, left: make([]time.Duration, 0, 4), clock: &now}
	p := &parsed{stream: true, gen: GenRequest{ID: "req-9", Model: "bench", Received: now}}
	o := newOutput(rec, p, true, timeout)
	o.now = func() time.Time { return now }
	if err := o.piece(Piece{Text: "x", At: now}, 0, 1); err != nil {
		t.Fatal(err)
	}
	// Two timeouts of silence: the deadline set with that token is long past.
	now = now.Add(2 * timeout)
	o.fail(&RequestError{Status: http.StatusInternalServerError, Type: "server_error", Message: "backend failed"})
	if rec.deadlines != 2 {
		t.Errorf("deadline set %d times, want 2 (the token, then the error event)", rec.deadlines)
	}
	last := rec.left[len(rec.left)-1]
	if last < timeout {
		t.Errorf("the error event was written with %v left before the deadline, want at least %v", last, timeout)
	}
	if !strings.Contains(string(rec.body), "backend failed") {
		t.Errorf("no error event in the stream:\n%s", rec.body)
	}
}
