package sweep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/runner"
	"github.com/tokenpulse/tokenpulse/trace"
)

// HTMLFile is the sweep's page in the sweep directory.
const HTMLFile = "sweep.html"

// Plan is what a sweep measures: a list of loads, or a search for the
// capacity (Search set, Loads nil).
type Plan struct {
	Kind   Kind
	Loads  []float64
	Search *Search
	Knee   KneeRule
}

// Config is how a sweep's steps are measured.
type Config struct {
	// Spec is the run of the first step: its workload's arrival (KindRate,
	// an open loop) or concurrency (KindConcurrency) is set to each
	// step's load, its Dir to the step's directory; the steps after the
	// first are its [runner.Spec.Later].
	Spec runner.Spec
	// Dir is the sweep directory; it must exist.
	Dir string
	// Each, when set, is called with each step's spec before it runs: for
	// what must be new each run (a progress line, a profile, stop rules).
	Each func(step int, s *runner.Spec)
	// Record, when set, is given each step's run once it is measured
	// (bench records it in the history); an error does not stop the
	// sweep and is kept in Result.RecordErr, the first one only.
	Record func(run *runfile.Run) error
	// Log, when set, is told of each step and its figures; Warn of a
	// step that could not be recorded.
	Log, Warn io.Writer
	// Now is the clock of the sweep file's finish (nil: time.Now).
	Now func() time.Time
}

// Result is a measured sweep.
type Result struct {
	// Sweep is the sweep file as last written.
	Sweep *Sweep
	// Stopped is the error that stopped a step early (the sweep stopped
	// there: Sweep.Interrupted).
	Stopped error
	// AllFailed is true when every request of every step failed.
	AllFailed bool
	// RecordErr is the first error of Config.Record.
	RecordErr error
}

// LoadError is a step's load the workload cannot run (its schedule).
type LoadError struct{ Err error }

// Error is the load's refusal.
func (e *LoadError) Error() string { return e.Err.Error() }

// Unwrap returns the refusal, for errors.Is and errors.As.
func (e *LoadError) Unwrap() error { return e.Err }

// StepName is the directory of step i (0-based) at load.
func StepName(i int, kind Kind, load float64) string {
	return fmt.Sprintf("%02d-%s-%g", i+1, kind, load)
}

// Measure runs the sweep p describes into sw (its header set by the
// caller), one run directory per step under cfg.Dir (runner.Measure), and
// writes sw to cfg.Dir (sweep.json, sweep.html) after every step, so that
// a sweep killed half-way keeps the steps it measured, and once more at
// the end with its warnings ([Sweep.ScheduleWarnings]). The error is one
// of a step's configuration (a *LoadError for its load) or of writing.
func Measure(ctx context.Context, p Plan, sw *Sweep, cfg Config) (*Result, error) {
	res := &Result{Sweep: sw, AllFailed: true}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	write := func() error {
		sw.Knee = FindKnee(sw.Steps, p.Knee)
		if p.Search != nil {
			sw.Search = sw.searchResult(p)
		}
		sw.FinishedAt = now().UTC()
		return sw.WriteDir(cfg.Dir)
	}
	n := len(p.Loads)
	next := func(i int) (float64, bool) {
		if p.Search != nil {
			return p.Search.Next()
		}
		if i < n {
			return p.Loads[i], true
		}
		return 0, false
	}
	for i := 0; ; i++ {
		load, ok := next(i)
		if !ok {
			break
		}
		s := cfg.Spec
		if i > 0 {
			s = s.Later()
		}
		switch p.Kind {
		case KindRate:
			s.Workload.Arrival.Rate = load
		case KindTraceSpeed:
			rp, ok := s.Workload.Replay.(*trace.Replay)
			if !ok {
				return nil, &LoadError{errors.New("a sweep of trace speeds needs a trace replay (bench --trace)")}
			}
			s.Workload.Replay = rp.WithSpeed(load)
			if s.Trace != nil {
				c := *s.Trace
				c.Speed = load
				s.Trace = &c
			}
		default:
			s.Workload.Concurrency = int(load)
		}
		name := StepName(i, p.Kind, load)
		s.Dir = filepath.Join(cfg.Dir, name)
		if _, err := s.Workload.Schedule(); err != nil {
			return nil, &LoadError{err}
		}
		if cfg.Each != nil {
			cfg.Each(i, &s)
		}
		if cfg.Log != nil {
			of := ""
			if n > 0 {
				of = fmt.Sprintf("/%d", n)
			}
			fmt.Fprintf(cfg.Log, "tokenpulse: step %d%s: %s %g %s\n", i+1, of, p.Kind, load, (&Sweep{Kind: p.Kind}).Unit())
		}
		m, err := runner.Measure(ctx, s)
		if err != nil {
			return nil, err
		}
		run := m.Run
		// Each step is a run like bench's, and recorded as one. A record
		// that fails does not stop the sweep (each step's run file is
		// written whatever the history says): it is said once.
		if cfg.Record != nil {
			if err := cfg.Record(run); err != nil && res.RecordErr == nil {
				res.RecordErr = err
				if cfg.Warn != nil {
					fmt.Fprintf(cfg.Warn, "tokenpulse: warning: step %d: %v\n", i+1, err)
				}
			}
		}
		st := sw.record(p, StepOf(load, name, run))
		if err := write(); err != nil {
			return nil, err
		}
		if !measure.Count(run).AllFailed() {
			res.AllFailed = false
		}
		if cfg.Log != nil {
			fmt.Fprintf(cfg.Log, "tokenpulse:   %s\n", st.Line())
		}
		if m.Stopped != nil {
			res.Stopped = m.Stopped
			sw.Interrupted = true
			break
		}
	}
	sw.Warnings = append(sw.Warnings, sw.ScheduleWarnings()...)
	sw.Warnings = append(sw.Warnings, sw.KeepUpWarnings()...)
	if err := write(); err != nil {
		return nil, err
	}
	return res, nil
}

