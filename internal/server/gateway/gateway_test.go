package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tokenpulse/tokenpulse/api"
	"github.com/tokenpulse/tokenpulse/internal/server"
)

// scripted is the upstream's backend: it emits its script, each piece
// waiting for the gate when one is set.
type scripted struct {
	script  []server.Piece
	gate    chan struct{}
	reject  *server.RequestError
	emitted atomic.Int64
	started chan string
	stopped chan error
}

func newScripted(texts ...string) *scripted {
	s := &scripted{started: make(chan string, 64), stopped: make(chan error, 64)}
	for _, t := range texts {
		s.script = append(s.script, server.Piece{Text: t})
	}
	return s
}

func (s *scripted) Models() []string { return []string{"up-model"} }

func (s *scripted) Warmup(context.Context) (*api.Warmup, error) { return nil, nil }

func (s *scripted) Generate(ctx context.Context, req *server.GenRequest, emit func(server.Piece) error) (res server.GenResult, err error) {
	if s.reject != nil {
		return res, s.reject
	}
	s.started <- req.ID
	defer func() { s.stopped <- err }()
	res.PromptTokens = 5
	for i, p := range s.script {
		if i >= req.MaxTokens {
			return res, nil
		}
		if s.gate != nil {
			select {
			case <-s.gate:
			case <-ctx.Done():
				return res, ctx.Err()
			}
		}
		if err := ctx.Err(); err != nil {
			return res, err
		}
		p.At = time.Now()
		s.emitted.Add(1)
		if err := emit(p); err != nil {
			return res, err
		}
		res.OutputTokens += max(p.Tokens, 1)
	}
	return res, nil
}

// chain is a client → gateway server → upstream server chain.
type chain struct {
	up, gw       *httptest.Server
	upReg, gwReg *prometheus.Registry
	g            *Gateway
}

func newChain(t *testing.T, up server.Backend) *chain {
	t.Helper()
	c := &chain{upReg: prometheus.NewRegistry(), gwReg: prometheus.NewRegistry()}
	us, err := server.New(up, server.Options{Registry: c.upReg, Parallel: 4})
	if err != nil {
		t.Fatal(err)
	}
	c.up = httptest.NewServer(us.Handler())
	t.Cleanup(c.up.Close)
	c.g, err = New(Options{URL: c.up.URL + "/v1/"})
	if err != nil {
		t.Fatal(err)
	}
	gs, err := server.New(c.g, server.Options{Registry: c.gwReg, Parallel: 4})
	if err != nil {
		t.Fatal(err)
	}
	if err := gs.WarmUp(t.Context()); err != nil {
		t.Fatal(err)
	}
	c.gw = httptest.NewServer(gs.Handler())
	t.Cleanup(c.gw.Close)
	return c
}

type event struct {
	id    string
	data  string
	chunk *api.Chunk
}

func readEvent(t *testing.T, br *bufio.Reader) (event, error) {
	t.Helper()
	var ev event
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return ev, err
		}
		line = strings.TrimSuffix(line, "\n")
		if line == "" {
			if ev.data == "" && ev.id == "" {
				continue
			}
			break
		}
		k, v, _ := strings.Cut(line, ": ")
		switch k {
		case "id":
			ev.id = v
		case "data":
			ev.data = v
		}
	}
	if ev.data != "" && ev.data != "[DONE]" {
		ev.chunk = new(api.Chunk)
		if err := json.Unmarshal([]byte(ev.data), ev.chunk); err != nil {
			t.Fatal(err)
		}
	}
	return ev, nil
}

func stream(t *testing.T, ctx context.Context, url, id, body string) (*http.Response, *bufio.Reader) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(api.HeaderRequestID, id)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp, bufio.NewReader(resp.Body)
}

const chatBody = `{"messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}}`

// tokens reads a stream to its end and returns the token events' texts,
// checking the contract on the way.
func tokens(t *testing.T, br *bufio.Reader, id string) (texts []string, usage *api.Usage) {
	t.Helper()
	for {
		ev, err := readEvent(t, br)
		if err != nil {
			t.Fatalf("stream cut: %v", err)
		}
		if ev.id != id {
			t.Errorf("event id: got %q, want %q", ev.id, id)
		}
		if ev.data == "[DONE]" {
			return texts, usage
		}
		if ev.chunk.Usage != nil {
			usage = ev.chunk.Usage
		}
		if len(ev.chunk.Choices) == 0 || ev.chunk.Choices[0].FinishReason != nil {
			continue
		}
		x := ev.chunk.Tokenpulse
		if x == nil || x.Index != len(texts) || x.Tokens != 1 || x.ServerNS == 0 {
			t.Errorf("token %d extension: got %+v", len(texts), x)
		}
		texts = append(texts, ev.chunk.Choices[0].Delta.Content)
	}
}

