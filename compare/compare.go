// Package compare tells whether a tokenpulse run is worse than an earlier
// one: per scope (overall, cold, each category) and per metric (TTFT p50
// and p95, gap p50, p95 and max, TPOT mean, E2E p95, error rate) it puts
// the two figures side by side and calls a change a regression only when
// it is both
//
//   - larger than a tolerance: |Δ| > max(Tolerance·|base|, floor), the
//     floor being FloorMS for times and FloorRatePP percentage points for
//     the error rate; and
//   - statistically significant: the two-sided p-value of a test on the
//     raw samples is below Alpha (default 0.01), and the figure moved in
//     the worse direction.
//
// The test is the Mann-Whitney U test (normal approximation with tie and
// continuity corrections) on the samples each figure is computed from:
// the per-request TTFTs for ttft.*, every gap for gap.p50 and gap.p95,
// each request's own largest gap for gap.max, the per-request TPOT for
// tpot.mean and the per-request E2E for e2e.p95; error counts use Fisher's
// exact test. Mann-Whitney was chosen over a bootstrap confidence interval
// because it is deterministic (no seed, no resample count), cheap on the
// tens of thousands of gaps of a run, and makes no assumption about the
// shape of latency distributions, which are skewed and heavy-tailed. Its
// limits: it detects a shift of the whole distribution, not of one
// percentile, and gaps within one request are not independent, so with
// thousands of gaps even a tiny shift is "significant" — which is why a
// change must also exceed the tolerance. gap.max is tested on per-request
// maxima, one independent value per request, so a stall that appears in
// many requests is caught while a single outlier is not.
//
// Example:
//
//	base, _ := runfile.Load("base.json")
//	cur, _ := runfile.Load("run.json")
//	rep := compare.Runs(base, cur, compare.DefaultOptions())
//	rep.WriteText(os.Stdout)
//	if rep.Regressed() { os.Exit(98) }
//
// Runs only reads its arguments; a Report is plain data.
package compare

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stats"
)

// Options set what counts as a regression.
type Options struct {
	// Tolerance is the relative change below which nothing is flagged
	// (0.10 = 10 %).
	Tolerance float64
	// FloorMS is the absolute change in milliseconds below which a time
	// is never flagged, however large in relative terms.
	FloorMS float64
	// FloorRatePP is the same floor for the error rate, in percentage
	// points.
	FloorRatePP float64
	// Alpha is the significance level of the test.
	Alpha float64
	// MinSamples is the smallest sample, on each side, that is tested;
	// below it a change is reported as StatusTooFew.
	MinSamples int
}

// DefaultOptions returns a tolerance of 10 % with floors of 2 ms and 1
// percentage point, α = 0.01 and at least 5 samples a side.
func DefaultOptions() Options {
	return Options{Tolerance: 0.10, FloorMS: 2, FloorRatePP: 1, Alpha: 0.01, MinSamples: 5}
}

// Status is the judgement on one change.
type Status string

// The statuses of a change.
const (
	// StatusRegressed: worse, beyond the tolerance and significant.
	StatusRegressed Status = "regressed"
	// StatusImproved: better, beyond the tolerance and significant.
	StatusImproved Status = "improved"
	// StatusWithin: the change is within the tolerance.
	StatusWithin Status = "within tolerance"
	// StatusNotSignificant: beyond the tolerance but the test cannot tell
	// it from noise.
	StatusNotSignificant Status = "not significant"
	// StatusTooFew: a side has fewer than MinSamples values.
	StatusTooFew Status = "too few samples"
)

// Change is one metric of one scope, base against new.
type Change struct {
	// Scope is "overall", "cold" or "category:NAME".
	Scope string `json:"scope"`
	// Metric is "ttft.p95", "gap.max", "errors.rate", ...
	Metric string `json:"metric"`
	// Unit is "ms" or "%".
	Unit string  `json:"unit"`
	Base float64 `json:"base"`
	New  float64 `json:"new"`
	// Delta is New − Base; Relative is Delta ÷ Base (0 when Base is 0).
	Delta    float64 `json:"delta"`
	Relative float64 `json:"relative"`
	// P is the two-sided p-value of Test; 1 when untested.
	P float64 `json:"p"`
	// Test names the test and the sample ("mann-whitney, per-request ttft").
	Test string `json:"test"`
	// NBase and NNew are the sample sizes the test saw.
	NBase  int    `json:"n_base"`
	NNew   int    `json:"n_new"`
	Status Status `json:"status"`
}

// Side identifies one of the two runs.
type Side struct {
	StartedAt time.Time `json:"started_at"`
	Target    string    `json:"target"`
	Model     string    `json:"model"`
	Device    string    `json:"device"`
}

// Report is the comparison of two runs.
type Report struct {
	Base    Side     `json:"base"`
	New     Side     `json:"new"`
	Options Options  `json:"options"`
	Changes []Change `json:"changes"`
	// Notes say what could not be compared (a category on one side only).
	Notes []string `json:"notes,omitempty"`
}

