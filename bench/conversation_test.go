package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/api"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stream"
	"github.com/tokenpulse/tokenpulse/suite"
	"github.com/tokenpulse/tokenpulse/tokencount"
)

// chatServer is an OpenAI-compatible server that keeps every request body
// and streams answer n (counted from 0 over its requests) in two events,
// "answer n" and " (part two)", or fails request n when fail[n].
type chatServer struct {
	mu     sync.Mutex
	chats  []api.ChatRequest
	comps  []api.CompletionRequest
	answer []string // what was streamed to each request
	fail   map[int]bool
}

func (s *chatServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	n := len(s.answer)
	if r.URL.Path == "/v1/completions" {
		var c api.CompletionRequest
		json.Unmarshal(body, &c)
		s.comps = append(s.comps, c)
	} else {
		var c api.ChatRequest
		json.Unmarshal(body, &c)
		s.chats = append(s.chats, c)
	}
	parts := []string{fmt.Sprintf("answer %d", n), " (part two)"}
	s.answer = append(s.answer, parts[0]+parts[1])
	fail := s.fail[n]
	s.mu.Unlock()
	if fail {
		http.Error(w, `{"error":{"message":"chatServer failure"}}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for _, p := range parts {
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":null}]}\n\n", p)
		w.(http.Flusher).Flush()
	}
	io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
}

func trip() suite.Prompt {
	return suite.Prompt{ID: "trip", Category: "chat", System: "Be brief.", MaxTokens: 9, Text: "Where to?",
		Turns: []suite.Turn{{Text: "Where to?"}, {Text: "With kids?"}, {Text: "How long?"}}}
}

func TestConversationCarriesEarlierTurnsAndAnswers(t *testing.T) {
	s := &chatServer{}
	srv := httptest.NewServer(s)
	defer srv.Close()
	p := trip()
	reqs, err := Run(context.Background(), Config{Client: &stream.Client{BaseURL: srv.URL, Model: "m"}, Prompts: []suite.Prompt{p}, Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.chats) != 3 || len(reqs) != 3 {
		t.Fatalf("%d requests sent, %d recorded; want 3 and 3", len(s.chats), len(reqs))
	}
	for k, body := range s.chats {
		want := []api.Message{{Role: "system", Content: "Be brief."}}
		for j := range k {
			want = append(want, api.Message{Role: "user", Content: api.Content(p.Turns[j].Text)},
				api.Message{Role: "assistant", Content: api.Content(s.answer[j])})
		}
		want = append(want, api.Message{Role: "user", Content: api.Content(p.Turns[k].Text)})
		if !reflect.DeepEqual(body.Messages, want) {
			t.Errorf("turn %d sent\n %+v\nwant\n %+v", k+1, body.Messages, want)
		}
		if body.MaxTokens == nil || *body.MaxTokens != 9 {
			t.Errorf("turn %d: max_tokens %v, want 9", k+1, body.MaxTokens)
		}
		r := reqs[k]
		if r.Turn != k+1 || r.ConversationID != reqs[0].RequestID || r.PromptID != "trip" || r.Category != "chat" {
			t.Errorf("turn %d recorded as turn %d of %q (%s/%s); want turn %d of %q", k+1, r.Turn, r.ConversationID, r.Category, r.PromptID, k+1, reqs[0].RequestID)
		}
	}
	if reqs[0].ConversationID == "" {
		t.Error("the conversation has no id")
	}
}

func TestConversationCompletionsTemplate(t *testing.T) {
	s := &chatServer{}
	srv := httptest.NewServer(s)
	defer srv.Close()
	c := &stream.Client{BaseURL: srv.URL, Model: "m", API: "completions"}
	if _, err := Run(context.Background(), Config{Client: c, Prompts: []suite.Prompt{trip()}, Concurrency: 1}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"Where to?",
		"Where to?answer 0 (part two)\n\nWith kids?",
		"Where to?answer 0 (part two)\n\nWith kids?answer 1 (part two)\n\nHow long?",
	}
	var got []string
	for _, c := range s.comps {
		got = append(got, string(c.Prompt))
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("prompts\n %q\nwant\n %q", got, want)
	}
}

func TestConversationStopsAtAFailedTurn(t *testing.T) {
	s := &chatServer{fail: map[int]bool{1: true}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	single := suite.Prompt{ID: "one", Category: "short", Text: "Hi?"}
	reqs, err := Run(context.Background(), Config{Client: &stream.Client{BaseURL: srv.URL}, Prompts: []suite.Prompt{trip(), single}, Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	// Turn 1 succeeds, turn 2 fails, turn 3 is never sent; the single
	// prompt follows.
	if len(reqs) != 3 {
		t.Fatalf("%d requests recorded, want 3", len(reqs))
	}
	if reqs[1].OK() || reqs[1].Turn != 2 {
		t.Errorf("request 1: turn %d, error %q; want turn 2 failed", reqs[1].Turn, reqs[1].Error)
	}
	if reqs[2].PromptID != "one" || reqs[2].Turn != 0 || reqs[2].ConversationID != "" {
		t.Errorf("request 2 is %+v, want the single prompt without turn fields", reqs[2])
	}
	for i, r := range reqs {
		if r.Index != i {
			t.Errorf("request %d indexed %d", i, r.Index)
		}
	}
}

// talker is a Doer on a fake clock: it reports each request's prompt on
// started, answers at once, and stamps the start with the clock.
type talker struct {
	clk     *fakeClock
	started chan string
}

func (d *talker) Do(ctx context.Context, req stream.Request) *stream.Trace {
	d.started <- string(req.Messages[len(req.Messages)-1].Content)
	return &stream.Trace{RequestID: stream.NewRequestID(), Start: d.clk.Now(), Text: "ok",
		TokenTimes: []time.Duration{time.Millisecond}, LastEvent: time.Millisecond, Done: true}
}

// sleeper waits until a goroutine sleeps on clk and returns when it is
// to wake.
func sleeper(clk *fakeClock) time.Time {
	for {
		clk.mu.Lock()
		if len(clk.waiters) > 0 {
			at := clk.waiters[0].at
			clk.mu.Unlock()
			return at
		}
		clk.mu.Unlock()
		runtime.Gosched()
	}
}

func TestConversationWaitsThinkTimeOnTheClock(t *testing.T) {
	clk := newFakeClock()
	t0 := clk.Now()
	d := &talker{clk: clk, started: make(chan string)}
	p := suite.Prompt{ID: "c", Category: "chat", Text: "one",
		Turns: []suite.Turn{{Text: "one"}, {Text: "two", Think: 3 * time.Second}, {Text: "three"}}}
	var reqs []runfile.Request
	done := make(chan error)
	go func() {
		var err error
		reqs, err = Run(context.Background(), Config{Client: d, Prompts: []suite.Prompt{p}, Clock: clk, Concurrency: 1})
		done <- err
	}()
	if got := <-d.started; got != "one" {
		t.Fatalf("first request %q, want turn one", got)
	}
	// Turn two waits 3 s after turn one's end (t0 on the clock): the
	// conversation sleeps on the clock until then, and a moment before
	// does not wake it.
	if got, want := sleeper(clk), t0.Add(3*time.Second); !got.Equal(want) {
		t.Fatalf("turn two sleeps until %v, want %v", got.Sub(t0), want.Sub(t0))
	}
	clk.advance(t0.Add(3*time.Second - time.Nanosecond))
	if got, want := sleeper(clk), t0.Add(3*time.Second); !got.Equal(want) {
		t.Fatalf("after 3s−1ns turn two sleeps until %v, want %v", got.Sub(t0), want.Sub(t0))
	}
	select {
	case got := <-d.started:
		t.Fatalf("%q sent before its think time passed", got)
	default:
	}
	clk.advance(t0.Add(3 * time.Second))
	if got := <-d.started; got != "two" {
		t.Fatalf("second request %q, want turn two", got)
	}
	// Turn three has no think time: sent at once, with no clock move.
	if got := <-d.started; got != "three" {
		t.Fatalf("third request %q, want turn three", got)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got, want := reqs[1].ThinkNS, int64(3*time.Second); got != want {
		t.Errorf("turn two think_ns %d, want %d", got, want)
	}
	if reqs[2].ThinkNS != 0 {
		t.Errorf("turn three think_ns %d, want 0", reqs[2].ThinkNS)
	}
}

func TestConversationInOpenLoop(t *testing.T) {
	clk := newFakeClock()
	d := &talker{clk: clk, started: make(chan string, 8)}
	p := suite.Prompt{ID: "c", Category: "chat", Text: "one",
		Turns: []suite.Turn{{Text: "one"}, {Text: "two", Think: 2 * time.Second}}}
	go func() {
		<-d.started
		clk.advance(sleeper(clk))
	}()
	reqs, err := Run(context.Background(), Config{Client: d, Prompts: []suite.Prompt{p}, Schedule: []time.Duration{0}, Clock: clk, Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	// Turn two was due when turn one ended (t0) plus 2 s, and sent then.
	if reqs[1].ScheduledNS == nil || *reqs[1].ScheduledNS != int64(2*time.Second) || reqs[1].ScheduleLagNS != 0 {
		t.Errorf("turn two scheduled %v with lag %d, want 2s and 0", reqs[1].ScheduledNS, reqs[1].ScheduleLagNS)
	}
}

func TestPromptTokensFromTheTokenizer(t *testing.T) {
	tok, err := tokencount.Bundled()
	if err != nil {
		t.Fatal(err)
	}
	defer tok.Close()
	s := &chatServer{}
	srv := httptest.NewServer(s)
	defer srv.Close()
	p := trip()
	reqs, err := Run(context.Background(), Config{Client: &stream.Client{BaseURL: srv.URL}, Prompts: []suite.Prompt{p}, Concurrency: 1, Tokens: tok})
	if err != nil {
		t.Fatal(err)
	}
	for k, r := range reqs {
		var parts []string
		for _, m := range s.chats[k].Messages {
			parts = append(parts, string(m.Content))
		}
		want := tok.Count(strings.Join(parts, "\n"))
		if r.PromptTokens != want || r.PromptTokenSource != "tokenizer" {
			t.Errorf("turn %d: %d prompt tokens from %q, want %d from the tokenizer", k+1, r.PromptTokens, r.PromptTokenSource, want)
		}
		if k > 0 && r.PromptTokens <= reqs[k-1].PromptTokens {
			t.Errorf("turn %d has %d prompt tokens, no more than turn %d's %d", k+1, r.PromptTokens, k, reqs[k-1].PromptTokens)
		}
	}
}

func TestColdConversationSendsItsFirstTurnAlone(t *testing.T) {
	s := &chatServer{}
	srv := httptest.NewServer(s)
	defer srv.Close()
	p := trip()
	reqs, err := Run(context.Background(), Config{Client: &stream.Client{BaseURL: srv.URL}, ColdPrompt: &p,
		WarmupPrompts: []suite.Prompt{p}, Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	// The cold request, then the warm-up conversation's three turns.
	if len(reqs) != 4 || len(s.chats) != 4 {
		t.Fatalf("%d requests recorded, %d sent; want 4 and 4", len(reqs), len(s.chats))
	}
	cold := reqs[0]
	if !cold.Cold || cold.Turn != 0 || cold.ConversationID != "" || len(s.chats[0].Messages) != 2 {
		t.Errorf("cold request %+v sent %d messages; want the first turn alone (system and one user message), no turn fields", cold, len(s.chats[0].Messages))
	}
	for i, r := range reqs[1:] {
		if !r.Warmup || r.Turn != i+1 {
			t.Errorf("warm-up request %d: warmup %v turn %d", i, r.Warmup, r.Turn)
		}
	}
	if got := len(s.chats[3].Messages); got != 6 {
		t.Errorf("the warm-up conversation's third turn sent %d messages, want 6", got)
	}
}
