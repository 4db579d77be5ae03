package chatpage

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/tokenpulse/tokenpulse/internal/browser"
)

// TestHandlerSetsCSP: every page answer carries Policy, and Policy allows
// nothing inline and nothing from another origin.
func TestHandlerSetsCSP(t *testing.T) {
	ts := httptest.NewServer(Handler())
	defer ts.Close()
	for _, path := range []string{"/", "/app.js", "/style.css"} {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("Content-Security-Policy"); got != Policy {
			t.Errorf("GET %s: Content-Security-Policy %q, want %q", path, got, Policy)
		}
	}
	for _, d := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'none'"} {
		if !strings.Contains(Policy, d+";") && !strings.HasSuffix(Policy, d) {
			t.Errorf("Policy lacks %q: %s", d, Policy)
		}
	}
	if strings.Contains(Policy, "unsafe") || strings.Contains(Policy, "*") {
		t.Errorf("Policy allows too much: %s", Policy)
	}
	for _, name := range []string{"index.html", "app.js"} {
		if b := string(mustRead(t, name)); strings.Contains(b, "<style") || strings.Contains(b, " style=") || strings.Contains(b, "<script>") {
			t.Errorf("%s holds inline style or script, which Policy blocks", name)
		}
	}
}

// cspWatch records, in a page, every securitypolicyviolation event from
// the first moment of the document: it is added through the DevTools
// protocol, which the page's policy does not govern.
const cspWatch = `window.__csp = [];
document.addEventListener("securitypolicyviolation", (e) => window.__csp.push(e.violatedDirective + " " + (e.blockedURI || "inline")), true);`

// TestPageWorksUnderItsPolicy drives the page in headless Chromium under
// its policy: it loads its script and stylesheet, streams an answer from
// its origin and aborts, with no CSP violation (the in-page
// securitypolicyviolation event, the console) and no script error. A page
// with an inline style and script under the same policy does raise
// violations there: the check can fail.
func TestPageWorksUnderItsPolicy(t *testing.T) {
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
		for i, tok := range []string{"Once", " upon", " a", " time"} {
			fmt.Fprintf(w, "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}],\"tokenpulse\":{\"server_ns\":%d}}\n\n", tok, i+1)
			w.(http.Flusher).Flush()
		}
		fmt.Fprint(w, "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	})
	mux.HandleFunc("POST /v1/abort", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "{}") })
	mux.HandleFunc("GET /inline", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", Policy)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><style>body{color:red}</style><p id="x">x</p><script>document.title="ran"</script>`)
	})
	ts := httptest.NewServer(mux)
	defer ts.Close()

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute) // a safety bound only
	defer cancel()
	tab, stop, err := browser.Start(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	var mu sync.Mutex
	var console []string
	listenErr := chromedp.Listen(tab, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *log.EventEntryAdded:
			if strings.Contains(ev.Entry.Text, "Content Security Policy") {
				console = append(console, ev.Entry.Text)
			}
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			console = append(console, "exception: "+msg)
		}
	})
	if listenErr != nil {
		t.Fatal(listenErr)
	}
	if _, err := chromedp.Call(tab, log.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(tab, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: cspWatch}); err != nil {
		t.Fatal(err)
	}

	if err := chromedp.Do(tab, chromedp.Navigate(ts.URL+"/?render=per-token"), chromedp.WaitReady(chromedp.CSS("#send")),
		chromedp.Click(chromedp.CSS("#send"))); err != nil {
		t.Fatal(err)
	}
	status, err := chromedp.Run(tab, chromedp.Poll[string](`(s => s !== "streaming" && s)(document.getElementById("status").textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	text, err := chromedp.Run(tab, chromedp.Evaluate[string](`document.getElementById("answer").textContent`))
	if err != nil {
		t.Fatal(err)
	}
	background, err := chromedp.Run(tab, chromedp.Evaluate[string](`getComputedStyle(document.getElementById("send")).backgroundColor`))
	if err != nil {
		t.Fatal(err)
	}
	violations, err := chromedp.Run(tab, chromedp.Evaluate[[]string](`window.__csp`))
	if err != nil {
		t.Fatal(err)
	}
	if status != "done" || text != "Once upon a time" {
		t.Errorf("the page under its policy: status %q, answer %q; want done, \"Once upon a time\"", status, text)
	}
	if background != "rgb(37, 99, 235)" {
		t.Errorf("the send button's background is %q: style.css did not apply", background)
	}
	mu.Lock()
	if len(violations) > 0 || len(console) > 0 {
		t.Errorf("CSP violations %q, console %q; want none", violations, console)
	}
	console = nil
	mu.Unlock()

	// The control: inline style and script under the same policy.
	if err := chromedp.Do(tab, chromedp.Navigate(ts.URL+"/inline"), chromedp.WaitReady(chromedp.CSS("#x"))); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(tab, chromedp.Poll[bool](`window.__csp.length >= 2`)); err != nil {
		t.Fatal(err)
	}
	if violations, err = chromedp.Run(tab, chromedp.Evaluate[[]string](`window.__csp`)); err != nil {
		t.Fatal(err)
	}
	title, err := chromedp.Run(tab, chromedp.Title())
	if err != nil {
		t.Fatal(err)
	}
	// The console reports them too (Log entries, asynchronously).
	for {
		mu.Lock()
		n := len(console)
		mu.Unlock()
		if n > 0 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("inline page: the console reported no CSP violation")
		case <-time.After(10 * time.Millisecond):
		}
	}
	if title == "ran" || len(violations) < 2 {
		t.Errorf("inline page: title %q, violations %q; want the script blocked and two violations seen", title, violations)
	}
}
