package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/internal/publish"
	"github.com/tokenpulse/tokenpulse/internal/s3test"
	"github.com/tokenpulse/tokenpulse/internal/server"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// TestShardsMergeThroughRealS3 runs 2 shard processes as an Indexed
// Job's pods would (JOB_COMPLETION_INDEX, --start-at), each publishing
// to s3://BUCKET/run/shard-I on a real S3-compatible server, then
// `merge s3://BUCKET/run`: every measured request is there, once. The
// merged run published beside them (run/merged) is left out when the
// prefix is merged again. A prefix where one shard never published is
// merged partial, exit 1.
func TestShardsMergeThroughRealS3(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 5 processes for ~5 s")
	}
	s3 := s3test.Real(t)
	bucket := s3.MakeBucket(t)
	const shards, requests = 2, 40
	url := serveMock(t, e2eProfile, server.Options{Parallel: 64, Queue: -1})
	suite := writeBenchSuite(t, "30s")
	tmp := t.TempDir()
	prefix := "s3://" + bucket + "/run"

	at := time.Now().Add(1500 * time.Millisecond).UTC().Format(time.RFC3339Nano)
	var cmds []*exec.Cmd
	var outs []fmt.Stringer
	for i := range shards {
		c, o := cliProcess(t, append(s3.Env(), fmt.Sprintf("%s=%d", jobIndexEnv, i)),
			"bench", "--url", url, "--suite", suite, "--rate", "20", "-n", fmt.Sprint(requests), "-c", "16", "--seed", "7",
			"--warmup", "1", "--out", filepath.Join(tmp, fmt.Sprintf("shard-%d", i)), "--no-history", "-q",
			"--shards", fmt.Sprint(shards), "--start-at", at, "--publish", fmt.Sprintf("%s/shard-%d", prefix, i))
		cmds, outs = append(cmds, c), append(outs, o)
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("shard %d: %v\n%s", i, err, outs[i])
		}
	}

	mergeS3 := func(src, out string, more ...string) (*runfile.Run, string, int) {
		t.Helper()
		c, o := cliProcess(t, s3.Env(), append([]string{"merge", src, "--out", out, "--no-history"}, more...)...)
		code := 0
		if err := c.Wait(); err != nil {
			ee, ok := err.(*exec.ExitError)
			if !ok {
				t.Fatal(err)
			}
			code = ee.ExitCode()
		}
		run, err := runfile.Load(filepath.Join(out, "run.json"))
		if err != nil {
			t.Fatalf("merge %s exited %d without a run: %v\n%s", src, code, err, o)
		}
		return run, o.String(), code
	}
	for _, again := range []bool{false, true} {
		var more []string
		if !again {
			more = []string{"--publish", prefix + "/merged"}
		}
		run, out, code := mergeS3(prefix, filepath.Join(tmp, fmt.Sprintf("merged-%v", again)), more...)
		if code != 0 || run.Partial || run.Merge == nil || len(run.Merge.Shards) != shards {
			t.Fatalf("merge (again %v): exit %d, partial %v, merge %+v\n%s", again, code, run.Partial, run.Merge, out)
		}
		if n := len(measuredOf(run)); n != requests || run.Summary.Overall.Requests != requests {
			t.Errorf("merge (again %v): %d measured requests, summary %d; want %d", again, n, run.Summary.Overall.Requests, requests)
		}
		for _, sh := range run.Merge.Shards {
			if !strings.HasPrefix(sh.Source, prefix+"/shard-") {
				t.Errorf("shard source %q, want under %s/shard-", sh.Source, prefix)
			}
		}
	}

	// Shard 1 never published: the prefix holds shard 0 alone.
	partial := "s3://" + bucket + "/partial"
	opts := publish.Options{Endpoint: s3.Endpoint, AccessKeyID: s3.Access, SecretAccessKey: s3.Secret, Getenv: func(string) string { return "" }}
	if _, err := publish.Upload(context.Background(), publish.Dest{Bucket: bucket, Prefix: "partial/shard-0"}, filepath.Join(tmp, "shard-0"), opts); err != nil {
		t.Fatal(err)
	}
	run, out, code := mergeS3(partial, filepath.Join(tmp, "partial"))
	if code != exitFailure || !run.Partial || fmt.Sprint(run.Merge.Missing) != "[1]" {
		t.Errorf("merge without shard 1: exit %d, partial %v, missing %v; want exit %d, partial, [1]\n%s", code, run.Partial, run.Merge.Missing, exitFailure, out)
	}
	zero, err := runfile.Load(filepath.Join(tmp, "shard-0", "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if n, want := len(measuredOf(run)), len(measuredOf(zero)); n != want || n == 0 || n >= requests {
		t.Errorf("partial run: %d measured requests, want shard 0's %d (of %d)", n, want, requests)
	}
}
