package stream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/api"
)

// script serves each request by writing frames one by one, flushing after
// each; it records the last request body and headers.
type script struct {
	frames []string
	status int
	echo   bool   // echo X-Request-ID
	ctype  string // "": text/event-stream; "none": no Content-Type

	mu      sync.Mutex
	body    map[string]any
	header  http.Header
	path    string
	request int
}

func (s *script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.body = nil
	json.Unmarshal(b, &s.body)
	s.header = r.Header.Clone()
	s.path = r.URL.Path
	s.request++
	s.mu.Unlock()
	if s.echo {
		w.Header().Set(api.HeaderRequestID, r.Header.Get(api.HeaderRequestID))
	}
	switch ct := s.ctype; ct {
	case "":
		w.Header().Set("Content-Type", "text/event-stream")
	case "none":
		w.Header()["Content-Type"] = nil // no header, and no sniffing
	default:
		w.Header().Set("Content-Type", ct)
	}
	if s.status != 0 {
		w.WriteHeader(s.status)
	}
	for _, f := range s.frames {
		f = strings.ReplaceAll(f, "$ID", r.Header.Get(api.HeaderRequestID))
		io.WriteString(w, f)
		w.(http.Flusher).Flush()
	}
}

func newScript(t *testing.T, s *script) (*Client, *script) {
	t.Helper()
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return &Client{BaseURL: srv.URL, Model: "m"}, s
}

func content(s string) string {
	return fmt.Sprintf("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":null}]}\n\n", s)
}

func finish(reason string) string {
	return fmt.Sprintf("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":%q}]}\n\n", reason)
}

const done = "data: [DONE]\n\n"

// checkOrder fails unless the phase and token times never go backwards.
func checkOrder(t *testing.T, tr *Trace) {
	t.Helper()
	seq := []time.Duration{tr.Headers, tr.FirstByte}
	seq = append(seq, tr.TokenTimes...)
	seq = append(seq, tr.LastEvent)
	for i := 1; i < len(seq); i++ {
		if seq[i] < seq[i-1] {
			t.Errorf("times go backwards at %d: %v", i, seq)
		}
	}
	if tr.Sent <= 0 || tr.Sent > tr.Headers {
		t.Errorf("Sent = %v, want in (0, Headers=%v]", tr.Sent, tr.Headers)
	}
}

func TestLlamaCppStreamWithoutUsage(t *testing.T) {
	c, _ := newScript(t, &script{frames: []string{
		content("Once"), content(" upon"), content(" a"),
		`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"timings":{"predicted_n":3}}` + "\n\n",
		done,
	}})
	tr := c.Do(context.Background(), Request{Prompt: "tell a story"})
	if !tr.OK() {
		t.Fatalf("Err = %v", tr.Err)
	}
	checkOrder(t, tr)
	if got, want := tr.ContentEvents(), 3; got != want {
		t.Errorf("ContentEvents = %d, want %d", got, want)
	}
	if got, want := tr.OutputTokens(), 3; got != want {
		t.Errorf("OutputTokens = %d, want %d (counted from events)", got, want)
	}
	if got, want := tr.Text, "Once upon a"; got != want {
		t.Errorf("Text = %q, want %q", got, want)
	}
	if got, want := tr.FinishReason, "stop"; got != want {
		t.Errorf("FinishReason = %q, want %q", got, want)
	}
	if tr.Usage != nil {
		t.Errorf("Usage = %+v, want none", tr.Usage)
	}
	for i, n := range tr.TokenCounts {
		if n != 1 || tr.ServerTimes[i] != 0 {
			t.Errorf("event %d: %d tokens, server time %d; want 1 token and no server time", i, n, tr.ServerTimes[i])
		}
	}
}

