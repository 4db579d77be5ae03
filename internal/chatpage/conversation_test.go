package chatpage

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tokenpulse/tokenpulse/internal/browser"
)

// answerTokens is a stream as a llama tokenizer sends it: a space before
// each word, words split across tokens, and a newline token.
var answerTokens = []string{" Once", " upon", " a", " time", " there", " was", " a", " ca", "ke", ".", "\n", " Tom", " ate", " the", " be", "ginn", "ing", " of", " it", "."}

// TestPageIsAConversation drives the page in headless Chromium against a
// server that wants an API key: without one, the page says so in words
// (not the raw 401 JSON); with the key typed in its field (kept in
// sessionStorage, sent as a Bearer token) the answer streams with its
// newline kept and no leading space on the answer or its lines; a second question keeps the first turn above it. With
// TOKENPULSE_SHOT=FILE it writes a screenshot there.
func TestPageIsAConversation(t *testing.T) {
	if _, err := browser.Find(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and %v", err)
		}
		t.Skip(err)
	}
	const key = "sekrit"
	mux := http.NewServeMux()
	mux.Handle("/", Handler())
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+key {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":{"message":"invalid API key","type":"invalid_request_error"}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, tok := range answerTokens {
			fmt.Fprintf(w, "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", tok)
			w.(http.Flusher).Flush()
		}
		fmt.Fprint(w, "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	})
	mux.HandleFunc("POST /v1/abort", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "{}") })
	ts := httptest.NewServer(mux)
	defer ts.Close()

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute) // a safety bound only
	defer cancel()
	tab, stop, err := browser.Start(ctx, 700)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	eval := func(js string) string {
		t.Helper()
		s, err := chromedp.Run(tab, chromedp.Evaluate[string](js))
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		return s
	}
	ask := func(prompt string) string {
		t.Helper()
		eval(`document.getElementById("prompt").value = ` + fmt.Sprintf("%q", prompt) + `; ""`)
		if err := chromedp.Do(tab, chromedp.Click(chromedp.CSS("#send"))); err != nil {
			t.Fatal(err)
		}
		s, err := chromedp.Run(tab, chromedp.Poll[string](`(s => s !== "streaming" && s)(document.getElementById("status").textContent)`))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if err := chromedp.Do(tab, chromedp.Navigate(ts.URL+"/?render=frame"), chromedp.WaitReady(chromedp.CSS("#send"))); err != nil {
		t.Fatal(err)
	}

	// No key: a sentence, not the JSON.
	ask("Who are you?")
	notice := eval(`document.getElementById("notice").hidden ? "" : document.getElementById("notice").textContent`)
	if !strings.Contains(notice, "API key") || strings.Contains(notice, "{") {
		t.Errorf("the 401 reads %q: want a sentence naming the API key field, no raw JSON", notice)
	}

	// The key typed in its field.
	if err := chromedp.Do(tab, chromedp.SendKeys(chromedp.CSS("#apikey"), key)); err != nil {
		t.Fatal(err)
	}
	if got := eval(`sessionStorage.getItem("tokenpulse.apiKey") || ""`); got != key {
		t.Errorf("sessionStorage holds %q, want the key", got)
	}
	if s := ask("Tell me a story."); s != "done" {
		t.Fatalf("with the key: status %q", s)
	}
	want := strings.TrimLeft(strings.Join(answerTokens, ""), " ")
	want = strings.ReplaceAll(want, "\n ", "\n")
	if got := eval(`document.getElementById("answer").textContent`); got != want {
		t.Errorf("answer %q, want %q (no leading space, newline kept, no space opening a line)", got, want)
	}
	if got := eval(`getComputedStyle(document.getElementById("answer")).whiteSpace`); got != "pre-wrap" {
		t.Errorf("answer white-space %q, want pre-wrap", got)
	}
	if got := eval(`document.getElementById("notice").hidden ? "hidden" : "shown"`); got != "hidden" {
		t.Errorf("the 401 notice is %s after a good answer", got)
	}

	// A second question: the first turn stays above.
	ask("And then?")
	log := eval(`[...document.querySelectorAll("#log .question")].map(q => q.textContent).join("|")`)
	if log != "Who are you?|Tell me a story." {
		t.Errorf("history questions %q, want both earlier questions", log)
	}
	if got := eval(`document.querySelector("#log .answer:last-child").textContent`); got != want {
		t.Errorf("history keeps the answer %q, want %q", got, want)
	}
	if got := eval(`document.getElementById("question").textContent`); got != "And then?" {
		t.Errorf("the current question shows %q", got)
	}
	if got := eval(`getComputedStyle(document.getElementById("conversation")).overflowY`); got != "auto" {
		t.Errorf("the conversation does not scroll: overflow-y %q", got)
	}
	if path := os.Getenv("TOKENPULSE_SHOT"); path != "" {
		png, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
