package notify

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/internal/retry"
	"github.com/tokenpulse/tokenpulse/report/reporttest"
)

// hook is a scripted webhook: it answers the i-th post with script[i]
// (the last one repeats) and keeps every body.
type hook struct {
	*httptest.Server
	mu     sync.Mutex
	bodies [][]byte
	types  []string
}

type answer struct {
	status     int
	retryAfter string
	body       string
}

func newHook(t *testing.T, script ...answer) *hook {
	t.Helper()
	h := &hook{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.bodies = append(h.bodies, b)
		h.types = append(h.types, r.Method+" "+r.Header.Get("Content-Type"))
		a := script[min(len(h.bodies), len(script))-1]
		h.mu.Unlock()
		if a.retryAfter != "" {
			w.Header().Set("Retry-After", a.retryAfter)
		}
		w.WriteHeader(a.status)
		io.WriteString(w, a.body)
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *hook) posts() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.bodies)
}

// testPoster records the waits instead of sleeping; its clock is fixed.
func testPoster(waits *[]time.Duration) *Poster {
	return &Poster{
		Retry: retry.Policy{Backoff: 500 * time.Millisecond},
		sleep: func(_ context.Context, d time.Duration) error { *waits = append(*waits, d); return nil },
		now:   func() time.Time { return time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC) },
	}
}

func TestWebhookPostsTheMessage(t *testing.T) {
	h := newHook(t, answer{status: 200, body: "ok"})
	msg := Build(reporttest.StallRun(), reportURL, nil)
	var waits []time.Duration
	if err := testPoster(&waits).Post(context.Background(), h.URL+"/services/T000/B000/secret", msg); err != nil {
		t.Fatal(err)
	}
	if h.posts() != 1 || h.types[0] != "POST application/json" {
		t.Fatalf("posts %d %v, want one POST application/json", h.posts(), h.types)
	}
	var got struct {
		Text   string  `json:"text"`
		Blocks []Block `json:"blocks"`
		Alert  struct {
			Device    string `json:"device"`
			OS        string `json:"os"`
			Model     string `json:"model"`
			ReportURL string `json:"report_url"`
			Crossed   []struct {
				Rule  string  `json:"rule"`
				Value float64 `json:"value"`
				Limit float64 `json:"limit"`
			} `json:"crossed"`
			Offenders []struct {
				PromptID  string `json:"prompt_id"`
				RequestID string `json:"request_id"`
			} `json:"offenders"`
		} `json:"tokenpulse"`
	}
	if err := json.Unmarshal(h.bodies[0], &got); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, h.bodies[0])
	}
	a := got.Alert
	if a.Device == "" || a.OS == "" || a.Model != "stories260K (F32)" || a.ReportURL != reportURL {
		t.Errorf("fields: %+v", a)
	}
	if len(a.Crossed) != 2 || a.Crossed[0].Rule != "gap.max <= 120ms" || a.Crossed[0].Limit != 120 || a.Crossed[0].Value <= 120 {
		t.Errorf("crossed = %+v", a.Crossed)
	}
	found := false
	for _, o := range a.Offenders {
		found = found || (o.PromptID == reporttest.StallPromptID && o.RequestID == reporttest.StallRequestID)
	}
	if !found {
		t.Errorf("offenders %+v lack %s/%s", a.Offenders, reporttest.StallPromptID, reporttest.StallRequestID)
	}
	if got.Text == "" || len(got.Blocks) < 3 || got.Blocks[0].Type != "header" {
		t.Errorf("text %q, blocks %+v: want Slack text and blocks", got.Text, got.Blocks)
	}
	if len(waits) != 0 {
		t.Errorf("waited %v on success", waits)
	}
}

func TestWebhookRetries(t *testing.T) {
	tests := []struct {
		name      string
		script    []answer
		wantPosts int
		wantWaits []time.Duration
		wantErr   string
	}{
		{
			name:      "503 twice then ok, with backoff",
			script:    []answer{{status: 503}, {status: 503}, {status: 200}},
			wantPosts: 3, wantWaits: []time.Duration{500 * time.Millisecond, time.Second},
		},
		{
			name:      "429 with Retry-After seconds",
			script:    []answer{{status: 429, retryAfter: "7"}, {status: 204}},
			wantPosts: 2, wantWaits: []time.Duration{7 * time.Second},
		},
		{
			name:      "503 with Retry-After date",
			script:    []answer{{status: 503, retryAfter: "Sun, 29 Nov 2026 10:00:12 GMT"}, {status: 200}},
			wantPosts: 2, wantWaits: []time.Duration{12 * time.Second},
		},
		{
			name:      "server keeps failing",
			script:    []answer{{status: 502, body: "bad gateway"}},
			wantPosts: 5, wantWaits: []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second},
			wantErr: "(attempt 5 of 5): status 502: bad gateway",
		},
		{
			name:      "404 is not retried",
			script:    []answer{{status: 404, body: "no_service"}},
			wantPosts: 1, wantErr: "status 404: no_service",
		},
		{
			name:      "400 is not retried",
			script:    []answer{{status: 400, body: "invalid_payload"}},
			wantPosts: 1, wantErr: "status 400: invalid_payload",
		},
		{
			name:      "Retry-After beyond the cap is not waited for",
			script:    []answer{{status: 429, retryAfter: "3600"}},
			wantPosts: 1, wantErr: "asks to wait 1h0m0s",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHook(t, tt.script...)
			var waits []time.Duration
			err := testPoster(&waits).Post(context.Background(), h.URL+"/hook/SECRET-TOKEN?key=SECRET2", Build(reporttest.StallRun(), "", nil))
			if tt.wantErr == "" && err != nil {
				t.Fatalf("error %v, want success", err)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "SECRET") {
					t.Errorf("error leaks the webhook's secret path: %v", err)
				}
			}
			if h.posts() != tt.wantPosts {
				t.Errorf("posts = %d, want %d", h.posts(), tt.wantPosts)
			}
			if !reflect.DeepEqual(waits, tt.wantWaits) {
				t.Errorf("waits = %v, want %v", waits, tt.wantWaits)
			}
		})
	}
}

