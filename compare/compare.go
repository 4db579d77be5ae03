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
//     two runs' samples is below Alpha (default 0.01), and the figure
//     moved in the worse direction.
//
// # What is compared
//
// compare derives nothing itself. The scopes are package measure's
// ([measure.Measured]: warm-up requests and those the client aborted on
// purpose count nowhere; then, for runs with conversations, each turn
// [measure.Turn]), a scope is compared only when both runs have it (a
// category or turn on one side only is named in Report.Notes), and every figure
// shown is the one the run's summary shows for that scope
// ([measure.Aggregate]): ttft.p95 is the summary's ttft_ms.p95, gap.p95
// and gap.max are its gap_ms.p95 and .max (pooled over every gap),
// tpot.mean its tpot_ms.mean, errors.rate its errors ÷ requests.
//
// # Why the test is per request
//
// The figure is pooled; the test is not. Each request contributes one
// value per metric: its TTFT, its own gap p50 (for gap.p50) or gap p95
// (for gap.p95), its own largest gap (gap.max), its TPOT, its E2E.
// Change.Test names the sample ("mann-whitney, per-request gap p95").
//
// The gaps within one request are not independent draws. They share that
// request's prompt, its batch on the server, its length of context, the
// machine's state while it ran; a request that runs at 23 ms a token runs
// at about 23 ms for all its tokens. What varies from one run to the next
// is mostly the pace of each request, so the effective sample is the
// number of requests, not the number of gaps. A test on the pooled gaps
// counts a request of 500 tokens as 499 independent observations and its
// p-values are far too small: on 40 pairs of synthetic runs of one and the
// same profile (30 requests of 40 tokens, each request's pace varying by
// 15 %), Mann-Whitney on the pooled gaps found a "significant" difference
// at α = 0.01 in 23 of the 40 pairs, where a valid test finds one in about
// 0.4; the per-request gap p50 test found one, and compare flagged no
// regression in any pair (TestSameProfileIsNotSignificant).
// Testing one value per request keeps the test's error rate at α, at the
// price of power: a run of few requests can only show large changes.
//
// The test is the Mann-Whitney U test (normal approximation with tie and
// continuity corrections); error counts use Fisher's exact test.
// Mann-Whitney was chosen over a bootstrap confidence interval because it
// is deterministic (no seed, no resample count), cheap, and makes no
// assumption about the shape of latency distributions, which are skewed
// and heavy-tailed. It detects a shift of the whole distribution of the
// per-request values, not of one percentile of the scope, which is why a
// change must also exceed the tolerance. gap.max is tested on per-request
// maxima, so a stall that appears in many requests is caught while a
// single outlier is not; a scope of fewer than MinSamples requests with
// a value (such as the one cold request of a run) is reported as too few
// to test.
//
// Example:
//
//	base, _ := runfile.Load("base.json")
//	cur, _ := runfile.Load("run.json")
//	rep := compare.Runs(base, cur, compare.DefaultOptions())
//	rep.WriteText(os.Stdout)
//	if rep.Regressed() { os.Exit(98) }
//
// Runs only reads its arguments; a Report is plain data that encodes to
// JSON (a run file may store it), with the field names below.
package compare

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// Options set what counts as a regression. In a Report's JSON they keep
// their Go names ("Tolerance", "FloorMS", "FloorRatePP", "Alpha",
// "MinSamples"), as they always have.
type Options struct {
	// Tolerance is the relative change below which nothing is flagged
	// (0.10 = 10 %).
	Tolerance float64 `json:"tolerance"`
	// FloorMS is the absolute change in milliseconds below which a time
	// is never flagged, however large in relative terms.
	FloorMS float64 `json:"floor_ms"`
	// FloorRatePP is the same floor for the error rate, in percentage
	// points.
	FloorRatePP float64 `json:"floor_rate_pp"`
	// Alpha is the significance level of the test.
	Alpha float64 `json:"alpha"`
	// MinSamples is the smallest sample, on each side, that is tested;
	// below it a change is reported as StatusTooFew.
	MinSamples int `json:"min_samples"`
	// TailTolerance and ExtremeTolerance replace Tolerance for the tail
	// figures (p95s) and the extremes (gap.max, p99s): they move far more
	// than a median between runs of an unchanged target, a maximum most of
	// all, since one late wake-up of a loaded machine sets it (see DESIGN,
	// "Regression verdicts"). 0 means Tolerance.
	TailTolerance    float64 `json:"tail_tolerance,omitempty"`
	ExtremeTolerance float64 `json:"extreme_tolerance,omitempty"`
	// NoiseRuns is K: with K or more earlier comparable runs (Against),
	// each figure is judged against its run-to-run noise band over the
	// last K of them; 0 never uses a band.
	NoiseRuns int `json:"noise_runs,omitempty"`
	// BandAlpha is the one-sided level of a noise band ([NoiseBand]): the
	// share of an unchanged target's runs expected above it under normal
	// noise.
	BandAlpha float64 `json:"band_alpha,omitempty"`
}

