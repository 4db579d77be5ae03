package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/tokenpulse/tokenpulse/internal/store"
)

func init() { commands = append(commands, newHistoryCmd) }

type historyFlags struct {
	history string
	target  string
	model   string
	device  string
	limit   int
	json    bool
}

func newHistoryCmd() *cobra.Command {
	f := &historyFlags{}
	cmd := &cobra.Command{
		Use:   "history",
		Short: "List recorded runs by target, model and device",
		Long: `History lists the runs recorded in the history file, grouped by target,
model and device, newest first, with their headline figures and verdict.

Every bench run is recorded. The file is $XDG_DATA_HOME/tokenpulse/history.db
when XDG_DATA_HOME is set, else under the platform's data directory
(~/.local/share, ~/Library/Application Support, %LocalAppData%); --history
moves it. Listing writes nothing to a file of the current schema, so it
works on a read-only filesystem.`,
		Example: `  tokenpulse history
  tokenpulse history --target http://127.0.0.1:8080/v1 --limit 5`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.limit < 0 {
				return usageErr(fmt.Errorf("--limit must not be negative, got %d", f.limit))
			}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			path, err := store.Resolve(f.history)
			if err != nil {
				return err
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
				es, err = s.List(ctx, store.Filter{Target: f.target, Model: f.model, Device: f.device, Limit: f.limit})
				if err != nil {
					return err
				}
			}
			if f.json {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				if es == nil {
					es = []store.Entry{}
				}
				return enc.Encode(es)
			}
			return writeHistory(cmd.OutOrStdout(), path, es)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.history, "history", "", "history file (default: the user's data directory)")
	fl.StringVar(&f.target, "target", "", "only runs of this target URL")
	fl.StringVar(&f.model, "model", "", "only runs of this model")
	fl.StringVar(&f.device, "device", "", "only runs on this device (label or hostname)")
	fl.IntVar(&f.limit, "limit", 20, "show at most N runs, newest first (0: all)")
	fl.BoolVar(&f.json, "json", false, "print the runs as JSON")
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
