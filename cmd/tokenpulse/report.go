package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tokenpulse/tokenpulse/internal/abtest"
	"github.com/tokenpulse/tokenpulse/internal/browser"
	"github.com/tokenpulse/tokenpulse/internal/store"
	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/report"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/runner"
)

func init() { commands = append(commands, newReportCmd) }

// reportFormats maps --format values to report.WriteAll formats and the
// file each writes.
var reportFormats = map[string]struct{ format, file string }{
	"text":  {"text", report.TextFile},
	"html":  {"html", report.HTMLFile},
	"junit": {"junit", report.JUnitFile},
	"md":    {"md", report.MethodologyFile},
	"svg":   {"svg", report.ChartsDir},
}

func newReportCmd() *cobra.Command {
	var (
		format, out string
		color, png  bool
		opts        report.Options
		deliver     deliverFlags
		history     string
	)
	cmd := &cobra.Command{
		Use:   "report RUN.json|RUN_DIR",
		Short: "Re-render a run file as a terminal summary, HTML, JUnit XML, Markdown methodology or SVG charts",
		Long: `Report renders any run file again, without measuring anything.

RUN may be a run file, a run directory, or a run's journal
(run.journal.jsonl): a run killed before it wrote run.json (kill -9, a
crash) is rebuilt from the journal bench keeps while it runs, marked
interrupted, summarized and judged again.

  --format text   the terminal summary (default), to stdout
  --format html   one self-contained HTML page (inline SVG, no network)
  --format junit  JUnit XML: one test case per threshold and scope
  --format md     the Markdown methodology appendix
  --format svg    every chart as its own .svg file (needs --out)
  --format all    all of the above into --out (default: the run file's directory)

With --out DIR the report is written into DIR (report.html, junit.xml,
methodology.md, report.txt, charts/*.svg) instead of stdout. --png also
saves a screenshot of the HTML report (needs Chromium).`,
		Example: `  tokenpulse report out/run.json
  tokenpulse report out/run.json --format html > report.html
  tokenpulse report out/run.json --format all --out out/ --png
  tokenpulse report tokenpulse-runs/20260101-120000   # run.json, or the journal of a killed run
  tokenpulse report SWEEP_DIR                          # a sweep: its table, and sweep.html written again
  tokenpulse report AB_DIR                             # an A/B (bench --model-b): ab.txt, and ab.html written again`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, ok := reportFormats[format]; !ok && format != "all" {
				return usageErr(fmt.Errorf("unknown --format %q (want text, html, junit, md, svg or all)", format))
			}
			if isSweepDir(args[0]) {
				return renderSweep(cmd, args[0])
			}
			if isABDir(args[0]) {
				return renderAB(cmd, args[0])
			}
			run, err := loadRun(args[0], cmd.ErrOrStderr())
			if err != nil {
				return err // a missing file exits 1, a refused one 2 (loadRun)
			}
			if err := deliver.check(); err != nil {
				return usageErr(err)
			}
			if deliver.against != "" {
				// Compare before rendering, so that every report shows
				// the comparison.
				hp := history
				if hp == "" {
					if hp, err = store.DefaultPath(); err != nil {
						return fmt.Errorf("history: %w (use --history FILE)", err)
					}
				}
				if err := deliver.compare(cmd.Context(), cmd.ErrOrStderr(), run, hp); err != nil {
					return withCode(exitFailure, err)
				}
			}
			if deliver.dest != nil && out == "" {
				// Publishing uploads a directory: the run file's, with every report.
				out, format = runDirOf(args[0]), "all"
			}
			opts.Color = color
			opts.RunDir = runDirOf(args[0])
			if format == "all" && out == "" {
				out = runDirOf(args[0])
			}
			if format == "svg" && out == "" {
				return usageErr(errors.New("--format svg writes one file per chart: give --out DIR"))
			}
			if png && out == "" {
				return usageErr(errors.New("--png needs --out DIR to hold report.html and report.png"))
			}
			w := cmd.OutOrStdout()
			if out == "" {
				if err := renderTo(w, format, run, opts); err != nil {
					return err
				}
				return deliverReport(cmd, &deliver, run, runDirOf(args[0]), history)
			}
			if format == "all" {
				opts.Formats = nil
			} else {
				opts.Formats = []string{reportFormats[format].format}
			}
			if png && format != "all" && format != "html" {
				opts.Formats = append(opts.Formats, "html")
			}
			if err := report.WriteAll(out, run, opts); err != nil {
				return err
			}
			var written []string
			if format == "all" {
				for _, f := range []string{report.HTMLFile, report.ChartsDir, report.JUnitFile, report.MethodologyFile, report.TextFile} {
					written = append(written, filepath.Join(out, f))
				}
			} else {
				written = append(written, filepath.Join(out, reportFormats[format].file))
			}
			if png && format != "all" && format != "html" {
				written = append(written, filepath.Join(out, report.HTMLFile))
			}
			if png {
				shot := filepath.Join(out, "report.png")
				if err := browser.Screenshot(cmd.Context(), filepath.Join(out, report.HTMLFile), shot); err != nil {
					return fmt.Errorf("screenshot: %w", err)
				}
				written = append(written, shot)
			}
			for _, p := range written {
				fmt.Fprintln(w, "wrote", p)
			}
			return deliverReport(cmd, &deliver, run, out, history)
		},
	}
	f := cmd.Flags()
	f.StringVar(&format, "format", "text", "text, html, junit, md, svg or all")
	f.StringVarP(&out, "out", "o", "", "write into this directory instead of stdout")
	f.BoolVar(&color, "color", false, "colour the text summary (ANSI)")
	f.BoolVar(&png, "png", false, "also save a screenshot of the HTML report as report.png (needs Chromium)")
	f.Float64Var(&opts.StallMS, "stall-ms", 0, "mark gaps longer than this as stalls in the timelines (default: the crossed gap limit)")
	f.Float64Var(&opts.StallFactor, "stall-factor", 0, "mark gaps longer than this many times the request's pace (median time per token) per token they brought as stalls (default 3; -1 off)")
	f.IntVar(&opts.MaxTimelines, "max-timelines", 0, "draw at most this many offender timelines (default 12)")
	f.StringVar(&history, "history", "", "history database for --against (default under the user's data directory)")
	deliver.register(f)
	return cmd
}

