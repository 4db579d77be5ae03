package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
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

// TestGuideNextCommandsWork: the report command the guide suggests
// writes the HTML report into the run's directory (not HTML onto the
// terminal), and the suggestions' descriptions line up whatever the
// directory's length.
func TestGuideNextCommandsWork(t *testing.T) {
	url := startMock(t, mock.Profile{TTFT: time.Millisecond, ITL: time.Millisecond, Tokens: 4, TokensPerEvent: 1})
	dir := filepath.Join(t.TempDir(), "a-rather-long-directory-name-for-the-runs", "20261203-101010")
	if text, code := cliRun(t, "bench", "--url", url, "--suite", writeBenchSuite(t, "30s"), "-n", "2", "--warmup", "0", "--out", dir, "--no-history", "-q"); code != exitOK {
		t.Fatalf("exit %d:\n%s", code, text)
	}
	run, err := runfile.Load(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := writeGuide(&b, run, dir, nil); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	at := slices.Index(lines, "next")
	if at < 0 || at+3 >= len(lines) {
		t.Fatalf("no next commands:\n%s", b.String())
	}
	next := lines[at+1 : at+4]
	col := -1
	for _, l := range next {
		// The description starts after the command's two-space gap.
		cmd, _, ok := strings.Cut(strings.TrimPrefix(l, "  "), "   ")
		if !ok {
			t.Fatalf("line %q: no gap before its description", l)
		}
		c := len(cmd) + 2
		for c < len(l) && l[c] == ' ' {
			c++
		}
		if col >= 0 && c != col {
			t.Errorf("descriptions start at columns %d and %d:\n%s", col, c, strings.Join(next, "\n"))
		}
		col = c
	}
	args := strings.Fields(strings.TrimSpace(next[0][:strings.Index(next[0], "   ")]))
	if args[0] != "tokenpulse" || args[1] != "report" {
		t.Fatalf("first suggestion %q is not a report command", next[0])
	}
	text, code := cliRun(t, args[1:]...)
	if code != exitOK {
		t.Fatalf("%v: exit %d:\n%s", args, code, text)
	}
	if strings.Contains(text, "<html") || strings.Contains(text, "<!DOCTYPE") {
		t.Errorf("%v printed HTML to the terminal", args)
	}
	if _, err := os.Stat(filepath.Join(dir, "report.html")); err != nil {
		t.Errorf("%v wrote no report.html into the run's directory: %v", args, err)
	}
}