func TestWebhookStatusError(t *testing.T) {
	h := newHook(t, answer{status: 403, body: "invalid_token"})
	err := Webhook(context.Background(), h.URL, Build(reporttest.StallRun(), "", nil))
	var se *StatusError
	if !errors.As(err, &se) || se.Status != 403 || se.Body != "invalid_token" {
		t.Errorf("error = %#v, want a *StatusError 403 invalid_token", err)
	}
}

func TestWebhookNetworkErrorHidesURL(t *testing.T) {
	h := newHook(t, answer{status: 200})
	url := h.URL + "/hook/SECRET-TOKEN"
	h.Close() // nothing listens any more
	var waits []time.Duration
	p := testPoster(&waits)
	p.Retry.Attempts = 2
	err := p.Post(context.Background(), url, Build(reporttest.StallRun(), "", nil))
	if err == nil || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("error = %v, want a failure that does not show the secret path", err)
	}
	if len(waits) != 1 {
		t.Errorf("waits = %v, want one retry after a network error", waits)
	}
}

func TestWebhookBadURL(t *testing.T) {
	for _, u := range []string{"", "ftp://x/y", "hooks.slack.com/services/x", "http://"} {
		if err := Webhook(context.Background(), u, Message{}); err == nil {
			t.Errorf("Webhook(%q) = nil, want an error", u)
		}
	}
}

func TestSendOnlyWhenSomethingIsWrong(t *testing.T) {
	tests := []struct {
		name        string
		pass        bool
		regressions []string
		wantSent    bool
	}{
		{"nothing crossed, no regression: no post", true, nil, false},
		{"a regression: post", true, []string{"ttft.p95 overall: 80 → 120 ms"}, true},
		{"crossed: post", false, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHook(t, answer{status: 200})
			run := reporttest.StallRun()
			if tt.pass {
				run = passingRun()
			}
			sent, err := Send(context.Background(), run, reportURL, tt.regressions, Channels{Webhook: h.URL})
			if err != nil {
				t.Fatal(err)
			}
			wantPosts := 0
			if tt.wantSent {
				wantPosts = 1
			}
			if sent != tt.wantSent || h.posts() != wantPosts {
				t.Errorf("sent = %v with %d posts, want %v with %d", sent, h.posts(), tt.wantSent, wantPosts)
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		h    string
		want time.Duration
	}{
		{"", 0},
		{"5", 5 * time.Second},
		{" 5 ", 5 * time.Second},
		{"-3", 0},
		{"soon", 0},
		{"Sun, 29 Nov 2026 10:00:30 GMT", 30 * time.Second},
		{"Sun, 29 Nov 2026 09:00:00 GMT", 0},
	} {
		if got := retryAfter(tt.h, now); got != tt.want {
			t.Errorf("retryAfter(%q) = %v, want %v", tt.h, got, tt.want)
		}
	}
}

func TestWebhookRedirectStaysInItsOrigin(t *testing.T) {
	var leaked atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked.Add(1)
	}))
	defer other.Close()
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/steal", http.StatusTemporaryRedirect)
	}))
	defer hook.Close()
	p := &Poster{Retry: retry.Policy{Attempts: 1}}
	err := p.Post(context.Background(), hook.URL+"/hooks/secret", Message{Text: "alert"})
	if err == nil || !strings.Contains(err.Error(), "another origin") {
		t.Errorf("err = %v, want a refused cross-origin redirect", err)
	}
	if n := leaked.Load(); n != 0 {
		t.Errorf("the other origin received %d requests", n)
	}
}

// TestWebhookDefaultRetryPolicy: a zero Poster tries as often and waits as
// long as retry's default, the policy publish uses too (it tried 4 times
// where publish tried 5).
func TestWebhookDefaultRetryPolicy(t *testing.T) {
	h := newHook(t, answer{status: 503})
	var waits []time.Duration
	p := testPoster(&waits)
	p.Retry = retry.Policy{}
	err := p.Post(context.Background(), h.URL, Build(reporttest.StallRun(), "", nil))
	if err == nil {
		t.Fatal("Post to a server that keeps answering 503 succeeded")
	}
	if h.posts() != retry.DefaultAttempts {
		t.Errorf("posts = %d, want retry.DefaultAttempts (%d)", h.posts(), retry.DefaultAttempts)
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}
	if !reflect.DeepEqual(waits, want) {
		t.Errorf("waits = %v, want %v", waits, want)
	}
}
