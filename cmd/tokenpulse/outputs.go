package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/tokenpulse/tokenpulse/internal/store"
	"github.com/tokenpulse/tokenpulse/report"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// outputFlags are the flags that decide where a judged run goes: reports,
// the history store, object storage and alerts.
type outputFlags struct {
	reports   []string
	color     bool
	history   string
	noHistory bool
	deliver   deliverFlags
}

func (o *outputFlags) register(fl *pflag.FlagSet) {
	fl.StringSliceVar(&o.reports, "report", nil, "reports to write beside run.json: html, svg, junit, md, text, or all (comma-separated)")
	fl.BoolVar(&o.color, "color", false, "colour the terminal summary")
	fl.StringVar(&o.history, "history", "", "history: a SQLite file or a postgres:// URL (default: $TOKENPULSE_HISTORY, else a file under the user's data directory)")
	fl.BoolVar(&o.noHistory, "no-history", false, "do not record the run in the history database")
	o.deliver.register(fl)
}

// check validates the flags before anything is measured.
func (o *outputFlags) check() error {
	if _, err := o.formats(); err != nil {
		return err
	}
	return o.deliver.check()
}

// formats returns the report formats asked for, expanding "all".
func (o *outputFlags) formats() ([]string, error) {
	var out []string
	for _, f := range o.reports {
		switch f = strings.TrimSpace(strings.ToLower(f)); f {
		case "all":
			return []string{"html", "svg", "junit", "md", "text"}, nil
		case "html", "svg", "junit", "md", "text":
			out = append(out, f)
		case "":
		default:
			return nil, fmt.Errorf("--report %q: want html, svg, junit, md, text or all", f)
		}
	}
	return out, nil
}

// runFileName is the run file's name in the run directory (bench writes
// it there before emit).
const runFileName = "run.json"

// emit compares the run with an earlier one (--against), prints the
// summary to stdout, writes the asked reports to dir, records the run in
// the history, then publishes and alerts. The comparison comes first so
// that the summary, the reports, the history and dir/run.json (rewritten
// when a comparison was asked) all hold it.
func (o *outputFlags) emit(ctx context.Context, stdout, stderr io.Writer, run *runfile.Run, dir string) (deliveryOutcome, error) {
	formats, err := o.formats()
	if err != nil {
		return deliveryOutcome{}, usageErr(err)
	}
	path, err := o.historyPath(o.deliver.against != "")
	if err != nil {
		return deliveryOutcome{}, err
	}
	var errs []error
	if o.deliver.against != "" {
		if err := o.deliver.compare(ctx, stderr, run, path); err != nil {
			errs = append(errs, err)
		}
		if run.Comparison != nil {
			if err := run.Write(filepath.Join(dir, runFileName)); err != nil {
				errs = append(errs, fmt.Errorf("writing the comparison into the run file: %w", err))
			}
		}
	}
	opts := report.Options{Color: o.color}
	if err := report.Text(stdout, run, opts); err != nil {
		return deliveryOutcome{}, errors.Join(append(errs, err)...)
	}
	if len(formats) == 0 && o.deliver.wantsReports() {
		formats = []string{"html", "svg", "junit", "md", "text"}
	}
	if len(formats) > 0 {
		opts.Formats = formats
		if err := report.WriteAll(dir, run, opts); err != nil {
			return deliveryOutcome{}, errors.Join(append(errs, fmt.Errorf("writing reports: %w", err))...)
		}
		fmt.Fprintf(stderr, "tokenpulse: reports (%s) written to %s\n", strings.Join(formats, ", "), dir)
	}
	recorded, err := o.record(stderr, path, run)
	if err != nil {
		errs = append(errs, err)
	}
	out, err := o.deliver.deliver(ctx, stderr, run, dir, path)
	if recorded && out.reportURL != "" {
		// The trend page (history --report html) links the run to it.
		if err := store.RecordReportURL(path, run, out.reportURL); err != nil {
			errs = append(errs, fmt.Errorf("recording the report's address in the history: %w", err))
		}
	}
	return out, errors.Join(append(errs, err)...)
}

// historyPath is the history runs are recorded in (--history, else the
// default), "" when none is recorded (--no-history) and read needs none
// (read: a comparison with a recorded run was asked).
func (o *outputFlags) historyPath(read bool) (string, error) {
	path := o.history
	if path == "" && (!o.noHistory || read) {
		p, err := store.DefaultPath()
		if err != nil {
			return "", fmt.Errorf("history: %w (use --history FILE or --no-history)", err)
		}
		path = p
	}
	return path, nil
}

// record records run in the history at path unless --no-history, and
// says so on stderr; it reports whether the run was recorded.
func (o *outputFlags) record(stderr io.Writer, path string, run *runfile.Run) (bool, error) {
	if o.noHistory {
		return false, nil
	}
	id, err := store.Record(path, run)
	if err != nil {
		return false, fmt.Errorf("recording the run in the history %s: %w", store.Redact(path), err)
	}
	fmt.Fprintf(stderr, "tokenpulse: recorded as run %d in %s\n", id, store.Redact(path))
	return true, nil
}
