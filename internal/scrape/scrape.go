// Package scrape samples a server's own Prometheus metrics while a run
// lasts (bench --scrape), so that the report can set the server's queue,
// slots and KV cache beside the client's TTFT.
//
// Each sample is parsed with prometheus/common's text parser. The gauges
// of the servers tokenpulse knows (llama-server --metrics, vLLM,
// tokenpulse serve) are kept by name, with what they measure
// ([runfile.RoleQueue], ...); other series are kept when named. A
// counter becomes its rate per second between consecutive samples, a
// histogram or summary the mean of what it observed between them.
//
// A scrape that fails is counted and said in the run's warnings: it never
// fails the run. The API key and headers go with a scrape only to the
// target's own origin (package origin), and no redirect is followed.
package scrape

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/tokenpulse/tokenpulse/clock"
	"github.com/tokenpulse/tokenpulse/internal/origin"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// DefaultInterval is the time between samples.
const DefaultInterval = time.Second

// maxBody bounds one sample's body: llama-server's page is 2 KB,
// tokenpulse serve's and vLLM's tens of KB.
const maxBody = 4 << 20

// Known maps the name of each gauge or counter tokenpulse recognises to
// what it measures. The names are the servers' own: llama-server's
// (tools/server, exported with --metrics), vLLM's (v0 and v1) and
// tokenpulse serve's (internal/server).
var Known = map[string]string{
	// llama-server --metrics.
	"llamacpp:requests_deferred":      runfile.RoleQueue,
	"llamacpp:requests_processing":    runfile.RoleRunning,
	"llamacpp:kv_cache_usage_ratio":   runfile.RoleKV,
	"llamacpp:prompt_tokens_total":    runfile.RoleTokens,
	"llamacpp:tokens_predicted_total": runfile.RoleTokens,
	// vLLM.
	"vllm:num_requests_waiting":    runfile.RoleQueue,
	"vllm:num_requests_running":    runfile.RoleRunning,
	"vllm:gpu_cache_usage_perc":    runfile.RoleKV, // v0: a fraction despite its name
	"vllm:kv_cache_usage_perc":     runfile.RoleKV, // v1: likewise
	"vllm:prompt_tokens_total":     runfile.RoleTokens,
	"vllm:generation_tokens_total": runfile.RoleTokens,
	// tokenpulse serve.
	"tokenpulse_server_queued_requests":    runfile.RoleQueue,
	"tokenpulse_server_in_flight_requests": runfile.RoleRunning,
	"tokenpulse_server_tokens_total":       runfile.RoleTokens,
}

// Config says what to sample and how.
type Config struct {
	// URL is the metrics endpoint ("http://127.0.0.1:8080/metrics").
	URL string
	// Target is the run's target URL. APIKey (as a bearer token) and
	// Header go with each scrape only when URL has the target's origin.
	Target string
	APIKey string
	Header http.Header
	// Series names more metrics to keep besides the known ones.
	Series []string
	// Interval is the time between samples (DefaultInterval when 0).
	Interval time.Duration
	// Clock paces the samples and stamps them (clock.Real when nil).
	Clock clock.Clock
	// Client makes the requests (a client of Go's default transport
	// when nil), through a copy that follows no redirect.
	Client *http.Client
}

// SameOrigin reports whether the scrape URL has the target's origin,
// that is whether the API key and headers go with it.
func (c Config) SameOrigin() bool {
	u, err := url.Parse(c.URL)
	if err != nil {
		return false
	}
	t, err := url.Parse(c.Target)
	if err != nil {
		return false
	}
	return origin.Same(u, t)
}

// Sampler samples an endpoint until Stop.
type Sampler struct {
	cfg    Config
	clk    clock.Clock
	hc     *http.Client
	parent context.Context
	cancel context.CancelFunc
	done   chan struct{}
	lastAt time.Time // the last scrape's start (the loop's alone until done)

	mu  sync.Mutex
	col *Collector
	buf bytes.Buffer // the page, reused: a run holds the collector
}

