package server

import (
	"bufio"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tokenpulse/tokenpulse/api"
)

func newTestServer(t testing.TB, b Backend, o Options) (*Server, *httptest.Server, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	o.Registry = reg
	s, err := New(b, o)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return s, ts, reg
}

const chatBody = `{"model":"fake-1","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}}`

func TestStreamContract(t *testing.T) {
	f := newFake("Once", " upon", " a", " time")
	_, ts, _ := newTestServer(t, f, Options{})
	resp := post(t, t.Context(), ts.URL+"/v1/chat/completions", chatBody, api.HeaderRequestID, "my-id 42")
	defer resp.Body.Close()
	if got, want := resp.StatusCode, 200; got != want {
		t.Fatalf("status: got %d, want %d: %s", got, want, readAll(t, resp.Body))
	}
	if got, want := resp.Header.Get("Content-Type"), "text/event-stream"; got != want {
		t.Errorf("content type: got %q, want %q", got, want)
	}
	if got, want := resp.Header.Get(api.HeaderRequestID), "my-id 42"; got != want {
		t.Errorf("X-Request-ID echo: got %q, want %q", got, want)
	}
	br := bufio.NewReader(resp.Body)
	first, err := br.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	blank, _ := br.ReadString('\n')
	if got, want := first+blank, "retry: 0\n\n"; got != want {
		t.Fatalf("first frame: got %q, want %q", got, want)
	}
	var text strings.Builder
	var events []event
	for {
		ev, err := readEvent(t, br)
		if err != nil {
			t.Fatalf("stream cut after %d events: %v", len(events), err)
		}
		events = append(events, ev)
		if got, want := ev.id, "my-id 42"; got != want {
			t.Errorf("event %d id: got %q, want %q", len(events)-1, got, want)
		}
		if ev.data == "[DONE]" {
			break
		}
	}
	// 4 tokens, the finish event, the usage event, [DONE].
	if got, want := len(events), 7; got != want {
		t.Fatalf("events: got %d, want %d", got, want)
	}
	for i, ev := range events[:4] {
		c := ev.chunk
		if got, want := c.Object, "chat.completion.chunk"; got != want {
			t.Errorf("event %d object: got %q, want %q", i, got, want)
		}
		if c.Tokenpulse == nil {
			t.Fatalf("event %d has no tokenpulse extension", i)
		}
		x := c.Tokenpulse
		if x.Index != i || x.Tokens != 1 || x.ServerNS <= 0 || x.OffsetNS <= 0 {
			t.Errorf("event %d extension: got %+v, want index %d, tokens 1, times > 0", i, *x, i)
		}
		if i > 0 && x.OffsetNS < events[i-1].chunk.Tokenpulse.OffsetNS {
			t.Errorf("event %d offset went back in time", i)
		}
		if c.Choices[0].FinishReason != nil {
			t.Errorf("event %d has a finish reason", i)
		}
		text.WriteString(c.Choices[0].Delta.Content)
	}
	if got, want := events[0].chunk.Choices[0].Delta.Role, "assistant"; got != want {
		t.Errorf("first delta role: got %q, want %q", got, want)
	}
	if got, want := text.String(), "Once upon a time"; got != want {
		t.Errorf("text: got %q, want %q", got, want)
	}
	fin := events[4].chunk
	if fin.Choices[0].FinishReason == nil || *fin.Choices[0].FinishReason != "stop" {
		t.Errorf("finish event: got %+v, want finish_reason stop", fin.Choices[0])
	}
	if fin.Tokenpulse == nil || fin.Tokenpulse.Timings == nil {
		t.Fatalf("finish event carries no timings: %s", events[4].data)
	}
	tm := fin.Tokenpulse.Timings
	if tm.QueueNS < 0 || tm.PrefillNS != 1e6 || tm.DecodeNS != 2e6 || tm.OutputTokens != 4 || tm.PromptTokens != 7 {
		t.Errorf("timings: got %+v", *tm)
	}
	u := events[5].chunk
	if u.Usage == nil || len(u.Choices) != 0 {
		t.Fatalf("usage event: got %s", events[5].data)
	}
	if got, want := *u.Usage, (api.Usage{PromptTokens: 7, CompletionTokens: 4, TotalTokens: 11}); got != want {
		t.Errorf("usage: got %+v, want %+v", got, want)
	}
}

