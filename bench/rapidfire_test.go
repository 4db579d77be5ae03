package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/api"
	"github.com/tokenpulse/tokenpulse/stream"
)

// abortServer is a scripted OpenAI-compatible server for rapid-fire. The
// interrupted request (id "rf-...") waits headerDelay before its headers,
// then streams a token every `every` until the abort arrives, goes on for
// afterAbort more, and ends; every other request gets a short answer. It
// notes, on its side, when the abort arrived and when it wrote the last
// token and the end, which bound the client's latencies from below: the
// client sent the abort before the server saw it, and received each write
// after the server made it.
type abortServer struct {
	headerDelay time.Duration
	every       time.Duration
	afterAbort  time.Duration
	// dropDelay > 0: the interrupted request's first attempt, when it
	// comes on a reused connection, is held that long and then dropped
	// without a byte of answer, as a server closing a keep-alive
	// connection does; the client retries on a fresh connection.
	dropDelay time.Duration

	mu        sync.Mutex
	perConn   map[string]int
	attempts  int // of the interrupted request
	dropped   int
	abort     chan struct{}
	abortSeen time.Time
	lastWrite time.Time // just before the last token was written
	endWrite  time.Time // just before the end ([DONE]) was written
}

func newAbortServer(t *testing.T, s *abortServer) *httptest.Server {
	s.perConn = map[string]int{}
	s.abort = make(chan struct{})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv
}

func sseToken(text string) string {
	return `data: {"choices":[{"delta":{"content":"` + text + `"}}]}` + "\n\n"
}

const sseEnd = `data: {"choices":[{"delta":{},"finish_reason":"stop"}]}` + "\n\n" + "data: [DONE]\n\n"

func (s *abortServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	if r.URL.Path == "/v1/abort" {
		s.mu.Lock()
		first := s.abortSeen.IsZero()
		if first {
			s.abortSeen = time.Now()
			close(s.abort)
		}
		s.mu.Unlock()
		json.NewEncoder(w).Encode(api.AbortResponse{RequestID: r.URL.Query().Get("request_id"), Aborted: first})
		return
	}
	id := r.Header.Get(api.HeaderRequestID)
	s.mu.Lock()
	s.perConn[r.RemoteAddr]++
	reused := s.perConn[r.RemoteAddr] > 1
	interrupted := strings.HasPrefix(id, "rf-")
	if interrupted {
		s.attempts++
	}
	drop := interrupted && s.dropDelay > 0 && s.attempts == 1 && reused
	if drop {
		s.dropped++
	}
	s.mu.Unlock()
	fl := w.(http.Flusher)
	if drop {
		time.Sleep(s.dropDelay)
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			conn.Close()
		}
		return
	}
	if !interrupted {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, sseToken("a")+sseToken("b")+sseToken("c")+sseEnd)
		return
	}
	time.Sleep(s.headerDelay)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fl.Flush()
	var stopAt time.Time
	for i := 0; ; i++ {
		if stopAt.IsZero() {
			select {
			case <-s.abort:
				s.mu.Lock()
				stopAt = s.abortSeen.Add(s.afterAbort)
				s.mu.Unlock()
			case <-r.Context().Done():
				return
			default:
			}
		}
		if !stopAt.IsZero() && !time.Now().Before(stopAt) {
			s.mu.Lock()
			s.lastWrite = time.Now()
			s.mu.Unlock()
			io.WriteString(w, sseToken(fmt.Sprint("last", i)))
			fl.Flush()
			time.Sleep(s.every)
			s.mu.Lock()
			s.endWrite = time.Now()
			s.mu.Unlock()
			io.WriteString(w, sseEnd)
			fl.Flush()
			return
		}
		io.WriteString(w, sseToken(fmt.Sprint("t", i)))
		fl.Flush()
		time.Sleep(s.every)
	}
}

// observer passes requests to a stream.Client and, for the interrupted
// one, notes when each token was handed over and when Do returned: the
// abort was sent after the trigger token was handed over, and each token
// arrived before it was handed over, which bounds the latencies from
// above. With delay it begins the interrupted request that long after
// being asked to, as a Doer with a client-side queue does.
type observer struct {
	c     *stream.Client
	delay time.Duration

	mu       sync.Mutex
	handed   []time.Time
	returned time.Time
	trace    *stream.Trace
}