// Start samples cfg.URL at once and then every cfg.Interval until Stop;
// ctx ends it too. It never fails: what goes wrong is in Stop's
// warnings.
func Start(ctx context.Context, cfg Config) *Sampler {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	s := &Sampler{cfg: cfg, clk: cfg.Clock, hc: origin.Client(cfg.Client), done: make(chan struct{})}
	if s.clk == nil {
		s.clk = clock.Real{}
	}
	s.col = NewCollector(cfg.Series)
	s.parent = context.WithoutCancel(ctx)
	ctx, s.cancel = context.WithCancel(ctx)
	go s.loop(ctx)
	return s
}

func (s *Sampler) loop(ctx context.Context) {
	defer close(s.done)
	next := s.clk.Now()
	for {
		s.sample(ctx)
		next = next.Add(s.cfg.Interval)
		// A scrape slower than the interval skips the ticks it overran.
		for now := s.clk.Now(); !next.After(now); {
			next = next.Add(s.cfg.Interval)
		}
		if s.clk.SleepUntil(ctx, next) != nil {
			return
		}
	}
}

// sample makes one scrape and hands it to the collector.
func (s *Sampler) sample(ctx context.Context) {
	s.lastAt = s.clk.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	at, err := s.fetch(ctx)
	if ctx.Err() != nil {
		return // stopped under way: not a failed scrape
	}
	if err != nil {
		s.col.Fail(err)
		return
	}
	if err := s.col.Add(at, s.buf.Bytes()); err != nil {
		s.col.Fail(err)
	}
}

// fetch reads the endpoint's page into s.buf and returns the time its
// answer came.
func (s *Sampler) fetch(ctx context.Context) (time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, max(5*time.Second, s.cfg.Interval))
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.cfg.URL, nil)
	if err != nil {
		return time.Time{}, err
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	if s.cfg.SameOrigin() {
		for k, vs := range s.cfg.Header {
			req.Header[k] = append([]string(nil), vs...)
		}
		if s.cfg.APIKey != "" {
			req.Header.Set("Authorization", "Bearer "+s.cfg.APIKey)
		}
	}
	resp, err := s.hc.Do(req)
	if err != nil {
		return time.Time{}, err
	}
	at := s.clk.Now()
	defer resp.Body.Close()
	if msg := origin.NotFollowed(resp); msg != "" {
		return at, fmt.Errorf("%s: %s", resp.Status, msg)
	}
	s.buf.Reset()
	if _, err := s.buf.ReadFrom(io.LimitReader(resp.Body, maxBody+1)); err != nil {
		return at, err
	}
	b := s.buf.Bytes()
	if resp.StatusCode != http.StatusOK {
		return at, fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(b[:min(len(b), 200)])))
	}
	if len(b) > maxBody {
		return at, fmt.Errorf("the page is larger than %d MiB", maxBody>>20)
	}
	if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(ct, "text/html") || strings.HasPrefix(ct, "application/json") {
		return at, fmt.Errorf("not a Prometheus text page (Content-Type %s)", ct)
	}
	return at, nil
}

