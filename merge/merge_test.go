package merge

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/runfile"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// shardRun is shard i of n of a closed-loop run: one warm-up request and
// k measured ones, each started 10 ms apart from t0 + lateness.
func shardRun(i, n, k int, late time.Duration) *runfile.Run {
	at := t0
	run := &runfile.Run{
		SchemaVersion: runfile.SchemaVersion, StartedAt: t0, FinishedAt: t0.Add(time.Second),
		Target: runfile.Target{URL: "http://x", API: "chat", Model: "m"},
		Device: runfile.Device{Hostname: fmt.Sprintf("host%d", i)},
		Config: runfile.Config{Suite: "s", Seed: 1, Requests: n * k, Concurrency: n, Arrival: "closed", Warmup: 1,
			Thresholds: []string{"errors.rate <= 1%"}, SuiteThresholds: map[string][]string{"c": {"ttft.p95 < 1s"}}},
		Shard: &runfile.Shard{Index: i, Count: n, Requests: k, Concurrency: 1, StartAt: &at, MeasuredAt: t0.Add(late), StartLateNS: int64(late)},
	}
	req := func(j int, warm bool) runfile.Request {
		return runfile.Request{RequestID: fmt.Sprintf("s%d-%d", i, j), Category: "c", PromptID: "p", Warmup: warm, Status: 200,
			StartedAt: t0.Add(late + time.Duration(j)*10*time.Millisecond), SentNS: 1e5, HeadersNS: 1e6, FirstByteNS: 2e6,
			TTFTNS: int64(20+i) * 1e6, E2ENS: 50e6, OutputTokens: 3, ContentEvents: 3, TokenTimesNS: []int64{int64(20+i) * 1e6, 30e6, 50e6}}
	}
	run.Requests = append(run.Requests, req(0, true))
	for j := 1; j <= k; j++ {
		run.Requests = append(run.Requests, req(j, false))
	}
	return run
}

func parts(runs ...*runfile.Run) []Part {
	var out []Part
	for _, r := range runs {
		out = append(out, Part{Source: fmt.Sprintf("dir%d", r.Shard.Index), Run: r, Finished: true})
	}
	return out
}

func TestMergePoolsRequests(t *testing.T) {
	run, err := Merge(parts(shardRun(2, 3, 4, 3*time.Millisecond), shardRun(0, 3, 4, 0), shardRun(1, 3, 4, time.Millisecond)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if run.Partial || run.Interrupted {
		t.Errorf("a whole run marked partial: %s", run.StopReason)
	}
	if got := len(run.Requests); got != 15 {
		t.Fatalf("%d requests, want 3 warm-up + 12", got)
	}
	for i, q := range run.Requests {
		if q.Index != i {
			t.Fatalf("request %d indexed %d", i, q.Index)
		}
	}
	if g := run.Summary.Overall; g.Requests != 12 || g.TTFTMs.Min != 20 || g.TTFTMs.Max != 22 {
		t.Errorf("overall: %d requests, ttft %v..%v; want 12 over every shard's, 20..22", g.Requests, g.TTFTMs.Min, g.TTFTMs.Max)
	}
	if run.Merge.SkewBoundNS != int64(3*time.Millisecond) || len(run.Merge.Shards) != 3 || run.Merge.Shards[2].Device.Hostname != "host2" {
		t.Errorf("merge block: %+v", run.Merge)
	}
	if len(run.Verdicts) == 0 {
		t.Error("not judged")
	}
}

func TestMergeMarksPartial(t *testing.T) {
	killed := shardRun(1, 4, 4, 0)
	ps := parts(shardRun(0, 4, 4, 0), killed, shardRun(3, 4, 4, 0)) // shard 2 missing
	ps[1].Finished, ps[1].Problem = false, "its journal was never finished"
	run, err := Merge(ps, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !run.Partial || !run.Interrupted || fmt.Sprint(run.Merge.Missing) != "[2]" {
		t.Fatalf("partial %v interrupted %v missing %v", run.Partial, run.Interrupted, run.Merge.Missing)
	}
	w := strings.Join(run.Warnings, "\n")
	for _, want := range []string{"PARTIAL", "3 of 4 shards", "shard 2 is missing", "shard 1 its journal was never finished"} {
		if !strings.Contains(w, want) {
			t.Errorf("warnings lack %q:\n%s", want, w)
		}
	}
}

func TestMergeRefuses(t *testing.T) {
	other := shardRun(1, 2, 4, 0)
	other.Config.Seed = 7
	_, err := Merge(parts(shardRun(0, 2, 4, 0), other), nil)
	var mm *Mismatch
	if !errors.As(err, &mm) || !strings.Contains(err.Error(), "seed 7") {
		t.Errorf("other seed: %v", err)
	}
	if _, err := Merge(parts(shardRun(0, 2, 4, 0), shardRun(0, 2, 4, 0)), nil); err == nil || !strings.Contains(err.Error(), "both shard 0") {
		t.Errorf("a shard twice: %v", err)
	}
	whole := shardRun(0, 2, 4, 0)
	whole.Shard = nil
	if _, err := Merge([]Part{{Source: "x", Run: whole}}, nil); err == nil || !strings.Contains(err.Error(), "no shard block") {
		t.Errorf("not a shard: %v", err)
	}
	// The hosts may differ: no refusal for the device.
	a, b := shardRun(0, 2, 4, 0), shardRun(1, 2, 4, 0)
	b.Device.CPUModel = "other"
	if d := Differences(a, b); len(d) != 0 {
		t.Errorf("device differences refused: %v", d)
	}
}

// A merged run beside the shards (the merge step publishes to
// PREFIX/merged, beside PREFIX/shard-I) is left out with a note, not
// refused: merging the prefix again works.
func TestReadDirLeavesOutMergedRun(t *testing.T) {
	dir := t.TempDir()
	a, b := shardRun(0, 2, 3, 0), shardRun(1, 2, 3, 0)
	for _, r := range []*runfile.Run{a, b} {
		for i := range r.Requests {
			r.Requests[i].Index = i
		}
	}
	whole, err := Merge(parts(a, b), nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]*runfile.Run{"shard-0": a, "shard-1": b, "merged": whole} {
		if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := r.Write(filepath.Join(dir, name, "run.json")); err != nil {
			t.Fatal(err)
		}
	}
	ps, notes, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || len(notes) != 1 || !strings.Contains(notes[0], "merged run") {
		t.Fatalf("%d parts, notes %q; want the 2 shards and a note on the merged run", len(ps), notes)
	}
	if _, err := Merge(ps, notes); err != nil {
		t.Errorf("merging the prefix again: %v", err)
	}
}
