package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestServeUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"exposed without key", []string{"serve", "--addr", "0.0.0.0:0"}},
		{"zero parallel", []string{"serve", "--parallel", "0"}},
		{"model and upstream", []string{"serve", "--model", "x.gguf", "--upstream", "http://127.0.0.1:1"}},
		{"max tokens over limit", []string{"serve", "--max-tokens", "10", "--max-tokens-limit", "5"}},
		{"empty key variable", []string{"serve", "--api-key-env", "TOKENPULSE_TEST_SURELY_UNSET"}},
		{"bad upstream url", []string{"serve", "--upstream", "127.0.0.1:1"}},
		{"zero body timeout", []string{"serve", "--body-timeout", "0s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, want := run(tc.args), exitUsage; got != want {
				t.Errorf("run(%q): got exit %d, want %d", tc.args, got, want)
			}
		})
	}
}

// TestServeBundledModel runs `tokenpulse serve` on a free loopback port
// with the bundled model, waits for /health, streams one completion and
// stops it as SIGINT would (by cancelling its context).
func TestServeBundledModel(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	pr, pw := io.Pipe()
	cmd := newServeCmd()
	cmd.SetContext(ctx)
	cmd.SetArgs([]string{"--addr", "127.0.0.1:0", "--threads", "1"})
	cmd.SetOut(pw)
	cmd.SetErr(io.Discard)
	done := make(chan error, 1)
	go func() { done <- cmd.Execute(); pw.Close() }()

	lines := bufio.NewScanner(pr)
	if !lines.Scan() {
		t.Fatalf("serve printed nothing: %v", <-done)
	}
	addr := regexp.MustCompile(`http://127\.0\.0\.1:\d+`).FindString(lines.Text())
	if addr == "" {
		t.Fatalf("no address in %q", lines.Text())
	}
	go io.Copy(io.Discard, pr)
	for {
		resp, err := http.Get(addr + "/health")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == 200 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	resp, err := http.Post(addr+"/v1/completions", "application/json",
		strings.NewReader(`{"prompt":"Once upon a time","stream":true,"max_tokens":8}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.HasPrefix(string(body), "retry: 0\n\n") || !strings.HasSuffix(string(body), "data: [DONE]\n\n") {
		t.Errorf("stream: got %q", body)
	}
	if got, want := strings.Count(string(body), `"tokens":1`), 8; got > want || got == 0 {
		t.Errorf("token events: got %d, want 1..%d", got, want)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("serve: %v", err)
	}
}

// TestServeSecondSignalExits: the first signal starts the graceful
// shutdown, the second exits at once with a message.
func TestServeSecondSignalExits(t *testing.T) {
	sigs := make(chan os.Signal, 2)
	var out bytes.Buffer
	exited := make(chan int, 1)
	ctx, stop := watchSignals(t.Context(), "serve", sigs, &out, func(code int) { exited <- code })
	defer stop()
	sigs <- os.Interrupt
	<-ctx.Done()
	sigs <- os.Interrupt
	if got, want := <-exited, 130; got != want {
		t.Errorf("exit code: got %d, want %d", got, want)
	}
	if !strings.Contains(out.String(), "exiting at once") {
		t.Errorf("message: got %q", out.String())
	}
}