// DefaultOptions returns a tolerance of 10 % for medians and means, 25 %
// for p95s and 50 % for gap.max, with floors of 2 ms and 1 percentage
// point; α = 0.01 and at least 5 samples a side for the per-request
// test; and noise bands of level 0.005 over the last 5 comparable runs.
// The choices rest on the false-alarm and detection rates measured in
// TestVerdictCalibration and in DESIGN ("Regression verdicts").
func DefaultOptions() Options {
	return Options{Tolerance: 0.10, FloorMS: 2, FloorRatePP: 1, Alpha: 0.01, MinSamples: 5,
		TailTolerance: 0.25, ExtremeTolerance: 0.50, NoiseRuns: 5, BandAlpha: 0.005}
}

// Kind is the kind of a compared figure, which sets how much it may move
// between runs of an unchanged target.
type Kind int

// The kinds of figure.
const (
	// KindCentre: medians, means and rates (ttft.p50, gap.p50,
	// tpot.mean, errors.rate, and the repeats' throughputs).
	KindCentre Kind = iota
	// KindTail: p95s (ttft.p95, gap.p95, e2e.p95).
	KindTail
	// KindExtreme: maxima and p99s (gap.max).
	KindExtreme
)

// KindOf returns the kind of the figure named metric ("gap.max",
// "ttft.p95", "ttft_ms.p99", ...).
func KindOf(metric string) Kind {
	switch {
	case strings.HasSuffix(metric, ".max"), strings.HasSuffix(metric, ".p99"), strings.HasSuffix(metric, ".p999"):
		return KindExtreme
	case strings.HasSuffix(metric, ".p95"), strings.HasSuffix(metric, ".p90"):
		return KindTail
	}
	return KindCentre
}

// ToleranceFor returns the practical tolerance a change of metric is held
// to, by its kind: with a noise band or without one, a change smaller
// than this is not worth an alarm.
func (o Options) ToleranceFor(metric string) float64 {
	switch KindOf(metric) {
	case KindTail:
		if o.TailTolerance > 0 {
			return o.TailTolerance
		}
	case KindExtreme:
		if o.ExtremeTolerance > 0 {
			return o.ExtremeTolerance
		}
	}
	return o.Tolerance
}

// Status is the judgement on one change (Change.Status), runfile's
// vocabulary.
type Status = runfile.ChangeStatus

// The statuses of a change (runfile's).
const (
	// StatusRegressed: worse, beyond the tolerance and significant.
	StatusRegressed = runfile.ChangeRegressed
	// StatusImproved: better, beyond the tolerance and significant.
	StatusImproved = runfile.ChangeImproved
	// StatusWithin: the change is within the tolerance.
	StatusWithin = runfile.ChangeWithin
	// StatusWithinNoise: the new figure is inside its noise band.
	StatusWithinNoise = runfile.ChangeWithinNoise
	// StatusNoisyRunner: a p95 or a maximum worse beyond its tolerance
	// (and its band), but by no more than the measuring machine's own
	// wake-up delays during the run (runfile.MachineNoise): not a
	// regression, and said so.
	StatusNoisyRunner = runfile.ChangeNoisyRunner
	// StatusNotSignificant: beyond the tolerance but the test cannot tell
	// it from noise.
	StatusNotSignificant = runfile.ChangeNotSignificant
	// StatusTooFew: a side has fewer than MinSamples values.
	StatusTooFew = runfile.ChangeTooFew
)

