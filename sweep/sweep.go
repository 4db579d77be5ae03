// Package sweep measures a server's capacity: runs of one configuration
// at a series of loads (request rates of an open loop, or concurrencies
// of a closed one), one run directory per step, summarised in one sweep
// file (sweep.json) with each step's figures, the knee where TTFT starts
// to queue ([FindKnee]) and, for a search ([Search]), the highest rate at
// which every threshold still held: the capacity under the experience the
// thresholds describe.
//
//	sw := &sweep.Sweep{Kind: sweep.KindRate}
//	for _, r := range []float64{1, 2, 4, 8} {
//		run := ... // measure one run at rate r
//		sw.Add(sweep.StepOf(r, "rate-1", run))
//	}
//	sw.Knee = sweep.FindKnee(sw.Steps, sweep.DefaultKneeRule())
//	sw.WriteText(os.Stdout)
//
// Every figure of a step is one the run's summary holds (package
// measure's) but two: the rate an open loop's schedule asked and the rate
// the target completed requests, which judge whether it kept up
// ([KeepUpShare]). Values are plain data
// and encode to JSON with the field names given.
package sweep

import (
	"fmt"
	"path/filepath"
	"sort"
	"time"

	"github.com/tokenpulse/tokenpulse/gate"
	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// FileName is the sweep file's name in the sweep directory.
const FileName = "sweep.json"

// Kind says what a sweep varies.
type Kind = string

// The kinds of sweep.
const (
	// KindRate: the open loop's arrival rate, requests per second.
	KindRate Kind = "rate"
	// KindConcurrency: the closed loop's requests in flight.
	KindConcurrency Kind = "concurrency"
	// KindTraceSpeed: a trace replay's speed (bench --trace-speed).
	KindTraceSpeed Kind = "trace-speed"
)

// Sweep is the sweep file.
type Sweep struct {
	SchemaVersion int       `json:"schema_version"`
	StartedAt     time.Time `json:"started_at"`
	FinishedAt    time.Time `json:"finished_at,omitzero"`
	// Kind is what the steps vary: "rate" or "concurrency".
	Kind Kind `json:"kind"`
	// Target, Suite and Thresholds say what was measured and judged
	// (every step's run file has the details).
	Target     runfile.Target `json:"target"`
	Suite      string         `json:"suite"`
	Tier       string         `json:"tier,omitempty"`
	Thresholds []string       `json:"thresholds,omitempty"`
	// Search holds a find-max search's settings and result.
	Search *SearchResult `json:"search,omitempty"`
	// Steps are the measured steps in the order they ran.
	Steps []Step `json:"steps"`
	// Knee is where TTFT starts to queue; nil when no step departs from
	// the lowest load's level (or fewer than two steps).
	Knee *Knee `json:"knee,omitempty"`
	// ColdStart is the target's cold start when the sweep started it
	// (measured in the first step only).
	ColdStart *runfile.ColdStart `json:"cold_start,omitempty"`
	// Interrupted is set when the sweep stopped before its last step.
	Interrupted bool     `json:"interrupted,omitempty"`
	Warnings    []string `json:"warnings,omitempty"`
}

// SchemaVersion is the sweep file's schema version.
const SchemaVersion = 1

// Step is one run of a sweep and the figures of its overall (warm)
// scope. Times are milliseconds.
type Step struct {
	// Load is the step's rate (requests/s) or concurrency.
	Load float64 `json:"load"`
	// Dir is the step's run directory, relative to the sweep directory.
	Dir string `json:"dir"`
	// Requests and Errors count the warm requests.
	Requests int `json:"requests"`
	Errors   int `json:"errors"`
	// AchievedPerS is the successful requests per second of the run's
	// span; OutputTokensPerS their tokens per second.
	AchievedPerS     float64 `json:"achieved_per_s"`
	OutputTokensPerS float64 `json:"output_tokens_per_s"`
	// TTFTP50Ms, TTFTP95Ms: TTFT percentiles; GapP95Ms the pooled gap
	// p95; LongestStallMs the largest gap of any request.
	TTFTP50Ms      float64 `json:"ttft_p50_ms"`
	TTFTP95Ms      float64 `json:"ttft_p95_ms"`
	GapP95Ms       float64 `json:"gap_p95_ms"`
	LongestStallMs float64 `json:"longest_stall_ms"`
	// GoodputShare (0–1) and GoodputPerS: the requests that met every
	// per-request objective (measure.Goodput).
	GoodputShare float64 `json:"goodput_share"`
	GoodputPerS  float64 `json:"goodput_per_s"`
	// LagP99Ms is an open loop's schedule lag p99 (how late the client
	// sent); SlotWaits the requests that waited for the -c ceiling.
	LagP99Ms  float64 `json:"lag_p99_ms,omitempty"`
	SlotWaits int     `json:"slot_waits,omitempty"`
	// Passed is true when every judged threshold held and some request
	// succeeded; Crossed lists the thresholds that did not hold.
	Passed  bool     `json:"passed"`
	Crossed []string `json:"crossed,omitempty"`
	// Interrupted is set when the step's run stopped early.
	Interrupted bool `json:"interrupted,omitempty"`
	// TTFT holds the step's judged TTFT thresholds, each with its own
	// scope's figure ("[category:short] ttft.p95 < 250ms": the short
	// category's p95), so that the report can chart the figure a
	// threshold judged rather than the overall p95. Sweep files from
	// before have none.
	TTFT []Judged `json:"ttft,omitempty"`
	// AskedPerS and CompletedPerS are, in an open loop, the rate the
	// step's schedule asked and the rate the target completed requests,
	// each over the spacing of its own instants ([KeepUpShare] judges
	// them); 0 in a closed loop and in sweep files from before.
	AskedPerS     float64 `json:"asked_per_s,omitempty"`
	CompletedPerS float64 `json:"completed_per_s,omitempty"`
}

// Judged is one threshold's figure at a step: the value of its own
// scope and statistic, its limit, and whether it held.
type Judged struct {
	// Rule is the threshold as the report names it:
	// "[category:short] ttft.p95 < 250ms".
	Rule      string  `json:"rule"`
	Scope     string  `json:"scope"`
	Statistic string  `json:"statistic"`
	ValueMs   float64 `json:"value_ms"`
	LimitMs   float64 `json:"limit_ms"`
	Passed    bool    `json:"passed"`
}

// StepOf returns the step of run, measured at load into dir.
func StepOf(load float64, dir string, run *runfile.Run) Step {
	o := run.Summary.Overall
	s := Step{
		Load: load, Dir: dir, Requests: o.Requests, Errors: o.Errors,
		AchievedPerS: o.RequestsPerS, OutputTokensPerS: o.OutputTokensPerS,
		TTFTP50Ms: measure.TTFTP50.Value(&o), TTFTP95Ms: measure.TTFTP95.Value(&o),
		GapP95Ms: measure.GapP95.Value(&o), LongestStallMs: measure.LongestStall.Value(&o),
		LagP99Ms: o.ScheduleLagMs.P99, SlotWaits: o.SlotWaits, Interrupted: run.Interrupted,
	}
	if g := run.Summary.Goodput; g != nil {
		s.GoodputShare, s.GoodputPerS = g.Share, g.PerS
	}
	for _, v := range gate.Failed(run.Verdicts) {
		s.Crossed = append(s.Crossed, "["+v.Scope+"] "+v.Rule)
	}
	s.TTFT = judgedTTFT(run)
	s.AskedPerS, s.CompletedPerS = openLoopRates(run)
	s.Passed = len(s.Crossed) == 0 && !measure.Count(run).AllFailed() && o.Requests > 0
	return s
}

// judgedTTFT returns run's judged TTFT thresholds as a step holds them.
func judgedTTFT(run *runfile.Run) []Judged {
	var out []Judged
	for _, v := range run.Verdicts {
		if v.Metric == "ttft" && v.Unit == "ms" && v.Judged() {
			out = append(out, Judged{Rule: "[" + v.Scope + "] " + v.Rule, Scope: v.Scope, Statistic: v.Statistic,
				ValueMs: v.Value, LimitMs: v.Limit, Passed: v.Passed})
		}
	}
	return out
}

// FillTTFT gives each step of a sweep file written before Step.TTFT its
// judged TTFT thresholds, read from the step's run file under dir (the
// sweep directory), so that the report of an older sweep charts them
// too. A step whose run file cannot be read keeps none; the first such
// error is returned after every step was tried.
func (s *Sweep) FillTTFT(dir string) error {
	var first error
	for i := range s.Steps {
		st := &s.Steps[i]
		if st.TTFT != nil || st.Dir == "" {
			continue
		}
		run, err := runfile.Load(filepath.Join(dir, st.Dir, "run.json"))
		if err != nil {
			if first == nil {
				first = err
			}
			continue
		}
		st.TTFT = judgedTTFT(run)
	}
	return first
}

// Add appends a step.
func (s *Sweep) Add(st Step) { s.Steps = append(s.Steps, st) }

// ByLoad returns the steps sorted by load (a search runs them out of
// order); a load measured twice keeps both, in run order.
func (s *Sweep) ByLoad() []Step {
	out := append([]Step(nil), s.Steps...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Load < out[j].Load })
	return out
}

// Unit is the load's unit: "requests/s", "in flight" or "× trace
// speed".
func (s *Sweep) Unit() string {
	switch s.Kind {
	case KindConcurrency:
		return "in flight"
	case KindTraceSpeed:
		return "× trace speed"
	}
	return "requests/s"
}

// Write writes the sweep file to path atomically (runfile.WriteJSON).
func (s *Sweep) Write(path string) error { return runfile.WriteJSON(path, s) }

// Load reads a sweep file, or the sweep file of a sweep directory.
func Load(path string) (*Sweep, error) {
	var s Sweep
	path, err := runfile.ReadJSON(path, FileName, &s)
	if err != nil {
		return nil, err
	}
	if s.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("%s: sweep schema %d, want %d", path, s.SchemaVersion, SchemaVersion)
	}
	return &s, nil
}