func TestVLLMRoleChunkAndUsageChunk(t *testing.T) {
	c, s := newScript(t, &script{frames: []string{
		`data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}` + "\n\n",
		content("Hello"), content(""), content(" world"),
		finish("length"),
		`data: {"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":2,"total_tokens":9}}` + "\n\n",
		done,
	}})
	tr := c.Do(context.Background(), Request{Messages: []api.Message{{Role: "user", Content: "hi"}}, MaxTokens: 2})
	if !tr.OK() {
		t.Fatalf("Err = %v", tr.Err)
	}
	if got, want := tr.ContentEvents(), 2; got != want {
		t.Errorf("ContentEvents = %d, want %d (role-only, empty and usage chunks are no tokens)", got, want)
	}
	if tr.Usage == nil || tr.Usage.CompletionTokens != 2 || tr.Usage.PromptTokens != 7 {
		t.Errorf("Usage = %+v, want prompt 7, completion 2", tr.Usage)
	}
	if got, want := tr.OutputTokens(), 2; got != want {
		t.Errorf("OutputTokens = %d, want %d (from usage)", got, want)
	}
	if got, want := tr.FinishReason, "length"; got != want {
		t.Errorf("FinishReason = %q, want %q", got, want)
	}
	if got, want := s.path, "/v1/chat/completions"; got != want {
		t.Errorf("path = %q, want %q", got, want)
	}
	so, _ := s.body["stream_options"].(map[string]any)
	if got, want := so["include_usage"], true; got != want {
		t.Errorf("stream_options.include_usage = %v, want %v", got, want)
	}
	if got, want := s.body["max_tokens"], 2.0; got != want {
		t.Errorf("max_tokens = %v, want %v", got, want)
	}
	if got, want := s.body["stream"], true; got != want {
		t.Errorf("stream = %v, want %v", got, want)
	}
}

func TestNoUsageAndHeaders(t *testing.T) {
	c, s := newScript(t, &script{frames: []string{content("a"), finish("stop"), done}})
	c.NoUsage = true
	c.APIKey = "sk-test"
	c.Header = http.Header{"x-extra": {"1"}}
	tr := c.Do(context.Background(), Request{ID: "my-id", Prompt: "p"})
	if !tr.OK() {
		t.Fatalf("Err = %v", tr.Err)
	}
	if _, ok := s.body["stream_options"]; ok {
		t.Errorf("stream_options sent with NoUsage: %v", s.body)
	}
	for k, want := range map[string]string{"Authorization": "Bearer sk-test", "X-Extra": "1", api.HeaderRequestID: "my-id", "Accept": "text/event-stream"} {
		if got := s.header.Get(k); got != want {
			t.Errorf("header %s = %q, want %q", k, got, want)
		}
	}
	if got, want := tr.RequestID, "my-id"; got != want {
		t.Errorf("RequestID = %q, want %q", got, want)
	}
}

func TestFreshRequestIDs(t *testing.T) {
	c, s := newScript(t, &script{frames: []string{content("a"), done}})
	seen := map[string]bool{}
	for range 5 {
		tr := c.Do(context.Background(), Request{Prompt: "p"})
		if !tr.OK() {
			t.Fatalf("Err = %v", tr.Err)
		}
		if got := s.header.Get(api.HeaderRequestID); got != tr.RequestID || !strings.HasPrefix(got, "tp-") {
			t.Errorf("sent X-Request-ID %q, trace %q; want equal and prefixed tp-", got, tr.RequestID)
		}
		seen[tr.RequestID] = true
	}
	if got, want := len(seen), 5; got != want {
		t.Errorf("distinct ids = %d, want %d", got, want)
	}
}

func TestReasoningDeltas(t *testing.T) {
	c, _ := newScript(t, &script{frames: []string{
		`data: {"choices":[{"delta":{"reasoning_content":"Let me think"}}]}` + "\n\n",
		`data: {"choices":[{"delta":{"reasoning":" more"}}]}` + "\n\n",
		content("Answer"),
		finish("stop"), done,
	}})
	tr := c.Do(context.Background(), Request{Prompt: "p"})
	if !tr.OK() {
		t.Fatalf("Err = %v", tr.Err)
	}
	if got, want := tr.ContentEvents(), 3; got != want {
		t.Errorf("ContentEvents = %d, want %d (reasoning counts)", got, want)
	}
	if got, want := tr.ReasoningEvents, 2; got != want {
		t.Errorf("ReasoningEvents = %d, want %d", got, want)
	}
	if got, want := tr.Text, "Answer"; got != want {
		t.Errorf("Text = %q, want %q (reasoning is not answer text)", got, want)
	}
}