// Change is one metric of one scope, base against new; it is the run
// file's record of a comparison's change (runfile.Change).
type Change = runfile.Change

// Side identifies one of the two runs.
type Side struct {
	// StartedAt is the run's started_at.
	StartedAt time.Time `json:"started_at"`
	// Target is the run's target URL, Model its target model.
	Target string `json:"target"`
	Model  string `json:"model"`
	// Device is the device's label, or its hostname when it has none.
	Device string `json:"device"`
}

// Report is the comparison of two runs. It is plain data and encodes to
// JSON with the field names given here; a run file may store it, so they
// stay.
type Report struct {
	// Base and New identify the earlier run and the one judged.
	Base Side `json:"base"`
	New  Side `json:"new"`
	// Options are the options the changes were judged with.
	Options Options `json:"options"`
	// Changes has one entry per scope both runs have and per metric, in
	// the order overall, cold, categories by name, turns; within a scope
	// ttft.p50, ttft.p95, gap.p50, gap.p95, gap.max, tpot.mean, e2e.p95,
	// errors.rate.
	Changes []Change `json:"changes"`
	// Notes say what could not be compared (a category on one side only)
	// and whether the runs differ in target, model or device.
	Notes []string `json:"notes,omitempty"`
	// Method names the test when it is not the per-request one (a
	// comparison of repeats: Welch's t-test on run-level figures).
	Method string `json:"method,omitempty"`
	// Evidence says what the verdict rests on: EvidenceBand,
	// EvidenceRequests or EvidenceRepeats.
	Evidence string `json:"evidence,omitempty"`
	// NoiseRuns is the number of earlier runs the bands were estimated
	// from (0 without bands); NoiseWanted is Options.NoiseRuns when a
	// history was consulted.
	NoiseRuns   int `json:"noise_runs,omitempty"`
	NoiseWanted int `json:"noise_wanted,omitempty"`
}

// What a verdict rests on (Report.Evidence).
const (
	// EvidenceBand: each figure against its run-to-run noise band over
	// earlier comparable runs.
	EvidenceBand = "noise band"
	// EvidenceRequests: no noise estimate; a per-request test of the two
	// runs with a tolerance per kind of figure.
	EvidenceRequests = "per-request test"
	// EvidenceRepeats: Welch's test on two sets of bench --repeat runs.
	EvidenceRepeats = "repeats"
)

// Rule states in words the rule the report's changes were judged by.
func (r Report) Rule() string {
	o := r.Options
	tol := fmt.Sprintf("%g%% (%g%% for p95s, %g%% for gap.max; at least %g ms, %g pp for errors)",
		o.Tolerance*100, o.ToleranceFor("x.p95")*100, o.ToleranceFor("x.max")*100, o.FloorMS, o.FloorRatePP)
	switch r.Evidence {
	case EvidenceBand:
		return fmt.Sprintf("a regression is above the figure's noise band (its median over the last %d comparable runs + t·sd·√(1+1/%d), a one-sided %g%% prediction interval), worse than that median by more than %s, and seen per request (Mann-Whitney against the last run, p < %g); a p95 or maximum worse by no more than the runner's own delays in this run (a sleeping goroutine's wake-up lateness p99, or its maximum), or worse on a night the runner woke goroutines later than the band's runs could explain, is reported as %q instead",
			r.NoiseRuns, r.NoiseRuns, 100*(1-o.BandAlpha), tol, o.Alpha, StatusNoisyRunner)
	case EvidenceRepeats:
		return fmt.Sprintf("a regression is worse by more than %s with p < %g (%s)", tol, o.Alpha, r.Method)
	}
	rule := fmt.Sprintf("a regression is worse than the base by more than %s with p < %g (Mann-Whitney U on one value per request; Fisher for errors)", tol, o.Alpha)
	if r.NoiseWanted > 0 {
		rule += fmt.Sprintf("; no noise estimate yet: %d of the %d earlier comparable runs a noise band needs", r.NoiseRuns, r.NoiseWanted)
	}
	return rule
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
	return Side{StartedAt: run.StartedAt, Target: run.Target.URL, Model: run.Target.Model, Device: run.Device.Key()}
}

