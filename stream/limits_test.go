package stream

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// flood serves every request with a stream of n copies of frame, then a
// finish reason and "[DONE]": a server that does not stop where the
// request asked it to. closed receives once for each connection the
// server saw closed.
type flood struct {
	frame  string
	n      int
	closed chan struct{}
}

func newFlood(t *testing.T, frame string, n int) (*Client, *flood) {
	t.Helper()
	f := &flood{frame: frame, n: n, closed: make(chan struct{}, 16)}
	srv := httptest.NewUnstartedServer(f)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateClosed {
			f.closed <- struct{}{}
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return &Client{BaseURL: srv.URL, Model: "m"}, f
}

func (f *flood) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	bw := bufio.NewWriterSize(w, 64<<10)
	for range f.n {
		if _, err := bw.WriteString(f.frame); err != nil {
			return
		}
	}
	bw.WriteString(finish("length") + done)
	bw.Flush()
}

// checkBounded fails unless tr failed as an overflow naming want, and its
// slices hold at most n content events and grew no further than that.
func checkBounded(t *testing.T, tr *Trace, want string, n int) {
	t.Helper()
	if tr.Err == nil || tr.Err.Kind != KindOverflow {
		t.Fatalf("Err = %v, want an overflow (events %d, content events %d)", tr.Err, tr.Events, tr.ContentEvents())
	}
	if !strings.Contains(tr.Err.Message, want) {
		t.Errorf("Err = %q, want it to name %q", tr.Err, want)
	}
	if tr.ContentEvents() > n || len(tr.TokenCounts) != tr.ContentEvents() || len(tr.ServerTimes) != tr.ContentEvents() || len(tr.TextEnds) != tr.ContentEvents() {
		t.Errorf("content events %d (counts %d, server times %d, text ends %d), want at most %d, all alike",
			tr.ContentEvents(), len(tr.TokenCounts), len(tr.ServerTimes), len(tr.TextEnds), n)
	}
	for name, c := range map[string]int{"TokenTimes": cap(tr.TokenTimes), "TokenCounts": cap(tr.TokenCounts), "ServerTimes": cap(tr.ServerTimes), "TextEnds": cap(tr.TextEnds)} {
		if c > 2*n+16 {
			t.Errorf("cap(%s) = %d, want it bounded by the limit (%d)", name, c, n)
		}
	}
	if len(tr.Text) != textEnd(tr) {
		t.Errorf("len(Text) = %d, want %d, the text of the content events kept", len(tr.Text), textEnd(tr))
	}
}

func TestContentFloodOverflows(t *testing.T) {
	// 256 tokens asked for, 50000 one-token events sent: the limit is
	// max(4·256, 4096) content events.
	c, f := newFlood(t, content("a"), 50_000)
	tr := c.Do(context.Background(), Request{Prompt: "p", MaxTokens: 256})
	checkBounded(t, tr, "4096 content events", 4096)
	if got := tr.ContentEvents(); got != 4096 {
		t.Errorf("content events = %d, want the 4096 up to the limit", got)
	}
	if got := tr.Text; got != strings.Repeat("a", 4096) {
		t.Errorf("len(Text) = %d, want the 4096 bytes of the events kept", len(got))
	}
	if tr.Events != 4096 || tr.LastEvent != tr.TokenTimes[4095] {
		t.Errorf("Events = %d, LastEvent = %v, want 4096 and the last kept event's %v", tr.Events, tr.LastEvent, tr.TokenTimes[4095])
	}
	// The client closed the connection rather than reading the flood to
	// its end: the server sees it closed (a reused connection would stay
	// idle, and this would wait until the test's own timeout).
	<-f.closed
}

func TestContentFloodWithoutMaxTokensOverflows(t *testing.T) {
	c, _ := newFlood(t, content("a"), DefaultMaxContentEvents+1000)
	tr := c.Do(context.Background(), Request{Prompt: "p"})
	checkBounded(t, tr, "content events", DefaultMaxContentEvents)
}

func TestEventFloodOverflows(t *testing.T) {
	// Events that carry no token (empty deltas) grow no slice but are
	// bounded too: 2·4096 + 1024 of them for a request of 16 tokens.
	c, _ := newFlood(t, `data: {"choices":[{"index":0,"delta":{}}]}`+"\n\n", 50_000)
	tr := c.Do(context.Background(), Request{Prompt: "p", MaxTokens: 16})
	checkBounded(t, tr, "9216 events", 0)
	if tr.Events != 9216 {
		t.Errorf("Events = %d, want 9216", tr.Events)
	}
}