func TestForeignEvents(t *testing.T) {
	frames := []string{
		"retry: 0\n\n",
		"id: $ID\n" + content("a"),
		"id: someone-else\n" + content("X"),
		"id: $ID\n" + content("b"),
		"id: someone-else\n" + finish("stop"),
		content("c"), // no id: kept
		"id: $ID\n" + finish("stop"),
		"id: $ID\n" + done,
	}
	tests := []struct {
		name        string
		echo        bool
		wantText    string
		wantForeign int
	}{
		{"echoed id: mismatches dropped", true, "abc", 2},
		{"no echo: ids are not ours to judge", false, "aXbc", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := newScript(t, &script{frames: frames, echo: tt.echo})
			tr := c.Do(context.Background(), Request{Prompt: "p"})
			if !tr.OK() {
				t.Fatalf("Err = %v", tr.Err)
			}
			if got := tr.Text; got != tt.wantText {
				t.Errorf("Text = %q, want %q", got, tt.wantText)
			}
			if got := tr.ForeignEvents; got != tt.wantForeign {
				t.Errorf("ForeignEvents = %d, want %d", got, tt.wantForeign)
			}
			if got, want := tr.ContentEvents(), len(tt.wantText); got != want {
				t.Errorf("ContentEvents = %d, want %d", got, want)
			}
			if got, want := tr.ForeignEvents, tt.wantForeign; got != want {
				t.Errorf("ForeignEvents = %d, want %d", got, want)
			}
		})
	}
}

func TestFailures(t *testing.T) {
	tests := []struct {
		name       string
		s          *script
		wantKind   Kind
		wantStatus int
		wantMsg    string
		wantTokens int
	}{
		{"cut stream", &script{frames: []string{content("a"), content("b")}}, KindCut, 200, "without [DONE]", 2},
		{"cut after role chunk", &script{frames: []string{`data: {"choices":[{"delta":{"role":"assistant"}}]}` + "\n\n"}}, KindCut, 200, "after 0 content events", 0},
		{"http 500 with OpenAI error", &script{status: 500, frames: []string{`{"error":{"message":"the engine fell over","type":"server_error","param":null,"code":null}}`}}, KindHTTP, 500, "the engine fell over", 0},
		{"http 404 with string error", &script{status: 404, frames: []string{`{"error":"model not found"}`}}, KindHTTP, 404, "model not found", 0},
		{"http 503 plain text", &script{status: 503, frames: []string{"busy\n"}}, KindHTTP, 503, "busy", 0},
		{"malformed JSON", &script{frames: []string{content("a"), "data: {\"choices\":[{\"delta\":\n\n", done}}, KindMalformed, 200, "not a JSON chunk", 1},
		{"error object in stream", &script{frames: []string{content("a"), `data: {"error":{"message":"out of memory"}}` + "\n\n"}}, KindHTTP, 200, "out of memory", 1},
		{"error event type", &script{frames: []string{"event: error\ndata: boom\n\n"}}, KindHTTP, 200, "boom", 0},
		{"JSON instead of a stream", &script{ctype: "application/json", frames: []string{`{"choices":[]}`}}, KindMalformed, 200, "not an event stream", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := newScript(t, tt.s)
			tr := c.Do(context.Background(), Request{Prompt: "p"})
			if tr.Err == nil {
				t.Fatalf("Err = nil, want kind %s", tt.wantKind)
			}
			if got := tr.Err.Kind; got != tt.wantKind {
				t.Errorf("Kind = %s, want %s (%v)", got, tt.wantKind, tr.Err)
			}
			if got := tr.Status; got != tt.wantStatus {
				t.Errorf("Status = %d, want %d", got, tt.wantStatus)
			}
			if !strings.Contains(tr.Err.Message, tt.wantMsg) {
				t.Errorf("Message = %q, want it to contain %q", tr.Err.Message, tt.wantMsg)
			}
			if got := tr.ContentEvents(); got != tt.wantTokens {
				t.Errorf("ContentEvents = %d, want %d (what came before the failure is kept)", got, tt.wantTokens)
			}
			if tr.OK() || tr.Err.Kind != tt.wantKind || tr.Err.Error() == "" {
				t.Errorf("Err = %v, want kind %s", tr.Err, tt.wantKind)
			}
		})
	}
}

func TestFinishReasonWithoutDoneIsComplete(t *testing.T) {
	c, _ := newScript(t, &script{frames: []string{content("a"), finish("stop")}})
	tr := c.Do(context.Background(), Request{Prompt: "p"})
	if !tr.OK() {
		t.Errorf("Err = %v, want none: a finish reason ends the answer", tr.Err)
	}
	if tr.Done {
		t.Error("Done = true, want false")
	}
}