// Regressions returns the changes judged regressions.
func (r Report) Regressions() []Change {
	var out []Change
	for _, c := range r.Changes {
		if c.Status == StatusRegressed {
			out = append(out, c)
		}
	}
	return out
}

// Regressed reports whether any change is a regression.
func (r Report) Regressed() bool { return len(r.Regressions()) > 0 }

func side(run *runfile.Run) Side {
	dev := run.Device.Label
	if dev == "" {
		dev = run.Device.Hostname
	}
	return Side{StartedAt: run.StartedAt, Target: run.Target.URL, Model: run.Target.Model, Device: dev}
}

// samples are the raw values of one scope of one run, in ms.
type samples struct {
	requests, errors int
	ttft, gaps       []float64
	maxGap, tpot     []float64
	e2e              []float64
}

func collect(run *runfile.Run, keep func(*runfile.Request) bool) samples {
	var s samples
	for i := range run.Requests {
		q := &run.Requests[i]
		if q.Warmup || !keep(q) {
			continue
		}
		s.requests++
		if !q.OK() {
			s.errors++
			continue
		}
		s.e2e = append(s.e2e, stats.Millis(q.E2ENS))
		if len(q.TokenTimesNS) == 0 {
			continue
		}
		s.ttft = append(s.ttft, stats.Millis(q.TTFTNS))
		if v, ok := stats.TPOT(q.TokenTimesNS); ok {
			s.tpot = append(s.tpot, v/1e6)
		}
		g := stats.Gaps(q.TokenTimesNS)
		if len(g) == 0 {
			continue
		}
		worst := g[0]
		for _, x := range g {
			s.gaps = append(s.gaps, stats.Millis(x))
			worst = max(worst, x)
		}
		s.maxGap = append(s.maxGap, stats.Millis(worst))
	}
	return s
}

// scopes returns the scopes to compare, with a filter for each, and notes
// about the categories only one run has.
func scopes(base, cur *runfile.Run) (names []string, keep map[string]func(*runfile.Request) bool, notes []string) {
	keep = map[string]func(*runfile.Request) bool{
		"overall": func(q *runfile.Request) bool { return !q.Cold },
		"cold":    func(q *runfile.Request) bool { return q.Cold },
	}
	names = []string{"overall"}
	hasCold := func(r *runfile.Run) bool {
		for _, q := range r.Requests {
			if q.Cold && !q.Warmup {
				return true
			}
		}
		return false
	}
	if hasCold(base) && hasCold(cur) {
		names = append(names, "cold")
	}
	cats := func(r *runfile.Run) map[string]bool {
		m := map[string]bool{}
		for _, q := range r.Requests {
			if !q.Cold && !q.Warmup {
				m[q.Category] = true
			}
		}
		return m
	}
	bc, nc := cats(base), cats(cur)
	var both []string
	for c := range bc {
		if nc[c] {
			both = append(both, c)
		} else {
			notes = append(notes, fmt.Sprintf("category %q is only in the base run", c))
		}
	}
	for c := range nc {
		if !bc[c] {
			notes = append(notes, fmt.Sprintf("category %q is only in the new run", c))
		}
	}
	sort.Strings(both)
	sort.Strings(notes)
	for _, c := range both {
		name := "category:" + c
		names = append(names, name)
		keep[name] = func(q *runfile.Request) bool { return !q.Cold && q.Category == c }
	}
	return names, keep, notes
}

// Runs compares cur against base. Figures are recomputed from the raw
// requests of each run exactly as runfile.Summarize computes them.
func Runs(base, cur *runfile.Run, opts Options) Report {
	if opts.MinSamples <= 0 {
		opts.MinSamples = 1
	}
	rep := Report{Base: side(base), New: side(cur), Options: opts}
	names, keep, notes := scopes(base, cur)
	rep.Notes = notes
	if d := differences(rep.Base, rep.New); d != "" {
		rep.Notes = append([]string{"the runs differ in " + d + ": the comparison may not mean what it seems"}, rep.Notes...)
	}
	for _, name := range names {
		b, n := collect(base, keep[name]), collect(cur, keep[name])
		rep.Changes = append(rep.Changes, compareScope(name, b, n, opts)...)
	}
	return rep
}

// differences names what differs between the identities of two runs.
func differences(a, b Side) string {
	var d []string
	if a.Target != b.Target {
		d = append(d, "target")
	}
	if a.Model != b.Model {
		d = append(d, "model")
	}
	if a.Device != b.Device {
		d = append(d, "device")
	}
	return strings.Join(d, ", ")
}

type metricSpec struct {
	name   string
	stat   string
	value  func(s samples) []float64 // the sample the figure is computed from
	test   func(s samples) []float64 // the sample the test runs on
	sample string
}

