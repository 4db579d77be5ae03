package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/internal/mock"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// traceLines is a Mooncake trace of six requests: ms, input, output,
// hash ids.
var traceLines = [][4]int{{0, 40, 5, 1}, {20, 60, 6, 1}, {40, 30, 7, 2}, {40, 50, 8, 1}, {100, 20, 5, 3}, {150, 70, 6, 2}}

func writeTrace(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, l := range traceLines {
		fmt.Fprintf(&b, `{"timestamp": %d, "input_length": %d, "output_length": %d, "hash_ids": [%d]}`+"\n", l[0], l[1], l[2], l[3])
	}
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestBenchTraceReplaysAgainstMock(t *testing.T) {
	// The mock answers 3 tokens unless ignore_eos asks for more.
	url := startMock(t, mock.Profile{TTFT: time.Millisecond, ITL: time.Millisecond, Tokens: 3, TokensPerEvent: 1})
	path := writeTrace(t)
	for _, c := range []struct {
		name     string
		extra    []string
		atLength int
	}{
		{"ignore_eos by default", nil, len(traceLines)},
		{"--ignore-eos=false", []string{"--ignore-eos=false"}, 0},
	} {
		out := t.TempDir()
		args := append([]string{"bench", "--url", url, "--trace", path, "--warmup", "1", "--out", out, "--no-history", "--error-budget", "none", "--threshold", "ttft.p95 < 10s"}, c.extra...)
		text, code := cliRun(t, args...)
		if code != exitOK {
			t.Fatalf("%s: exit %d:\n%s", c.name, code, text)
		}
		run, err := runfile.Load(filepath.Join(out, "run.json"))
		if err != nil {
			t.Fatal(err)
		}
		cfg := run.Config
		if cfg.Arrival != runfile.ArrivalTrace || cfg.Requests != len(traceLines) || cfg.Trace == nil ||
			cfg.Trace.Format != "mooncake" || cfg.Trace.Entries != len(traceLines) || !strings.Contains(cfg.Trace.Vocabulary, "bundled") {
			t.Fatalf("%s: config %+v, trace %+v", c.name, cfg, cfg.Trace)
		}
		ms := measured(run)
		if len(ms) != len(traceLines) {
			t.Fatalf("%s: %d measured requests, want %d", c.name, len(ms), len(traceLines))
		}
		for i, r := range ms {
			l := traceLines[i]
			if r.ScheduledNS == nil || *r.ScheduledNS != int64(l[0])*int64(time.Millisecond) {
				t.Errorf("%s: request %d due at %v ns, want %d ms", c.name, i, r.ScheduledNS, l[0])
			}
			if r.MaxTokens != l[2] || r.PromptID != fmt.Sprintf("line %d", i+1) {
				t.Errorf("%s: request %d asked max_tokens %d as %q, want %d, line %d", c.name, i, r.MaxTokens, r.PromptID, l[2], i+1)
			}
		}
		m := run.Summary.Trace
		if m == nil || m.Answered != len(traceLines) || m.AtLength != c.atLength || m.Arrivals != len(traceLines) || m.KS < 0 || m.KS > 1 {
			t.Errorf("%s: summary.trace %+v, want %d answered, %d at length", c.name, m, len(traceLines), c.atLength)
		}
		if len(run.Verdicts) != 1 || !run.Verdicts[0].Passed {
			t.Errorf("%s: verdicts %+v, want the threshold judged and held", c.name, run.Verdicts)
		}
		if want := fmt.Sprintf("length match %d of %d answers", c.atLength, len(traceLines)); !strings.Contains(text, "arrival match KS") || !strings.Contains(text, want) {
			t.Errorf("%s: the summary does not state the matches (%q):\n%s", c.name, want, text)
		}
	}
}

func TestBenchTraceShards(t *testing.T) {
	url := startMock(t, mock.Profile{TTFT: time.Millisecond, ITL: time.Millisecond, Tokens: 3, TokensPerEvent: 1})
	path := writeTrace(t)
	for k := range 2 {
		out := t.TempDir()
		text, code := cliRun(t, "bench", "--url", url, "--trace", path, "--shard", fmt.Sprintf("%d/2", k), "-c", "4", "--warmup", "0", "--out", out, "--no-history", "-q", "--error-budget", "none")
		if code != exitOK {
			t.Fatalf("shard %d: exit %d:\n%s", k, code, text)
		}
		run, err := runfile.Load(filepath.Join(out, "run.json"))
		if err != nil {
			t.Fatal(err)
		}
		ms := measured(run)
		if len(ms) != 3 || run.Shard == nil || run.Shard.Requests != 3 || run.Config.Requests != len(traceLines) {
			t.Fatalf("shard %d: %d measured, shard %+v, config requests %d", k, len(ms), run.Shard, run.Config.Requests)
		}
		for j, r := range ms {
			i := 2*j + k // arrivals dealt in turn
			if r.PromptID != fmt.Sprintf("line %d", i+1) || *r.ScheduledNS != int64(traceLines[i][0])*int64(time.Millisecond) {
				t.Errorf("shard %d's request %d: %s due %d ns, want line %d at %d ms", k, j, r.PromptID, *r.ScheduledNS, i+1, traceLines[i][0])
			}
		}
	}
}

func TestBenchTraceRefusals(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := writeTrace(t)
	unsorted := write("unsorted.jsonl", `{"timestamp": 0, "input_length": 5, "output_length": 5}
{"timestamp": 30, "input_length": 5, "output_length": 5}
{"timestamp": 20, "input_length": 5, "output_length": 5}
`)
	long := write("long.csv", "Timestamp,Model,Request tokens,Response tokens\n0,m,10,10\n1,m,500,100\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--trace", unsorted}, unsorted + ":3: timestamp 10ms before the previous line's"},
		{[]string{"--trace", long}, long + ":3: input 500 + output 100 tokens is past the context of 512"},
		{[]string{"--trace", long, "--ctx", "1024", "--trace-format", "azure"}, long + ":1: the azure header lacks"},
		{[]string{"--trace", filepath.Join(dir, "none.jsonl")}, "no such file"},
		{[]string{"--trace", good, "--trace-speed", "0"}, "the trace speed must be a finite number > 0"},
		{[]string{"--trace", good, "--trace-window", "5s,1s"}, "is empty: want FROM < TO"},
		{[]string{"--trace", good, "--trace-window", "10s,"}, "no request in the window"},
		{[]string{"--trace", good, "--rate", "3"}, "it takes no --rate"},
		{[]string{"--trace", good, "-n", "3"}, "it takes no --requests"},
		{[]string{"--trace-speed", "2"}, "--trace-speed needs --trace"},
		{[]string{"--trace", good, "--trace-format", "sharegpt"}, "unknown trace format"},
	} {
		// No --url: the embedded server would be started only after the
		// trace is checked, so a refusal starts nothing.
		text, code := cliRun(t, append([]string{"bench", "--no-history", "-q", "--out", t.TempDir()}, c.args...)...)
		if code != exitUsage || !strings.Contains(text, c.want) {
			t.Errorf("%v: exit %d, %q; want exit %d and %q", c.args, code, text, exitUsage, c.want)
		}
	}
}

