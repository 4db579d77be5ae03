package browserbench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/tokenpulse/tokenpulse/stream"
)

// recorder is a target that records every request it gets and answers
// with answer.
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string // method, path, Authorization, the -H header
}

func newRecorder(t *testing.T, answer http.HandlerFunc) *recorder {
	t.Helper()
	rec := &recorder{}
	rec.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		rec.seen = append(rec.seen, r.Method+" "+r.URL.Path+" auth="+r.Header.Get("Authorization")+" x-team="+r.Header.Get("X-Team")+" secret="+r.Header.Get(SecretHeader))
		rec.mu.Unlock()
		if answer != nil {
			answer(w, r)
		}
	}))
	t.Cleanup(rec.Close)
	return rec
}

func (rec *recorder) requests() []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]string(nil), rec.seen...)
}

// newTestRelay starts a relay in front of target with a key and a -H
// header.
func newTestRelay(t *testing.T, target string) *Relay {
	t.Helper()
	r, err := NewRelay(target, http.Header{"Authorization": {"Bearer sk-secret"}, "X-Team": {"team-secret"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// ask sends what the page would: POST path with the relay's secret (when
// secret is set), from host, with body.
func ask(t *testing.T, r *Relay, method, path, host string, secret bool, header http.Header, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, r.URL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	if host != "" {
		req.Host = host
	}
	if secret {
		req.Header.Set(SecretHeader, r.secret)
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

const chatBody = `{"messages":[{"role":"user","content":"private prompt"}],"stream":true,"max_tokens":16}`

// TestRelayFollowsNoRedirect: a target that redirects to another origin,
// or to localhost on another port, gets neither the key nor the -H
// headers sent there; the page gets the redirect's status, no Location
// to follow, and a message naming where it led.
func TestRelayFollowsNoRedirect(t *testing.T) {
	other := newRecorder(t, nil)
	for _, to := range []string{other.URL, strings.Replace(other.URL, "127.0.0.1", "localhost", 1)} {
		for _, status := range []int{301, 302, 303, 307, 308} {
			target := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, to+r.URL.Path, status)
			})
			r := newTestRelay(t, target.URL)
			for _, path := range []string{pathChat, pathAbort + "?request_id=x"} {
				resp := ask(t, r, "POST", path, "", true, nil, chatBody)
				b, _ := io.ReadAll(resp.Body)
				want := to + strings.TrimSuffix(path, "?request_id=x")
				if resp.StatusCode != status || resp.Header.Get("Location") != "" || !strings.Contains(string(b), "redirected to "+want+", not followed") {
					t.Errorf("%d to %s, %s: the page got %d, Location %q, %q; want %d, no Location, a message naming %s",
						status, to, path, resp.StatusCode, resp.Header.Get("Location"), b, status, want)
				}
			}
		}
	}
	if got := other.requests(); len(got) != 0 {
		t.Errorf("the redirect's target got %q, want nothing", got)
	}
}

// TestRelayRelaysOnlyForThePage: a foreign Host (DNS rebinding), a
// foreign Origin, another method or path, and a request without the
// page's secret are refused before anything reaches the target; the
// page's own request goes through with the credentials.
func TestRelayRelaysOnlyForThePage(t *testing.T) {
	target := newRecorder(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "{}") })
	r := newTestRelay(t, target.URL)
	for _, tt := range []struct {
		name, method, path, host string
		secret                   bool
		header                   http.Header
		want                     int
	}{
		{"foreign Host", "POST", pathChat, "attacker.example", true, nil, 403},
		{"foreign Host with the relay's port", "POST", pathChat, "attacker.example:" + r.port, true, nil, 403},
		{"foreign Host, the page", "GET", "/", "attacker.example", false, nil, 403},
		{"foreign Origin", "POST", pathChat, "", true, http.Header{"Origin": {"http://attacker.example"}}, 403},
		{"DELETE a file", "DELETE", "/v1/files/file-123", "", true, nil, 404},
		{"list the models", "GET", "/v1/models", "", true, nil, 404},
		{"GET the chat path", "GET", pathChat, "", true, nil, 405},
		{"another path under /v1", "POST", "/v1/completions", "", true, nil, 404},
		{"no secret", "POST", pathChat, "", false, nil, 403},
		{"wrong secret", "POST", pathChat, "", false, http.Header{SecretHeader: {strings.Repeat("0", 64)}}, 403},
	} {
		if resp := ask(t, r, tt.method, tt.path, tt.host, tt.secret, tt.header, chatBody); resp.StatusCode != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, resp.StatusCode, tt.want)
		}
	}
	if got := target.requests(); len(got) != 0 {
		t.Fatalf("the target got %q from strangers, want nothing", got)
	}
	for _, tt := range []struct {
		name, host string
		header     http.Header
	}{
		{"the page", "", http.Header{"Origin": {r.URL()}}},
		{"the page as localhost", "localhost:" + r.port, http.Header{"Origin": {"http://localhost:" + r.port}}},
	} {
		if resp := ask(t, r, "POST", pathChat, tt.host, true, tt.header, chatBody); resp.StatusCode != 200 {
			t.Errorf("%s: %d, want 200", tt.name, resp.StatusCode)
		}
	}
	if resp := ask(t, r, "GET", "/", "", false, nil, ""); resp.StatusCode != 200 {
		t.Errorf("the page itself: %d, want 200", resp.StatusCode)
	}
	want := "POST /v1/chat/completions auth=Bearer sk-secret x-team=team-secret secret="
	if got := target.requests(); len(got) != 2 || got[0] != want || got[1] != want {
		t.Errorf("the target got %q, want the page's two requests with the credentials and without the relay's secret", got)
	}
}

