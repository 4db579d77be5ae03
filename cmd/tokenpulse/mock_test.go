package main

import (
	"bytes"
	"context"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/stream"
)

// syncBuffer is a bytes.Buffer safe to write from the command's goroutine
// while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestMockBadFlagsAreUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"mock", "--tokens", "-1"},
		{"mock", "--error-rate", "1.5"},
		{"mock", "--parallel", "0"},
		{"mock", "--itl", "fast"},
		{"mock", "--api-key-env", "TOKENPULSE_TEST_SURELY_UNSET"},
	} {
		if got, want := run(args), exitUsage; got != want {
			t.Errorf("run(%q) = %d, want %d", args, got, want)
		}
	}
}

func TestMockServesTheProfile(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cmd := newMockCmd()
	var out syncBuffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs([]string{"--addr", "127.0.0.1:0", "--ttft", "5ms", "--itl", "1ms", "--tokens", "6", "--tokens-per-event", "2"})
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()

	addrRe := regexp.MustCompile(`serving on (http://\S+)`)
	var base string
	for base == "" {
		select {
		case err := <-done:
			t.Fatalf("mock exited early: %v\n%s", err, out.String())
		case <-time.After(10 * time.Millisecond):
		}
		if m := addrRe.FindStringSubmatch(out.String()); m != nil {
			base = m[1]
		}
	}
	c := &stream.Client{BaseURL: base, Model: "mock"}
	tr := c.Do(ctx, stream.Request{Prompt: "hello", MaxTokens: 100})
	if !tr.OK() {
		t.Fatalf("Err = %v", tr.Err)
	}
	if got, want := tr.OutputTokens(), 6; got != want {
		t.Errorf("OutputTokens = %d, want %d", got, want)
	}
	if got, want := tr.ContentEvents(), 3; got != want {
		t.Errorf("ContentEvents = %d, want %d (2 tokens per event)", got, want)
	}
	if tr.EchoedID != tr.RequestID {
		t.Errorf("echoed id %q, want %q", tr.EchoedID, tr.RequestID)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("mock returned %v after cancel, want nil", err)
	}
}
