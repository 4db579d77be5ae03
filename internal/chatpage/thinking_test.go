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

// thinkingServer serves the chat page and a reasoning model's answer:
// three thinking events (delta.reasoning_content, as llama-server sends
// it; delta.reasoning, as vLLM does), one event with both, then answer
// events.
func thinkingServer(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.Handle("/", Handler())
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range []string{
			`{"reasoning_content":"The user"}`, `{"reasoning_content":" greets me."}`, `{"reasoning":" Be brief."}`,
			`{"reasoning":" Done.","content":"Hello"}`, `{"content":" there"}`, `{"content":"!"}`,
		} {
			fmt.Fprintf(w, "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":%s}]}\n\n", ev)
			w.(http.Flusher).Flush()
		}
		fmt.Fprint(w, "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts
}

// TestThinkingApart drives the page in headless Chromium: the thinking
// shows apart from the answer in a collapsed <details>, the answer holds
// the answer's text only, and the record paints the answer's events
// only, marking which events were thinking. A second question archives
// the first turn's thinking, still collapsed.
func TestThinkingApart(t *testing.T) {
	if _, err := browser.Find(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and %v", err)
		}
		t.Skip(err)
	}
	ts := thinkingServer(t)
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
	ask := func(id string) {
		t.Helper()
		if _, err := chromedp.Run(tab, chromedp.Evaluate[bool](`tokenpulse.prepare({id: "`+id+`"})`)); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(tab, chromedp.Click(chromedp.CSS("#send"))); err != nil {
			t.Fatal(err)
		}
		if s, err := chromedp.Run(tab, chromedp.Poll[string](`(s => s !== "streaming" && s)(document.getElementById("status").textContent)`)); err != nil || s != "done" {
			t.Fatalf("status %q, %v", s, err)
		}
	}
	if err := chromedp.Do(tab, chromedp.Navigate(ts.URL+"/?render=per-token"), chromedp.WaitReady(chromedp.CSS("#send"))); err != nil {
		t.Fatal(err)
	}
	ask("think-1")
	if got := eval(`document.getElementById("answer").textContent`); got != "Hello there!" {
		t.Errorf("answer %q, want the answer's text only", got)
	}
	if got := eval(`(d => d.tagName + " hidden=" + d.hidden + " open=" + d.open)(document.getElementById("thinking"))`); got != "DETAILS hidden=false open=false" {
		t.Errorf("thinking element: %s, want a shown, collapsed <details>", got)
	}
	if got := eval(`document.getElementById("thought").textContent`); got != "The user greets me. Be brief. Done." {
		t.Errorf("thinking %q", got)
	}
	if got := eval(`String(document.getElementById("thought").checkVisibility())`); got != "false" {
		t.Errorf("the collapsed thinking is visible (checkVisibility %s)", got)
	}
	if n := eval(`String(document.querySelectorAll("#thinking [elementtiming]").length)`); n != "0" {
		t.Errorf("%s thinking nodes marked for Element Timing", n)
	}
	rec, err := chromedp.Run(tab, chromedp.Evaluate[string](`tokenpulse.result("think-1").then(r => r.reasoning.join(",") + "|" + r.paint.map(p => p >= 0 ? "P" : "-").join(""))`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if want := "only,only,only,with-answer,,|---PPP"; rec != want {
		t.Errorf("record reasoning|paints %q, want %q (thinking events unpainted)", rec, want)
	}

	ask("think-2")
	if got := eval(`[...document.querySelectorAll("#log > *")].map(e => e.tagName + (e.open ? "(open)" : "")).join(",")`); got != "DIV,DETAILS,DIV" {
		t.Errorf("the log holds %s, want question, collapsed thinking, answer", got)
	}
	if !strings.Contains(eval(`document.querySelector("#log details").textContent`), "greets me") {
		t.Error("the archived thinking lost its text")
	}
}
