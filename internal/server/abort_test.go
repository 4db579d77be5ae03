package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/tokenpulse/tokenpulse/api"
)

// streamUntil starts a gated stream, lets n ≥ 1 tokens through and reads
// them. Headers come with the first token, so the request runs in a
// goroutine until the first token is let go.
func streamUntil(t *testing.T, ctx context.Context, url string, f *fake, id string, n int, hdr ...string) (*http.Response, *bufio.Reader) {
	t.Helper()
	respc := make(chan *http.Response, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/chat/completions", strings.NewReader(chatBody))
		req.Header.Set(api.HeaderRequestID, id)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
		}
		respc <- resp
	}()
	<-f.started
	f.gate <- struct{}{}
	resp := <-respc
	if resp == nil {
		t.FailNow()
	}
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, readAll(t, resp.Body))
	}
	br := bufio.NewReader(resp.Body)
	readEvent(t, br) // retry: 0
	for i := range n {
		if i > 0 {
			f.gate <- struct{}{}
		}
		ev, err := readEvent(t, br)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := ev.chunk.Tokenpulse.Index, i; got != want {
			t.Fatalf("token index: got %d, want %d", got, want)
		}
	}
	return resp, br
}

func abort(t *testing.T, url, id string, hdr ...string) (int, api.AbortResponse) {
	t.Helper()
	resp := post(t, context.Background(), url+"/v1/abort?request_id="+id, "", hdr...)
	defer resp.Body.Close()
	var a api.AbortResponse
	json.NewDecoder(resp.Body).Decode(&a)
	return resp.StatusCode, a
}

func TestAbortEndpoint(t *testing.T) {
	f := newFake("a", "b", "c", "d", "e", "f")
	f.gate = make(chan struct{})
	s, ts, reg := newTestServer(t, f, Options{})
	resp, br := streamUntil(t, t.Context(), ts.URL, f, "victim", 3)
	defer resp.Body.Close()

	code, a := abort(t, ts.URL, "victim")
	if code != 200 {
		t.Fatalf("abort status: got %d, want 200", code)
	}
	if want := (api.AbortResponse{RequestID: "victim", Aborted: true, TokensAfterAbort: 0, OutputTokens: 3, StopNS: a.StopNS}); a != want {
		t.Errorf("abort answer: got %+v, want %+v", a, want)
	}
	if a.StopNS <= 0 {
		t.Errorf("stop_ns: got %d, want > 0", a.StopNS)
	}
	if err := <-f.stopped; !errors.Is(err, context.Canceled) {
		t.Errorf("backend returned %v, want context.Canceled", err)
	}
	// The rest of the stream: the abort event, then [DONE]; no token.
	ev, err := readEvent(t, br)
	if err != nil {
		t.Fatal(err)
	}
	if fr := ev.chunk.Choices[0].FinishReason; fr == nil || *fr != "abort" {
		t.Errorf("after abort: got %s, want finish_reason abort", ev.data)
	}
	if ev.chunk.Choices[0].Delta.Content != "" {
		t.Errorf("token after abort: %s", ev.data)
	}
	if got, want := ev.chunk.Tokenpulse.Timings.OutputTokens, 3; got != want {
		t.Errorf("timings output tokens: got %d, want %d", got, want)
	}
	for {
		ev, err := readEvent(t, br)
		if err != nil {
			t.Fatalf("no [DONE] after abort: %v", err)
		}
		if ev.chunk != nil && len(ev.chunk.Choices) > 0 && ev.chunk.Choices[0].Delta.Content != "" {
			t.Errorf("token after abort: %s", ev.data)
		}
		if ev.data == "[DONE]" {
			break
		}
	}
	if got, want := f.emitted.Load(), int64(3); got != want {
		t.Errorf("backend emitted %d tokens, want %d", got, want)
	}
	if got := metricValue(t, reg, "tokenpulse_server_tokens_after_abort_total"); got != 0 {
		t.Errorf("tokens_after_abort_total: got %v, want 0", got)
	}
	if got := metricValue(t, reg, "tokenpulse_server_aborts_total", "reason", "endpoint"); got != 1 {
		t.Errorf("aborts_total{endpoint}: got %v, want 1", got)
	}
	// The id is free again once the handler has returned.
	waitFor(func() bool { return s.reg.get([32]byte{}, "victim") == nil })
	if code, _ := abort(t, ts.URL, "victim"); code != 404 {
		t.Errorf("second abort: got %d, want 404", code)
	}
}

