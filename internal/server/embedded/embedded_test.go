package embedded

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/tokenpulse/tokenpulse/api"
	"github.com/tokenpulse/tokenpulse/internal/engine"
	"github.com/tokenpulse/tokenpulse/internal/server"
)

func loadBundled(t *testing.T) *Backend {
	t.Helper()
	b, err := Load(t.Context(), Options{Engine: engine.Options{Threads: 1}, Parallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func TestBundledModelServes(t *testing.T) {
	b := loadBundled(t)
	s, err := server.New(b, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	if err := s.WarmUp(t.Context()); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(ts.URL + "/health")
	if err != nil {
		t.Fatal(err)
	}
	var h api.Health
	json.NewDecoder(resp.Body).Decode(&h)
	resp.Body.Close()
	if h.Status != "ready" || h.Model != BundledName || h.Warmup == nil || h.Warmup.PageInNS <= 0 || h.Warmup.FirstForwardNS <= 0 {
		t.Errorf("health: got %+v", h)
	}

	client := openai.NewClient(option.WithBaseURL(ts.URL+"/v1"), option.WithAPIKey("none"), option.WithMaxRetries(0))
	stream := client.Completions.NewStreaming(t.Context(), openai.CompletionNewParams{
		Model:         BundledName,
		Prompt:        openai.CompletionNewParamsPromptUnion{OfString: openai.String("Once upon a time")},
		MaxTokens:     openai.Int(20),
		Temperature:   openai.Float(0),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	})
	var text strings.Builder
	var usage int64
	for stream.Next() {
		c := stream.Current()
		if len(c.Choices) > 0 {
			text.WriteString(c.Choices[0].Text)
		}
		if c.Usage.CompletionTokens > 0 {
			usage = c.Usage.CompletionTokens
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if text.Len() == 0 {
		t.Error("no text from the bundled model")
	}
	if usage < 1 || usage > 20 {
		t.Errorf("completion tokens: got %d, want 1..20", usage)
	}
}

func TestPromptLongerThanContext(t *testing.T) {
	b := loadBundled(t)
	s, err := server.New(b, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	long := strings.Repeat("the cat sat on the mat. ", b.Model().Ctx())
	body, _ := json.Marshal(api.CompletionRequest{Prompt: api.Prompt(long), Stream: true})
	resp, err := http.Post(ts.URL+"/v1/completions", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if got, want := resp.StatusCode, 400; got != want {
		t.Fatalf("status: got %d, want %d", got, want)
	}
	var eb api.ErrorBody
	json.NewDecoder(resp.Body).Decode(&eb)
	if eb.Error.Code == nil || *eb.Error.Code != "context_length_exceeded" {
		t.Errorf("error: got %+v", eb.Error)
	}
}

// abortAfter is a backend wrapper that aborts its own request through the
// server's endpoint once n tokens have left the engine, from inside the
// emit callback: the engine is then between two tokens, and the next check
// of ctx must stop it.
type abortAfter struct {
	*Backend
	n     int
	url   string
	reply atomic.Pointer[api.AbortResponse]
}

func (a *abortAfter) Generate(ctx context.Context, req *server.GenRequest, emit func(server.Piece) error) (server.GenResult, error) {
	seen := 0
	return a.Backend.Generate(ctx, req, func(p server.Piece) error {
		if err := emit(p); err != nil {
			return err
		}
		seen++
		if seen == a.n {
			go func() {
				r, err := http.Post(a.url+"/v1/abort?request_id="+req.ID, "application/json", nil)
				if err != nil {
					return
				}
				var ar api.AbortResponse
				json.NewDecoder(r.Body).Decode(&ar)
				r.Body.Close()
				a.reply.Store(&ar)
			}()
			// Wait until the abort has cancelled the request.
			<-ctx.Done()
		}
		return nil
	})
}

func TestAbortStopsTheEngine(t *testing.T) {
	b := &abortAfter{Backend: loadBundled(t), n: 5}
	s, err := server.New(b, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	b.url = ts.URL
	body := `{"prompt":"Once upon a time","stream":true,"max_tokens":200,"temperature":0}`
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/v1/completions", strings.NewReader(body))
	req.Header.Set(api.HeaderRequestID, "engine-abort")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	tokens, abortEvent := 0, false
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "data: {") {
			continue
		}
		var c api.Chunk
		json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &c)
		if len(c.Choices) == 0 {
			continue
		}
		if fr := c.Choices[0].FinishReason; fr != nil {
			abortEvent = *fr == "abort"
			continue
		}
		tokens++
	}
	if got, want := tokens, 5; got != want {
		t.Errorf("tokens streamed: got %d, want %d", got, want)
	}
	if !abortEvent {
		t.Error("stream did not end with finish_reason abort")
	}
	waitFor(func() bool { return b.reply.Load() != nil })
	if got := *b.reply.Load(); !got.Aborted || got.TokensAfterAbort != 0 || got.OutputTokens != 5 {
		t.Errorf("abort answer: got %+v, want aborted with 0 tokens after, 5 in all", got)
	}
}

func TestFirstStop(t *testing.T) {
	for _, tc := range []struct {
		text  string
		stops []string
		from  int
		want  int
	}{
		{"hello world", []string{"wor"}, 6, 6},
		{"hello world", []string{"wor"}, 8, 6},
		{"hello world", []string{"xyz"}, 6, -1},
		{"hello world", []string{"llo"}, 6, -1}, // completed before this token
		{"ab END cd END", []string{"END", "cd"}, 7, 7},
	} {
		if got := firstStop(tc.text, tc.stops, tc.from); got != tc.want {
			t.Errorf("firstStop(%q, %q, %d): got %d, want %d", tc.text, tc.stops, tc.from, got, tc.want)
		}
	}
}

func waitFor(cond func() bool) {
	for !cond() {
		time.Sleep(time.Millisecond)
	}
}
