package server

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// latencyBuckets (seconds) are fine enough to read thresholds anywhere
// between 50 ms and 2 s, and token gaps down to half a millisecond.
var latencyBuckets = []float64{
	0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.075,
	0.1, 0.125, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.75, 1, 1.25, 1.5,
	2, 2.5, 3, 5, 10, 30, 60,
}

// metrics are the server's Prometheus collectors.
type metrics struct {
	ttft       prometheus.Histogram
	gap        prometheus.Histogram
	queue      prometheus.Histogram
	e2e        prometheus.Histogram
	tokens     prometheus.Counter
	requests   *prometheus.CounterVec
	aborts     *prometheus.CounterVec
	afterAbort prometheus.Counter
	inFlight   prometheus.Gauge
	queued     prometheus.Gauge
	conns      prometheus.Gauge
	rejected   prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	h := func(name, help string) prometheus.Histogram {
		return prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "tokenpulse", Subsystem: "server", Name: name, Help: help, Buckets: latencyBuckets,
		})
	}
	m := &metrics{
		ttft:  h("ttft_seconds", "Time from receiving a request to its first output token leaving the backend."),
		gap:   h("token_gap_seconds", "Time between consecutive output tokens of a request, one observation per token (tokens sent together count as 0)."),
		queue: h("queue_seconds", "Time a request waited for a generation slot."),
		e2e:   h("e2e_seconds", "Time from receiving a request to its last event."),
		tokens: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "tokenpulse", Subsystem: "server", Name: "tokens_total", Help: "Output tokens sent to clients.",
		}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "tokenpulse", Subsystem: "server", Name: "requests_total", Help: "Completion requests by route and HTTP status.",
		}, []string{"route", "code"}),
		aborts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "tokenpulse", Subsystem: "server", Name: "aborts_total", Help: "Requests stopped before they finished, by reason (endpoint, disconnect, shutdown).",
		}, []string{"reason"}),
		afterAbort: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "tokenpulse", Subsystem: "server", Name: "tokens_after_abort_total", Help: "Tokens the backend produced after their request was aborted (goal: 0).",
		}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "tokenpulse", Subsystem: "server", Name: "in_flight_requests", Help: "Requests generating now.",
		}),
		queued: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "tokenpulse", Subsystem: "server", Name: "queued_requests", Help: "Requests waiting for a slot.",
		}),
		conns: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "tokenpulse", Subsystem: "server", Name: "open_connections", Help: "Client connections open now (MaxConns and the reserve).",
		}),
		rejected: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "tokenpulse", Subsystem: "server", Name: "rejected_connections_total", Help: "Connections answered 503 at once because MaxConns and the reserve were taken.",
		}),
	}
	for _, c := range []prometheus.Collector{m.ttft, m.gap, m.queue, m.e2e, m.tokens, m.requests, m.aborts, m.afterAbort, m.inFlight, m.queued, m.conns, m.rejected} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	// Every abort reason shows from the start, at 0.
	for _, reason := range []string{"endpoint", "disconnect", "shutdown"} {
		m.aborts.WithLabelValues(reason)
	}
	// The Go runtime's and the process's own metrics (go_goroutines,
	// process_resident_memory_bytes, ...), unless the caller's registry
	// has them already.
	for _, c := range []prometheus.Collector{collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})} {
		var are prometheus.AlreadyRegisteredError
		if err := reg.Register(c); err != nil && !errors.As(err, &are) {
			return nil, err
		}
	}
	return m, nil
}
