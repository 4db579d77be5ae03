package server

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// serveLoopback runs s.Serve on a fresh loopback port and returns its URL,
// the function that stops it, and the channel Serve's result arrives on.
func serveLoopback(t *testing.T, s *Server) (string, context.CancelFunc, <-chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	return "http://" + ln.Addr().String(), stop, done
}

func TestShutdownLetsStreamsFinish(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	f := newFake("a", "b", "c")
	f.gate = make(chan struct{})
	s, err := New(f, Options{ShutdownGrace: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	url, stop, done := serveLoopback(t, s)
	resp, br := streamUntil(t, t.Context(), url, f, "inflight", 1)
	stop()
	// Shutdown has begun: /health turns 503 at once for load balancers.
	waitFor(func() bool { return s.closing.Load() })
	f.gate <- struct{}{}
	f.gate <- struct{}{}
	rest := readAll(t, br)
	resp.Body.Close()
	if !strings.Contains(rest, `"finish_reason":"stop"`) || !strings.HasSuffix(rest, "data: [DONE]\n\n") {
		t.Errorf("in-flight stream was not allowed to finish: %q", rest)
	}
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
	if _, err := http.Get(url + "/health"); err == nil {
		t.Error("server still accepts after shutdown")
	}
	http.DefaultClient.CloseIdleConnections()
}

func TestShutdownAbortsAfterGrace(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	f := newFake("a", "b", "c")
	f.gate = make(chan struct{})
	s, err := New(f, Options{ShutdownGrace: -1})
	if err != nil {
		t.Fatal(err)
	}
	url, stop, done := serveLoopback(t, s)
	resp, br := streamUntil(t, t.Context(), url, f, "cut", 1)
	stop()
	if err := <-f.stopped; !errors.Is(err, context.Canceled) {
		t.Errorf("backend: got %v, want context.Canceled", err)
	}
	rest := readAll(t, br)
	resp.Body.Close()
	if !strings.Contains(rest, `"finish_reason":"abort"`) || !strings.HasSuffix(rest, "data: [DONE]\n\n") {
		t.Errorf("aborted stream did not end cleanly: %q", rest)
	}
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
	if got, want := metricValue(t, s.prom, "tokenpulse_server_aborts_total", "reason", "shutdown"), 1.0; got != want {
		t.Errorf("aborts_total{shutdown}: got %v, want %v", got, want)
	}
	http.DefaultClient.CloseIdleConnections()
}

func TestServeRefusesExposedListener(t *testing.T) {
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(newFake(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Serve(t.Context(), ln); !errors.Is(err, ErrExposed) {
		t.Errorf("Serve on 0.0.0.0: got %v, want ErrExposed", err)
	}
}

// TestShutdownTurnsQueuedRequestsAway: a request still waiting for a slot
// when shutdown begins gets 503 at once, while the running one may finish
// within the grace.
func TestShutdownTurnsQueuedRequestsAway(t *testing.T) {
	f := newFake("a", "b")
	f.gate = make(chan struct{})
	s, err := New(f, Options{Parallel: 1, Queue: 4, ShutdownGrace: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	url, stop, done := serveLoopback(t, s)
	resp, br := streamUntil(t, t.Context(), url, f, "running", 1)
	defer resp.Body.Close()
	queued := make(chan *http.Response, 1)
	go func() { queued <- post(t, context.Background(), url+"/v1/chat/completions", chatBody) }()
	waitFor(func() bool { return s.adm.queued() == 1 })
	stop()
	q := <-queued
	body := readAll(t, q.Body)
	q.Body.Close()
	if q.StatusCode != http.StatusServiceUnavailable || q.Header.Get("Retry-After") == "" || !strings.Contains(body, "shutting_down") {
		t.Errorf("queued at shutdown: got %d %s, want 503 shutting_down with Retry-After", q.StatusCode, body)
	}
	f.gate <- struct{}{}
	if rest := readAll(t, br); !strings.HasSuffix(rest, "data: [DONE]\n\n") {
		t.Errorf("running stream: got %q", rest)
	}
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
	if got := f.calls.Load(); got != 1 {
		t.Errorf("backend calls: got %d, want 1", got)
	}
	http.DefaultClient.CloseIdleConnections()
}