func TestSweepTraceSpeeds(t *testing.T) {
	url := startMock(t, mock.Profile{TTFT: time.Millisecond, ITL: time.Millisecond, Tokens: 3, TokensPerEvent: 1})
	path := writeTrace(t)
	out := t.TempDir()
	text, code := cliRun(t, "sweep", "--url", url, "--trace", path, "--trace-speeds", "1,4", "--warmup", "0", "--out", out, "--no-history", "-q", "--error-budget", "none")
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, text)
	}
	for _, step := range []struct {
		dir   string
		speed float64
	}{{"01-trace-speed-1", 1}, {"02-trace-speed-4", 4}} {
		run, err := runfile.Load(filepath.Join(out, step.dir, "run.json"))
		if err != nil {
			t.Fatal(err)
		}
		if run.Config.Trace == nil || run.Config.Trace.Speed != step.speed {
			t.Fatalf("%s: trace %+v, want speed %g", step.dir, run.Config.Trace, step.speed)
		}
		for i, r := range measured(run) {
			want := int64(float64(traceLines[i][0]) * float64(time.Millisecond) / step.speed)
			if *r.ScheduledNS != want {
				t.Errorf("%s: request %d due %d ns, want %d", step.dir, i, *r.ScheduledNS, want)
			}
		}
	}
	for _, bad := range [][]string{
		{"--trace-speeds", "1,2"},
		{"--trace", path, "--rates", "1,2"},
		{"--trace", path, "--trace-speeds", "0,2"},
	} {
		if text, code := cliRun(t, append([]string{"sweep", "--url", url, "--no-history", "-q", "--out", t.TempDir()}, bad...)...); code != exitUsage {
			t.Errorf("%v: exit %d (%s), want %d", bad, code, text, exitUsage)
		}
	}
}