// deliverReport compares, publishes and alerts for the report command: a
// regression exits 98, a failed upload or alert exits 1.
func deliverReport(cmd *cobra.Command, d *deliverFlags, run *runfile.Run, dir, history string) error {
	if d.against == "" && d.dest == nil && d.alertWebhook == "" && d.smtp == nil {
		return nil
	}
	if history == "" && d.against != "" {
		p, err := store.DefaultPath()
		if err != nil {
			return fmt.Errorf("history: %w (use --history FILE)", err)
		}
		history = p
	}
	outcome, err := d.deliver(cmd.Context(), cmd.ErrOrStderr(), run, dir, history)
	if err != nil {
		return withCode(exitFailure, err)
	}
	if len(outcome.regressions) > 0 {
		return withCode(exitRegression, fmt.Errorf("%d regression(s)", len(outcome.regressions)))
	}
	return nil
}

// renderTo writes one format of run to w.
func renderTo(w io.Writer, format string, run *runfile.Run, opts report.Options) error {
	switch format {
	case "text":
		return report.Text(w, run, opts)
	case "html":
		return report.HTML(w, run, opts)
	case "junit":
		return report.JUnit(w, run)
	case "md":
		return report.Methodology(w, run)
	}
	return usageErr(fmt.Errorf("--format %s needs --out DIR", format))
}

// loadRun reads the run arg names, for report and compare alike: a run
// file; a run directory (its run.json, or, when the run died before
// writing it, its journal); or a journal (runfile.JournalFile, or any
// *.jsonl). package runfile validates what it reads (times, order, ids,
// slots, counts, size): a file it refuses, or one that is not a run,
// is a usage error (exit 2) naming the file and the first offending
// request; a missing one is a failure (exit 1).
//
// A run rebuilt from a journal is summarized and judged as bench would
// have judged it, and marked interrupted (rebuildRun); stderr is told
// so, with what the journal's reading noted (a torn last line). A run
// file's stored summary is checked against its requests (measure.Drift):
// where they differ, stderr and the run's warnings say so.
func loadRun(arg string, stderr io.Writer) (*runfile.Run, error) {
	// A run a lost device kept (bench --adb) is pulled from it first.
	if err := pullFromDevice(context.Background(), arg, stderr); err != nil {
		return nil, withCode(exitFailure, err)
	}
	run, rebuilt, err := readRun(arg, stderr)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, usageErr(fmt.Errorf("read run file: %w", err))
	}
	if !rebuilt {
		if d := measure.Drift(run); d != "" {
			fmt.Fprintln(stderr, "tokenpulse: warning:", arg+":", d)
			run.Warnings = append(run.Warnings, d)
		}
	}
	return run, nil
}

// readRun reads the run arg names (see loadRun); rebuilt says it came
// from a journal.
func readRun(arg string, stderr io.Writer) (run *runfile.Run, rebuilt bool, err error) {
	journal := ""
	if fi, err := os.Stat(arg); err == nil && fi.IsDir() {
		runPath := filepath.Join(arg, runFileName)
		if _, err := os.Stat(runPath); err == nil {
			run, err := runfile.Load(runPath)
			return run, false, err
		}
		journal = filepath.Join(arg, runfile.JournalFile)
		if _, err := os.Stat(journal); err != nil {
			if _, err := os.Stat(filepath.Join(arg, abtest.FileName)); err == nil {
				return nil, false, fmt.Errorf("%s is an A/B directory: its comparison is %s (and %s); each side's run is %s and %s, which report and compare take: %w",
					arg, filepath.Join(arg, abtest.TextFileName), abtest.FileName, filepath.Join(arg, "a"), filepath.Join(arg, "b"), fs.ErrNotExist)
			}
			return nil, false, fmt.Errorf("%s: a directory without %s or %s: %w", arg, runFileName, runfile.JournalFile, fs.ErrNotExist)
		}
	} else if strings.HasSuffix(arg, ".jsonl") {
		journal = arg
	}
	if journal == "" {
		run, err := runfile.Load(arg)
		return run, false, err
	}
	j, err := runfile.ReadJournal(journal)
	if err != nil {
		return nil, true, err
	}
	run, err = runner.Rebuild(j)
	if err != nil {
		return nil, true, err
	}
	fmt.Fprintf(stderr, "tokenpulse: no %s: rebuilt the run from its journal %s (%d finished requests, marked interrupted)\n", runFileName, journal, len(run.Requests))
	for _, n := range j.Notes {
		fmt.Fprintln(stderr, "tokenpulse: note:", n)
	}
	return run, true, nil
}

// runDirOf is the run directory of arg: arg itself when it is one, else
// the directory of the file.
func runDirOf(arg string) string {
	if fi, err := os.Stat(arg); err == nil && fi.IsDir() {
		return arg
	}
	return filepath.Dir(arg)
}
