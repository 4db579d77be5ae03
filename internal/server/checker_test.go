package server

import (
	"bufio"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tokenpulse/tokenpulse/api"
)

// checking is a fake backend that also checks requests beforehand.
type checking struct {
	*fake
	refuse string // prompts containing it are refused by Check
	checks atomic.Int64
}

func (c *checking) Check(req *GenRequest) error {
	c.checks.Add(1)
	if len(req.Messages) > 0 && strings.Contains(string(req.Messages[len(req.Messages)-1].Content), c.refuse) {
		return &RequestError{Status: 400, Code: "context_length_exceeded", Message: "too long"}
	}
	return nil
}

func TestCheckedStreamOpensBeforeTheFirstToken(t *testing.T) {
	f := newFake("a", "b")
	f.gate = make(chan struct{})
	c := &checking{fake: f, refuse: "enormous"}
	_, ts, _ := newTestServer(t, c, Options{})
	// The first token is held back: the headers and "retry: 0" must
	// arrive anyway, since the backend has accepted the request.
	resp := post(t, t.Context(), ts.URL+"/v1/chat/completions", chatBody, api.HeaderRequestID, "early")
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	br := bufio.NewReader(resp.Body)
	line, err := br.ReadString('\n')
	if err != nil || line != "retry: 0\n" {
		t.Fatalf("first line %q, %v: want retry: 0 before any token", line, err)
	}
	if got := f.emitted.Load(); got != 0 {
		t.Fatalf("%d tokens emitted before the gate opened", got)
	}
	close(f.gate)
	var done bool
	for !done {
		ev, err := readEvent(t, br)
		if err != nil {
			t.Fatal(err)
		}
		done = ev.data == "[DONE]"
	}
}

func TestCheckRefusalIsA4xxBeforeGeneration(t *testing.T) {
	c := &checking{fake: newFake("a"), refuse: "enormous"}
	_, ts, _ := newTestServer(t, c, Options{})
	body := `{"model":"fake-1","stream":true,"messages":[{"role":"user","content":"an enormous prompt"}]}`
	resp := post(t, t.Context(), ts.URL+"/v1/chat/completions", body)
	defer resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Fatalf("status %d, want 400", resp.StatusCode)
	}
	if !strings.Contains(readAll(t, resp.Body), "context_length_exceeded") {
		t.Error("the refusal's code is not in the error body")
	}
	// The handler refused before Generate; nothing can call it later.
	if c.checks.Load() != 1 || c.calls.Load() != 0 {
		t.Errorf("checks %d, generate calls %d; want 1 and 0", c.checks.Load(), c.calls.Load())
	}
}