func TestUnterminatedDone(t *testing.T) {
	c, _ := newScript(t, &script{frames: []string{content("a"), "data: [DONE]"}})
	tr := c.Do(context.Background(), Request{Prompt: "p"})
	if !tr.OK() || !tr.Done {
		t.Errorf("Err = %v, Done = %v; want a complete stream", tr.Err, tr.Done)
	}
}

func TestConnectRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := &Client{BaseURL: "http://" + addr}
	tr := c.Do(context.Background(), Request{Prompt: "p"})
	if tr.Err == nil || tr.Err.Kind != KindConnect {
		t.Fatalf("Err = %v, want kind connect", tr.Err)
	}
	if tr.Retried {
		t.Error("Retried = true on a fresh connection")
	}
}

func TestTimeoutAndCancel(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, content("a"))
		w.(http.Flusher).Flush()
		select { // hold the stream open until the client gives up
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	c := &Client{BaseURL: srv.URL}

	t.Run("deadline", func(t *testing.T) {
		// The deadline passes once the first token is in, so the outcome
		// never depends on how fast the machine is.
		var once sync.Once
		dl := &deadlineCtx{Context: context.Background(), done: make(chan struct{})}
		tr := c.Do(dl, Request{Prompt: "p", OnToken: func(int, time.Duration) { once.Do(dl.expire) }})
		if tr.Err == nil || tr.Err.Kind != KindTimeout {
			t.Fatalf("Err = %v, want kind timeout", tr.Err)
		}
		if got, want := tr.ContentEvents(), 1; got != want {
			t.Errorf("ContentEvents = %d, want %d", got, want)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		tr := c.Do(ctx, Request{Prompt: "p", OnToken: func(int, time.Duration) { cancel() }})
		if tr.Err == nil || tr.Err.Kind != KindCancelled {
			t.Fatalf("Err = %v, want kind cancelled", tr.Err)
		}
	})
}

// deadlineCtx is a context whose deadline passes when expire is called,
// so a test can make a timeout happen at a chosen point.
type deadlineCtx struct {
	context.Context
	done    chan struct{}
	expired atomic.Bool
}

func (d *deadlineCtx) expire() {
	d.expired.Store(true)
	close(d.done)
}
func (d *deadlineCtx) Done() <-chan struct{} { return d.done }
func (d *deadlineCtx) Err() error {
	if d.expired.Load() {
		return context.DeadlineExceeded
	}
	return nil
}

func TestRetryOnReusedConnectionClosedByServer(t *testing.T) {
	// The server answers the first request on a connection, then closes
	// the connection on the second without answering, as llama-server
	// does with keep-alive.
	var mu sync.Mutex
	perConn := map[string]int{}
	var served atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		perConn[r.RemoteAddr]++
		n := perConn[r.RemoteAddr]
		mu.Unlock()
		if n > 1 {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		served.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, content("a")+finish("stop")+done)
	}))
	t.Cleanup(srv.Close)
	c := &Client{BaseURL: srv.URL}
	first := c.Do(context.Background(), Request{Prompt: "p"})
	if !first.OK() || first.Retried {
		t.Fatalf("first: Err = %v, Retried = %v; want success without retry", first.Err, first.Retried)
	}
	second := c.Do(context.Background(), Request{Prompt: "p"})
	if !second.OK() {
		t.Fatalf("second: Err = %v, want success after a retry", second.Err)
	}
	if !second.Retried {
		t.Error("second: Retried = false, want true")
	}
	if got, want := served.Load(), int32(2); got != want {
		t.Errorf("answered requests = %d, want %d", got, want)
	}
	if got, want := second.Retried, true; got != want {
		t.Errorf("Retried = %v, want %v", got, want)
	}
}