// flood is a target that streams content events (or, with role, role-only
// chunks) until the client goes away, or one event of size bytes.
func flood(role bool, size int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		if size > 0 {
			io.WriteString(w, "data: "+strings.Repeat("x", size))
			return
		}
		ev := `data: {"choices":[{"delta":{"content":"flood "}}]}` + "\n\n"
		if role {
			ev = `data: {"choices":[{"delta":{"role":"assistant"}}]}` + "\n\n"
		}
		for r.Context().Err() == nil {
			if _, err := io.WriteString(w, strings.Repeat(ev, 64)); err != nil {
				return
			}
		}
	}
}

// relayed reads what the relay passed on to the page: the events' data,
// the content events counted as stream.Content counts them, and the
// relay's notice at the end.
func relayed(t *testing.T, body io.Reader) (events, content int, notice relayNotice) {
	t.Helper()
	sc := bufio.NewScanner(io.LimitReader(body, 32<<20)) // a relay that does not stop a flood fails, not hangs
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var n map[string]relayNotice
		if json.Unmarshal([]byte(data), &n) == nil && n[OverflowEvent].Error != "" {
			notice = n[OverflowEvent]
			continue
		}
		events++
		if stream.Content([]byte(data)) {
			content++
		}
	}
	return events, content, notice
}

// TestRelayStopsAFlood: plain bench's limits, applied by the relay: a
// flood of content events stops after max(4·max_tokens, 4096), of other
// events after twice that plus 1024, an endless event at 4 MiB, each with
// the events before it passed on and a last event saying it overflowed.
func TestRelayStopsAFlood(t *testing.T) {
	lim := (&stream.Client{}).Limits(16)
	for _, tt := range []struct {
		name                  string
		h                     http.HandlerFunc
		wantEvents, wantCount int
		wantWhat              string
	}{
		{"content events", flood(false, 0), lim.ContentEvents, lim.ContentEvents, fmt.Sprintf("more than %d content events", lim.ContentEvents)},
		{"role-only events", flood(true, 0), lim.Events, 0, fmt.Sprintf("more than %d events", lim.Events)},
		{"one endless event", flood(false, 5<<20), 0, 0, fmt.Sprintf("an event of more than %d bytes", lim.EventBytes)},
	} {
		target := newRecorder(t, tt.h)
		r := newTestRelay(t, target.URL)
		resp := ask(t, r, "POST", pathChat, "", true, nil, chatBody)
		events, content, notice := relayed(t, resp.Body)
		if events != tt.wantEvents || content != tt.wantCount || notice.Error != "overflow" || !strings.Contains(notice.Message, tt.wantWhat) {
			t.Errorf("%s: the page got %d events (%d content) and notice %+v; want %d (%d), overflow: %s", tt.name, events, content, notice, tt.wantEvents, tt.wantCount, tt.wantWhat)
		}
	}
}

// TestRelayPassesAnAnswerWhole: an ordinary answer (the retry frame, a
// comment, events, [DONE]) reaches the page byte for byte.
func TestRelayPassesAnAnswerWhole(t *testing.T) {
	const answer = "retry: 0\n\n: ping\n\n" + `data: {"choices":[{"delta":{"content":"a"}}]}` + "\n\n" + `data: {"choices":[{"delta":{"content":"b"}}]}` + "\r\n\r\ndata: [DONE]\n\n"
	target := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, answer)
	})
	r := newTestRelay(t, target.URL)
	resp := ask(t, r, "POST", pathChat, "", true, nil, chatBody)
	if b, _ := io.ReadAll(resp.Body); string(b) != answer {
		t.Errorf("the page got %q, want %q", b, answer)
	}
}

// TestRecordRelayErrors: the page's record of a redirect not followed is
// an http failure with its status; of a relay's overflow, an overflow
// keeping the tokens before it.
func TestRecordRelayErrors(t *testing.T) {
	redirect := record{T0: 1, Status: 302, Error: "HTTP 302: redirected to http://elsewhere/v1/chat/completions, not followed", EndAt: 2, AbortedAt: -1}
	if q := redirect.request(0, 1); q.ErrorKind != "http" || q.Status != 302 || !strings.Contains(q.Error, "http://elsewhere") {
		t.Errorf("redirect: kind %q, status %d, %q; want http 302 naming the Location", q.ErrorKind, q.Status, q.Error)
	}
	over := record{T0: 1, Status: 200, Error: "the response sent more than 4096 content events", ErrorKind: "overflow", EndAt: 9, AbortedAt: -1,
		Arrival: []float64{2, 3}, ServerNS: []float64{0, 0}, Tokens: []int{1, 1}, Insert: []float64{2, 3}, Paint: []float64{3, 4}, PaintSource: []string{"frame", "frame"}}
	if q := over.request(0, 1); q.ErrorKind != "overflow" || len(q.TokenTimesNS) != 2 || q.OK() {
		t.Errorf("overflow: kind %q, %d tokens; want overflow keeping 2", q.ErrorKind, len(q.TokenTimesNS))
	}
}

// TestRelayTargetWithV1: a target given with its /v1 suffix (as --url
// may be) is asked /v1/chat/completions, not /v1/v1/chat/completions.
func TestRelayTargetWithV1(t *testing.T) {
	target := newRecorder(t, nil)
	r := newTestRelay(t, target.URL+"/v1/")
	ask(t, r, "POST", pathChat, "", true, nil, chatBody)
	if got := target.requests(); len(got) != 1 || !strings.HasPrefix(got[0], "POST /v1/chat/completions ") {
		t.Errorf("the target got %q", got)
	}
}
