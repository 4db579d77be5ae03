package abtest

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/dustin/go-humanize"

	"github.com/tokenpulse/tokenpulse/compare"
	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// Side is one target of an A/B, as the summary shows it.
type Side struct {
	// Label is "A" or "B"; Model the model file, Quantization its type.
	Label        string `json:"label"`
	Model        string `json:"model"`
	Quantization string `json:"quantization,omitempty"`
	// SizeBytes is the model file's size (0 when unknown).
	SizeBytes int64 `json:"size_bytes"`
	// RunFile is the side's run file.
	RunFile string `json:"run_file"`
	// Requests and Errors count its measured warm requests.
	Requests int `json:"requests"`
	Errors   int `json:"errors"`
	// The figures of its overall scope, as its run file's summary has
	// them, in ms. LongestStallMS is the largest gap between two tokens.
	TTFTP50MS      float64 `json:"ttft_p50_ms"`
	TTFTP95MS      float64 `json:"ttft_p95_ms"`
	TPOTMeanMS     float64 `json:"tpot_mean_ms"`
	TPOTP95MS      float64 `json:"tpot_p95_ms"`
	GapP95MS       float64 `json:"gap_p95_ms"`
	LongestStallMS float64 `json:"longest_stall_ms"`
}

// Summary is an A/B's result: the two sides, their sizes, the agreement
// of their outputs, and package compare's judgement of B against A.
type Summary struct {
	A Side `json:"a"`
	B Side `json:"b"`
	// SizeRatio is B's file size ÷ A's (0 when a size is unknown).
	SizeRatio float64 `json:"size_ratio"`
	// Order says how the requests were interleaved.
	Order     string    `json:"order"`
	Agreement Agreement `json:"agreement"`
	// Comparison is compare.Runs with A as the base and B as the new run.
	Comparison compare.Report `json:"comparison"`
}

// Order is how Run interleaves the two sides.
const Order = "interleaved one request at a time, A B B A A B B A ..., same prompts (one seed)"

// NewSide describes run r of model file path as side label.
func NewSide(label, path, runFile string, r *runfile.Run) Side {
	s := Side{Label: label, Model: path, Quantization: r.Target.Quantization, RunFile: runFile}
	if fi, err := os.Stat(path); err == nil {
		s.SizeBytes = fi.Size()
	}
	o := r.Summary.Overall
	s.Requests, s.Errors = o.Requests, o.Errors
	s.TTFTP50MS, s.TTFTP95MS = measure.TTFTP50.Value(&o), measure.TTFTP95.Value(&o)
	s.TPOTMeanMS, s.TPOTP95MS = measure.TPOTMean.Value(&o), measure.TPOTP95.Value(&o)
	s.GapP95MS, s.LongestStallMS = measure.GapP95.Value(&o), measure.LongestStall.Value(&o)
	return s
}

// Summarize puts the two judged runs side by side.
func Summarize(a, b Side, ra, rb *runfile.Run, agree Agreement) Summary {
	s := Summary{A: a, B: b, Order: Order, Agreement: agree, Comparison: compare.Runs(ra, rb, compare.DefaultOptions())}
	if a.SizeBytes > 0 && b.SizeBytes > 0 {
		s.SizeRatio = float64(b.SizeBytes) / float64(a.SizeBytes)
	}
	return s
}

// change finds compare's change of an overall metric.
func (s Summary) change(metric string) (runfile.Change, bool) {
	for _, c := range s.Comparison.Changes {
		if c.Scope == "overall" && c.Metric == metric {
			return c, true
		}
	}
	return runfile.Change{}, false
}

// WriteText writes the summary as a table: each figure of A and B, B's
// change, and compare's p-value and verdict for it.
func (s Summary) WriteText(w io.Writer) error {
	side := func(x Side) string {
		// Model is empty when the side serves the bundled model, whose
		// size is then unknown (0): say so rather than print "." and 0 B.
		name := "the bundled model"
		if x.Model != "" {
			name = filepath.Base(x.Model)
		}
		var about []string
		if x.Quantization != "" {
			about = append(about, x.Quantization)
		}
		if x.SizeBytes > 0 {
			about = append(about, humanize.IBytes(uint64(x.SizeBytes)))
		}
		if len(about) == 0 {
			return fmt.Sprintf("%s = %s", x.Label, name)
		}
		return fmt.Sprintf("%s = %s (%s)", x.Label, name, strings.Join(about, ", "))
	}
	fmt.Fprintf(w, "A/B: %s\n     %s\n", side(s.A), side(s.B))
	if s.SizeRatio > 0 {
		fmt.Fprintf(w, "size: B/A = %.3f (%+.1f%%)\n", s.SizeRatio, 100*(s.SizeRatio-1))
	}
	fmt.Fprintf(w, "order: %s; %d and %d measured requests", s.Order, s.A.Requests, s.B.Requests)
	if s.A.Errors+s.B.Errors > 0 {
		fmt.Fprintf(w, ", %d and %d of them failed", s.A.Errors, s.B.Errors)
	}
	fmt.Fprint(w, "\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "metric\tA\tB\tB vs A\tp\tverdict (compare)\t")
	row := func(name string, a, b float64, metric string) {
		rel := "-"
		if a != 0 {
			rel = fmt.Sprintf("%+.1f%%", 100*(b-a)/a)
		}
		p, verdict := "-", "-"
		if c, ok := s.change(metric); ok {
			p, verdict = fmt.Sprintf("%.2g", c.P), string(c.Status)
			switch c.Status {
			case compare.StatusRegressed:
				verdict = "B worse"
			case compare.StatusImproved:
				verdict = "B better"
			case compare.StatusWithin, compare.StatusNotSignificant:
				verdict = fmt.Sprintf("%s (tolerance %g%%)", c.Status, 100*c.Tolerance)
			}
		}
		fmt.Fprintf(tw, "%s\t%.2f ms\t%.2f ms\t%s\t%s\t%s\t\n", name, a, b, rel, p, verdict)
	}
	row("ttft p50", s.A.TTFTP50MS, s.B.TTFTP50MS, "ttft.p50")
	row("ttft p95", s.A.TTFTP95MS, s.B.TTFTP95MS, "ttft.p95")
	row("tpot mean", s.A.TPOTMeanMS, s.B.TPOTMeanMS, "tpot.mean")
	row("tpot p95 (test: per-request tpot)", s.A.TPOTP95MS, s.B.TPOTP95MS, "tpot.mean")
	row("gap p95", s.A.GapP95MS, s.B.GapP95MS, "gap.p95")
	row("longest stall (gap max)", s.A.LongestStallMS, s.B.LongestStallMS, "gap.max")
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "verdict rule: %s\n", s.Comparison.Rule())
	g := s.Agreement
	_, err := fmt.Fprintf(w, "\noutputs: %d of %d identical (%.0f%%); common prefix %.1f tokens on average (A %.1f, B %.1f tokens long)\n",
		g.Identical, g.Pairs, 100*g.IdenticalShare, g.MeanCommonPrefix, g.MeanLengthA, g.MeanLengthB)
	return err
}

// Write writes the summary as JSON to path atomically (runfile.WriteJSON).
func (s Summary) Write(path string) error { return runfile.WriteJSON(path, s) }
