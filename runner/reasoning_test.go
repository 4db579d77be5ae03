package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/bench"
	"github.com/tokenpulse/tokenpulse/gate"
	"github.com/tokenpulse/tokenpulse/internal/mock"
	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/runner"
	"github.com/tokenpulse/tokenpulse/stream"
	"github.com/tokenpulse/tokenpulse/suite"
)

// A reasoning run against the scripted target, end to end: the mock
// thinks 5 tokens (delta.reasoning_content) 4 ms apart, then answers 3;
// the run file records the thinking events, the summary has both TTFTs,
// the thresholds can name them, and a suite that shows one category's
// thinking is recorded and survives a journal rebuild.
func TestReasoningRunAgainstMock(t *testing.T) {
	const thinking, pace = 5, 4 * time.Millisecond
	url, stop, err := mock.Serve(mock.Profile{TTFT: 2 * time.Millisecond, ITL: time.Millisecond, Tokens: 3, TokensPerEvent: 1,
		ReasoningTokens: thinking, ReasoningITL: pace})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	s, err := suite.Parse("think", []byte(`
name: think
language: en
categories:
  - name: chat
    weight: 1
    show_thinking: true
    prompts: [{id: a, text: "Why is the sky blue?"}]
  - name: api
    weight: 1
    prompts: [{id: b, text: Name a colour.}]
`))
	if err != nil {
		t.Fatal(err)
	}
	rules, err := gate.Policy{Thresholds: []string{"answer_ttft.p95 < 30s", "reasoning_tpot.p95 <= 30s"}}.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.MkdirAll(filepath.Join(dir, runner.FileName, "x"), 0o755); err != nil {
		t.Fatal(err) // run.json cannot be written: the journal stays
	}
	if _, err := runner.Measure(context.Background(), runner.Spec{
		Suite:    s,
		Workload: bench.Workload{Requests: 6, Concurrency: 2, Seed: 1},
		Client:   &stream.Client{BaseURL: url, API: "chat", Model: mock.ModelName},
		Target:   runfile.Target{URL: url, API: "chat", Model: mock.ModelName, Backend: "mock"},
		Rules:    rules,
		Dir:      dir,
	}); err == nil {
		t.Fatal("Measure wrote run.json over a directory")
	}
	j, err := runfile.ReadJournal(filepath.Join(dir, runfile.JournalFile))
	if err != nil {
		t.Fatal(err)
	}
	run, err := runner.Rebuild(j)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]bool{"chat": true}; !reflect.DeepEqual(run.Config.ShowThinking, want) {
		t.Errorf("rebuilt config.show_thinking %v, want %v", run.Config.ShowThinking, want)
	}
	// Finishing a run records the suite's choice.
	fresh := *run
	fresh.Config.ShowThinking = nil
	runner.Finish(&fresh, s, nil)
	if want := map[string]bool{"chat": true}; !reflect.DeepEqual(fresh.Config.ShowThinking, want) {
		t.Errorf("finished config.show_thinking %v, want %v", fresh.Config.ShowThinking, want)
	}
	for _, q := range run.Requests {
		if !q.OK() {
			t.Fatalf("request %d failed: %s", q.Index, q.Error)
		}
		if want := [][2]int{{0, thinking}}; !reflect.DeepEqual(q.ReasoningRuns, want) || q.ReasoningEvents != thinking {
			t.Errorf("request %d: reasoning runs %v (%d events), want %v", q.Index, q.ReasoningRuns, q.ReasoningEvents, want)
		}
		v := measure.ViewOf(run, &q)
		a, r := v.Values(measure.AnswerTTFT), v.Values(measure.ReasoningTTFT)
		if len(a) != 1 || len(r) != 1 || a[0] <= r[0] {
			t.Errorf("request %d: answer ttft %v, reasoning ttft %v", q.Index, a, r)
			continue
		}
		// The mock sends the answer no sooner than TTFT + thinking ×
		// pace after the request reached it, after the client's start.
		if min := float64(2*time.Millisecond+thinking*pace) / 1e6; a[0] < min {
			t.Errorf("request %d: answer ttft %v ms, want ≥ %v", q.Index, a[0], min)
		}
		// What a person sees: the thinking in category chat, the answer
		// only in api.
		d := measure.Display(run)
		hidden, shown := measure.OfShown(&q, d, false), measure.OfShown(&q, d, true)
		vis, h, sh := v.Values(measure.VisibleTTFT)[0], hidden.VisibleTTFTMs, shown.VisibleTTFTMs
		if q.Category == "api" && vis != h || q.Category == "chat" && vis != sh || h < a[0] || sh > h {
			t.Errorf("request %d (%s): visible ttft %v (hidden thinking %v, shown %v), answer ttft %v", q.Index, q.Category, vis, h, sh, a[0])
		}
	}
	g := run.Summary.Overall
	if !measure.Reasoned(g) || g.AnswerTTFTMs.Count != 6 || g.ReasoningTokenIntervalMs.Count != 6*(thinking-1) {
		t.Errorf("summary: answer ttft %+v, reasoning intervals %+v", g.AnswerTTFTMs, g.ReasoningTokenIntervalMs)
	}
	judged := 0
	for _, v := range run.Verdicts {
		if v.Metric == "answer_ttft" || v.Metric == "reasoning_tpot" {
			judged++
			if !v.Judged() || !v.Passed {
				t.Errorf("verdict %+v", v)
			}
		}
	}
	if judged != 2 {
		t.Errorf("%d reasoning verdicts, want 2", judged)
	}
}