// TestAbortCountsSloppyBackend shows that the server's count is real: a
// backend that emits one more token without checking ctx gets it counted
// as produced after the abort, and the client never sees it.
func TestAbortCountsSloppyBackend(t *testing.T) {
	f := newFake("a", "b", "c", "d")
	f.gate = make(chan struct{})
	f.sloppy = true
	s, ts, reg := newTestServer(t, f, Options{})
	resp, br := streamUntil(t, t.Context(), ts.URL, f, "sloppy", 2)
	e := s.reg.get([32]byte{}, "sloppy")
	defer resp.Body.Close()

	type result struct {
		code int
		a    api.AbortResponse
	}
	done := make(chan result)
	go func() {
		code, a := abort(t, ts.URL, "sloppy")
		done <- result{code, a}
	}()
	// The abort is in once the next emit can see it; let one more token go.
	<-e.canceled
	f.gate <- struct{}{}
	r := <-done
	if got, want := r.a.TokensAfterAbort, 1; got != want {
		t.Errorf("tokens_after_abort: got %d, want %d", got, want)
	}
	if got, want := r.a.OutputTokens, 2; got != want {
		t.Errorf("output_tokens: got %d, want %d", got, want)
	}
	if got := metricValue(t, reg, "tokenpulse_server_tokens_after_abort_total"); got != 1 {
		t.Errorf("tokens_after_abort_total: got %v, want 1", got)
	}
	ev, _ := readEvent(t, br)
	if fr := ev.chunk.Choices[0].FinishReason; fr == nil || *fr != "abort" {
		t.Errorf("client saw %s, want the abort event", ev.data)
	}
}

func TestAbortByDisconnect(t *testing.T) {
	f := newFake("a", "b", "c", "d")
	f.gate = make(chan struct{})
	_, ts, reg := newTestServer(t, f, Options{})
	ctx, cancel := context.WithCancel(t.Context())
	resp, _ := streamUntil(t, ctx, ts.URL, f, "leaver", 2)
	cancel()
	resp.Body.Close()
	if err := <-f.stopped; !errors.Is(err, context.Canceled) {
		t.Errorf("backend returned %v, want context.Canceled", err)
	}
	waitFor(func() bool { return metricValue(t, reg, "tokenpulse_server_aborts_total", "reason", "disconnect") == 1 })
	if got, want := f.emitted.Load(), int64(2); got != want {
		t.Errorf("backend emitted %d tokens, want %d", got, want)
	}
	if got := metricValue(t, reg, "tokenpulse_server_tokens_after_abort_total"); got != 0 {
		t.Errorf("tokens_after_abort_total: got %v, want 0", got)
	}
}

func TestAbortOtherKeysRequest(t *testing.T) {
	f := newFake("a", "b", "c")
	f.gate = make(chan struct{})
	_, ts, _ := newTestServer(t, f, Options{APIKey: "alice-key, bob-key"})
	resp, _ := streamUntil(t, t.Context(), ts.URL, f, "alices", 1, "Authorization", "Bearer alice-key")
	defer resp.Body.Close()
	if code, _ := abort(t, ts.URL, "alices"); code != 401 {
		t.Errorf("abort without key: got %d, want 401", code)
	}
	if code, _ := abort(t, ts.URL, "alices", "Authorization", "Bearer bob-key"); code != 404 {
		t.Errorf("abort with another key: got %d, want 404", code)
	}
	code, a := abort(t, ts.URL, "alices", "Authorization", "Bearer alice-key")
	if code != 200 || !a.Aborted {
		t.Errorf("abort with own key: got %d %+v, want 200 aborted", code, a)
	}
}

