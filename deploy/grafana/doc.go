// Package grafana holds tokenpulse.json, a Grafana dashboard over a
// PostgreSQL history (bench --history postgres://...): the trend page's
// panels (TTFT p95, TPOT p95, gap p95, longest stall, goodput, errors),
// thresholds crossed and regressions per run, and a table of runs linking
// to their published reports. Its test runs every query of the dashboard
// against the history's schema on a real PostgreSQL server.
package grafana