// Stop ends the sampling (waiting for a scrape under way), takes a last
// sample when the one before is half an interval old or more (the run's
// tail), and returns what was kept, with the warnings the run should
// carry. The scrape is nil when no sample succeeded.
func (s *Sampler) Stop() (*runfile.Scrape, []string) {
	s.cancel()
	<-s.done
	if s.clk.Now().Sub(s.lastAt) >= s.cfg.Interval/2 {
		s.sample(s.parent)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.col.Result(s.cfg.URL, s.cfg.Interval)
}

// Collector turns successive metric pages into series: the part of a
// Sampler that neither fetches nor waits, for tests to drive.
type Collector struct {
	named   map[string]bool
	start   time.Time
	samples int
	failed  int
	first   error
	last    error
	series  []*series
	byKey   map[string]*series
	dropped int
	seen    map[string]bool
	lines   bytes.Buffer // the lines parsed, reused
}

// series is one kept series and the raw value it had at the sample
// before.
type series struct {
	s        runfile.ScrapeSeries
	prevAt   time.Time
	prevV    float64 // a counter's value, a histogram's sum
	prevN    uint64  // a histogram's count
	havePrev bool
	full     bool
}

// NewCollector keeps the known series and those named.
func NewCollector(named []string) *Collector {
	c := &Collector{named: map[string]bool{}, byKey: map[string]*series{}, seen: map[string]bool{}}
	for _, n := range named {
		if n = strings.TrimSpace(n); n != "" {
			c.named[n] = true
		}
	}
	return c
}

// Fail counts a scrape that gave nothing.
func (c *Collector) Fail(err error) {
	c.samples++
	c.failed++
	if c.first == nil {
		c.first = err
	}
	c.last = err
}

// Add parses one page of metrics sampled at at.
func (c *Collector) Add(at time.Time, page []byte) error {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(c.keep(page)))
	if err != nil {
		return fmt.Errorf("not a Prometheus text page: %w", err)
	}
	c.samples++
	if c.start.IsZero() {
		c.start = at
	}
	ms := float64(at.Sub(c.start)) / float64(time.Millisecond)
	// The known gauges first, so that a named series of many label sets
	// cannot take their places under the bound.
	names := slices.SortedFunc(maps.Keys(fams), func(a, b string) int {
		_, ka := Known[a]
		_, kb := Known[b]
		if ka != kb {
			if ka {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	for _, name := range names {
		if !c.kept(name) {
			continue
		}
		role := Known[name]
		c.seen[name] = true
		f := fams[name]
		for _, m := range f.GetMetric() {
			c.add(name, role, f.GetType(), m, at, ms)
		}
	}
	return nil
}

// linesPerName bounds the sample lines of one name handed to the
// parser: enough for one more series than a run keeps (so that the
// overflow is seen and said), a histogram's sum and count each.
const linesPerName = 3 * (runfile.MaxScrapeSeries + 1)

// keep returns the lines of page the parser needs: the comments and
// samples of the names kept (known or named), histogram buckets left out
// (a histogram is kept as its sum and count), at most linesPerName
// samples of each. The parser then builds objects for a few series, not
// for every series a large page holds: a run holds the garbage
// collector (stream.HoldGC), so what a scrape allocates stays until the
// memory limit. Lines this cannot name (a quoted UTF-8 name) are passed
// on whole.
func (c *Collector) keep(page []byte) []byte {
	c.lines.Reset()
	n := map[string]int{}
	for line := range bytes.Lines(page) {
		t := bytes.TrimLeft(line, " \t")
		if bytes.HasPrefix(t, []byte("#")) {
			f := bytes.Fields(t)
			if len(f) >= 3 && (string(f[1]) == "HELP" || string(f[1]) == "TYPE") && !c.kept(string(f[2])) {
				continue
			}
			c.lines.Write(line)
			continue
		}
		end := bytes.IndexAny(t, "{ \t")
		if end <= 0 {
			c.lines.Write(line) // blank, or a quoted name: the parser judges
			continue
		}
		name := string(t[:end])
		if strings.HasSuffix(name, "_bucket") {
			continue
		}
		base := name
		for _, suf := range []string{"_sum", "_count"} {
			if b, ok := strings.CutSuffix(name, suf); ok && c.kept(b) {
				base = b
			}
		}
		if !c.kept(base) || n[base] == linesPerName {
			continue
		}
		n[base]++
		c.lines.Write(line)
	}
	return c.lines.Bytes()
}

// kept reports whether the series of name are kept.
func (c *Collector) kept(name string) bool {
	_, known := Known[name]
	return known || c.named[name]
}

// add records metric m of family name at at (ms after the first sample).
func (c *Collector) add(name, role string, typ dto.MetricType, m *dto.Metric, at time.Time, ms float64) {
	var kind string
	var v float64
	var n uint64
	switch typ {
	case dto.MetricType_GAUGE:
		kind, v = runfile.KindGauge, m.GetGauge().GetValue()
	case dto.MetricType_UNTYPED:
		kind, v = runfile.KindGauge, m.GetUntyped().GetValue()
	case dto.MetricType_COUNTER:
		kind, v = runfile.KindRate, m.GetCounter().GetValue()
	case dto.MetricType_HISTOGRAM:
		kind, v, n = runfile.KindMean, m.GetHistogram().GetSampleSum(), m.GetHistogram().GetSampleCount()
	case dto.MetricType_SUMMARY:
		kind, v, n = runfile.KindMean, m.GetSummary().GetSampleSum(), m.GetSummary().GetSampleCount()
	default:
		return
	}
	labels := map[string]string{}
	for _, l := range m.GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	if len(labels) == 0 {
		labels = nil
	}
	key := runfile.SeriesKey(name, labels)
	s := c.byKey[key]
	if s == nil {
		if len(c.series) == runfile.MaxScrapeSeries {
			c.dropped++
			return
		}
		s = &series{s: runfile.ScrapeSeries{Name: name, Labels: labels, Role: role, Kind: kind, Points: []runfile.ScrapePoint{}}}
		c.series = append(c.series, s)
		c.byKey[key] = s
	}
	if s.s.Kind != kind {
		return // the server changed the family's type: keep the first
	}
	point, ok := v, kind == runfile.KindGauge
	if s.havePrev {
		dt := at.Sub(s.prevAt).Seconds()
		switch kind {
		case runfile.KindRate:
			inc := v - s.prevV
			if inc < 0 {
				inc = v // the counter was reset: it counted v since
			}
			point, ok = inc/dt, dt > 0
		case runfile.KindMean:
			ds, dn := v-s.prevV, float64(n)-float64(s.prevN)
			if dn < 0 {
				ds, dn = v, float64(n)
			}
			point, ok = ds/dn, dn > 0
		}
	}
	s.prevAt, s.prevV, s.prevN, s.havePrev = at, v, n, true
	if !ok || math.IsNaN(point) || math.IsInf(point, 0) {
		return
	}
	if len(s.s.Points) == runfile.MaxScrapePoints {
		s.full = true
		return
	}
	s.s.Points = append(s.s.Points, runfile.ScrapePoint{MS: ms, V: point})
}

// Result returns what was kept of the endpoint at url sampled every
// interval, and the warnings: failed scrapes, names never exported,
// series left out. The scrape is nil when no sample succeeded.
func (c *Collector) Result(url string, interval time.Duration) (*runfile.Scrape, []string) {
	var warn []string
	ok := c.samples - c.failed
	if c.failed > 0 {
		if ok == 0 {
			warn = append(warn, fmt.Sprintf("--scrape %s: none of %d samples succeeded (%v): the run has no server gauges", url, c.samples, c.first))
		} else {
			w := fmt.Sprintf("--scrape %s: %d of %d samples failed (first: %v", url, c.failed, c.samples, c.first)
			if c.last != nil && c.last.Error() != c.first.Error() {
				w += fmt.Sprintf("; last: %v", c.last)
			}
			warn = append(warn, w+"): the server gauges have holes")
		}
	}
	if ok > 0 {
		known := false
		for n := range c.seen {
			if _, k := Known[n]; k {
				known = true
			}
		}
		if !known {
			warn = append(warn, fmt.Sprintf("--scrape %s: exports none of the gauges tokenpulse knows (llama-server --metrics, vLLM, tokenpulse serve); name its series with --scrape-series", url))
		}
		for _, n := range slices.Sorted(maps.Keys(c.named)) {
			if !c.seen[n] {
				warn = append(warn, fmt.Sprintf("--scrape %s: --scrape-series %s was never exported", url, n))
			}
		}
	}
	if c.dropped > 0 {
		warn = append(warn, fmt.Sprintf("--scrape %s: more than %d series (runfile.MaxScrapeSeries); the rest were left out", url, runfile.MaxScrapeSeries))
	}
	full := false
	for _, s := range c.series {
		full = full || s.full
	}
	if full {
		warn = append(warn, fmt.Sprintf("--scrape %s: a series reached %d points (runfile.MaxScrapePoints); later samples were left out", url, runfile.MaxScrapePoints))
	}
	if ok == 0 {
		return nil, warn
	}
	out := &runfile.Scrape{URL: url, StartedAt: c.start.Round(0).UTC(), IntervalMS: float64(interval) / float64(time.Millisecond),
		Samples: c.samples, Failed: c.failed, Series: []runfile.ScrapeSeries{}}
	for _, s := range c.series {
		out.Series = append(out.Series, s.s)
	}
	return out, warn
}

// ErrNoURL is returned by DefaultURL for a target without an address.
var ErrNoURL = errors.New("no target URL to take /metrics from")

// DefaultURL is the metrics endpoint of a target whose root URL is root
// (its base URL without "/v1"): root + "/metrics".
func DefaultURL(root string) (string, error) {
	if root == "" {
		return "", ErrNoURL
	}
	return strings.TrimRight(root, "/") + "/metrics", nil
}
