package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/api"
	"github.com/tokenpulse/tokenpulse/internal/server"
)

// gatewayTo serves a gateway to the upstream handler h and returns the
// gateway server's URL.
func gatewayTo(t *testing.T, h http.HandlerFunc, o Options) string {
	t.Helper()
	up := httptest.NewServer(h)
	t.Cleanup(up.Close)
	o.URL = up.URL
	g, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	s, err := server.New(g, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	gw := httptest.NewServer(s.Handler())
	t.Cleanup(gw.Close)
	return gw.URL
}

func postChat(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, b.String()
}

func TestGatewayUpstreamFailureIs502(t *testing.T) {
	url := gatewayTo(t, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"out of memory","type":"server_error"}}`, http.StatusInternalServerError)
	}, Options{})
	code, body := postChat(t, url, chatBody)
	var eb api.ErrorBody
	json.Unmarshal([]byte(body), &eb)
	if code != http.StatusBadGateway || !strings.Contains(eb.Error.Message, "out of memory") {
		t.Errorf("upstream 500: got %d %s, want 502 with the upstream's message", code, body)
	}

	// An unreachable upstream is a 502 too.
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	g, err := New(Options{URL: dead.URL})
	if err != nil {
		t.Fatal(err)
	}
	s, err := server.New(g, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	gw := httptest.NewServer(s.Handler())
	defer gw.Close()
	if code, body := postChat(t, gw.URL, chatBody); code != http.StatusBadGateway {
		t.Errorf("unreachable upstream: got %d %s, want 502", code, body)
	}
}

func TestGatewayUpstreamTimeoutIs504(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	url := gatewayTo(t, func(w http.ResponseWriter, r *http.Request) {
		select { // never answers in time
		case <-release:
		case <-r.Context().Done():
		}
	}, Options{HeaderTimeout: 10 * time.Millisecond})
	code, body := postChat(t, url, chatBody)
	if code != http.StatusGatewayTimeout || !strings.Contains(body, "upstream_timeout") {
		t.Errorf("upstream timeout: got %d %s, want 504 upstream_timeout", code, body)
	}
}

// TestGatewayStopsAtMaxTokens: an upstream that sends more tokens than
// max_tokens is cut at max_tokens, finishing with "length".
func TestGatewayStopsAtMaxTokens(t *testing.T) {
	url := gatewayTo(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 6 {
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"t%d \"}}]}\n\n", i)
		}
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}, Options{})
	code, body := postChat(t, url, `{"messages":[{"role":"user","content":"hi"}],"stream":true,"max_tokens":2}`)
	if code != 200 {
		t.Fatalf("status %d: %s", code, body)
	}
	if got, want := strings.Count(body, `"content":"t`), 2; got != want {
		t.Errorf("token events: got %d, want %d: %s", got, want, body)
	}
	if !strings.Contains(body, `"finish_reason":"length"`) || strings.Contains(body, "t2 ") {
		t.Errorf("stream: got %s, want it cut at 2 tokens with finish_reason length", body)
	}
}

// TestGatewayFollowsNoRedirect: an upstream that redirects elsewhere gets
// neither the gateway's upstream key nor the prompt sent on; the client
// gets a 502.
func TestGatewayFollowsNoRedirect(t *testing.T) {
	var leaked atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { leaked.Add(1) }))
	defer other.Close()
	url := gatewayTo(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}, Options{APIKey: "upstream-secret"})
	status, _ := postChat(t, url, `{"messages":[{"role":"user","content":"secret prompt"}],"stream":true}`)
	if n := leaked.Load(); n != 0 {
		t.Errorf("the redirect target received %d requests", n)
	}
	if status != http.StatusBadGateway {
		t.Errorf("status %d, want 502", status)
	}
}
