package gateway

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tokenpulse/tokenpulse/api"
	"github.com/tokenpulse/tokenpulse/internal/server"
)

// TestGatewayRetriesAConnectionTheUpstreamDropped plays llama-server's
// keep-alive habit: it answers the first request on a connection, then
// closes the connection when the next request arrives on it, without a
// word. That request was never processed, so the gateway must send it
// again on a fresh connection instead of failing the client's request.
func TestGatewayRetriesAConnectionTheUpstreamDropped(t *testing.T) {
	var mu sync.Mutex
	perConn := map[string]int{}
	var answered, dropped atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		perConn[r.RemoteAddr]++
		n := perConn[r.RemoteAddr]
		mu.Unlock()
		if n > 1 {
			if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
				dropped.Add(1)
				conn.Close()
			}
			return
		}
		answered.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":null}]}\n\n"+
			"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"+
			"data: [DONE]\n\n")
	}))
	t.Cleanup(up.Close)
	g, err := New(Options{URL: up.URL, Model: "up-model"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		var text strings.Builder
		req := &server.GenRequest{ID: "ka-" + string(rune('a'+i)), Model: "up-model", Chat: true, MaxTokens: 8,
			Messages: []api.Message{{Role: "user", Content: "hello"}}}
		res, err := g.Generate(context.Background(), req, func(p server.Piece) error {
			text.WriteString(p.Text)
			return nil
		})
		if err != nil {
			t.Fatalf("request %d: %v (the upstream dropped %d connections)", i, err, dropped.Load())
		}
		if text.String() != "hi" || res.FinishReason != "stop" {
			t.Errorf("request %d: text %q, finish %q; want \"hi\", stop", i, text.String(), res.FinishReason)
		}
	}
	if answered.Load() != 2 {
		t.Errorf("the upstream answered %d requests, want 2", answered.Load())
	}
	if dropped.Load() == 0 {
		t.Error("the upstream never dropped a reused connection: the test did not exercise the retry")
	}
}
