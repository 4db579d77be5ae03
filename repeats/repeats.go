// Package repeats summarises K runs of one configuration: for each
// run-level figure (TTFT p95, gap p95, throughput, goodput, ...) its K
// values, their mean, sample standard deviation, coefficient of variation
// and a 95 % confidence interval of the mean (Student's t with K − 1
// degrees of freedom), and compares two such sets with Welch's t-test.
//
// Each run gives one value per figure (the figure its summary shows), so
// the K values are independent replicates of the configuration: the
// interval says how well the figure is known, run to run, which a single
// run's percentiles cannot say.
//
//	set := repeats.Of([]string{"rep-1", "rep-2", "rep-3"}, runs)
//	set.WriteText(os.Stdout)
//
// Values are plain data and encode to JSON with the field names given.
package repeats

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stats"
)

// FileName is the repeats file's name in the repeats directory.
const FileName = "repeats.json"

// Level is the confidence level of the intervals.
const Level = 0.95

// Set is the repeats file: K runs of one configuration.
type Set struct {
	Target runfile.Target `json:"target"`
	Suite  string         `json:"suite"`
	// Runs are the runs' directories, relative to the repeats directory.
	Runs []string `json:"runs"`
	// Figures are the per-figure summaries, in the order of [Figures].
	Figures []Figure `json:"figures"`
	// StartedAt is the earliest run's start and Device the first run's
	// machine: what compare's header names. Sets written before these
	// fields get them from their first run's file on Load.
	StartedAt time.Time      `json:"started_at,omitzero"`
	Device    runfile.Device `json:"device,omitzero"`
}

// Figure is one run-level figure over the K runs.
type Figure struct {
	// Name is the figure ("ttft.p95"), Unit "ms", "%", "/s".
	Name string `json:"name"`
	Unit string `json:"unit"`
	// Values are the runs' figures, in run order (runs without a value,
	// such as a run whose requests all failed, are left out).
	Values []float64 `json:"values"`
	Summary
}

// Summary is the mean of K values with its spread and interval.
type Summary struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	// SD is the sample standard deviation (n − 1); CV is SD ÷ |Mean|.
	SD float64 `json:"sd"`
	CV float64 `json:"cv"`
	// CILow and CIHigh bound the 95 % confidence interval of the mean:
	// Mean ± t(0.975, n − 1) · SD / √n. Equal to the mean when n < 2.
	CILow  float64 `json:"ci_low"`
	CIHigh float64 `json:"ci_high"`
}

// Summarize returns the mean, sd, CV and 95 % interval of xs.
func Summarize(xs []float64) Summary {
	s := Summary{N: len(xs)}
	if s.N == 0 {
		return s
	}
	s.Mean = stats.Mean(xs)
	s.CILow, s.CIHigh = s.Mean, s.Mean
	if s.N < 2 {
		return s
	}
	s.SD = stats.Std(xs)
	if s.Mean != 0 {
		s.CV = s.SD / math.Abs(s.Mean)
	}
	half := TQuantile(1-(1-Level)/2, float64(s.N-1)) * s.SD / math.Sqrt(float64(s.N))
	s.CILow, s.CIHigh = s.Mean-half, s.Mean+half
	return s
}

// TQuantile returns the p quantile of Student's t with df degrees of
// freedom.
func TQuantile(p, df float64) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(p)
}

// figureDef is how one figure is read from a run's overall summary.
type figureDef struct {
	name, unit string
	get        func(run *runfile.Run) (float64, bool)
}

// headline reads one of measure's headline figures from a run's overall
// summary.
func headline(f measure.Figure) figureDef {
	return figureDef{f.Name, "ms", func(run *runfile.Run) (float64, bool) { return f.Of(&run.Summary.Overall) }}
}

// figures are the run-level figures a set summarises, as the run's
// overall summary holds them: measure's headline figures, then the error
// rate, the throughputs and goodput.
var figures = append(headlines(), []figureDef{
	{"errors.rate", "%", func(run *runfile.Run) (float64, bool) {
		g := run.Summary.Overall
		return 100 * g.ErrorRate(), g.Requests > 0
	}},
	{"requests_per_s", "/s", func(run *runfile.Run) (float64, bool) {
		return run.Summary.Overall.RequestsPerS, run.Summary.Overall.RequestsPerS > 0
	}},
	{"output_tokens_per_s", "/s", func(run *runfile.Run) (float64, bool) {
		return run.Summary.Overall.OutputTokensPerS, run.Summary.Overall.OutputTokensPerS > 0
	}},
	{"goodput.share", "%", func(run *runfile.Run) (float64, bool) {
		g := run.Summary.Goodput
		if g == nil || g.Requests == 0 {
			return 0, false
		}
		return 100 * g.Share, true
	}},
}...)