// comparable returns the scopes of run that compare judges: the measured
// scopes (measure.Measured) and then, for a run with conversations, each
// turn (turn:1, turn:2, ...).
func comparable(run *runfile.Run) []measure.Scope {
	out := measure.Measured(run)
	for _, k := range measure.Turns(run) {
		out = append(out, measure.Turn(k))
	}
	return out
}

// scopes returns the scopes to compare, the comparable scopes both runs
// have in the order comparable gives them, and notes naming the
// categories and turns only one run has.
func scopes(base, cur *runfile.Run) ([]measure.Scope, []string) {
	bs, ns := comparable(base), comparable(cur)
	inBase, inNew := map[measure.Scope]bool{}, map[measure.Scope]bool{}
	for _, s := range bs {
		inBase[s] = true
	}
	for _, s := range ns {
		inNew[s] = true
	}
	var both []measure.Scope
	var notes []string
	for _, s := range bs {
		switch {
		case inNew[s]:
			both = append(both, s)
		case s.Kind == measure.KindCategory:
			notes = append(notes, fmt.Sprintf("category %q is only in the base run", s.Category))
		case s.Kind == measure.KindTurn:
			notes = append(notes, fmt.Sprintf("%s is only in the base run", s))
		}
	}
	for _, s := range ns {
		switch {
		case inBase[s]:
		case s.Kind == measure.KindCategory:
			notes = append(notes, fmt.Sprintf("category %q is only in the new run", s.Category))
		case s.Kind == measure.KindTurn:
			notes = append(notes, fmt.Sprintf("%s is only in the new run", s))
		}
	}
	sort.Strings(notes)
	return dropWholeCategories(base, cur, both), notes
}

// dropWholeCategories leaves out a category or turn scope that holds
// every request of overall in both runs (a suite of one category,
// conversations of one turn): its changes would be overall's again,
// tested twice.
func dropWholeCategories(base, cur *runfile.Run, scopes []measure.Scope) []measure.Scope {
	whole := func(run *runfile.Run, s measure.Scope) bool {
		return len(measure.Views(run, s)) == len(measure.Views(run, measure.Overall))
	}
	out := scopes[:0:0]
	for _, s := range scopes {
		if (s.Kind == measure.KindCategory || s.Kind == measure.KindTurn) && whole(base, s) && whole(cur, s) {
			continue
		}
		out = append(out, s)
	}
	return out
}

// Runs compares cur against base. The scopes, the requests each counts
// and the figures are package measure's: a figure equals the one the
// run's summary (measure.Summarize) shows for that scope. A worse p95 or
// maximum by no more than cur's own machine noise is StatusNoisyRunner
// (see explainedByRunner).
func Runs(base, cur *runfile.Run, opts Options) Report {
	rep := runs(base, cur, opts)
	for i := range rep.Changes {
		c := &rep.Changes[i]
		if c.Status == StatusRegressed && explainedByRunner(c, c.Delta, cur, false) {
			c.Status = StatusNoisyRunner
		}
	}
	if n := runnerNote(&rep, cur, false); n != "" {
		rep.Notes = append(rep.Notes, n)
	}
	return rep
}

