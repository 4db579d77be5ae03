package scrape

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/runfile"
)

// llamaPage is a page as llama-server --metrics writes it (names from
// tools/server), with the given deferred requests, KV usage and tokens
// predicted so far.
func llamaPage(deferred int, kv float64, predicted int) string {
	return fmt.Sprintf(`# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed.
# TYPE llamacpp:prompt_tokens_total counter
llamacpp:prompt_tokens_total 40
# HELP llamacpp:tokens_predicted_total Number of generation tokens processed.
# TYPE llamacpp:tokens_predicted_total counter
llamacpp:tokens_predicted_total %d
# HELP llamacpp:n_decode_total Total number of llama_decode() calls
# TYPE llamacpp:n_decode_total counter
llamacpp:n_decode_total 7
# HELP llamacpp:kv_cache_usage_ratio KV-cache usage. 1 means 100 percent usage.
# TYPE llamacpp:kv_cache_usage_ratio gauge
llamacpp:kv_cache_usage_ratio %g
# HELP llamacpp:requests_processing Number of requests processing.
# TYPE llamacpp:requests_processing gauge
llamacpp:requests_processing 1
# HELP llamacpp:requests_deferred Number of requests deferred.
# TYPE llamacpp:requests_deferred gauge
llamacpp:requests_deferred %d
`, predicted, kv, deferred)
}

func seriesOf(t *testing.T, sc *runfile.Scrape, key string) runfile.ScrapeSeries {
	t.Helper()
	for _, s := range sc.Series {
		if s.Key() == key {
			return s
		}
	}
	t.Fatalf("no series %s in %+v", key, sc.Series)
	return runfile.ScrapeSeries{}
}

func points(s runfile.ScrapeSeries) string {
	var b []string
	for _, p := range s.Points {
		b = append(b, fmt.Sprintf("%g:%g", p.MS, p.V))
	}
	return strings.Join(b, " ")
}

