package server

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// silent opens a connection to the server at url (http://host:port) and
// sends the headers of a POST announcing a 100-byte body, then nothing.
func silent(t *testing.T, url, path string, hdr ...string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	req := "POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n"
	for i := 0; i+1 < len(hdr); i += 2 {
		req += hdr[i] + ": " + hdr[i+1] + "\r\n"
	}
	if _, err := io.WriteString(c, req+"\r\n"); err != nil {
		t.Fatal(err)
	}
	return c
}

// answer reads what the server sends on c until it closes the
// connection, and returns the status line and the bytes after it.
func answer(t *testing.T, c net.Conn) (status string, rest string) {
	t.Helper()
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	status, rest, _ = strings.Cut(string(b), "\r\n")
	return status, rest
}

func TestSilentBodyIsCutAfterBodyTimeout(t *testing.T) {
	s, err := New(newFake("a"), Options{BodyTimeout: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	url, stop, done := serveLoopback(t, s)
	defer func() { stop(); <-done }()
	c := silent(t, url, "/v1/chat/completions")
	defer c.Close()
	// The server answers 408 and closes the connection (ReadAll returns).
	status, rest := answer(t, c)
	if got, want := status, "HTTP/1.1 408 Request Timeout"; got != want {
		t.Errorf("status: got %q, want %q", got, want)
	}
	if !strings.Contains(rest, `"code":"body_timeout"`) || !strings.Contains(rest, "Connection: close") {
		t.Errorf("answer: got %q, want a body_timeout error and Connection: close", rest)
	}
}

// TestBodyDeadlineIsLiftedOnceRead: a stream that outlasts BodyTimeout
// is not cut, since the deadline covers the body only.
func TestBodyDeadlineIsLiftedOnceRead(t *testing.T) {
	f := newFake("a", "b")
	f.gate = make(chan struct{})
	s, err := New(f, Options{BodyTimeout: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	url, stop, done := serveLoopback(t, s)
	defer func() { stop(); <-done }()
	resp, br := streamUntil(t, t.Context(), url, f, "long", 1)
	defer resp.Body.Close()
	time.Sleep(20 * time.Millisecond) // many body timeouts
	f.gate <- struct{}{}
	if rest := readAll(t, br); !strings.HasSuffix(rest, "data: [DONE]\n\n") {
		t.Errorf("stream was cut: %q", rest)
	}
	http.DefaultClient.CloseIdleConnections()
}

func TestUnauthorizedDoesNotWaitForTheBody(t *testing.T) {
	s, err := New(newFake("a"), Options{APIKey: "secret", BodyTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	url, stop, done := serveLoopback(t, s)
	defer func() { stop(); <-done }()
	for _, path := range []string{"/v1/chat/completions", "/v1/nowhere"} {
		c := silent(t, url, path, "Authorization", "Bearer wrong")
		status, rest := answer(t, c)
		c.Close()
		want := "HTTP/1.1 401 Unauthorized"
		if path == "/v1/nowhere" {
			want = "HTTP/1.1 404 Not Found"
		}
		if status != want || !strings.Contains(rest, "Connection: close") {
			t.Errorf("%s: got %q %q, want %q and Connection: close", path, status, rest, want)
		}
	}
}

// TestSilentConnectionsLeaveHealthAnswered opens many more silent
// connections than MaxConns: MaxConns of them are held (until their
// BodyTimeout), the rest are answered 503 (or closed) at once, and /health
// still answers 200.
func TestSilentConnectionsLeaveHealthAnswered(t *testing.T) {
	const maxConns, silents = 20, 300
	s, err := New(newFake("a"), Options{MaxConns: maxConns, BodyTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.WarmUp(t.Context()); err != nil {
		t.Fatal(err)
	}
	url, stop, done := serveLoopback(t, s)
	defer func() { stop(); <-done }()
	var closed, busy atomic.Int64
	conns := make([]net.Conn, silents)
	for i := range conns {
		conns[i] = silent(t, url, "/v1/chat/completions")
		go func(c net.Conn) {
			b, _ := io.ReadAll(c)
			if strings.HasPrefix(string(b), "HTTP/1.1 503") {
				busy.Add(1)
			}
			closed.Add(1)
		}(conns[i])
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	waitFor(func() bool { return closed.Load() == silents-maxConns })
	// Each is answered 503, except when too many are being answered at
	// once: then they are closed without a word.
	if busy.Load() == 0 {
		t.Errorf("no connection beyond MaxConns was answered 503")
	}
	t.Logf("%d of %d connections beyond MaxConns answered 503", busy.Load(), silents-maxConns)
	resp, err := http.Get(url + "/health")
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp.Body)
	resp.Body.Close()
	if got, want := resp.StatusCode, http.StatusOK; got != want {
		t.Errorf("/health beside %d silent connections: got %d, want %d", silents, got, want)
	}
	// A completion on a reserve connection is turned away.
	resp = post(t, t.Context(), url+"/v1/chat/completions", chatBody)
	readAll(t, resp.Body)
	resp.Body.Close()
	if got, want := resp.StatusCode, http.StatusServiceUnavailable; got != want || resp.Header.Get("Retry-After") == "" {
		t.Errorf("completion beyond MaxConns: got %d, want %d with Retry-After", got, want)
	}
	if got := closed.Load(); got != silents-maxConns {
		t.Errorf("silent connections closed: got %d, want %d", got, silents-maxConns)
	}
	// The reserve connections are given back as the server closes them.
	waitFor(func() bool { return metricValue(t, s.prom, "tokenpulse_server_open_connections") == maxConns })
	http.DefaultClient.CloseIdleConnections()
}

// TestHeldSlotsFreeAfterBodyTimeout: silent clients holding every slot
// cost their slots for BodyTimeout only; then a request is served.
func TestHeldSlotsFreeAfterBodyTimeout(t *testing.T) {
	const maxConns = 4
	s, err := New(newFake("a"), Options{MaxConns: maxConns, BodyTimeout: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	url, stop, done := serveLoopback(t, s)
	defer func() { stop(); <-done }()
	for range maxConns {
		c := silent(t, url, "/v1/chat/completions")
		if status, _ := answer(t, c); !strings.Contains(status, "408") {
			t.Errorf("silent connection: got %q, want 408", status)
		}
		c.Close()
	}
	waitFor(func() bool { return metricValue(t, s.prom, "tokenpulse_server_open_connections") == 0 })
	c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 26\r\n\r\n{\"prompt\":\"p\",\"stream\":1}")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusServiceUnavailable {
		t.Errorf("after the silent clients were cut: got 503")
	}
}
