package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/internal/mock"
	"github.com/tokenpulse/tokenpulse/internal/server/embedded"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// TestBenchGuideOnTerminalOnly: at a terminal, bench explains its table
// (a key line for each term), and names the next commands; with -q, or
// when stdout is not a terminal (a pipe, CI), it prints none of it.
func TestBenchGuideOnTerminalOnly(t *testing.T) {
	url := startMock(t, mock.Profile{TTFT: time.Millisecond, ITL: time.Millisecond, Tokens: 4, TokensPerEvent: 1})
	suite := writeBenchSuite(t, "30s")
	bench := func(extra ...string) string {
		args := append([]string{"bench", "--url", url, "--suite", suite, "-n", "2", "--warmup", "0", "--out", t.TempDir(), "--no-history"}, extra...)
		text, code := cliRun(t, args...)
		if code != exitOK {
			t.Fatalf("exit %d:\n%s", code, text)
		}
		return text
	}
	if text := bench(); strings.Contains(text, "key (times in ms)") {
		t.Errorf("the guide was printed to a pipe:\n%s", text)
	}
	defer func(f func(io.Writer) bool) { isTerminal = f }(isTerminal)
	isTerminal = func(io.Writer) bool { return true }
	text := bench()
	for _, want := range []string{"key (times in ms)", "vis ttft", "tok/event", "gap max is the worst stall", "goodput", "server's own account",
		"tokenpulse report ", "--report html", "--url http://HOST:PORT"} {
		if !strings.Contains(text, want) {
			t.Errorf("the terminal run lacks %q:\n%s", want, text)
		}
	}
	if strings.Count(text, "key (times in ms)") != 1 || strings.Contains(text, "toy model") {
		t.Errorf("the key is printed once and the mock is no toy model:\n%s", text)
	}
	if text := bench("-q"); strings.Contains(text, "key (times in ms)") {
		t.Errorf("-q printed the guide:\n%s", text)
	}
}

// TestGuideNamesTheToyModel: figures of the bundled model say so.
func TestGuideNamesTheToyModel(t *testing.T) {
	var b bytes.Buffer
	run := &runfile.Run{Target: runfile.Target{Model: embedded.BundledName}}
	if err := writeGuide(&b, run, "runs/x", []string{"html"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"figures of a 260K-parameter toy model; give --model FILE or --url for a real one", "open runs/x/report.html"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("guide lacks %q:\n%s", want, b.String())
		}
	}
}