func TestGatewayStreamsThrough(t *testing.T) {
	up := newScripted("Once", " upon", " a", " time")
	c := newChain(t, up)
	if got, want := c.g.Models(), []string{"up-model"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("models after warm-up: got %v, want %v", got, want)
	}
	<-up.started // the warm-up request
	<-up.stopped
	resp, br := stream(t, t.Context(), c.gw.URL, "through-1", chatBody)
	defer resp.Body.Close()
	if got, want := <-up.started, "through-1"; got != want {
		t.Errorf("upstream request id: got %q, want %q", got, want)
	}
	texts, usage := tokens(t, br, "through-1")
	if got, want := strings.Join(texts, "|"), "Once| upon| a| time"; got != want {
		t.Errorf("tokens: got %q, want %q", got, want)
	}
	if usage == nil || usage.CompletionTokens != 4 || usage.PromptTokens != 5 {
		t.Errorf("usage: got %+v, want 5 prompt and 4 completion tokens", usage)
	}
}

func TestGatewaySplitsBatchedChunks(t *testing.T) {
	up := newScripted()
	up.script = []server.Piece{{Text: "abc", Tokens: 3}, {Text: "dé", Tokens: 2}, {Text: "f", Tokens: 3}}
	c := newChain(t, up)
	resp, br := stream(t, t.Context(), c.gw.URL, "split", chatBody)
	defer resp.Body.Close()
	texts, usage := tokens(t, br, "split")
	if got, want := strings.Join(texts, "|"), "a|b|c|d|é|f||"; got != want {
		t.Errorf("tokens: got %q, want %q", got, want)
	}
	if usage == nil || usage.CompletionTokens != 8 {
		t.Errorf("usage: got %+v, want 8 completion tokens", usage)
	}
}

func TestGatewayAbortPropagates(t *testing.T) {
	for _, how := range []string{"endpoint", "disconnect"} {
		t.Run(how, func(t *testing.T) {
			up := newScripted("a", "b", "c", "d", "e")
			c := newChain(t, up)
			<-up.started
			<-up.stopped
			up.gate = make(chan struct{})
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			respc := make(chan *http.Response, 1)
			go func() {
				resp, _ := stream(t, ctx, c.gw.URL, "victim", chatBody)
				respc <- resp
			}()
			<-up.started
			up.gate <- struct{}{}
			resp := <-respc
			defer resp.Body.Close()
			br := bufio.NewReader(resp.Body)
			up.gate <- struct{}{}
			for range 2 {
				if _, err := readEvent(t, br); err != nil {
					t.Fatal(err)
				}
			}
			if how == "endpoint" {
				req, _ := http.NewRequest(http.MethodPost, c.gw.URL+"/v1/abort?request_id=victim", nil)
				r, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				var a api.AbortResponse
				json.NewDecoder(r.Body).Decode(&a)
				r.Body.Close()
				if !a.Aborted || a.TokensAfterAbort != 0 || a.OutputTokens != 2 {
					t.Errorf("abort answer: got %+v, want aborted, 0 after, 2 in all", a)
				}
			} else {
				cancel()
			}
			// The upstream's generation is cancelled: its client (the
			// gateway) went away.
			if err := <-up.stopped; !errors.Is(err, context.Canceled) {
				t.Errorf("upstream backend: got %v, want context.Canceled", err)
			}
			waitFor(func() bool { return counter(t, c.upReg, "tokenpulse_server_aborts_total", "disconnect") == 1 })
			if got, want := up.emitted.Load(), int64(2+1); got != want { // +1: the warm-up token
				t.Errorf("upstream emitted %d tokens, want %d", got, want)
			}
			for name, reg := range map[string]*prometheus.Registry{"upstream": c.upReg, "gateway": c.gwReg} {
				if got := counter(t, reg, "tokenpulse_server_tokens_after_abort_total", ""); got != 0 {
					t.Errorf("%s tokens_after_abort_total: got %v, want 0", name, got)
				}
			}
		})
	}
}

func TestGatewayPassesUpstreamRejection(t *testing.T) {
	up := newScripted("x")
	c := newChain(t, up)
	up.reject = &server.RequestError{Status: 400, Code: "context_length_exceeded", Param: "messages", Message: "prompt is longer than the context"}
	resp, _ := stream(t, t.Context(), c.gw.URL, "rejected", chatBody)
	defer resp.Body.Close()
	if got, want := resp.StatusCode, 400; got != want {
		t.Fatalf("status: got %d, want %d", got, want)
	}
	var eb api.ErrorBody
	json.NewDecoder(resp.Body).Decode(&eb)
	if eb.Error.Code == nil || *eb.Error.Code != "context_length_exceeded" || !strings.Contains(eb.Error.Message, "longer than the context") {
		t.Errorf("error: got %+v", eb.Error)
	}
}