// TestCollectorGaugesAndRates feeds three llama-server pages a second
// apart: the gauges are kept as sampled, the token counter becomes its
// rate (from the second sample on), and an unknown counter is left out.
func TestCollectorGaugesAndRates(t *testing.T) {
	c := NewCollector(nil)
	t0 := time.Date(2026, 12, 3, 15, 0, 0, 0, time.UTC)
	for i, p := range []string{llamaPage(0, 0.1, 0), llamaPage(2, 0.25, 100), llamaPage(3, 0.5, 300)} {
		if err := c.Add(t0.Add(time.Duration(i)*time.Second), []byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	sc, warn := c.Result("http://x/metrics", time.Second)
	if len(warn) != 0 {
		t.Errorf("warnings %q, want none", warn)
	}
	if !sc.StartedAt.Equal(t0) || sc.Samples != 3 || sc.Failed != 0 {
		t.Errorf("started %v samples %d failed %d", sc.StartedAt, sc.Samples, sc.Failed)
	}
	if got := points(seriesOf(t, sc, "llamacpp:requests_deferred")); got != "0:0 1000:2 2000:3" {
		t.Errorf("deferred = %s", got)
	}
	if got := points(seriesOf(t, sc, "llamacpp:kv_cache_usage_ratio")); got != "0:0.1 1000:0.25 2000:0.5" {
		t.Errorf("kv = %s", got)
	}
	pred := seriesOf(t, sc, "llamacpp:tokens_predicted_total")
	if got := points(pred); got != "1000:100 2000:200" || pred.Kind != runfile.KindRate || pred.Role != runfile.RoleTokens {
		t.Errorf("predicted = %s (%s, %s), want rates 100 then 200 tokens/s", got, pred.Kind, pred.Role)
	}
	if got := seriesOf(t, sc, "llamacpp:requests_deferred").Role; got != runfile.RoleQueue {
		t.Errorf("deferred role %q", got)
	}
	for _, s := range sc.Series {
		if s.Name == "llamacpp:n_decode_total" {
			t.Errorf("unnamed unknown series kept: %s", s.Name)
		}
	}
}

// TestCollectorNamedResetAndMean keeps a series named with its labels,
// reads a counter reset as a new start, turns a histogram into the mean
// of what it observed in each interval, and warns of a name never seen.
func TestCollectorNamedResetAndMean(t *testing.T) {
	c := NewCollector([]string{"vllm:time_to_first_token_seconds", "requests_total", "never_there"})
	t0 := time.Unix(1000, 0)
	page := func(req, cnt int, sum float64) string {
		return fmt.Sprintf(`# TYPE requests_total counter
requests_total{code="200"} %d
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{model_name="m",le="+Inf"} %d
vllm:time_to_first_token_seconds_sum{model_name="m"} %g
vllm:time_to_first_token_seconds_count{model_name="m"} %d
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{model_name="m"} 4
`, req, cnt, sum, cnt)
	}
	steps := []struct {
		dt       time.Duration
		req, cnt int
		sum      float64
	}{{0, 10, 2, 1}, {2 * time.Second, 30, 4, 2}, {3 * time.Second, 5, 4, 2}, {4 * time.Second, 9, 6, 5}}
	for _, s := range steps {
		if err := c.Add(t0.Add(s.dt), []byte(page(s.req, s.cnt, s.sum))); err != nil {
			t.Fatal(err)
		}
	}
	sc, warn := c.Result("u", time.Second)
	// 10 → 30 over 2 s: 10/s; reset to 5 over 1 s: 5/s; 5 → 9: 4/s.
	if got := points(seriesOf(t, sc, `requests_total{code="200"}`)); got != "2000:10 3000:5 4000:4" {
		t.Errorf("requests rate = %s", got)
	}
	// (2-1)/(4-2) = 0.5 s; no observation in the third interval; (5-2)/(6-4) = 1.5 s.
	ttft := seriesOf(t, sc, `vllm:time_to_first_token_seconds{model_name="m"}`)
	if got := points(ttft); got != "2000:0.5 4000:1.5" || ttft.Kind != runfile.KindMean {
		t.Errorf("ttft mean = %s (%s)", got, ttft.Kind)
	}
	if got := seriesOf(t, sc, `vllm:num_requests_waiting{model_name="m"}`).Role; got != runfile.RoleQueue {
		t.Errorf("vllm waiting role %q", got)
	}
	if len(warn) != 1 || !strings.Contains(warn[0], "never_there") {
		t.Errorf("warnings %q, want one naming never_there", warn)
	}
}

// TestCollectorWarnsOfNothingKnown: a page of only unknown series keeps
// nothing and says how to name them.
func TestCollectorWarnsOfNothingKnown(t *testing.T) {
	c := NewCollector(nil)
	if err := c.Add(time.Unix(0, 0), []byte("# TYPE up gauge\nup 1\n")); err != nil {
		t.Fatal(err)
	}
	sc, warn := c.Result("u", time.Second)
	if sc == nil || len(sc.Series) != 0 {
		t.Fatalf("scrape %+v", sc)
	}
	if len(warn) != 1 || !strings.Contains(warn[0], "--scrape-series") {
		t.Errorf("warnings %q", warn)
	}
}

// stepClock is a clock that jumps to each instant slept until, for at
// most limit sleeps; then it blocks until the context ends.
type stepClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps int
	limit  int
	parked chan struct{}
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *stepClock) SleepUntil(ctx context.Context, t time.Time) error {
	c.mu.Lock()
	if c.sleeps == c.limit {
		c.mu.Unlock()
		close(c.parked)
		<-ctx.Done()
		return ctx.Err()
	}
	c.sleeps++
	if t.After(c.now) {
		c.now = t
	}
	c.mu.Unlock()
	return nil
}

// scripted serves the pages in turn (then the last again), counting the
// requests and the Authorization headers it saw.
type scripted struct {
	pages []func(w http.ResponseWriter)
	n     atomic.Int32
	auth  atomic.Int32
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	i := int(s.n.Add(1)) - 1
	if r.Header.Get("Authorization") != "" || r.Header.Get("X-Secret") != "" {
		s.auth.Add(1)
	}
	s.pages[min(i, len(s.pages)-1)](w)
}

func page(body string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) { fmt.Fprint(w, body) }
}

func run(t *testing.T, cfg Config, sleeps int) (*runfile.Scrape, []string) {
	t.Helper()
	clk := &stepClock{now: time.Unix(5000, 0), limit: sleeps, parked: make(chan struct{})}
	cfg.Clock = clk
	s := Start(context.Background(), cfg)
	select {
	case <-clk.parked:
	case <-time.After(30 * time.Second):
		t.Fatal("the sampler never reached its last sleep")
	}
	return s.Stop()
}

