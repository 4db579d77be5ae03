package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/internal/mock"
	"github.com/tokenpulse/tokenpulse/runfile"
)

func TestBenchConversationSuite(t *testing.T) {
	url := startMock(t, mock.Profile{TTFT: 2 * time.Millisecond, ITL: time.Millisecond, Tokens: 3, TokensPerEvent: 1})
	suite := filepath.Join(t.TempDir(), "chat.yaml")
	os.WriteFile(suite, []byte(`name: chat
language: en
categories:
  - name: chat
    weight: 1
    prompts:
      - id: c1
        turns: [one question, and another, "and a third"]
`), 0o644)
	out := t.TempDir()
	for _, api := range []string{"chat", "completions"} {
		text, code := cliRun(t, "bench", "--url", url, "--api", api, "--suite", suite, "-n", "2", "--warmup", "1",
			"--out", filepath.Join(out, api), "--no-history", "--report", "text", "--error-budget", "none")
		if code != exitOK {
			t.Fatalf("%s: exit %d:\n%s", api, code, text)
		}
		run, err := runfile.Load(filepath.Join(out, api, "run.json"))
		if err != nil {
			t.Fatal(err)
		}
		// One warm-up conversation and two measured ones, three turns each.
		if len(run.Requests) != 9 {
			t.Fatalf("%s: %d requests, want 9", api, len(run.Requests))
		}
		for i, r := range run.Requests {
			if r.Turn != i%3+1 || r.ConversationID != run.Requests[i-i%3].RequestID || r.Warmup != (i < 3) {
				t.Errorf("%s: request %d is turn %d of %q (warm-up %v)", api, i, r.Turn, r.ConversationID, r.Warmup)
			}
		}
		// The mock counts a prompt's words: each turn carries the earlier ones.
		ts := run.Summary.Turns
		if len(ts) != 3 || ts[0].Requests != 2 || !(ts[0].PromptTokens.Mean < ts[1].PromptTokens.Mean && ts[1].PromptTokens.Mean < ts[2].PromptTokens.Mean) {
			t.Errorf("%s: summary turns %+v, want 3 turns of 2 requests with growing prompts", api, ts)
		}
		if !strings.Contains(text, "TTFT by turn") {
			t.Errorf("%s: the text report has no TTFT by turn:\n%s", api, text)
		}
	}
}

func TestSuitesShowConversation(t *testing.T) {
	path := filepath.Join("..", "..", "suite", "testdata", "conversations.yaml")
	out, err := runSuitesCmd(t, "suites", "show", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"chat-trip   turn 1: I am planning a weekend in Lisbon. What should I see?\n",
		"            turn 2 (after 2s): Which of those suits small children?\n",
		"            turn 3 (after 1.5s): How many days would you give it?\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	out, err = runSuitesCmd(t, "suites", "show", path, "--sample", "3", "--seed", "1")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "(3 turns) ") {
		t.Errorf("the sample does not mark conversations:\n%s", out)
	}
}