func TestRetryOnlyOnce(t *testing.T) {
	// Every request after the first on any connection is dropped, and the
	// retry's fresh connection answers: but if the server drops fresh
	// connections too, the failure is reported, not retried again.
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if calls.Add(1) == 1 {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, content("a")+done)
			return
		}
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
	}))
	t.Cleanup(srv.Close)
	c := &Client{BaseURL: srv.URL}
	if tr := c.Do(context.Background(), Request{Prompt: "p"}); !tr.OK() {
		t.Fatalf("first: %v", tr.Err)
	}
	tr := c.Do(context.Background(), Request{Prompt: "p"})
	if tr.Err == nil || tr.Err.Kind != KindConnect {
		t.Fatalf("Err = %v, want kind connect", tr.Err)
	}
	if !tr.Retried {
		t.Error("Retried = false, want true (one retry was made)")
	}
	if got, want := calls.Load(), int32(3); got != want {
		t.Errorf("requests seen = %d, want %d (first, failed reuse, one retry)", got, want)
	}
}

func TestMultiTokenEvents(t *testing.T) {
	c, _ := newScript(t, &script{frames: []string{
		`data: {"choices":[{"delta":{"content":"a b c"}}],"tokenpulse":{"server_ns":100,"index":0,"tokens":3}}` + "\n\n",
		`data: {"choices":[{"delta":{"content":" d e"}}],"tokenpulse":{"server_ns":200,"index":3,"tokens":2}}` + "\n\n",
		`data: {"choices":[{"delta":{},"finish_reason":"stop"}],"tokenpulse":{"timings":{"queue_ns":1,"prefill_ns":2,"decode_ns":3}}}` + "\n\n",
		done,
	}})
	tr := c.Do(context.Background(), Request{Prompt: "p"})
	if !tr.OK() {
		t.Fatalf("Err = %v", tr.Err)
	}
	if got, want := tr.TokenCounts, []int{3, 2}; !reflect.DeepEqual(got, want) {
		t.Errorf("TokenCounts = %v, want %v", got, want)
	}
	if got, want := tr.OutputTokens(), 5; got != want {
		t.Errorf("OutputTokens = %d, want %d", got, want)
	}
	if got, want := tr.TokensPerEvent(), 2.5; got != want {
		t.Errorf("TokensPerEvent = %v, want %v", got, want)
	}
	if got, want := tr.TokenCounts, []int{3, 2}; !reflect.DeepEqual(got, want) {
		t.Errorf("TokenCounts = %v, want %v", got, want)
	}
	if got, want := tr.ServerTimes, []int64{100, 200}; !reflect.DeepEqual(got, want) {
		t.Errorf("ServerTimes = %v, want %v", got, want)
	}
	if tr.Timings == nil || tr.Timings.PrefillNS != 2 || tr.Timings.DecodeNS != 3 {
		t.Errorf("Timings = %+v, want the final timings", tr.Timings)
	}
}

func TestUsageAboveEventsMeansBatching(t *testing.T) {
	c, _ := newScript(t, &script{frames: []string{
		content("ab"), content("cd"), finish("stop"),
		`data: {"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":4,"total_tokens":5}}` + "\n\n",
		done,
	}})
	tr := c.Do(context.Background(), Request{Prompt: "p"})
	if got, want := tr.TokensPerEvent(), 2.0; got != want {
		t.Errorf("TokensPerEvent = %v, want %v", got, want)
	}
	if got, want := tr.OutputTokens(), 4; got != want {
		t.Errorf("OutputTokens = %d, want %d", got, want)
	}
}

func TestCompletionsAPI(t *testing.T) {
	c, s := newScript(t, &script{frames: []string{
		`data: {"choices":[{"text":"Hel","finish_reason":null}]}` + "\n\n",
		`data: {"choices":[{"text":"lo","finish_reason":"stop"}]}` + "\n\n",
		done,
	}})
	c.API = "completions"
	c.BaseURL += "/v1/"
	var seen []int
	tr := c.Do(context.Background(), Request{Prompt: "Say hello", OnToken: func(i int, at time.Duration) { seen = append(seen, i) }})
	if !tr.OK() {
		t.Fatalf("Err = %v", tr.Err)
	}
	if got, want := s.path, "/v1/completions"; got != want {
		t.Errorf("path = %q, want %q", got, want)
	}
	if got, want := s.body["prompt"], "Say hello"; got != want {
		t.Errorf("prompt = %v, want %v", got, want)
	}
	if got, want := tr.Text, "Hello"; got != want {
		t.Errorf("Text = %q, want %q", got, want)
	}
	if got, want := seen, []int{0, 1}; !reflect.DeepEqual(got, want) {
		t.Errorf("OnToken indexes = %v, want %v", got, want)
	}
}

