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

//go:embed index.html app.js
var files embed.FS

// Handler serves the page: index.html at / and app.js beside it; any other
// path is 404. It takes GET and HEAD only.
func Handler() http.Handler {
	fs := http.FileServerFS(files)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		switch r.URL.Path {
		case "/", "/index.html", "/app.js":
		default:
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		// Cross-origin isolation gives the page its finest clock (the
		// timers and paint times of an isolated page are not coarsened).
		w.Header().Set("Cross-Origin-Opener-Policy", "same-origin")
		w.Header().Set("Cross-Origin-Embedder-Policy", "require-corp")
		fs.ServeHTTP(w, r)
	})
}

// Serves reports whether Handler serves path.
func Serves(path string) bool {
	return path == "/" || path == "/index.html" || path == "/app.js"
}
