package embedded

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/tokenpulse/tokenpulse/api"
	"github.com/tokenpulse/tokenpulse/internal/engine"
	"github.com/tokenpulse/tokenpulse/internal/server"
)

// complete sends one non-streamed chat request and returns its usage.
func complete(t *testing.T, url, body string) api.Usage {
	t.Helper()
	resp, err := http.Post(url+"/v1/chat/completions", "application/json", bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	var c api.Completion
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil {
		t.Fatal(err)
	}
	return c.Usage
}

func cached(u api.Usage) int {
	if u.PromptTokensDetails == nil {
		return 0
	}
	return u.PromptTokensDetails.CachedTokens
}

// chatBody is a greedy chat request of the given user turns.
func chatBody(extra string, turns ...string) string {
	var msgs []api.Message
	for i, t := range turns {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		msgs = append(msgs, api.Message{Role: role, Content: api.Content(t)})
	}
	b, _ := json.Marshal(msgs)
	return fmt.Sprintf(`{"messages": %s, "max_tokens": 8, "temperature": 0%s}`, b, extra)
}

// TestPromptCache checks that a conversation's next turn reuses what its
// session ran, says so in usage, and that cache_prompt: false and
// --prompt-cache=false run the whole prompt.
func TestPromptCache(t *testing.T) {
	for _, off := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoPromptCache=%v", off), func(t *testing.T) {
			b, err := Load(t.Context(), Options{Engine: engine.Options{Threads: 1}, Parallel: 1, NoPromptCache: off})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { b.Close() })
			s, err := server.New(b, server.Options{})
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(s.Handler())
			defer ts.Close()

			first := complete(t, ts.URL, chatBody("", "Once upon a time there was a cat."))
			if cached(first) != 0 {
				t.Errorf("first request: %d cached tokens", cached(first))
			}
			turns := []string{"Once upon a time there was a cat.", "It was big.", "What did the cat do next?"}
			next := complete(t, ts.URL, chatBody("", turns...))
			if off {
				if cached(next) != 0 {
					t.Errorf("--prompt-cache=false: %d cached tokens", cached(next))
				}
				return
			}
			// At least the first turn's template and text are shared.
			if c := cached(next); c < first.PromptTokens-2 || c >= next.PromptTokens {
				t.Errorf("next turn: %d of %d prompt tokens cached; the first turn's prompt was %d", c, next.PromptTokens, first.PromptTokens)
			}
			refused := complete(t, ts.URL, chatBody(`, "cache_prompt": false`, turns...))
			if cached(refused) != 0 {
				t.Errorf("cache_prompt false: %d cached tokens", cached(refused))
			}
			again := complete(t, ts.URL, chatBody(`, "cache_prompt": true`, turns...))
			if cached(again) != again.PromptTokens-1 {
				t.Errorf("the same prompt again: %d of %d cached, want all but the last", cached(again), again.PromptTokens)
			}
		})
	}
}

// TestSessionByPrefix checks that with several sessions a request is
// given the one whose cache shares most of its prompt, so that two
// conversations taking turns each keep their own cache.
func TestSessionByPrefix(t *testing.T) {
	b, err := Load(t.Context(), Options{Engine: engine.Options{Threads: 1}, Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	s, err := server.New(b, server.Options{Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.WarmUp(t.Context()); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	a := []string{"Lily went to the park to play with her ball."}
	c := []string{"Tom had a red boat that he liked very much."}
	complete(t, ts.URL, chatBody("", a...))
	complete(t, ts.URL, chatBody("", c...))
	for round := range 2 {
		for _, conv := range []*[]string{&a, &c} {
			*conv = append(*conv, "And then?", "Tell me more.")
			u := complete(t, ts.URL, chatBody("", *conv...))
			// Each turn's new text is about 10 tokens: most of the prompt
			// must come from the conversation's own session.
			if cached(u) < u.PromptTokens/2 {
				t.Errorf("round %d: %d of %d prompt tokens cached; the other conversation's session was given", round, cached(u), u.PromptTokens)
			}
		}
	}
}
