package chatpage

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tokenpulse/tokenpulse/internal/browser"
)

// answerTokens is a stream as a llama tokenizer sends it: a space before
// each word, words split across tokens, a newline token, and a second
// line long enough to wrap in a 700 px window.
var answerTokens = []string{" Once", " upon", " a", " time", " there", " was", " a", " ca", "ke", ".", "\n",
	" Tom", " ate", " the", " be", "ginn", "ing", " of", " it", ",", " then", " their", " friends", " came", " fr", "om",
	" the", " vil", "lage", " to", " share", " what", " was", " left", ",", " and", " every", "one", " ag", "reed", " that",
	" it", " was", " the", " best", " cake", " they", " had", " ever", " tas", "ted", "."}

// chatServer serves the chat page and an answer streaming answerTokens,
// to a request with "Authorization: Bearer KEY" when key is not empty.
func chatServer(t *testing.T, key string) *httptest.Server {
	mux := http.NewServeMux()
	mux.Handle("/", Handler())
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		if key != "" && r.Header.Get("Authorization") != "Bearer "+key {
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
	t.Cleanup(ts.Close)
	return ts
}

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
	ts := chatServer(t, key)

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

// wordLinesJS reports, for the answer's text at each width of the
// answer from 60 to 420 px, the words (runs of non-whitespace) narrower
// than the line whose characters do not all sit on one line, as "WIDTH:
// WORD"; and
// whether the first character after the newline starts a line below the
// character before it ("newline: ..."). It reads the characters' boxes
// (a Range per character), whatever elements hold them.
const wordLinesJS = `(() => {
  const answer = document.getElementById("answer");
  const nodes = [];
  const walk = document.createTreeWalker(answer, NodeFilter.SHOW_TEXT);
  for (let n; (n = walk.nextNode()); ) nodes.push(n);
  const chars = []; // {node, off, ch}
  for (const n of nodes) for (let k = 0; k < n.data.length; k++) chars.push({ n, k, ch: n.data[k] });
  const box = (c) => {
    const r = document.createRange();
    r.setStart(c.n, c.k);
    r.setEnd(c.n, c.k + 1);
    return r.getBoundingClientRect();
  };
  const top = (c) => box(c).top;
  const out = [];
  const nl = chars.findIndex((c) => c.ch === "\n");
  if (nl <= 0 || nl + 1 >= chars.length) out.push("newline: no newline in the answer's text");
  else if (!(top(chars[nl + 1]) > top(chars[nl - 1]) + 5)) out.push("newline: the text after it stays on the line before it");
  for (let w = 60; w <= 420; w += 9) {
    answer.style.width = w + "px";
    let word = [];
    const check = () => {
      // A word wider than the line must break (overflow-wrap).
      if (word.length > 1 && word.reduce((s, c) => s + box(c).width, 0) < w) {
        const t0 = top(word[0]);
        if (word.some((c) => Math.abs(top(c) - t0) > 2)) out.push(w + ": " + word.map((c) => c.ch).join(""));
      }
      word = [];
    };
    for (const c of chars) {
      if (/\s/.test(c.ch)) check(); else word.push(c);
    }
    check();
  }
  answer.style.width = "";
  return out.slice(0, 10).join("; ");
})()`

// TestAnswerFlowsAsText streams an answer whose words come in several
// tokens ("ca"+"ke", "fr"+"om") with a newline token, in headless
// Chromium, and checks in the browser's layout that at any width of the
// answer no word is split across two lines and that the newline breaks
// the line. Each token keeps its own span marked for Element Timing.
func TestAnswerFlowsAsText(t *testing.T) {
	if _, err := browser.Find(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and %v", err)
		}
		t.Skip(err)
	}
	ts := chatServer(t, "")
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute) // a safety bound only
	defer cancel()
	tab, stop, err := browser.Start(ctx, 700)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	for _, render := range []string{RenderPerToken, RenderFrame} {
		t.Run(render, func(t *testing.T) {
			id := "flow-" + render
			if err := chromedp.Do(tab, chromedp.Navigate(ts.URL+"/?render="+render), chromedp.WaitReady(chromedp.CSS("#send"))); err != nil {
				t.Fatal(err)
			}
			if _, err := chromedp.Run(tab, chromedp.Evaluate[bool](`tokenpulse.prepare({id: "`+id+`"})`)); err != nil {
				t.Fatal(err)
			}
			if err := chromedp.Do(tab, chromedp.Click(chromedp.CSS("#send"))); err != nil {
				t.Fatal(err)
			}
			if s, err := chromedp.Run(tab, chromedp.Poll[string](`(s => s !== "streaming" && s)(document.getElementById("status").textContent)`)); err != nil || s != "done" {
				t.Fatalf("status %q, %v", s, err)
			}
			bad, err := chromedp.Run(tab, chromedp.Evaluate[string](wordLinesJS))
			if err != nil {
				t.Fatal(err)
			}
			if bad != "" {
				t.Errorf("the live answer does not flow as text: %s", bad)
			}
			// Every token that shows a word keeps a span of its own for
			// Element Timing.
			marked, err := chromedp.Run(tab, chromedp.Evaluate[int](`new Set([...document.querySelectorAll("#answer [elementtiming]")].map(e => e.getAttribute("elementtiming"))).size`))
			if err != nil {
				t.Fatal(err)
			}
			words := 0
			for _, tok := range answerTokens {
				if strings.TrimSpace(tok) != "" {
					words++
				}
			}
			if marked != words {
				t.Errorf("%d tokens marked for Element Timing, want %d (each token that shows text)", marked, words)
			}
			// and Chromium reports each one's paint.
			elem, err := chromedp.Run(tab, chromedp.Evaluate[int](`tokenpulse.result("`+id+`").then(r => r.paintSource.filter((s, i) => s === "element" && r.text[i].trim() !== "").length)`, chromedp.EvalAwaitPromise))
			if err != nil {
				t.Fatal(err)
			}
			if elem != words {
				t.Errorf("%d tokens painted per Element Timing, want %d (each token that shows text)", elem, words)
			}
		})
	}
}

