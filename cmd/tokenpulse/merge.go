package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tokenpulse/tokenpulse/internal/publish"
	"github.com/tokenpulse/tokenpulse/merge"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/runner"
)

func init() { commands = append(commands, newMergeCmd) }

func newMergeCmd() *cobra.Command {
	var (
		out          string
		allowPartial bool
		outputs      outputFlags
	)
	cmd := &cobra.Command{
		Use:   "merge DIR|s3://BUCKET/PREFIX",
		Short: "Build one run from the run directories of its shards (bench --shard)",
		Long: `Build one run from the shards of a sharded run (bench --shard I/N or
--shards N): DIR holds one run directory per shard (its run.json, or the
journal of a shard that never finished).

s3://BUCKET/PREFIX is the prefix under which each shard published its
run directory to a prefix of its own (bench --publish
s3://BUCKET/PREFIX/shard-I): every PREFIX/NAME/run.json (or
PREFIX/NAME/run.journal.jsonl) is downloaded into a temporary directory,
removed afterwards, and merged as a DIR would be. A run file larger than
a run file may be (512 MiB) is refused before anything is written. A
merged run found there (the merge step's own --publish
s3://BUCKET/PREFIX/merged) is left out. Credentials and the endpoint
come from the AWS_* environment variables, as for --publish. A shard
that never published (killed before it finished) is missing: the run
is partial.

The merged run is built from the shards' raw per-request records (no
percentile is averaged), then summarised, judged, reported and recorded in
the history like any run. Shards made with other settings are refused,
naming each difference. Each shard's host and clock facts are kept; the
load timeline aligns the shards by wall clock, and the run states the skew
bound (how far apart the shards' measured requests began).

A missing shard, or one that never finished, makes the merged run
PARTIAL: run.json says so ("partial": true, and merge.missing), the report
and its warnings too, and the run is marked interrupted so that it never
serves as a baseline.

Exit status: 1 when the run is partial (unless --allow-partial) or could
not be read or written; 2 when the shards are refused (other settings,
two of one shard, not shards at all); otherwise as bench: 99 when a
threshold is crossed, 98 for a regression found by --against, 0.`,
		Example: `  tokenpulse merge shards/ --out merged --report html
  tokenpulse merge s3://bench-results/nightly-1 --out merged --publish s3://bench-results/nightly-1/merged
  tokenpulse merge /shared/run-42 --out merged --history postgres://...`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := outputs.check(); err != nil {
				return usageErr(err)
			}
			stderr := cmd.ErrOrStderr()
			parts, notes, err := readShards(cmd.Context(), args[0])
			if err != nil {
				return withCode(exitFailure, err)
			}
			run, err := merge.Merge(parts, notes)
			if err != nil {
				var mm *merge.Mismatch
				if errors.As(err, &mm) || len(parts) > 0 {
					return usageErr(err)
				}
				return withCode(exitFailure, err)
			}
			run.CommandLine = append([]string{"tokenpulse"}, os.Args[1:]...)
			dir, err := runner.MakeDir(out, time.Now().UTC())
			if err != nil {
				return withCode(exitFailure, fmt.Errorf("run directory: %w", err))
			}
			if err := runner.Write(run, dir); err != nil {
				return withCode(exitFailure, err)
			}
			runPath := filepath.Join(dir, runner.FileName)
			fmt.Fprintf(stderr, "tokenpulse: merged %d of %d shards (%d requests) into %s\n", len(run.Merge.Shards), run.Merge.Count, len(run.Requests), runPath)
			outcome, err := outputs.emit(cmd.Context(), cmd.OutOrStdout(), stderr, run, dir)
			if err != nil {
				var ee *exitError
				if errors.As(err, &ee) {
					return err
				}
				return withCode(exitFailure, fmt.Errorf("the merged run is safe in %s, but: %w", runPath, err))
			}
			return mergeExit(run, outcome, allowPartial, runPath)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&out, "out", "o", "", "directory for the merged run.json and reports (default tokenpulse-runs/TIMESTAMP)")
	fl.BoolVar(&allowPartial, "allow-partial", false, "exit as a whole run would when shards are missing or unfinished (the run is still marked partial)")
	outputs.register(fl)
	return cmd
}

// readShards reads the shards at src: a directory, or an S3 prefix
// (see merge's help) downloaded into a temporary directory first. The
// parts and notes then name the objects' s3:// addresses.
func readShards(ctx context.Context, src string) ([]merge.Part, []string, error) {
	if !strings.HasPrefix(src, "s3://") {
		return merge.ReadDir(src)
	}
	dest, err := publish.Parse(src)
	if err != nil {
		return nil, nil, err
	}
	tmp, err := os.MkdirTemp("", "tokenpulse-merge-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(tmp)
	shardFile := func(name string) bool {
		dir, file, ok := strings.Cut(name, "/")
		return ok && dir != "" && (file == runner.FileName || file == runfile.JournalFile)
	}
	objs, err := publish.Download(ctx, dest, tmp, shardFile, publish.Limits{FileBytes: runfile.MaxFileBytes, Files: 2 * maxS3Shards}, publish.Options{})
	if err != nil {
		return nil, nil, err
	}
	if len(objs) == 0 {
		return nil, nil, fmt.Errorf("%s holds no shard: want PREFIX/NAME/%s (or %s) for each shard (bench --publish %s/shard-I)", dest, runner.FileName, runfile.JournalFile, dest)
	}
	parts, notes, err := merge.ReadDir(tmp)
	at := func(s string) string { return strings.Replace(s, tmp, dest.String(), 1) }
	for i := range parts {
		parts[i].Source = at(parts[i].Source)
	}
	for i := range notes {
		notes[i] = at(notes[i])
	}
	if err != nil {
		err = errors.New(at(err.Error()))
	}
	return parts, notes, err
}

// maxS3Shards bounds the shards merge reads from one S3 prefix.
const maxS3Shards = 1024

// mergeExit is merge's exit status for the merged run (see its help).
func mergeExit(run *runfile.Run, outcome deliveryOutcome, allowPartial bool, runPath string) error {
	if run.Partial && !allowPartial {
		return withCode(exitFailure, fmt.Errorf("the merged run is partial (%s); it is written to %s (--allow-partial exits as a whole run would)", run.StopReason, runPath))
	}
	return findingsExit(run, outcome)
}