var timeMetrics = []metricSpec{
	{"ttft.p50", "p50", func(s samples) []float64 { return s.ttft }, func(s samples) []float64 { return s.ttft }, "per-request ttft"},
	{"ttft.p95", "p95", func(s samples) []float64 { return s.ttft }, func(s samples) []float64 { return s.ttft }, "per-request ttft"},
	{"gap.p50", "p50", func(s samples) []float64 { return s.gaps }, func(s samples) []float64 { return s.gaps }, "every gap"},
	{"gap.p95", "p95", func(s samples) []float64 { return s.gaps }, func(s samples) []float64 { return s.gaps }, "every gap"},
	{"gap.max", "max", func(s samples) []float64 { return s.gaps }, func(s samples) []float64 { return s.maxGap }, "per-request max gap"},
	{"tpot.mean", "mean", func(s samples) []float64 { return s.tpot }, func(s samples) []float64 { return s.tpot }, "per-request tpot"},
	{"e2e.p95", "p95", func(s samples) []float64 { return s.e2e }, func(s samples) []float64 { return s.e2e }, "per-request e2e"},
}

func compareScope(scope string, b, n samples, opts Options) []Change {
	var out []Change
	for _, m := range timeMetrics {
		bv, _ := stats.Describe(m.value(b)).Field(m.stat)
		nv, _ := stats.Describe(m.value(n)).Field(m.stat)
		c := Change{Scope: scope, Metric: m.name, Unit: "ms", Base: bv, New: nv, P: 1,
			Test: "mann-whitney, " + m.sample}
		bt, nt := m.test(b), m.test(n)
		c.NBase, c.NNew = len(bt), len(nt)
		finish(&c, opts.FloorMS, opts, func() float64 {
			_, p := MannWhitney(bt, nt)
			return p
		})
		out = append(out, c)
	}
	rate := func(s samples) float64 {
		if s.requests == 0 {
			return 0
		}
		return 100 * float64(s.errors) / float64(s.requests)
	}
	c := Change{Scope: scope, Metric: "errors.rate", Unit: "%", Base: rate(b), New: rate(n), P: 1,
		Test: "fisher exact, error counts", NBase: b.requests, NNew: n.requests}
	finish(&c, opts.FloorRatePP, opts, func() float64 {
		return FisherExact(b.errors, b.requests-b.errors, n.errors, n.requests-n.errors)
	})
	return append(out, c)
}

// finish fills in the delta and the status of c; every metric here is
// worse when larger.
func finish(c *Change, floor float64, opts Options, test func() float64) {
	c.Delta = c.New - c.Base
	if c.Base != 0 {
		c.Relative = c.Delta / c.Base
	}
	if c.NBase < opts.MinSamples || c.NNew < opts.MinSamples {
		c.Status = StatusTooFew
		return
	}
	c.P = test()
	if math.Abs(c.Delta) <= math.Max(opts.Tolerance*math.Abs(c.Base), floor) {
		c.Status = StatusWithin
		return
	}
	switch {
	case c.P >= opts.Alpha:
		c.Status = StatusNotSignificant
	case c.Delta > 0:
		c.Status = StatusRegressed
	default:
		c.Status = StatusImproved
	}
}

// WriteText writes the report as a table: one line per scope and metric,
// regressions marked.
func (r Report) WriteText(w io.Writer) error {
	var b strings.Builder
	desc := func(s Side) string {
		return fmt.Sprintf("%s  %s  %s  %s", s.StartedAt.Format(time.RFC3339), orDash(s.Target), orDash(s.Model), orDash(s.Device))
	}
	fmt.Fprintf(&b, "base  %s\nnew   %s\n", desc(r.Base), desc(r.New))
	fmt.Fprintf(&b, "a regression is worse by more than %g%% (at least %g ms, %g pp for errors) with p < %g (Mann-Whitney U; Fisher for errors)\n\n",
		r.Options.Tolerance*100, r.Options.FloorMS, r.Options.FloorRatePP, r.Options.Alpha)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCOPE\tMETRIC\tBASE\tNEW\tDELTA\tP\tVERDICT\t")
	for _, c := range r.Changes {
		rel := ""
		if c.Base != 0 {
			rel = fmt.Sprintf(" (%+.1f%%)", c.Relative*100)
		}
		mark := string(c.Status)
		switch c.Status {
		case StatusRegressed:
			mark = "REGRESSION"
		case StatusImproved:
			mark = "improved"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%+.2f%s\t%s\t%s\t\n", c.Scope, c.Metric,
			num(c.Base, c.Unit), num(c.New, c.Unit), c.Delta, rel, pval(c), mark)
	}
	tw.Flush()
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	if reg := r.Regressions(); len(reg) > 0 {
		fmt.Fprintf(&b, "\n%d regression(s)\n", len(reg))
	} else {
		fmt.Fprintln(&b, "\nno regression")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func num(v float64, unit string) string {
	if unit == "%" {
		return fmt.Sprintf("%.2f%%", v)
	}
	return fmt.Sprintf("%.2f ms", v)
}

func pval(c Change) string {
	if c.Status == StatusTooFew {
		return "-"
	}
	if c.P < 1e-4 {
		return "<1e-4"
	}
	return fmt.Sprintf("%.4f", c.P)
}