// TestDoneMeansShown streams a whole answer in one write, so that it
// arrives, ends and would be marked "done" before the next frame; under
// the frame and debounce strategies, which hold tokens until a frame or
// a timer, the status line must still say "done" only once the whole
// answer is on the page.
func TestDoneMeansShown(t *testing.T) {
	if _, err := browser.Find(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and %v", err)
		}
		t.Skip(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/", Handler())
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		var b strings.Builder
		for _, tok := range answerTokens {
			fmt.Fprintf(&b, "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", tok)
		}
		b.WriteString("data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
		fmt.Fprint(w, b.String())
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute) // a safety bound only
	defer cancel()
	tab, stop, err := browser.Start(ctx, 700)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	want := strings.TrimLeft(strings.Join(answerTokens, ""), " ")
	want = strings.ReplaceAll(want, "\n ", "\n")
	for _, render := range []string{RenderFrame, RenderDebounce} {
		t.Run(render, func(t *testing.T) {
			if err := chromedp.Do(tab, chromedp.Navigate(ts.URL+"/?render="+render), chromedp.WaitReady(chromedp.CSS("#send")),
				chromedp.Click(chromedp.CSS("#send"))); err != nil {
				t.Fatal(err)
			}
			// One evaluation reads the status and the answer together.
			got, err := chromedp.Run(tab, chromedp.Poll[string](`(s => s !== "streaming" && s !== "ready" && s + "|" + document.getElementById("answer").textContent)(document.getElementById("status").textContent)`))
			if err != nil {
				t.Fatal(err)
			}
			if got != "done|"+want {
				t.Errorf("status|answer %q, want %q", got, "done|"+want)
			}
		})
	}
}

// TestPageSendsTheConversation: a person's second question is sent after
// the first question and its answer, so that the model answers in
// context; a driver's prepared request (bench --browser) sends its own
// prompt alone, so that a measured prompt is the suite's.
func TestPageSendsTheConversation(t *testing.T) {
	if _, err := browser.Find(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and %v", err)
		}
		t.Skip(err)
	}
	type message struct{ Role, Content string }
	var mu sync.Mutex
	var sent [][]message
	mux := http.NewServeMux()
	mux.Handle("/", Handler())
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Messages []message }
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		sent = append(sent, body.Messages)
		n := len(sent)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"id\":\"c%d\",\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"hm\"}}]}\n\n", n)
		fmt.Fprintf(w, "data: {\"id\":\"c%d\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"answer %d\"}}]}\n\n", n, n)
		if n == 4 { // the last answer is cut at the token limit
			fmt.Fprintf(w, "data: {\"id\":\"c%d\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}]}\n\n", n)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute) // a safety bound only
	defer cancel()
	tab, stop, err := browser.Start(ctx, 700)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if err := chromedp.Do(tab, chromedp.Navigate(ts.URL+"/"), chromedp.WaitReady(chromedp.CSS("#send"))); err != nil {
		t.Fatal(err)
	}
	ask := func(js string) {
		t.Helper()
		if _, err := chromedp.Run(tab, chromedp.Evaluate[bool](js+"; true")); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(tab, chromedp.Click(chromedp.CSS("#send"))); err != nil {
			t.Fatal(err)
		}
		if s, err := chromedp.Run(tab, chromedp.Poll[string](`(s => s !== "streaming" && s)(document.getElementById("status").textContent)`)); err != nil || s != "done" {
			t.Fatalf("status %q, %v", s, err)
		}
	}
	ask(`document.getElementById("prompt").value = "first?"`)
	if box, err := chromedp.Run(tab, chromedp.Evaluate[string](`document.getElementById("prompt").value`)); err != nil || box != "" {
		t.Errorf("the prompt box holds %q after a person's send, want it empty (%v)", box, err)
	}
	ask(`document.getElementById("prompt").value = "second?"`)
	ask(`tokenpulse.prepare({id: "driven", prompt: "measured"})`)
	ask(`document.getElementById("prompt").value = "third?"`)
	if note, err := chromedp.Run(tab, chromedp.Evaluate[string](`document.getElementById("notice").hidden ? "" : document.getElementById("notice").textContent`)); err != nil || !strings.Contains(note, "cut at the token limit") {
		t.Errorf("an answer cut at max_tokens shows %q, want a note saying so (%v)", note, err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := [][]message{
		{{"user", "first?"}},
		{{"user", "first?"}, {"assistant", "answer 1"}, {"user", "second?"}},
		{{"user", "measured"}},
		{{"user", "first?"}, {"assistant", "answer 1"}, {"user", "second?"}, {"assistant", "answer 2"}, {"user", "third?"}},
	}
	if fmt.Sprint(sent) != fmt.Sprint(want) {
		t.Errorf("messages sent:\n%v\nwant\n%v", sent, want)
	}
}