// runs is Runs without the runner's noise taken into account.
func runs(base, cur *runfile.Run, opts Options) Report {
	if opts.MinSamples <= 0 {
		opts.MinSamples = 1
	}
	rep := Report{Base: side(base), New: side(cur), Options: opts, Evidence: EvidenceRequests}
	both, notes := scopes(base, cur)
	rep.Notes = notes
	if d := differences(base, cur); d != "" {
		rep.Notes = append([]string{"the runs differ in " + d + ": the comparison may not mean what it seems"}, rep.Notes...)
	}
	bt, nt := measure.Thought(measure.Views(base, measure.Overall)), measure.Thought(measure.Views(cur, measure.Overall))
	if bt != nt {
		which := "base"
		if nt {
			which = "new"
		}
		rep.Notes = append(rep.Notes, "only the "+which+" run's requests thought: answer_ttft is not compared, and its ttft is the first thinking token")
	}
	for _, s := range both {
		b, n := measure.Views(base, s), measure.Views(cur, s)
		rep.Changes = append(rep.Changes, compareScope(s.String(), b, n, opts)...)
	}
	return rep
}

// differences names what differs between the identities of two runs.
func differences(a, b *runfile.Run) string {
	var d []string
	if a.Target.Key() != b.Target.Key() {
		d = append(d, "target")
	}
	if a.Target.Model != b.Target.Model {
		d = append(d, "model")
	}
	if a.Device.Key() != b.Device.Key() {
		d = append(d, "device")
	}
	return strings.Join(d, ", ")
}

// metricSpec is one time metric: the scope figure shown (one of
// measure's headline figures) and the per-request sample its test runs
// on.
type metricSpec struct {
	measure.Figure
	// sample returns one value per successful request that has the metric.
	sample func(views []measure.View) []float64
	// test names the sample in Change.Test.
	test string
}

// perRequest returns the sample of a per-request metric of measure: one
// value per successful request that has it.
func perRequest(m measure.Metric) func([]measure.View) []float64 {
	return func(views []measure.View) []float64 { return measure.Sample(views, m) }
}

// perRequestStat returns, for each successful request with a value of
// m, stat over its own values (measure.PerRequest): "gap.p95" of a
// request is the p95 of its own gaps.
func perRequestStat(m measure.Metric, stat string) func([]measure.View) []float64 {
	return func(views []measure.View) []float64 { return measure.PerRequest(views, m, stat) }
}

var timeMetrics = []metricSpec{
	{measure.TTFTP50, perRequest(measure.TTFT), "per-request ttft"},
	{measure.TTFTP95, perRequest(measure.TTFT), "per-request ttft"},
	{measure.GapP50, perRequestStat(measure.Gap, "p50"), "per-request gap p50"},
	{measure.GapP95, perRequestStat(measure.Gap, "p95"), "per-request gap p95"},
	{measure.LongestStall, perRequest(measure.MaxGap), "per-request max gap"},
	{measure.TPOTMean, perRequest(measure.TPOT), "per-request tpot"},
	{measure.E2EP95, perRequest(measure.E2E), "per-request e2e"},
}

// answerMetrics are compared in a scope where both runs' requests thought
// (measure.Thought): the first answer token, which a person waits for
// when the app hides the thinking.
var answerMetrics = []metricSpec{
	{measure.AnswerTTFTP50, perRequest(measure.AnswerTTFT), "per-request answer ttft"},
	{measure.AnswerTTFTP95, perRequest(measure.AnswerTTFT), "per-request answer ttft"},
}

// compareScope compares one scope, given the views of its requests in
// each run.
func compareScope(scope string, b, n []measure.View, opts Options) []Change {
	bg, ng := measure.Aggregate(b), measure.Aggregate(n)
	var out []Change
	metrics := timeMetrics
	if measure.Thought(b) && measure.Thought(n) {
		metrics = append(slices.Clip(timeMetrics), answerMetrics...)
	}
	for _, m := range metrics {
		c := Change{Scope: scope, Metric: m.Name, Unit: "ms", Base: m.Value(&bg), New: m.Value(&ng), P: 1,
			Test: "mann-whitney, " + m.test}
		bt, nt := m.sample(b), m.sample(n)
		c.NBase, c.NNew = len(bt), len(nt)
		finish(&c, opts, func() float64 {
			_, p := MannWhitney(bt, nt)
			return p
		})
		out = append(out, c)
	}
	c := Change{Scope: scope, Metric: "errors.rate", Unit: "%", Base: 100 * bg.ErrorRate(), New: 100 * ng.ErrorRate(), P: 1,
		Test: "fisher exact, error counts", NBase: bg.Requests, NNew: ng.Requests}
	finish(&c, opts, func() float64 {
		return FisherExact(bg.Errors, bg.Requests-bg.Errors, ng.Errors, ng.Requests-ng.Errors)
	})
	return append(out, c)
}

