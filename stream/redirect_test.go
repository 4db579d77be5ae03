package stream

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// elsewhere is a server on another origin that records every request it
// gets.
type elsewhere struct {
	*httptest.Server
	mu       sync.Mutex
	requests []string // method, path, the credentials seen, the body
}

func newElsewhere(t *testing.T) *elsewhere {
	t.Helper()
	e := &elsewhere{}
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		e.mu.Lock()
		e.requests = append(e.requests, r.Method+" "+r.URL.Path+" Authorization="+r.Header.Get("Authorization")+" api-key="+r.Header.Get("Api-Key")+" body="+string(b))
		e.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, content("stolen")+finish("stop")+done)
	}))
	t.Cleanup(e.Close)
	return e
}

func (e *elsewhere) seen() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.requests...)
}

// redirector answers every request with status, sending it to the same
// path on to.
func redirector(t *testing.T, status int, to string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		http.Redirect(w, r, to+r.URL.RequestURI(), status)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestRedirectToAnotherOriginIsNotFollowed(t *testing.T) {
	for _, status := range []int{301, 302, 303, 307, 308} {
		for _, user := range []struct {
			name string
			hc   *http.Client
		}{
			{"default client", nil},
			{"caller's client", &http.Client{}}, // Go's own policy follows redirects
			{"caller's client following everything", &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return nil }}},
		} {
			e := newElsewhere(t)
			from := redirector(t, status, e.URL)
			c := &Client{BaseURL: from.URL, Model: "m", APIKey: "secret", Header: http.Header{"api-key": {"azure-secret"}}, HTTP: user.hc}
			ctx := context.Background()
			name := http.StatusText(status) + ", " + user.name

			tr := c.Do(ctx, Request{Prompt: "the user's private prompt"})
			if tr.Err == nil || tr.Err.Kind != KindHTTP || tr.Status != status || !strings.Contains(tr.Err.Message, e.URL+"/v1/chat/completions") {
				t.Errorf("%s: Do: status %d, Err = %v; want an http error %d naming %s", name, tr.Status, tr.Err, status, e.URL+"/v1/chat/completions")
			}
			if _, err := c.Models(ctx); err == nil || !strings.Contains(err.Error(), e.URL+"/v1/models") {
				t.Errorf("%s: Models: err = %v, want one naming %s", name, err, e.URL+"/v1/models")
			}
			if st, _, err := c.Health(ctx); st != status || err == nil || !strings.Contains(err.Error(), e.URL+"/health") {
				t.Errorf("%s: Health: %d, err = %v, want %d and an error naming %s", name, st, err, status, e.URL+"/health")
			}
			if _, err := c.Abort(ctx, "r1"); err == nil || !strings.Contains(err.Error(), e.URL+"/v1/abort?request_id=r1") {
				t.Errorf("%s: Abort: err = %v, want one naming %s", name, err, e.URL+"/v1/abort?request_id=r1")
			}
			if got := e.seen(); len(got) != 0 {
				t.Errorf("%s: the other origin got %q, want nothing", name, got)
			}
		}
	}
}

func TestRedirectToTheSameOrigin(t *testing.T) {
	var mu sync.Mutex
	var auth []string
	mux := http.NewServeMux()
	mux.HandleFunc("/old/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/v1/chat/completions", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, content("hi")+finish("stop")+done)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	// By default, not followed either: reported with its Location.
	c := &Client{BaseURL: srv.URL + "/old", APIKey: "k"}
	tr := c.Do(context.Background(), Request{Prompt: "p"})
	if tr.Err == nil || tr.Status != 307 || !strings.Contains(tr.Err.Message, srv.URL+"/v1/chat/completions") {
		t.Errorf("default: status %d, Err = %v; want 307 naming the Location", tr.Status, tr.Err)
	}
	// Followed when the caller's client says so: same origin.
	var asked int
	c = &Client{BaseURL: srv.URL + "/old", APIKey: "k", HTTP: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { asked++; return nil }}}
	tr = c.Do(context.Background(), Request{Prompt: "p"})
	if !tr.OK() || tr.Text != "hi" || asked != 1 {
		t.Errorf("caller's policy: Err = %v, text %q, asked %d; want the answer, the policy asked once", tr.Err, tr.Text, asked)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(auth) != 1 || auth[0] != "Bearer k" {
		t.Errorf("Authorization at the same origin: %q, want one Bearer k", auth)
	}
}

func TestRetryClientFollowsNoRedirect(t *testing.T) {
	for _, hc := range []*http.Client{nil, {}, {Transport: &http.Transport{}}} {
		c := &Client{HTTP: hc}
		c.init()
		from, _ := http.NewRequest("POST", "http://a.example:8080/v1/chat/completions", nil)
		to, _ := http.NewRequest("POST", "http://a.example:9090/v1/chat/completions", nil)
		for name, h := range map[string]*http.Client{"client": c.hc, "retry client": c.fresh} {
			if h.CheckRedirect == nil || h.CheckRedirect(to, []*http.Request{from}) != http.ErrUseLastResponse {
				t.Errorf("%s (HTTP %v): a redirect to another port is not refused", name, hc)
			}
		}
		if hc != nil && hc.CheckRedirect != nil {
			t.Errorf("the caller's client was changed")
		}
	}
}