// Line is the step's figures and verdict in one line.
func (st Step) Line() string {
	verdict := "thresholds held"
	if !st.Passed {
		verdict = "crossed: " + strings.Join(st.Crossed, "; ")
	}
	return fmt.Sprintf("%.2f requests/s achieved, TTFT p95 %.1f ms, gap p95 %.1f ms, longest stall %.1f ms, goodput %.0f%%, %d/%d errors; %s",
		st.AchievedPerS, st.TTFTP95Ms, st.GapP95Ms, st.LongestStallMs, 100*st.GoodputShare, st.Errors, st.Requests, verdict)
}

// ScheduleWarnings says at which loads the client did not keep an open
// loop's schedule (runner.Behind, the rule each run's own warning
// follows) and at which requests waited for the ceiling of requests in
// flight.
func (s *Sweep) ScheduleWarnings() []string {
	var behind, waited []string
	for _, st := range s.ByLoad() {
		if s.Kind == KindRate && runner.Behind(st.Load, st.LagP99Ms) {
			behind = append(behind, fmt.Sprintf("%g (lag p99 %.1f ms)", st.Load, st.LagP99Ms))
		}
		if st.SlotWaits > 0 {
			waited = append(waited, fmt.Sprintf("%g (%d requests)", st.Load, st.SlotWaits))
		}
	}
	var w []string
	if len(behind) > 0 {
		w = append(w, "the client fell behind its schedule (lag p99 above min(10 ms, 1/rate)) at "+strings.Join(behind, ", ")+
			" requests/s: the target saw other arrivals than asked; on a busy machine the client's own delays are in these figures")
	}
	if len(waited) > 0 {
		w = append(w, "requests waited for the ceiling of -c requests in flight at "+strings.Join(waited, ", ")+"; raise -c")
	}
	return w
}

// WriteDir writes the sweep file and its page to dir (sweep.json,
// sweep.html): what a sweep writes after each step, and tokenpulse
// report DIR again.
func (s *Sweep) WriteDir(dir string) error {
	if err := s.Write(filepath.Join(dir, FileName)); err != nil {
		return fmt.Errorf("writing the sweep file: %w", err)
	}
	return s.WriteHTMLFile(dir)
}

// WriteHTMLFile writes the sweep's page to dir/sweep.html.
func (s *Sweep) WriteHTMLFile(dir string) error {
	f, err := os.Create(filepath.Join(dir, HTMLFile))
	if err != nil {
		return err
	}
	if err := s.WriteHTML(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