// TestGatewayLlamaStyleUpstream speaks to an upstream shaped like
// llama.cpp's llama-server: a role-only first chunk, per-chunk timings with
// predicted_n (one chunk holding two tokens), no usage, no tokenpulse
// fields.
func TestGatewayLlamaStyleUpstream(t *testing.T) {
	chunks := []string{
		`{"choices":[{"index":0,"delta":{"role":"assistant","content":null},"finish_reason":null}],"object":"chat.completion.chunk"}`,
		`{"choices":[{"index":0,"delta":{"content":"He"},"finish_reason":null}],"timings":{"predicted_n":1}}`,
		`{"choices":[{"index":0,"delta":{"content":"llo"},"finish_reason":null}],"timings":{"predicted_n":3}}`,
		`{"choices":[{"index":0,"delta":{"content":"!"},"finish_reason":null}],"timings":{"predicted_n":4}}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"length"}],"timings":{"predicted_n":4}}`,
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			fmt.Fprint(w, `{"object":"list","data":[{"id":"stories","object":"model"}]}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range chunks {
			fmt.Fprintf(w, "data: %s\n\n", c)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer up.Close()
	g, err := New(Options{URL: up.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Warmup(t.Context()); err != nil {
		t.Fatal(err)
	}
	var got []string
	res, err := g.Generate(t.Context(), &server.GenRequest{ID: "l", Chat: true, MaxTokens: 4, Messages: []api.Message{{Role: "user", Content: "hi"}}},
		func(p server.Piece) error { got = append(got, p.Text); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if want := "He|ll|o|!"; strings.Join(got, "|") != want {
		t.Errorf("pieces: got %q, want %q", strings.Join(got, "|"), want)
	}
	if res.OutputTokens != 4 || res.FinishReason != "length" || res.Upstream != nil {
		t.Errorf("result: got %+v", res)
	}
}

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		text string
		n    int
		want string
	}{
		{"abc", 1, "abc"},
		{"abc", 3, "a|b|c"},
		{"abcde", 2, "abc|de"},
		{"héllo", 5, "h|é|l|l|o"},
		{"ab", 4, "a|b||"},
		{"", 2, "|"},
	} {
		if got := strings.Join(split(tc.text, tc.n), "|"); got != tc.want {
			t.Errorf("split(%q, %d): got %q, want %q", tc.text, tc.n, got, tc.want)
		}
	}
}

func TestNewRejectsBadURL(t *testing.T) {
	if _, err := New(Options{URL: "localhost:8080"}); err == nil {
		t.Error("New accepted a URL without a scheme")
	}
}

func counter(t *testing.T, reg *prometheus.Registry, name, reason string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			ok := reason == ""
			for _, l := range m.GetLabel() {
				if l.GetName() == "reason" && l.GetValue() == reason {
					ok = true
				}
			}
			if ok {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// waitFor polls cond until it holds; the test binary's -timeout bounds it.
func waitFor(cond func() bool) {
	for !cond() {
		time.Sleep(time.Millisecond)
	}
}

// TestBodyCarriesIgnoreEOS checks that ignore_eos reaches the upstream
// when the client asked for it, and only then.
func TestBodyCarriesIgnoreEOS(t *testing.T) {
	for _, want := range []bool{false, true} {
		b, err := body(&server.GenRequest{Chat: true, Messages: []api.Message{{Role: "user", Content: "hi"}}, MaxTokens: 8, IgnoreEOS: want})
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		got, present := m["ignore_eos"]
		if present != want || (want && got != true) {
			t.Errorf("IgnoreEOS %v: body %s", want, b)
		}
	}
}

// TestBodyCarriesCachePrompt checks that a client's cache_prompt: false
// reaches the upstream (llama-server reuses a cached prefix unless told
// not to), and that nothing is sent otherwise.
func TestBodyCarriesCachePrompt(t *testing.T) {
	for _, off := range []bool{false, true} {
		b, err := body(&server.GenRequest{Chat: true, Messages: []api.Message{{Role: "user", Content: "hi"}}, MaxTokens: 8, NoPromptCache: off})
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		got, present := m["cache_prompt"]
		if present != off || (off && got != false) {
			t.Errorf("NoPromptCache %v: body %s", off, b)
		}
	}
}