func TestFreshRequestIDs(t *testing.T) {
	f := newFake("a")
	_, ts, _ := newTestServer(t, f, Options{})
	hex := regexp.MustCompile(`^[0-9a-f]{32}$`)
	seen := map[string]bool{}
	for range 3 {
		resp := post(t, t.Context(), ts.URL+"/v1/chat/completions", chatBody)
		body := readAll(t, resp.Body)
		resp.Body.Close()
		id := resp.Header.Get(api.HeaderRequestID)
		if !hex.MatchString(id) {
			t.Fatalf("fresh id: got %q, want 32 hex digits", id)
		}
		if seen[id] {
			t.Fatalf("id %q repeated", id)
		}
		seen[id] = true
		if !strings.Contains(body, "id: "+id+"\n") {
			t.Errorf("stream does not carry id %q", id)
		}
	}
}

func TestNonStreamed(t *testing.T) {
	f := newFake("Hello", ",", " world")
	_, ts, _ := newTestServer(t, f, Options{})
	for _, tc := range []struct {
		name, path, body string
	}{
		{"chat", "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}]}`},
		{"completion", "/v1/completions", `{"prompt":"hi"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := post(t, t.Context(), ts.URL+tc.path, tc.body)
			defer resp.Body.Close()
			var c api.Completion
			if err := json.NewDecoder(resp.Body).Decode(&c); err != nil {
				t.Fatal(err)
			}
			var got string
			if c.Choices[0].Message != nil {
				got = string(c.Choices[0].Message.Content)
			} else {
				got = *c.Choices[0].Text
			}
			if want := "Hello, world"; got != want {
				t.Errorf("text: got %q, want %q", got, want)
			}
			if got, want := c.Usage.CompletionTokens, 3; got != want {
				t.Errorf("completion tokens: got %d, want %d", got, want)
			}
			if c.Tokenpulse == nil || c.Tokenpulse.Timings == nil {
				t.Errorf("no timings in %+v", c)
			}
			if got, want := c.Model, "fake-1"; got != want {
				t.Errorf("default model: got %q, want %q", got, want)
			}
		})
	}
}

func TestCompletionsStream(t *testing.T) {
	f := newFake("x", "y")
	_, ts, _ := newTestServer(t, f, Options{})
	resp := post(t, t.Context(), ts.URL+"/v1/completions", `{"prompt":"a","stream":true,"max_tokens":1}`)
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	ev, _ := readEvent(t, br) // retry
	if got, want := ev.retry, "0"; got != want {
		t.Fatalf("retry: got %q, want %q", got, want)
	}
	ev, _ = readEvent(t, br)
	if got, want := ev.chunk.Object, "text_completion"; got != want {
		t.Errorf("object: got %q, want %q", got, want)
	}
	if got, want := *ev.chunk.Choices[0].Text, "x"; got != want {
		t.Errorf("text: got %q, want %q", got, want)
	}
	ev, _ = readEvent(t, br)
	if fr := ev.chunk.Choices[0].FinishReason; fr == nil || *fr != "length" {
		t.Errorf("finish: got %v, want length", fr)
	}
}

func TestBatchedPieceIsOneEvent(t *testing.T) {
	f := newFake("ab", "cd")
	f.pieceTokens = 2
	_, ts, reg := newTestServer(t, f, Options{})
	resp := post(t, t.Context(), ts.URL+"/v1/chat/completions", chatBody)
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	readEvent(t, br)
	for i := range 2 {
		ev, err := readEvent(t, br)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := *ev.chunk.Tokenpulse, (api.Extension{ServerNS: ev.chunk.Tokenpulse.ServerNS, OffsetNS: ev.chunk.Tokenpulse.OffsetNS, Index: 2 * i, Tokens: 2}); got != want {
			t.Errorf("event %d: got %+v, want %+v", i, got, want)
		}
	}
	readAll(t, br)
	if got, want := metricValue(t, reg, "tokenpulse_server_tokens_total"), 4.0; got != want {
		t.Errorf("tokens_total: got %v, want %v", got, want)
	}
	// One gap observation per token: 4 tokens, 3 gaps.
	if got, want := metricValue(t, reg, "tokenpulse_server_token_gap_seconds"), 3.0; got != want {
		t.Errorf("gap observations: got %v, want %v", got, want)
	}
}

func TestHealthAfterWarmUp(t *testing.T) {
	s, ts, _ := newTestServer(t, newFake(), Options{})
	get := func() (int, api.Health) {
		resp, err := http.Get(ts.URL + "/health")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var h api.Health
		json.NewDecoder(resp.Body).Decode(&h)
		return resp.StatusCode, h
	}
	if code, h := get(); code != 503 || h.Status != "warming" {
		t.Errorf("before warm-up: got %d %q, want 503 warming", code, h.Status)
	}
	if err := s.WarmUp(t.Context()); err != nil {
		t.Fatal(err)
	}
	code, h := get()
	if code != 200 || h.Status != "ready" || h.Warmup == nil {
		t.Fatalf("after warm-up: got %d %+v, want 200 ready with breakdown", code, h)
	}
	if got, want := *h.Warmup, (api.Warmup{LoadNS: 1, PageInNS: 2, KVInitNS: 3, FirstForwardNS: 4, TotalNS: 10}); got != want {
		t.Errorf("breakdown: got %+v, want %+v", got, want)
	}
}

func TestModelsAndMetrics(t *testing.T) {
	_, ts, _ := newTestServer(t, newFake("a"), Options{})
	resp, err := http.Get(ts.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	var l api.ModelList
	json.NewDecoder(resp.Body).Decode(&l)
	resp.Body.Close()
	if len(l.Data) != 1 || l.Data[0].ID != "fake-1" {
		t.Errorf("models: got %+v", l)
	}
	r := post(t, t.Context(), ts.URL+"/v1/chat/completions", chatBody)
	readAll(t, r.Body)
	r.Body.Close()
	resp, err = http.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(t, resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`tokenpulse_server_ttft_seconds_bucket{le="0.05"}`,
		`tokenpulse_server_ttft_seconds_bucket{le="2"}`,
		"tokenpulse_server_token_gap_seconds_count",
		"tokenpulse_server_queue_seconds_count",
		"tokenpulse_server_e2e_seconds_count 1",
		"tokenpulse_server_tokens_total 1",
		`tokenpulse_server_requests_total{code="200",route="chat"} 1`,
		"tokenpulse_server_tokens_after_abort_total 0",
		"tokenpulse_server_in_flight_requests 0",
		// Before any abort, every reason shows 0.
		`tokenpulse_server_aborts_total{reason="disconnect"} 0`,
		`tokenpulse_server_aborts_total{reason="endpoint"} 0`,
		`tokenpulse_server_aborts_total{reason="shutdown"} 0`,
		// The Go runtime's and the process's collectors.
		"go_goroutines ",
		"process_resident_memory_bytes ",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

func TestExposure(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
		ok   bool
	}{
		{"loopback v4", Options{Addr: "127.0.0.1:8080"}, true},
		{"loopback v6", Options{Addr: "[::1]:8080"}, true},
		{"localhost", Options{Addr: "localhost:8080"}, true},
		{"all interfaces", Options{Addr: ":8080"}, false},
		{"any v4", Options{Addr: "0.0.0.0:8080"}, false},
		{"lan", Options{Addr: "192.168.1.5:80"}, false},
		{"name", Options{Addr: "example.com:80"}, false},
		{"any with key", Options{Addr: "0.0.0.0:8080", APIKey: "k"}, true},
		{"any insecure", Options{Addr: "0.0.0.0:8080", Insecure: true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(newFake(), tc.o)
			if got := err == nil; got != tc.ok {
				t.Fatalf("New(%+v): got err %v, want ok=%v", tc.o, err, tc.ok)
			}
			if err != nil && !errors.Is(err, ErrExposed) {
				t.Errorf("err: got %v, want ErrExposed", err)
			}
		})
	}
}

func TestValidRequestID(t *testing.T) {
	for _, tc := range []struct {
		id   string
		want bool
	}{
		{"abc", true},
		{"with space ~!", true},
		{strings.Repeat("a", 128), true},
		{strings.Repeat("a", 129), false},
		{"", false},
		{"tab\there", false},
		{"nl\n", false},
		{"é", false},
		{"del\x7f", false},
	} {
		if got := ValidRequestID(tc.id); got != tc.want {
			t.Errorf("ValidRequestID(%q): got %v, want %v", tc.id, got, tc.want)
		}
	}
}
