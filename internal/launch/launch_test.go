package launch

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/internal/mock"
	"github.com/tokenpulse/tokenpulse/internal/server"
	"github.com/tokenpulse/tokenpulse/stream"
)

func TestStartServesUntilWaitsContextEnds(t *testing.T) {
	b := mock.New(mock.Profile{TTFT: time.Millisecond, ITL: time.Millisecond, Tokens: 3, TokensPerEvent: 1}, nil)
	var listening string
	s, err := New(b, Options{
		Server:    server.Options{Addr: "127.0.0.1:0"},
		Listening: func(url string) { listening = url },
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if listening == "" || listening != s.URL {
		t.Errorf("Listening got %q, URL is %q", listening, s.URL)
	}
	c := &stream.Client{BaseURL: s.URL}
	if status, _, err := c.Health(t.Context()); err != nil || status != http.StatusOK {
		t.Fatalf("/health after Start: %d %v, want 200", status, err)
	}
	if tr := c.Do(t.Context(), stream.Request{Prompt: "p"}); !tr.OK() || len(tr.TokenTimes) != 3 {
		t.Fatalf("request: %v, %d tokens", tr.Err, len(tr.TokenTimes))
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := s.Wait(ctx); err != nil {
		t.Errorf("Wait: %v", err)
	}
	if err := s.Stop(); err != nil {
		t.Errorf("a second Stop: %v", err)
	}
	if _, _, err := c.Health(t.Context()); err == nil {
		t.Error("/health still answers after the server stopped")
	}
}

func TestNewRefusesExposedAddress(t *testing.T) {
	b := mock.New(mock.Profile{Tokens: 1}, nil)
	_, err := New(b, Options{Server: server.Options{Addr: "0.0.0.0:0"}})
	if !errors.Is(err, server.ErrExposed) {
		t.Errorf("err = %v, want ErrExposed", err)
	}
	var never Server
	if err := never.Stop(); err != nil {
		t.Errorf("Stop on a server never started: %v", err)
	}
}