func headlines() []figureDef {
	out := make([]figureDef, len(measure.Headlines))
	for i, f := range measure.Headlines {
		out[i] = headline(f)
	}
	return out
}

// Figures returns the names of the figures a set summarises, in order.
func Figures() []string {
	out := make([]string, len(figures))
	for i, f := range figures {
		out[i] = f.name
	}
	return out
}

// Of summarises runs, whose directories are dirs.
func Of(dirs []string, runs []*runfile.Run) *Set {
	s := &Set{Runs: dirs}
	if len(runs) > 0 {
		s.Target, s.Suite = runs[0].Target, runs[0].Config.Suite
		s.Device = runs[0].Device
	}
	for _, run := range runs {
		if !run.StartedAt.IsZero() && (s.StartedAt.IsZero() || run.StartedAt.Before(s.StartedAt)) {
			s.StartedAt = run.StartedAt
		}
	}
	for _, f := range figures {
		fig := Figure{Name: f.name, Unit: f.unit, Values: []float64{}}
		for _, run := range runs {
			if v, ok := f.get(run); ok {
				fig.Values = append(fig.Values, v)
			}
		}
		fig.Summary = Summarize(fig.Values)
		s.Figures = append(s.Figures, fig)
	}
	return s
}

// Figure returns the named figure and whether the set has it.
func (s *Set) Figure(name string) (Figure, bool) {
	for _, f := range s.Figures {
		if f.Name == name {
			return f, true
		}
	}
	return Figure{}, false
}

// WriteText writes one row per figure: mean, sd, CV and the interval.
func (s *Set) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "%d runs of one configuration; 95%% confidence interval of each mean (Student t, %d degrees of freedom)\n", len(s.Runs), max(len(s.Runs)-1, 0))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "figure\tn\tmean\tsd\tCV\t95%% CI\t\n")
	for _, f := range s.Figures {
		if f.N == 0 {
			fmt.Fprintf(tw, "%s\t0\t-\t-\t-\t-\t\n", f.Name)
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%.1f%%\t[%s, %s]\t\n", f.Name, f.N, num(f.Mean, f.Unit), num(f.SD, f.Unit), 100*f.CV, num(f.CILow, f.Unit), num(f.CIHigh, f.Unit))
	}
	return tw.Flush()
}

func num(v float64, unit string) string {
	switch unit {
	case "%":
		return fmt.Sprintf("%.2f%%", v)
	case "/s":
		return fmt.Sprintf("%.2f/s", v)
	}
	return fmt.Sprintf("%.1f ms", v)
}

// Write writes the set to path atomically (runfile.WriteJSON).
func (s *Set) Write(path string) error { return runfile.WriteJSON(path, s) }

// Load reads a repeats file, or the repeats file of a directory.
func Load(path string) (*Set, error) {
	var s Set
	file, err := runfile.ReadJSON(path, FileName, &s)
	if err != nil {
		return nil, err
	}
	// A set from before StartedAt and Device: its first run that can be
	// read says them (none: they stay unknown).
	for i := 0; s.StartedAt.IsZero() && i < len(s.Runs); i++ {
		if run, err := runfile.Load(filepath.Join(filepath.Dir(file), s.Runs[i], "run.json")); err == nil {
			s.StartedAt, s.Device = run.StartedAt, run.Device
		}
	}
	return &s, nil
}

// IsSet reports whether path is a repeats file or a directory holding
// one.
func IsSet(path string) bool {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		path = filepath.Join(path, FileName)
	}
	return filepath.Base(path) == FileName && fileExists(path)
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}

// Welch returns the two-sided p-value of Welch's t-test of the means of
// a and b (unequal variances, Welch–Satterthwaite degrees of freedom),
// and false when a side has fewer than 2 values or both have none
// spread.
func Welch(a, b []float64) (t, df, p float64, ok bool) {
	if len(a) < 2 || len(b) < 2 {
		return 0, 0, 1, false
	}
	ma, mb := stats.Mean(a), stats.Mean(b)
	va, vb := stats.Std(a), stats.Std(b)
	va, vb = va*va/float64(len(a)), vb*vb/float64(len(b))
	se := math.Sqrt(va + vb)
	if se == 0 {
		if ma == mb {
			return 0, 0, 1, true
		}
		return math.Inf(1) * math.Copysign(1, mb-ma), math.Inf(1), 0, true
	}
	t = (mb - ma) / se
	df = (va + vb) * (va + vb) / (va*va/float64(len(a)-1) + vb*vb/float64(len(b)-1))
	p = 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.CDF(-math.Abs(t))
	return t, df, p, true
}