// finish fills in the delta and the status of c by the per-request test
// (run only when both sides have MinSamples values); every metric here is
// worse when larger.
func finish(c *Change, opts Options, test func() float64) {
	c.Delta = c.New - c.Base
	if c.Base != 0 {
		c.Relative = c.Delta / c.Base
	}
	e := opts.evidence(c.Metric, c.Unit, c.Delta, c.Base)
	c.Tolerance = e.tolerance
	e.tooFew = c.NBase < opts.MinSamples || c.NNew < opts.MinSamples
	if !e.tooFew {
		c.P = test()
		e.significant = c.P < opts.Alpha
	}
	c.Status = decide(e)
}

// WriteText writes the report as a table: one line per scope and metric,
// regressions marked.
func (r Report) WriteText(w io.Writer) error {
	var b strings.Builder
	desc := func(s Side) string {
		return fmt.Sprintf("%s  %s  %s  %s", s.StartedAt.Format(time.RFC3339), orDash(s.Target), orDash(s.Model), orDash(s.Device))
	}
	fmt.Fprintf(&b, "base  %s\nnew   %s\n", desc(r.Base), desc(r.New))
	fmt.Fprintf(&b, "verdict on: %s\n%s\n\n", r.evidence(), r.Rule())
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCOPE\tMETRIC\tBASE\tNEW\tDELTA\tBAND\tP\tVERDICT\t")
	for _, c := range r.Changes {
		rel := ""
		if c.Base != 0 {
			rel = fmt.Sprintf(" (%+.1f%%)", c.Relative*100)
		}
		mark := c.Status
		switch c.Status {
		case StatusRegressed:
			mark = "REGRESSION"
		case StatusImproved:
			mark = "improved"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%+.2f%s\t%s\t%s\t%s\t\n", c.Scope, c.Metric,
			num(c.Base, c.Unit), num(c.New, c.Unit), c.Delta, rel, BandText(c.Band, c.Unit), pval(c), mark)
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
	if unit == "/s" {
		return fmt.Sprintf("%.2f/s", v)
	}
	return fmt.Sprintf("%.2f ms", v)
}

func pval(c Change) string {
	if c.Status == StatusTooFew || c.Band != nil {
		return "-"
	}
	if c.P < 1e-4 {
		return "<1e-4"
	}
	return fmt.Sprintf("%.4f", c.P)
}

// evidence names what the verdict rests on, for a reader.
func (r Report) evidence() string {
	switch r.Evidence {
	case EvidenceBand:
		return fmt.Sprintf("the run-to-run noise of %d earlier comparable runs", r.NoiseRuns)
	case EvidenceRepeats:
		return "two sets of repeated runs (bench --repeat)"
	}
	if r.NoiseWanted > 0 {
		return fmt.Sprintf("this run against the last one only: no noise estimate yet (%d of %d earlier comparable runs; bench --repeat gives one in a single job)", r.NoiseRuns, r.NoiseWanted)
	}
	return "this run against the base only (no noise estimate)"
}

// BandText formats a noise band as "[lo, hi]" in unit, or "-" for none.
func BandText(b *runfile.Band, unit string) string {
	if b == nil {
		return "-"
	}
	return "[" + strings.TrimSuffix(num(b.Lo, unit), " ms") + ", " + num(b.Hi, unit) + "]"
}