func TestUnknownAPI(t *testing.T) {
	c := &Client{BaseURL: "http://127.0.0.1:1", API: "embeddings"}
	tr := c.Do(context.Background(), Request{Prompt: "p"})
	if tr.Err == nil || !strings.Contains(tr.Err.Message, "unknown API") {
		t.Errorf("Err = %v, want unknown API", tr.Err)
	}
}

func TestAbortAndHealth(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/abort", func(w http.ResponseWriter, r *http.Request) {
		id := r.URL.Query().Get("request_id")
		if id == "missing" {
			w.WriteHeader(404)
			io.WriteString(w, `{"error":{"message":"no such request"}}`)
			return
		}
		json.NewEncoder(w).Encode(api.AbortResponse{RequestID: id, Aborted: true, OutputTokens: 4})
	})
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(503)
		io.WriteString(w, `{"status":"warming"}`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c := &Client{BaseURL: srv.URL + "/v1"}
	ar, err := c.Abort(context.Background(), "req 1&x")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := *ar, (api.AbortResponse{RequestID: "req 1&x", Aborted: true, OutputTokens: 4}); got != want {
		t.Errorf("Abort = %+v, want %+v", got, want)
	}
	if _, err := c.Abort(context.Background(), "missing"); err == nil || !strings.Contains(err.Error(), "no such request") {
		t.Errorf("Abort(missing) err = %v, want the server's message", err)
	}
	status, h, err := c.Health(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if status != 503 || h.Status != "warming" {
		t.Errorf("Health = %d %+v, want 503 warming", status, h)
	}
}

func TestKeepAliveReusesConnections(t *testing.T) {
	var mu sync.Mutex
	conns := map[string]bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		conns[r.RemoteAddr] = true
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, content("a")+finish("stop")+done)
	}))
	t.Cleanup(srv.Close)
	c := &Client{BaseURL: srv.URL}
	for range 10 {
		if tr := c.Do(context.Background(), Request{Prompt: "p"}); !tr.OK() {
			t.Fatal(tr.Err)
		}
	}
	if got, want := len(conns), 1; got != want {
		t.Errorf("connections used for 10 sequential requests = %d, want %d", got, want)
	}
}

func TestErrorIsUnwrappable(t *testing.T) {
	c := &Client{BaseURL: "http://127.0.0.1:1"}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tr := c.Do(ctx, Request{Prompt: "p"})
	if tr.Err == nil || tr.Err.Kind != KindCancelled {
		t.Fatalf("Err = %v, want kind cancelled", tr.Err)
	}
	if !errors.Is(tr.Err, context.Canceled) {
		t.Errorf("errors.Is(Err, context.Canceled) = false for %v", tr.Err)
	}
}

func TestCountsSentOnlyWhenEveryEventSaysSo(t *testing.T) {
	for _, tc := range []struct {
		name   string
		frames []string
		want   bool
	}{
		{"extension on every event, tokens left out", []string{
			`data: {"choices":[{"delta":{"content":"a"}}],"tokenpulse":{"server_ns":100,"index":0}}` + "\n\n",
			`data: {"choices":[{"delta":{"content":"b"}}],"tokenpulse":{"server_ns":200,"index":1}}` + "\n\n",
		}, true},
		{"no extension", []string{
			`data: {"choices":[{"delta":{"content":"a"}}]}` + "\n\n",
			`data: {"choices":[{"delta":{"content":"b"}}]}` + "\n\n",
		}, false},
		{"extension on the first event only", []string{
			`data: {"choices":[{"delta":{"content":"a"}}],"tokenpulse":{"server_ns":100,"index":0}}` + "\n\n",
			`data: {"choices":[{"delta":{"content":"b"}}]}` + "\n\n",
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			frames := append(tc.frames, `data: {"choices":[{"delta":{},"finish_reason":"stop"}]}`+"\n\n", done)
			c, _ := newScript(t, &script{frames: frames})
			tr := c.Do(context.Background(), Request{Prompt: "p"})
			if !tr.OK() {
				t.Fatalf("Err = %v", tr.Err)
			}
			if tr.CountsSent != tc.want || !reflect.DeepEqual(tr.TokenCounts, []int{1, 1}) {
				t.Errorf("CountsSent = %v, counts %v; want %v, [1 1]", tr.CountsSent, tr.TokenCounts, tc.want)
			}
		})
	}
}