func TestQueueFullAndQueuedClientLeaves(t *testing.T) {
	f := newFake("a", "b")
	f.gate = make(chan struct{})
	s, ts, _ := newTestServer(t, f, Options{Parallel: 1, Queue: 1})
	running, runningBody := streamUntil(t, t.Context(), ts.URL, f, "running", 1)
	defer running.Body.Close()

	qctx, leave := context.WithCancel(t.Context())
	queuedDone := make(chan struct{})
	go func() {
		defer close(queuedDone)
		req, _ := http.NewRequestWithContext(qctx, http.MethodPost, ts.URL+"/v1/chat/completions", strings.NewReader(chatBody))
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	waitFor(func() bool { return s.adm.queued() == 1 })

	full := post(t, t.Context(), ts.URL+"/v1/chat/completions", chatBody)
	body := readAll(t, full.Body)
	full.Body.Close()
	if got, want := full.StatusCode, http.StatusTooManyRequests; got != want {
		t.Fatalf("third request: got %d, want %d", got, want)
	}
	if full.Header.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	var eb api.ErrorBody
	if err := json.Unmarshal([]byte(body), &eb); err != nil || eb.Error.Code == nil || *eb.Error.Code != "queue_full" {
		t.Errorf("429 body: got %s", body)
	}

	leave()
	<-queuedDone
	waitFor(func() bool { return s.adm.queued() == 0 })
	f.gate <- struct{}{}
	readAll(t, runningBody)
	// The queued request left: it never reached the backend.
	if got, want := f.calls.Load(), int64(1); got != want {
		t.Errorf("backend calls: got %d, want %d", got, want)
	}
	// The slot is free for the next one.
	f.gate = nil
	next := post(t, t.Context(), ts.URL+"/v1/chat/completions", chatBody)
	readAll(t, next.Body)
	next.Body.Close()
	if next.StatusCode != 200 {
		t.Errorf("after the queue drained: got %d, want 200", next.StatusCode)
	}
}

func TestAbortQueuedRequest(t *testing.T) {
	f := newFake("a", "b")
	f.gate = make(chan struct{})
	s, ts, _ := newTestServer(t, f, Options{Parallel: 1, Queue: 4})
	running, _ := streamUntil(t, t.Context(), ts.URL, f, "first", 1)
	defer running.Body.Close()
	got := make(chan string)
	go func() {
		resp := post(t, context.Background(), ts.URL+"/v1/chat/completions", chatBody, api.HeaderRequestID, "waiting")
		got <- readAll(t, resp.Body)
		resp.Body.Close()
	}()
	waitFor(func() bool { return s.adm.queued() == 1 })
	code, a := abort(t, ts.URL, "waiting")
	if code != 200 || !a.Aborted || a.OutputTokens != 0 {
		t.Errorf("abort queued: got %d %+v", code, a)
	}
	body := <-got
	if !strings.Contains(body, `"finish_reason":"abort"`) || !strings.Contains(body, "data: [DONE]") {
		t.Errorf("queued client got %q, want an abort event and [DONE]", body)
	}
	f.gate <- struct{}{}
}

func TestNoGoroutineLeakAfterAborts(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	f := newFake("a", "b", "c", "d", "e")
	f.gate = make(chan struct{})
	s, err := New(f, Options{Parallel: 2, Queue: 8})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	for i := range 40 {
		ctx, cancel := context.WithCancel(context.Background())
		id := "leak-" + strconv.Itoa(i)
		resp, _ := streamUntil(t, ctx, ts.URL, f, id, 2)
		if i%2 == 0 {
			post(t, context.Background(), ts.URL+"/v1/abort?request_id="+id, "").Body.Close()
		} else {
			cancel()
		}
		io.Copy(io.Discard, resp.Body) // fails after a disconnect; the rest is drained
		resp.Body.Close()
		cancel()
		<-f.stopped
	}
	http.DefaultClient.CloseIdleConnections()
	ts.Close()
}

// TestRequestIDsArePerKey: another key's running request id is free for
// this key (no 409 revealing it), and an abort reaches only the caller's
// own request.
func TestRequestIDsArePerKey(t *testing.T) {
	f := newFake("a", "b")
	f.gate = make(chan struct{})
	_, ts, _ := newTestServer(t, f, Options{APIKey: "alice-key, bob-key", Parallel: 2})
	alice, aliceBody := streamUntil(t, t.Context(), ts.URL, f, "same", 1, "Authorization", "Bearer alice-key")
	defer alice.Body.Close()
	bobs := make(chan *http.Response, 1)
	go func() {
		bobs <- post(t, context.Background(), ts.URL+"/v1/chat/completions", chatBody, api.HeaderRequestID, "same", "Authorization", "Bearer bob-key")
	}()
	var bob *http.Response
	select {
	case <-f.started: // bob's request runs
	case bob = <-bobs:
		t.Fatalf("bob's request with alice's id: got %d %s, want it to run", bob.StatusCode, readAll(t, bob.Body))
	}
	if code, a := abort(t, ts.URL, "same", "Authorization", "Bearer bob-key"); code != 200 || !a.Aborted {
		t.Errorf("bob's abort: got %d %+v", code, a)
	}
	bob = <-bobs
	if rest := readAll(t, bob.Body); bob.StatusCode != 200 || !strings.Contains(rest, `"finish_reason":"abort"`) {
		t.Errorf("bob's stream: got %d %q, want an abort", bob.StatusCode, rest)
	}
	bob.Body.Close()
	f.gate <- struct{}{}
	if rest := readAll(t, aliceBody); !strings.Contains(rest, `"finish_reason":"stop"`) {
		t.Errorf("alice's stream: got %q, want it to finish", rest)
	}
}
