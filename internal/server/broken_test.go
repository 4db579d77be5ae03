package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tokenpulse/tokenpulse/api"
)

// breaking is a backend whose model file vanishes after it has emitted
// one token of its first request.
type breaking struct {
	calls atomic.Int64
}

func (b *breaking) Models() []string                            { return []string{"fake-1"} }
func (b *breaking) Warmup(context.Context) (*api.Warmup, error) { return nil, nil }
func (b *breaking) Generate(ctx context.Context, req *GenRequest, emit func(Piece) error) (GenResult, error) {
	b.calls.Add(1)
	if err := emit(Piece{Text: "a"}); err != nil {
		return GenResult{}, err
	}
	return GenResult{}, fmt.Errorf("engine: model file /m.gguf changed underneath: %w", ErrBroken)
}

func TestBrokenBackendFailsTheRequestAndTheHealth(t *testing.T) {
	b := &breaking{}
	s, ts, _ := newTestServer(t, b, Options{})
	if err := s.WarmUp(t.Context()); err != nil {
		t.Fatal(err)
	}
	resp := post(t, t.Context(), ts.URL+"/v1/chat/completions", chatBody)
	body := readAll(t, resp.Body)
	resp.Body.Close()
	if !strings.Contains(body, `"error"`) || !strings.Contains(body, "model file /m.gguf changed") || strings.Contains(body, "[DONE]") {
		t.Errorf("stream in flight: got %q, want an error event and no [DONE]", body)
	}

	resp, err := http.Get(ts.URL + "/health")
	if err != nil {
		t.Fatal(err)
	}
	health := readAll(t, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(health, `"status":"broken"`) || !strings.Contains(health, "model file /m.gguf changed") {
		t.Errorf("/health after the backend broke: got %d %s, want 503 with the reason", resp.StatusCode, health)
	}

	// The server is still up; new requests are refused without reaching
	// the backend.
	resp = post(t, t.Context(), ts.URL+"/v1/completions", `{"prompt":"p"}`)
	body = readAll(t, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "backend_broken") {
		t.Errorf("request after the backend broke: got %d %s, want 503 backend_broken", resp.StatusCode, body)
	}
	if got, want := b.calls.Load(), int64(1); got != want {
		t.Errorf("backend calls: got %d, want %d", got, want)
	}
}

// TestBrokenBackendBeforeOutput: a non-streamed request fails with 503.
func TestBrokenBackendBeforeOutput(t *testing.T) {
	s, ts, _ := newTestServer(t, &breaking{}, Options{})
	if err := s.WarmUp(t.Context()); err != nil {
		t.Fatal(err)
	}
	resp := post(t, t.Context(), ts.URL+"/v1/completions", `{"prompt":"p"}`)
	body := readAll(t, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "backend_broken") {
		t.Errorf("got %d %s, want 503 backend_broken", resp.StatusCode, body)
	}
}