func TestByteFloodOverflows(t *testing.T) {
	// No event at all, only comments, each a block of its own: no event
	// limit holds them, the body's does: 16 MiB for a request of 16
	// tokens, 64 MiB for one without MaxTokens. 100 MiB are sent.
	c, _ := newFlood(t, ":"+strings.Repeat("x", 1022)+"\n\n", 100<<10)
	tr := c.Do(context.Background(), Request{Prompt: "p", MaxTokens: 16})
	checkBounded(t, tr, "16777216 bytes", 0)
	tr = c.Do(context.Background(), Request{Prompt: "p"})
	checkBounded(t, tr, "67108864 bytes", 0)
}

func TestHugeEventOverflows(t *testing.T) {
	// One event of 5 MiB: over the 4 MiB one event may hold.
	c, _ := newFlood(t, content(strings.Repeat("a", 5<<20)), 1)
	tr := c.Do(context.Background(), Request{Prompt: "p", MaxTokens: 16})
	checkBounded(t, tr, "an event of more than 4194304 bytes", 0)
}

func TestLimitsAreConfigurable(t *testing.T) {
	c, _ := newFlood(t, content("ab"), 100)
	c.MaxContentEvents = 10
	tr := c.Do(context.Background(), Request{Prompt: "p", MaxTokens: 256})
	checkBounded(t, tr, "10 content events", 10)

	c.MaxContentEvents, c.MaxEvents = 0, 7
	tr = c.Do(context.Background(), Request{Prompt: "p", MaxTokens: 1})
	checkBounded(t, tr, "7 events", 7)

	c.MaxEvents, c.MaxBytes = 0, 1000
	tr = c.Do(context.Background(), Request{Prompt: "p", MaxTokens: 1})
	checkBounded(t, tr, "1000 bytes", 1000/len(content("ab")))

	// Negative: no limit; a limit above what comes: no failure.
	c.MaxBytes, c.MaxContentEvents, c.MaxEvents = -1, -1, 102
	tr = c.Do(context.Background(), Request{Prompt: "p", MaxTokens: 1})
	if !tr.OK() || tr.ContentEvents() != 100 || tr.Events != 102 {
		t.Errorf("Err = %v, content events %d, events %d; want success, 100, 102", tr.Err, tr.ContentEvents(), tr.Events)
	}
}

func TestDefaultLimits(t *testing.T) {
	for _, tt := range []struct {
		maxTokens int
		want      Limits
	}{
		{0, Limits{ContentEvents: 1 << 18, Events: 1<<19 + 1024, Bytes: 64 << 20, EventBytes: 4 << 20}},
		{256, Limits{ContentEvents: 4096, Events: 9216, Bytes: 16 << 20, EventBytes: 4 << 20}},
		{2048, Limits{ContentEvents: 8192, Events: 17408, Bytes: 32 << 20, EventBytes: 4 << 20}},
		{1 << 20, Limits{ContentEvents: 1 << 22, Events: 1<<23 + 1024, Bytes: 64 << 20, EventBytes: 4 << 20}},
	} {
		if got := (&Client{}).Limits(tt.maxTokens); got != tt.want {
			t.Errorf("limits(%d) = %+v, want %+v", tt.maxTokens, got, tt.want)
		}
	}
}

// TestContent: what the client counts as a content event, the relay too.
func TestContent(t *testing.T) {
	for _, tt := range []struct {
		data string
		want bool
	}{
		{`{"choices":[{"delta":{"content":"a"}}]}`, true},
		{`{"choices":[{"text":"a"}]}`, true},
		{`{"choices":[{"delta":{"reasoning_content":"a"}}]}`, true},
		{`{"choices":[{"delta":{"role":"assistant"}}]}`, false},
		{`{"choices":[{"delta":{"content":""}}]}`, false},
		{`{"choices":[],"usage":{"completion_tokens":3}}`, false},
		{`[DONE]`, false},
		{`not json`, false},
	} {
		if got := Content([]byte(tt.data)); got != tt.want {
			t.Errorf("Content(%s) = %v, want %v", tt.data, got, tt.want)
		}
	}
}
