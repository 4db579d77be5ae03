package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/tokenpulse/tokenpulse/internal/store"
	"github.com/tokenpulse/tokenpulse/report/trend"
)

func init() { commands = append(commands, newHistoryCmd) }

type historyFlags struct {
	history string
	target  string
	model   string
	device  string
	limit   int
	json    bool
	report  string
	out     string
}

func newHistoryCmd() *cobra.Command {
	f := &historyFlags{}
	cmd := &cobra.Command{
		Use:   "history",
		Short: "List recorded runs by target, model and device",
		Long: `History lists the runs recorded in the history file, grouped by target,
model and device, newest first, with their headline figures and verdict.

Every bench run is recorded. The history is --history, else
$TOKENPULSE_HISTORY, else $XDG_DATA_HOME/tokenpulse/history.db when
XDG_DATA_HOME is set, else a file under the platform's data directory
(~/.local/share, ~/Library/Application Support, %LocalAppData%). It is a
SQLite file, or a PostgreSQL database given as a postgres:// URL: one
history a fleet of runners shares (tokenpulse history import moves a
file's runs there). Listing writes nothing to a history of the current
schema, so it works on a read-only filesystem or database role.

--report html writes the trend page: for each target, model and device,
TTFT p95, TPOT p95, gap p95, the longest stall, goodput and errors over
time, with thresholds, crossed thresholds and regressions marked, each
point linked to its run's published report. The filters apply; --limit
does not unless given.`,
		Example: `  tokenpulse history
  tokenpulse history --target http://127.0.0.1:8080/v1 --limit 5
  tokenpulse history --history postgres://ci@db.internal/tokenpulse --report html --out trend.html`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.limit < 0 {
				return usageErr(fmt.Errorf("--limit must not be negative, got %d", f.limit))
			}
			switch f.report {
			case "", "html":
			default:
				return usageErr(fmt.Errorf("--report %q: want html", f.report))
			}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			path, err := store.Resolve(f.history)
			if err != nil {
				return err
			}
			limit := f.limit
			if f.report != "" && !cmd.Flags().Changed("limit") {
				limit = 0
			}
			var es []store.Entry
			s, err := store.OpenRead(path)
			switch {
			case errors.Is(err, store.ErrNoFile):
				// Nothing recorded yet: list nothing, create nothing.
			case err != nil:
				return err
			default:
				defer s.Close()
				es, err = s.List(ctx, store.Filter{Target: f.target, Model: f.model, Device: f.device, Limit: limit})
				if err != nil {
					return err
				}
			}
			if f.report != "" {
				return writeTrend(ctx, cmd.ErrOrStderr(), s, es, path, f.out)
			}
			if f.json {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				if es == nil {
					es = []store.Entry{}
				}
				return enc.Encode(es)
			}
			return writeHistory(cmd.OutOrStdout(), store.Redact(path), es)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.history, "history", "", "history: a SQLite file or a postgres:// URL (default: $TOKENPULSE_HISTORY, else a file under the user's data directory)")
	fl.StringVar(&f.target, "target", "", "only runs of this target URL")
	fl.StringVar(&f.model, "model", "", "only runs of this model")
	fl.StringVar(&f.device, "device", "", "only runs on this device (label or hostname)")
	fl.IntVar(&f.limit, "limit", 20, "show at most N runs, newest first (0: all)")
	fl.BoolVar(&f.json, "json", false, "print the runs as JSON")
	fl.StringVar(&f.report, "report", "", "write the trend page: html")
	fl.StringVarP(&f.out, "out", "o", "tokenpulse-trend.html", "the trend page's file, with --report html")
	cmd.AddCommand(newHistoryImportCmd())
	return cmd
}

// writeTrend writes the trend page of the runs es of s to out.
func writeTrend(ctx context.Context, stderr io.Writer, s *store.Store, es []store.Entry, path, out string) error {
	runs := make([]trend.Run, 0, len(es))
	for _, e := range es {
		_, run, err := s.Get(ctx, e.ID)
		if err != nil {
			return err
		}
		runs = append(runs, trend.FromRun(e.ID, e.ReportURL, run))
	}
	var b bytes.Buffer
	if err := trend.HTML(&b, runs, store.Redact(path)); err != nil {
		return err
	}
	if err := os.WriteFile(out, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("trend page: %w", err)
	}
	fmt.Fprintf(stderr, "tokenpulse: trend of %d runs written to %s\n", len(runs), out)
	return nil
}