// TestSamplerPacesAndFailsAsWarning samples a scripted endpoint on an
// injected clock: one sample per interval, timed by the clock; a 500 and
// a page that does not parse are counted as failures and said in one
// warning, and the other samples are kept. A page of a great many
// series the run does not keep is parsed for the few it keeps.
func TestSamplerPacesAndFailsAsWarning(t *testing.T) {
	srv := &scripted{pages: []func(http.ResponseWriter){
		page(llamaPage(0, 0, 0)),
		func(w http.ResponseWriter) { http.Error(w, "busy", http.StatusInternalServerError) },
		page(llamaPage(2, 0.5, 100)),
		page("llamacpp:requests_deferred not-a-number\n"),
		page(llamaPage(1, 0.75, 400)),
	}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	sc, warn := run(t, Config{URL: ts.URL + "/metrics", Target: ts.URL}, 4)
	if got := srv.n.Load(); got != 5 {
		t.Errorf("%d scrapes, want 5 (one at start, one per interval)", got)
	}
	if sc == nil || sc.Samples != 5 || sc.Failed != 2 || sc.IntervalMS != 1000 {
		t.Fatalf("scrape %+v", sc)
	}
	if got := points(seriesOf(t, sc, "llamacpp:requests_deferred")); got != "0:0 2000:2 4000:1" {
		t.Errorf("deferred = %s", got)
	}
	// 100 tokens over 2 s, then 300 over 2 s.
	if got := points(seriesOf(t, sc, "llamacpp:tokens_predicted_total")); got != "2000:50 4000:150" {
		t.Errorf("predicted rate = %s", got)
	}
	if len(warn) != 1 || !strings.Contains(warn[0], "2 of 5 samples failed") || !strings.Contains(warn[0], "500") || !strings.Contains(warn[0], "not a Prometheus text page") {
		t.Errorf("warnings %q", warn)
	}
}

// TestCollectorParsesOnlyWhatItKeeps: among 100,000 series of no
// interest and 1,000 label sets of a named one, the known gauge is read,
// the named series stop at the run's bound (with a warning), and a
// histogram's buckets are not needed for its mean.
func TestCollectorParsesOnlyWhatItKeeps(t *testing.T) {
	var b strings.Builder
	b.WriteString("# TYPE noise gauge\n")
	for i := range 100_000 {
		fmt.Fprintf(&b, "noise{i=\"%d\"} 1\n", i)
	}
	b.WriteString("# TYPE flood gauge\n")
	for i := range 1000 {
		fmt.Fprintf(&b, "flood{i=\"%d\"} %d\n", i, i)
	}
	b.WriteString("# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 3\nh_count 2\n")
	b.WriteString("# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting 5\n")
	c := NewCollector([]string{"flood", "h"})
	if kept := string(c.keep([]byte(b.String()))); strings.Count(kept, "\n") > 2*linesPerName+10 {
		t.Errorf("%d lines handed to the parser, want about %d", strings.Count(kept, "\n"), linesPerName+8)
	}
	t0 := time.Unix(0, 0)
	for i := range 2 {
		if err := c.Add(t0.Add(time.Duration(i)*time.Second), []byte(b.String())); err != nil {
			t.Fatal(err)
		}
	}
	sc, warn := c.Result("u", time.Second)
	if got := points(seriesOf(t, sc, "vllm:num_requests_waiting")); got != "0:5 1000:5" {
		t.Errorf("waiting = %s", got)
	}
	if len(sc.Series) != runfile.MaxScrapeSeries {
		t.Errorf("%d series kept, want the bound %d", len(sc.Series), runfile.MaxScrapeSeries)
	}
	if len(warn) != 1 || !strings.Contains(warn[0], "more than 32 series") {
		t.Errorf("warnings %q", warn)
	}
	c = NewCollector([]string{"h"})
	c.Add(t0, []byte("# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_sum 3\nh_count 2\n"))
	c.Add(t0.Add(time.Second), []byte("# TYPE h histogram\nh_bucket{le=\"+Inf\"} 4\nh_sum 7\nh_count 4\n"))
	if sc, _ := c.Result("u", time.Second); points(seriesOf(t, sc, "h")) != "1000:2" {
		t.Errorf("histogram mean = %s, want (7-3)/(4-2) = 2", points(seriesOf(t, sc, "h")))
	}
}

// TestSamplerAllFailed: an endpoint that never answers well (a 404, an
// HTML page) gives no scrape and a warning, not an error.
func TestSamplerAllFailed(t *testing.T) {
	ts := httptest.NewServer(http.NotFoundHandler())
	defer ts.Close()
	sc, warn := run(t, Config{URL: ts.URL + "/metrics", Target: ts.URL}, 2)
	if sc != nil {
		t.Errorf("scrape %+v, want none", sc)
	}
	if len(warn) != 1 || !strings.Contains(warn[0], "none of 3 samples succeeded") || !strings.Contains(warn[0], "404") {
		t.Errorf("warnings %q", warn)
	}
	// A login page answered 200 is no metrics page either.
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<html><body>llamacpp:requests_deferred 3</body></html>")
	}))
	defer html.Close()
	sc, warn = run(t, Config{URL: html.URL, Target: html.URL}, 1)
	if sc != nil || len(warn) != 1 || !strings.Contains(warn[0], "Content-Type text/html") {
		t.Errorf("an HTML page: scrape %v, warnings %q", sc, warn)
	}
}