func TestBenchTraceEmbeddedPromptsExact(t *testing.T) {
	// The embedded server counts each prompt with the model's own
	// tokenizer: the completions API sends the text bare, so it holds
	// exactly the recorded input plus the model's BOS; ignore_eos makes
	// every answer run to its recorded length.
	out := t.TempDir()
	text, code := cliRun(t, "bench", "--trace", writeTrace(t), "--api", "completions", "--warmup", "0", "--out", out, "--no-history", "-q", "--error-budget", "none")
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, text)
	}
	run, err := runfile.Load(filepath.Join(out, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(run.Config.Trace.Vocabulary, "the embedded model's own") {
		t.Errorf("vocabulary %q", run.Config.Trace.Vocabulary)
	}
	ms := measured(run)
	if len(ms) != len(traceLines) {
		t.Fatalf("%d measured, want %d", len(ms), len(traceLines))
	}
	for i, r := range ms {
		if !r.OK() || r.PromptTokens != traceLines[i][1]+1 || r.OutputTokens != traceLines[i][2] {
			t.Errorf("request %d: %s; prompt %d tokens, output %d; want %d+BOS and %d", i, r.Error, r.PromptTokens, r.OutputTokens, traceLines[i][1], traceLines[i][2])
		}
	}
	if m := run.Summary.Trace; m == nil || m.AtLength != len(traceLines) {
		t.Errorf("summary.trace %+v, want every answer at its length", m)
	}
}

// TestBenchTraceIdentityIsItsContent: the same trace given by another
// path (a copy in another directory, as a nightly job's checkout would
// have it) is the same workload to --against last; a trace with other
// content is not.
func TestBenchTraceIdentityIsItsContent(t *testing.T) {
	url := startMock(t, mock.Profile{TTFT: time.Millisecond, ITL: time.Millisecond, Tokens: 3, TokensPerEvent: 1})
	path := writeTrace(t)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "elsewhere", "trace.jsonl")
	if err := os.MkdirAll(filepath.Dir(other), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, data, 0o644); err != nil {
		t.Fatal(err)
	}
	history := filepath.Join(t.TempDir(), "h.db")
	bench := func(p string, extra ...string) (*runfile.Run, string) {
		out := t.TempDir()
		args := append([]string{"bench", "--url", url, "--trace", p, "--warmup", "0", "--out", out, "--history", history, "--error-budget", "none", "--threshold", "ttft.p95 < 10s"}, extra...)
		text, code := cliRun(t, args...)
		if code != exitOK {
			t.Fatalf("exit %d:\n%s", code, text)
		}
		run, err := runfile.Load(filepath.Join(out, "run.json"))
		if err != nil {
			t.Fatal(err)
		}
		return run, text
	}
	first, _ := bench(path)
	second, text := bench(other, "--against", "last")
	if second.Comparison == nil || second.Comparison.Skipped != "" || second.Comparison.BaseID == 0 {
		t.Errorf("the same trace by another path was not compared: %+v\n%s", second.Comparison, text)
	}
	if first.Config.Suite != second.Config.Suite || first.Config.Trace.SHA256 == "" {
		t.Errorf("suites %q and %q, sha256 %q: want one name, from the content", first.Config.Suite, second.Config.Suite, first.Config.Trace.SHA256)
	}
	if err := os.WriteFile(other, append(data, []byte(`{"timestamp": 900, "input_length": 9, "output_length": 3, "hash_ids": [7]}`+"\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	third, _ := bench(other)
	if third.Config.Suite == first.Config.Suite {
		t.Errorf("a trace of other content has the same suite %q", third.Config.Suite)
	}
}

// TestBenchTraceSaysWhatIsJudged: without --threshold or --tier a
// replay is judged on its error budget alone, and bench says so rather
// than let "held" stand for latency it never judged.
func TestBenchTraceSaysWhatIsJudged(t *testing.T) {
	url := startMock(t, mock.Profile{TTFT: time.Millisecond, ITL: time.Millisecond, Tokens: 3, TokensPerEvent: 1})
	path := writeTrace(t)
	const warning = "judged only on its error budget"
	for _, c := range []struct {
		extra []string
		warn  bool
	}{
		{nil, true},
		{[]string{"--threshold", "ttft.p95 < 10s"}, false},
	} {
		args := append([]string{"bench", "--url", url, "--trace", path, "--warmup", "0", "--out", t.TempDir(), "--no-history"}, c.extra...)
		text, code := cliRun(t, args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d:\n%s", c.extra, code, text)
		}
		if strings.Contains(text, warning) != c.warn {
			t.Errorf("%v: warning printed %v, want %v:\n%s", c.extra, !c.warn, c.warn, text)
		}
	}
}
