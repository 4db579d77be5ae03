// Package chatpage is tokenpulse's chat page: a plain HTML page and a JS
// module, embedded in the binary, that ask an OpenAI-compatible
// /v1/chat/completions on their own origin, stream the answer into the
// page, and abort it (AbortController and /v1/abort) when the user asks
// again. `tokenpulse serve` serves it at / for people; `tokenpulse bench
// --browser` serves it from a local relay and drives it in headless
// Chromium, reading what the page recorded of each answer: in the page's
// clock, the click (t0), each token's arrival, DOM insertion and paint.
//
//	mux.Handle("/", chatpage.Handler())
//
// Render strategies (the page's render= query parameter, or its menu)
// are the experiment of the method: RenderPerToken appends each token as
// it arrives, RenderFrame batches them per animation frame, RenderDebounce
// flushes them 16 ms after the last one.
//
// The handler is safe for concurrent use.
package chatpage

import (
	"embed"
	"net/http"
)

// The render strategies the page knows.
const (
	RenderPerToken = "per-token"
	RenderFrame    = "frame"
	RenderDebounce = "debounce16"
)

// Renders lists the render strategies, in the order reports show them.
var Renders = []string{RenderPerToken, RenderFrame, RenderDebounce}

// ValidRender reports whether s names a render strategy.
func ValidRender(s string) bool {
	for _, r := range Renders {
		if r == s {
			return true
		}
	}
	return false
}

//go:embed index.html app.js style.css
var files embed.FS

// Policy is the page's Content-Security-Policy: it loads its script and
// stylesheet from its own origin only (nothing inline, no eval), talks to
// its own origin only (the completions and /v1/abort), may not be framed,
// and has no base URL or form target to hijack. A script injected into
// the answer could neither run nor send anything elsewhere.
const Policy = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; " +
	"img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Handler serves the page: index.html at /, app.js and style.css beside
// it; any other path is 404. It takes GET and HEAD only. Every answer
// carries Policy, cross-origin isolation (COOP and COEP) and no-store.
func Handler() http.Handler {
	fs := http.FileServerFS(files)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		if !Serves(r.URL.Path) {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Cache-Control", "no-store")
		h.Set("Content-Security-Policy", Policy)
		h.Set("X-Content-Type-Options", "nosniff")
		// Cross-origin isolation gives the page its finest clock (the
		// timers and paint times of an isolated page are not coarsened).
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Embedder-Policy", "require-corp")
		fs.ServeHTTP(w, r)
	})
}

// Serves reports whether Handler serves path.
func Serves(path string) bool {
	switch path {
	case "/", "/index.html", "/app.js", "/style.css":
		return true
	}
	return false
}
