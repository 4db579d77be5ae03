package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tokenpulse/tokenpulse/baseline"
	"github.com/tokenpulse/tokenpulse/compare"
	"github.com/tokenpulse/tokenpulse/internal/store"
	"github.com/tokenpulse/tokenpulse/repeats"
	"github.com/tokenpulse/tokenpulse/runfile"
)

func init() { commands = append(commands, newCompareCmd) }

type compareFlags struct {
	tolerance string
	floor     string
	alpha     float64
	against   string
	any       bool
	history   string
	json      bool

	tailTolerance, extremeTolerance string
	noiseRuns                       int

	// report "html" also writes the comparison as a page, to out.
	report, out string
}

func newCompareCmd() *cobra.Command {
	f := &compareFlags{}
	def := compare.DefaultOptions()
	cmd := &cobra.Command{
		Use:   "compare BASE.json NEW.json | compare NEW.json --against last",
		Short: "Compare two runs metric by metric and flag significant regressions (exit 98)",
		Long: `Compare puts two runs side by side per scope (overall, cold, each category)
and metric (TTFT p50/p95, gap p50/p95/max, TPOT mean, E2E p95, error rate).

A change is a regression only when it is worse by more than the tolerance
(relative, and at least the floor) and statistically significant: the
Mann-Whitney U test on the raw per-request TTFTs and per-token gaps (Fisher's
exact test for errors) gives p < alpha. Any regression makes the command exit
with code 98.

With --against last the base is the latest run in the history of the same
target (URLs compared without their /v1 suffix, trailing slash, default port
or case of the host), model and device that started before NEW.json,
finished, had a successful request, and was made with the same suite, API,
max tokens, concurrency, arrival and scenario; --against ID picks a run by
its history id. A base made with other settings is refused, naming each
difference (exit 1); --against-any compares anyway and notes the
differences. Package baseline holds this policy.

When both sides are repeats (directories of 'bench --repeat K', or their
repeats.json), each figure is compared on the K runs' own figures with
Welch's t-test instead (one value per run).

Each run may be a run file, a run directory, or a run's journal: a run
killed before it wrote run.json is rebuilt from its journal (see
'tokenpulse report').`,
		Example: `  tokenpulse compare base.json run.json
  tokenpulse compare run.json --against last --tolerance 5%`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCompare(cmd, f, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.tolerance, "tolerance", fmt.Sprintf("%g%%", def.Tolerance*100), "relative change of a median, mean or error rate below which nothing is flagged (\"10%\" or \"0.1\")")
	fl.StringVar(&f.floor, "floor", fmt.Sprintf("%gms", def.FloorMS), "absolute change below which a time is never flagged")
	fl.Float64Var(&f.alpha, "alpha", def.Alpha, "significance level of the test")
	fl.StringVar(&f.against, "against", "", "compare NEW.json with a recorded run: \"last\" or a history id")
	fl.BoolVar(&f.any, "against-any", false, "with --against: compare even with a run made with other settings (suite, API, max tokens, concurrency, scenario)")
	fl.StringVar(&f.history, "history", "", "history file (default: the user's data directory, see 'tokenpulse history')")
	fl.StringVar(&f.tailTolerance, "tail-tolerance", fmt.Sprintf("%g%%", def.TailTolerance*100), "the tolerance of the p95 figures")
	fl.StringVar(&f.extremeTolerance, "extreme-tolerance", fmt.Sprintf("%g%%", def.ExtremeTolerance*100), "the tolerance of gap.max")
	fl.IntVar(&f.noiseRuns, "noise-runs", def.NoiseRuns, "K: with --against last and K earlier comparable runs in the history, judge each figure against its run-to-run noise band over the last K (0: never)")
	fl.BoolVar(&f.json, "json", false, "print the comparison as JSON")
	fl.StringVar(&f.report, "report", "", "html: also write the comparison as one self-contained page (deltas, p-values, noise bands, the rule applied) to --out")
	fl.StringVarP(&f.out, "out", "o", compareHTMLFile, "with --report html, the page's file")
	return cmd
}

func runCompare(cmd *cobra.Command, f *compareFlags, args []string) error {
	if f.report != "" && f.report != "html" {
		return usageErr(fmt.Errorf("--report %q: want html", f.report))
	}
	opts := compare.DefaultOptions()
	tol, err := compareFraction(f.tolerance)
	if err != nil {
		return usageErr(fmt.Errorf("--tolerance: %w", err))
	}
	opts.Tolerance = tol
	if opts.TailTolerance, err = compareFraction(f.tailTolerance); err != nil {
		return usageErr(fmt.Errorf("--tail-tolerance: %w", err))
	}
	if opts.ExtremeTolerance, err = compareFraction(f.extremeTolerance); err != nil {
		return usageErr(fmt.Errorf("--extreme-tolerance: %w", err))
	}
	if err := compare.CheckNoiseRuns(f.noiseRuns); err != nil {
		return usageErr(fmt.Errorf("--noise-runs: %w", err))
	}
	opts.NoiseRuns = f.noiseRuns
	floor, err := compareMillis(f.floor)
	if err != nil {
		return usageErr(fmt.Errorf("--floor: %w", err))
	}
	opts.FloorMS = floor
	if !(f.alpha > 0 && f.alpha < 1) {
		return usageErr(fmt.Errorf("--alpha must be between 0 and 1, got %g", f.alpha))
	}
	opts.Alpha = f.alpha

	var base, cur *runfile.Run
	var baseName string
	switch {
	case len(args) == 2 && f.against != "":
		return usageErr(errors.New("give either BASE.json NEW.json or NEW.json --against, not both"))
	case len(args) == 2 && repeats.IsSet(args[0]) && repeats.IsSet(args[1]):
		return compareRepeats(cmd, f, opts, args)
	case len(args) == 2:
		if base, err = loadRun(args[0], cmd.ErrOrStderr()); err != nil {
			return err
		}
		if cur, err = loadRun(args[1], cmd.ErrOrStderr()); err != nil {
			return err
		}
		baseName = args[0]
	case f.any && f.against == "":
		return usageErr(errors.New("--against-any goes with --against"))
	case f.against == "":
		return usageErr(errors.New("one run file needs --against last (or a history id); or give BASE.json NEW.json"))
	default:
		if cur, err = loadRun(args[0], cmd.ErrOrStderr()); err != nil {
			return err
		}
		if err := store.CheckAgainst(f.against); err != nil {
			return usageErr(err)
		}
		b, err := store.FindBase(cmd.Context(), f.history, f.against, f.any, cur, opts.NoiseRuns)
		if err != nil {
			return err
		}
		return writeComparison(cmd, f, baseline.CompareHistory(b.Runs, cur, opts), "comparing against "+b.Name)
	}

	rep := baseline.Compare(base, cur, opts)
	return writeComparison(cmd, f, rep, "comparing against "+baseName)
}

// writeComparison prints rep as JSON (--json) or as text under the line
// head, and exits with exitRegression when it found a regression.
func writeComparison(cmd *cobra.Command, f *compareFlags, rep compare.Report, head string) error {
	out := cmd.OutOrStdout()
	if f.json {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(out, head)
		if err := rep.WriteText(out); err != nil {
			return err
		}
	}
	if f.report == "html" {
		if err := writeComparisonHTML(f.out, head, rep); err != nil {
			return err
		}
		fmt.Fprintln(cmd.ErrOrStderr(), "tokenpulse:", f.out, "written")
	}
	if n := len(rep.Regressions()); n > 0 {
		return withCode(exitRegression, fmt.Errorf("%d regression(s)", n))
	}
	return nil
}

// compareFraction reads "10%" as 0.1 and "0.1" as 0.1.
func compareFraction(s string) (float64, error) {
	s = strings.TrimSpace(s)
	pct := strings.HasSuffix(s, "%")
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if err != nil {
		return 0, fmt.Errorf("want a percentage such as 10%% or a fraction such as 0.1, got %q", s)
	}
	if pct {
		v /= 100
	}
	if v < 0 || v > 10 {
		return 0, fmt.Errorf("%q is out of range", s)
	}
	return v, nil
}

// compareMillis reads a duration ("2ms", "500us", "0") as milliseconds.
func compareMillis(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if s == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("want a duration such as 2ms, got %q", s)
	}
	return float64(d) / 1e6, nil
}

// compareRepeats compares two repeats sets (bench --repeat): Welch's
// t-test on the runs' figures.
func compareRepeats(cmd *cobra.Command, f *compareFlags, opts compare.Options, args []string) error {
	if f.against != "" {
		return usageErr(errors.New("repeats are compared as BASE_DIR NEW_DIR, without --against"))
	}
	base, err := repeats.Load(args[0])
	if err != nil {
		return err
	}
	cur, err := repeats.Load(args[1])
	if err != nil {
		return err
	}
	rep := compare.Repeats(base, cur, opts)
	return writeComparison(cmd, f, rep, fmt.Sprintf("comparing the %d runs of %s with the %d runs of %s", len(base.Runs), args[0], len(cur.Runs), args[1]))
}