func newHistoryImportCmd() *cobra.Command {
	var history string
	cmd := &cobra.Command{
		Use:   "import FILE.db",
		Short: "Copy the runs of a SQLite history file into the history",
		Long: `Import copies every run of a SQLite history file into the history
(--history, else $TOKENPULSE_HISTORY), typically a team's PostgreSQL
database, with their figures, verdicts and run files, in one transaction.
A run the history already holds is skipped, so importing a file twice
copies nothing the second time. The file is only read.`,
		Example: `  tokenpulse history import ~/.local/share/tokenpulse/history.db --history postgres://ci@db.internal/tokenpulse`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if store.IsURL(args[0]) {
				return usageErr(errors.New("import reads a SQLite history file; give its path"))
			}
			path, err := store.Resolve(history)
			if err != nil {
				return err
			}
			if !store.IsURL(path) {
				fmt.Fprintf(cmd.ErrOrStderr(), "tokenpulse: note: importing into the SQLite file %s (give --history postgres://... or set %s for a shared history)\n", path, store.EnvHistory)
			}
			s, err := store.Open(path)
			if err != nil {
				return err
			}
			defer s.Close()
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			res, err := s.Import(ctx, args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "imported %s into %s: %d runs copied, %d skipped (already there)\n", args[0], s.Name(), res.Copied, res.Skipped)
			return nil
		},
	}
	cmd.Flags().StringVar(&history, "history", "", "the history to copy into: a postgres:// URL or a SQLite file (default: $TOKENPULSE_HISTORY, else the user's data directory)")
	return cmd
}

// writeHistory prints es grouped by target, model and device, groups in
// the order of their newest run.
func writeHistory(w io.Writer, path string, es []store.Entry) error {
	if len(es) == 0 {
		_, err := fmt.Fprintf(w, "no runs recorded in %s\n", path)
		return err
	}
	type key struct{ target, model, device string }
	var order []key
	groups := map[key][]store.Entry{}
	for _, e := range es {
		k := key{e.TargetURL, e.Model, e.Device}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], e)
	}
	for i, k := range order {
		if i > 0 {
			fmt.Fprintln(w)
		}
		first := groups[k][0]
		fmt.Fprintf(w, "%s  model %s  device %s", historyDash(k.target), historyDash(k.model), historyDash(k.device))
		if first.CPUModel != "" && first.CPUModel != k.device {
			fmt.Fprintf(w, " (%s)", first.CPUModel)
		}
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  ID\tSTARTED\tSUITE\tREQS\tERRS\tTTFT p50\tTTFT p95\tGAP p95\tGAP max\tVERDICT\t")
		for _, e := range groups[k] {
			verdict := "pass"
			switch {
			case e.Verdicts == 0:
				verdict = "-"
			case !e.Passed:
				verdict = fmt.Sprintf("FAIL (%d of %d)", e.VerdictsFailed, e.Verdicts)
			}
			if e.VerdictsNotJudged > 0 {
				verdict += fmt.Sprintf(", %d not judged (no data)", e.VerdictsNotJudged)
			}
			fmt.Fprintf(tw, "  %d\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t\n",
				e.ID, e.StartedAt.Local().Format(time.DateTime), historyDash(e.Suite), e.Requests, e.Errors,
				historyMS(e.TTFTP50MS), historyMS(e.TTFTP95MS), historyMS(e.GapP95MS), historyMS(e.GapMaxMS), verdict)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(w, "\ngaps are per event (between content events); - : the run has no such figure (no successful request, no gap)")
	return err
}

func historyDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// historyMS formats a headline figure, "-" when the run has none (no
// successful request, no gap): never 0.0 ms for a figure not measured.
func historyMS(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f ms", *v)
}