// TestSamplerCredentialsStayHome: the key and headers go with a scrape
// of the target's own origin, not with one of another origin, and a
// redirect to another origin is not followed (a failed sample).
func TestSamplerCredentialsStayHome(t *testing.T) {
	home := &scripted{pages: []func(http.ResponseWriter){page(llamaPage(0, 0, 0))}}
	hs := httptest.NewServer(home)
	defer hs.Close()
	other := &scripted{pages: []func(http.ResponseWriter){page(llamaPage(0, 0, 0))}}
	os := httptest.NewServer(other)
	defer os.Close()
	h := http.Header{"X-Secret": {"s"}}

	if _, warn := run(t, Config{URL: hs.URL + "/metrics", Target: hs.URL + "/v1", APIKey: "k", Header: h}, 1); len(warn) != 0 {
		t.Errorf("home: %q", warn)
	}
	if home.auth.Load() != 2 {
		t.Errorf("home saw credentials on %d of %d scrapes, want all", home.auth.Load(), home.n.Load())
	}
	if _, warn := run(t, Config{URL: os.URL + "/metrics", Target: hs.URL, APIKey: "k", Header: h}, 1); len(warn) != 0 {
		t.Errorf("other: %q", warn)
	}
	if other.n.Load() != 2 || other.auth.Load() != 0 {
		t.Errorf("other origin: %d scrapes, %d with credentials; want 2 and 0", other.n.Load(), other.auth.Load())
	}

	other.n.Store(0)
	redir := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, os.URL+"/metrics", http.StatusFound)
	}))
	defer redir.Close()
	sc, warn := run(t, Config{URL: redir.URL + "/metrics", Target: redir.URL, APIKey: "k"}, 1)
	if sc != nil || other.n.Load() != 0 {
		t.Errorf("redirect followed: scrape %v, other origin hit %d times", sc, other.n.Load())
	}
	if len(warn) != 1 || !strings.Contains(warn[0], "not followed") {
		t.Errorf("warnings %q", warn)
	}
}

// TestSamplerTakesTheTail: Stop samples once more when the last sample
// is half an interval old or more, so the run's last second is not lost;
// not when it is fresh.
func TestSamplerTakesTheTail(t *testing.T) {
	srv := &scripted{pages: []func(http.ResponseWriter){page(llamaPage(0, 0, 0)), page(llamaPage(1, 0, 0)), page(llamaPage(3, 0, 0))}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	clk := &stepClock{now: time.Unix(5000, 0), limit: 1, parked: make(chan struct{})}
	s := Start(context.Background(), Config{URL: ts.URL, Target: ts.URL, Clock: clk})
	<-clk.parked
	clk.mu.Lock()
	clk.now = clk.now.Add(600 * time.Millisecond)
	clk.mu.Unlock()
	sc, _ := s.Stop()
	if got := points(seriesOf(t, sc, "llamacpp:requests_deferred")); got != "0:0 1000:1 1600:3" {
		t.Errorf("deferred = %s, want a last sample at 1600 ms", got)
	}
}