func (o *observer) Do(ctx context.Context, req stream.Request) *stream.Trace {
	if !strings.HasPrefix(req.ID, "rf-") {
		return o.c.Do(ctx, req)
	}
	time.Sleep(o.delay)
	inner := req.OnToken
	req.OnToken = func(i int, at time.Duration) {
		now := time.Now()
		o.mu.Lock()
		o.handed = append(o.handed, now)
		o.mu.Unlock()
		inner(i, at)
	}
	tr := o.c.Do(ctx, req)
	o.mu.Lock()
	o.returned, o.trace = time.Now(), tr
	o.mu.Unlock()
	return tr
}

// checkLatencies runs one rapid-fire pair against srv and checks that the
// abort and stop latencies lie between what the server and the observer
// saw.
func checkLatencies(t *testing.T, s *abortServer, delay time.Duration) *stream.Trace {
	t.Helper()
	srv := newAbortServer(t, s)
	c := &stream.Client{BaseURL: srv.URL}
	o := &observer{c: c, delay: delay}
	const after = 3
	reqs, fus, err := RapidFire(context.Background(), RapidFireConfig{
		Client: o, Aborter: c, Prompts: prompts("a", 2), AfterTokens: after,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(fus) != 1 {
		t.Fatalf("%d follow-ups, want 1", len(fus))
	}
	fu := fus[0]
	a := reqs[fu.Interrupted]
	if !a.OK() || fu.AbortError != "" {
		t.Fatalf("interrupted request: error %q, abort error %q", a.Error, fu.AbortError)
	}
	s.mu.Lock()
	abortSeen, lastWrite, endWrite := s.abortSeen, s.lastWrite, s.endWrite
	s.mu.Unlock()
	if abortSeen.IsZero() || lastWrite.IsZero() || endWrite.IsZero() {
		t.Fatal("the server saw no abort, or did not end the stream after it")
	}
	o.mu.Lock()
	trigger, lastHanded, returned := o.handed[after-1], o.handed[len(o.handed)-1], o.returned
	o.mu.Unlock()

	abortLo, abortHi := lastWrite.Sub(abortSeen), lastHanded.Sub(trigger)
	if got := time.Duration(fu.AbortLatencyNS); got < abortLo || got > abortHi {
		t.Errorf("abort latency = %v, want within [%v, %v] (server: abort seen → last token written; client: trigger token → last token handed over)", got, abortLo, abortHi)
	}
	stopLo, stopHi := endWrite.Sub(abortSeen), returned.Sub(trigger)
	if got := time.Duration(fu.StopLatencyNS); got < stopLo || got > stopHi {
		t.Errorf("stop latency = %v, want within [%v, %v] (server: abort seen → end written; client: trigger token → Do returned)", got, stopLo, stopHi)
	}
	return o.trace
}

// TestRapidFireLatenciesFromTraceStart: the interrupted request is begun
// late by its Doer and its headers come late; the latencies are measured
// from the abort on the trace's own clock, so neither counts in them.
func TestRapidFireLatenciesFromTraceStart(t *testing.T) {
	s := &abortServer{headerDelay: 200 * time.Millisecond, every: 5 * time.Millisecond, afterAbort: 100 * time.Millisecond}
	tr := checkLatencies(t, s, 300*time.Millisecond)
	if tr.TTFT() < s.headerDelay {
		t.Errorf("TTFT = %v, want at least the header delay %v", tr.TTFT(), s.headerDelay)
	}
}

// TestRapidFireLatenciesExcludeFailedAttempt: the interrupted request's
// first attempt fails on a reused connection after a while and is
// retried; the trace is the retry's and so are the latencies.
func TestRapidFireLatenciesExcludeFailedAttempt(t *testing.T) {
	s := &abortServer{every: 5 * time.Millisecond, afterAbort: 100 * time.Millisecond, dropDelay: 300 * time.Millisecond}
	tr := checkLatencies(t, s, 0)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dropped != 1 || s.attempts != 2 || !tr.Retried {
		t.Fatalf("dropped %d, attempts %d, retried %v: want the first attempt dropped on a reused connection and retried", s.dropped, s.attempts, tr.Retried)
	}
}
