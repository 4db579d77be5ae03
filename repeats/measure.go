package repeats

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/tokenpulse/tokenpulse/gate"
	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/runner"
)

// Config is how K runs of one configuration are measured.
type Config struct {
	// Spec is the first run; the later ones are its [runner.Spec.Later]
	// (one target: its cold request is measured in the first only). Its
	// Dir is set to each run's directory.
	Spec runner.Spec
	// Dir is the repeats directory; it must exist.
	Dir string
	// Each, when set, is called with each run's spec before it runs: for
	// what must be new each run (a progress line, a profile, stop rules).
	Each func(i int, s *runner.Spec)
	// Log, when set, is told of each run as it starts.
	Log io.Writer
}

// Result is K measured runs and their summary.
type Result struct {
	// Set is the repeats file, written to Path.
	Set  *Set
	Path string
	// Runs are the runs measured, in order.
	Runs []*runfile.Run
	// Crossed lists each run's crossed thresholds ("rep-01: [scope] rule").
	Crossed []string
	// Stopped is the error that stopped a run early; the series stopped
	// there.
	Stopped error
	// AllFailed is true when every request of every run failed.
	AllFailed bool
}

// RunName is the directory of run i (0-based) in the repeats directory.
func RunName(i int) string { return fmt.Sprintf("rep-%02d", i+1) }

// Measure measures k runs of cfg.Spec, each in its own directory under
// cfg.Dir (runner.Measure), and writes their summary ([Of]) to
// cfg.Dir/repeats.json. A run stopped early stops the series; what was
// measured is summarised. The error is one of configuration or writing.
func Measure(ctx context.Context, k int, cfg Config) (*Result, error) {
	var dirs []string
	var runs []*runfile.Run
	var stopped error
	for i := range k {
		name := RunName(i)
		s := cfg.Spec
		if i > 0 {
			s = s.Later()
		}
		s.Dir = filepath.Join(cfg.Dir, name)
		if cfg.Each != nil {
			cfg.Each(i, &s)
		}
		if cfg.Log != nil {
			fmt.Fprintf(cfg.Log, "tokenpulse: run %d/%d\n", i+1, k)
		}
		m, err := runner.Measure(ctx, s)
		if err != nil {
			return nil, err
		}
		dirs, runs = append(dirs, name), append(runs, m.Run)
		if m.Stopped != nil {
			stopped = m.Stopped
			break
		}
	}
	return Collect(cfg.Dir, dirs, runs, stopped)
}

// Collect summarises runs measured already, run i in dir/names[i], as
// Measure does its own: it writes their summary ([Of]) to
// dir/repeats.json and says which thresholds each crossed and whether
// every request failed. stopped is the error that stopped the series
// early, nil when none did. Measure ends with it, and so does a series
// measured elsewhere (bench --adb --repeat, on a device) and brought
// back.
func Collect(dir string, names []string, runs []*runfile.Run, stopped error) (*Result, error) {
	res := &Result{Path: filepath.Join(dir, FileName), Runs: runs, Stopped: stopped, AllFailed: true}
	for i, run := range runs {
		for _, v := range gate.Failed(run.Verdicts) {
			res.Crossed = append(res.Crossed, fmt.Sprintf("%s: [%s] %s", names[i], v.Scope, v.Rule))
		}
		if !measure.Count(run).AllFailed() {
			res.AllFailed = false
		}
	}
	res.Set = Of(names, runs)
	if err := res.Set.Write(res.Path); err != nil {
		return nil, fmt.Errorf("writing the repeats file: %w", err)
	}
	return res, nil
}
