package runfile

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// Bounds of what bench --scrape keeps (see Scrape): a server that exports
// thousands of label sets, or a run of days, cannot grow the run file
// past them.
const (
	// MaxScrapeSeries is the most series a run keeps.
	MaxScrapeSeries = 32
	// MaxScrapePoints is the most points a series keeps: ten hours of
	// one sample a second.
	MaxScrapePoints = 36_000
)

// Roles of the known gauges (ScrapeSeries.Role): what a series measures,
// whatever the server calls it.
const (
	// RoleQueue is the requests waiting for a slot (llama-server's
	// requests_deferred, vLLM's num_requests_waiting).
	RoleQueue = "queue"
	// RoleRunning is the requests being generated.
	RoleRunning = "running"
	// RoleKV is the KV cache's usage, a fraction from 0 to 1.
	RoleKV = "kv"
	// RoleTokens is a token counter's rate, tokens per second.
	RoleTokens = "tokens"
)

// Scrape is what bench --scrape sampled of the target's Prometheus
// metrics while the run lasted: the server's own gauges, to read beside
// the client's figures.
type Scrape struct {
	// URL is the endpoint sampled.
	URL string `json:"url"`
	// StartedAt is the first sample's time: every point's MS counts from
	// it (the requests' started_at share its clock).
	StartedAt time.Time `json:"started_at"`
	// IntervalMS is the time between samples asked for.
	IntervalMS float64 `json:"interval_ms"`
	// Samples is how many scrapes were made; Failed how many of them
	// gave nothing (the run's warnings say why).
	Samples int `json:"samples"`
	Failed  int `json:"failed,omitempty"`
	// Series are the series kept, in the order they were first seen.
	Series []ScrapeSeries `json:"series"`
}

// ScrapeSeries is one series of a Scrape: one metric and label set.
type ScrapeSeries struct {
	// Name is the metric's name as the server exports it
	// ("llamacpp:requests_deferred").
	Name string `json:"name"`
	// Labels are its labels, if any.
	Labels map[string]string `json:"labels,omitempty"`
	// Role is what a known gauge measures (RoleQueue, RoleRunning,
	// RoleKV, RoleTokens); "" for a series named by --scrape-series.
	Role string `json:"role,omitempty"`
	// Kind is how Points derive from the samples: "gauge" (the value as
	// sampled), "rate" (a counter's increase per second since the sample
	// before) or "mean" (a histogram's or summary's mean observation
	// since the sample before).
	Kind string `json:"kind"`
	// Points are the values in time order.
	Points []ScrapePoint `json:"points"`
}

// Kinds of a ScrapeSeries.
const (
	KindGauge = "gauge"
	KindRate  = "rate"
	KindMean  = "mean"
)

// ScrapePoint is one value of a series.
type ScrapePoint struct {
	// MS is when it was sampled, ms after Scrape.StartedAt.
	MS float64 `json:"ms"`
	// V is the value.
	V float64 `json:"v"`
}

// Key names the series with its labels, as Prometheus writes them:
// `name{a="x",b="y"}` (labels in order of name).
func (s *ScrapeSeries) Key() string { return SeriesKey(s.Name, s.Labels) }

// SeriesKey is how a series of name and labels is written:
// `name{a="x",b="y"}`, labels in order of name; the name alone when
// there are none.
func SeriesKey(name string, labels map[string]string) string {
	if len(labels) == 0 {
		return name
	}
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b := []byte(name + "{")
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, "%s=%q", k, labels[k])
	}
	return string(append(b, '}'))
}

// At returns the value of the series at t (ms after Scrape.StartedAt):
// the last point at or before t, and false when there is none or it is
// older than stale ms.
func (s *ScrapeSeries) At(t, stale float64) (float64, bool) {
	lo, hi := 0, len(s.Points)
	for lo < hi {
		m := (lo + hi) / 2
		if s.Points[m].MS <= t {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 || t-s.Points[lo-1].MS > stale {
		return 0, false
	}
	return s.Points[lo-1].V, true
}

// validate checks the scrape a reader is given: bounded, its points
// finite and in time order.
func (sc *Scrape) validate() error {
	bad := func(format string, args ...any) error {
		return &InvalidError{Field: "scrape", Msg: fmt.Sprintf(format, args...)}
	}
	if len(sc.Series) > MaxScrapeSeries {
		return bad("%d series: a run keeps at most %d (runfile.MaxScrapeSeries)", len(sc.Series), MaxScrapeSeries)
	}
	if sc.Samples < 0 || sc.Failed < 0 || sc.Failed > sc.Samples {
		return bad("%d samples, %d failed", sc.Samples, sc.Failed)
	}
	for i := range sc.Series {
		s := &sc.Series[i]
		switch s.Kind {
		case KindGauge, KindRate, KindMean:
		default:
			return bad("series %s: kind %q is none of gauge, rate, mean", s.Key(), s.Kind)
		}
		if len(s.Points) > MaxScrapePoints {
			return bad("series %s: %d points: a series keeps at most %d (runfile.MaxScrapePoints)", s.Key(), len(s.Points), MaxScrapePoints)
		}
		prev := math.Inf(-1)
		for k, p := range s.Points {
			if math.IsNaN(p.MS) || math.IsInf(p.MS, 0) || math.IsNaN(p.V) || math.IsInf(p.V, 0) {
				return bad("series %s: point %d is not a finite number", s.Key(), k)
			}
			if p.MS < prev || p.MS < 0 {
				return bad("series %s: point %d at %g ms is out of time order", s.Key(), k, p.MS)
			}
			prev = p.MS
		}
	}
	return nil
}
