package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/internal/mock"
	"github.com/tokenpulse/tokenpulse/internal/pgtest"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// cliHelper, set in the environment, makes the test binary run the
// tokenpulse command line instead of the tests: a real process the tests
// can kill.
const cliHelper = "TOKENPULSE_TEST_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(cliHelper) != "" {
		os.Exit(run(os.Args[1:]))
	}
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}

// journalLines returns the complete lines of the journal at path (0 when
// it does not exist yet).
func journalLines(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return bytes.Count(b, []byte("\n"))
}

// TestBenchKilledKeepsItsJournal kills (SIGKILL) a bench process after
// it finished a few requests: its run directory keeps the journal, from
// which report and compare rebuild the run, marked interrupted, judged
// again; a torn last line is ignored with a note.
func TestBenchKilledKeepsItsJournal(t *testing.T) {
	url := startMock(t, mock.Profile{TTFT: 5 * time.Millisecond, ITL: 20 * time.Millisecond, Tokens: 10, TokensPerEvent: 1})
	dir := filepath.Join(t.TempDir(), "run") // bench must create it
	journal := filepath.Join(dir, runfile.JournalFile)
	cmd := exec.Command(os.Args[0], "bench", "--url", url, "--suite", writeBenchSuite(t, "30s"), "-n", "60", "-c", "2",
		"--warmup", "1", "--cold", "--tier", "mainstream", "--out", dir, "--no-history", "-q")
	cmd.Env = append(os.Environ(), cliHelper+"=1", "XDG_DATA_HOME="+t.TempDir())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// The header, then at least 3 finished requests.
	for journalLines(journal) < 1+3 {
		select {
		case err := <-exited:
			t.Fatalf("bench ended (%v) before its journal held 3 requests (%d lines):\n%s", err, journalLines(journal), out.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-exited
	if _, err := os.Stat(filepath.Join(dir, "run.json")); err == nil {
		t.Fatalf("the killed run wrote run.json; the test wants it killed before:\n%s", out.String())
	}
	n := journalLines(journal) - 1

	var notes bytes.Buffer
	run, err := loadRun(dir, &notes)
	if err != nil {
		t.Fatalf("rebuilding the killed run: %v", err)
	}
	if len(run.Requests) != n || n < 3 {
		t.Fatalf("rebuilt %d requests, the journal holds %d", len(run.Requests), n)
	}
	if !run.Interrupted || !strings.Contains(strings.Join(run.Warnings, "\n"), "rebuilt from the journal") {
		t.Errorf("rebuilt run: interrupted %v, warnings %q", run.Interrupted, run.Warnings)
	}
	if !strings.Contains(notes.String(), "rebuilt the run from its journal") {
		t.Errorf("stderr does not say the run was rebuilt: %q", notes.String())
	}
	for i, r := range run.Requests {
		if r.Index != i || !r.OK() || len(r.TokenTimesNS) == 0 {
			t.Errorf("request %d: index %d, error %q, %d tokens", i, r.Index, r.Error, len(r.TokenTimesNS))
		}
	}
	if !run.Requests[0].Cold || !run.Requests[1].Warmup {
		t.Errorf("first requests: cold %v, warm-up %v", run.Requests[0].Cold, run.Requests[1].Warmup)
	}
	if got := run.Summary.Overall.Requests; got != n-2 {
		t.Errorf("summary counts %d warm requests, want %d", got, n-2)
	}
	var sources []string
	for _, v := range run.Verdicts {
		sources = append(sources, v.Source)
	}
	if s := strings.Join(sources, " "); !strings.Contains(s, "flag") || !strings.Contains(s, "tier:mainstream") {
		t.Errorf("verdict sources %q: want the error budget (flag) and the tier judged again", s)
	}

	text, code := cliRun(t, "report", dir)
	if code != exitOK || !strings.Contains(text, "rebuilt") {
		t.Errorf("report DIR: exit %d:\n%s", code, text)
	}
	if text, code := cliRun(t, "report", journal, "--format", "junit"); code != exitOK || !strings.Contains(text, "<testsuite") {
		t.Errorf("report JOURNAL: exit %d:\n%s", code, text)
	}
	if text, code := cliRun(t, "compare", dir, dir); code != exitOK || !strings.Contains(text, "comparing against") {
		t.Errorf("compare DIR DIR: exit %d:\n%s", code, text)
	}

	// The process died in the middle of a line.
	f, err := os.OpenFile(journal, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"phase":"measure","slot":59,"at":"2026-`)
	f.Close()
	notes.Reset()
	torn, err := loadRun(dir, &notes)
	if err != nil {
		t.Fatalf("a torn last line failed the rebuild: %v", err)
	}
	if len(torn.Requests) != n || !strings.Contains(notes.String(), "last line") {
		t.Errorf("torn journal: %d requests (want %d), notes %q", len(torn.Requests), n, notes.String())
	}
	if text, code := cliRun(t, "report", dir); code != exitOK {
		t.Errorf("report DIR with a torn journal: exit %d:\n%s", code, text)
	}
}

// TestBenchRemovesJournalWhenDone: a run that ends writes run.json and
// removes its journal, which run.json now holds all of; report and
// compare read the directory's run.json.
func TestBenchRemovesJournalWhenDone(t *testing.T) {
	url := startMock(t, mock.Profile{TTFT: time.Millisecond, ITL: time.Millisecond, Tokens: 4, TokensPerEvent: 1})
	dir := filepath.Join(t.TempDir(), "run")
	if text, code := cliRun(t, "bench", "--url", url, "--suite", writeBenchSuite(t, "30s"), "-n", "3", "--warmup", "0",
		"--out", dir, "--no-history", "-q"); code != exitOK {
		t.Fatalf("exit %d:\n%s", code, text)
	}
	if _, err := os.Stat(filepath.Join(dir, runfile.JournalFile)); err == nil {
		t.Error("the journal stayed after run.json was written")
	}
	// report and compare take the run directory, and read its run.json.
	if text, code := cliRun(t, "report", dir); code != exitOK || strings.Contains(text, "rebuilt") || !strings.Contains(text, "3 requests") {
		t.Errorf("report DIR of a finished run: exit %d:\n%s", code, text)
	}
	if text, code := cliRun(t, "compare", dir, filepath.Join(dir, "run.json")); code != exitOK {
		t.Errorf("compare DIR RUN.json: exit %d:\n%s", code, text)
	}
}

// TestBenchHistoryFailureKeepsRunFile: a history that cannot be written
// fails the command (exit 1), but the run file is written first, and the
// message says where it is.
func TestBenchHistoryFailureKeepsRunFile(t *testing.T) {
	url := startMock(t, mock.Profile{TTFT: time.Millisecond, ITL: time.Millisecond, Tokens: 4, TokensPerEvent: 1})
	tmp := t.TempDir()
	notDir := filepath.Join(tmp, "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "run")
	text, code := cliRun(t, "bench", "--url", url, "--suite", writeBenchSuite(t, "30s"), "-n", "2", "--warmup", "0",
		"--out", dir, "--history", filepath.Join(notDir, "history.db"), "-q")
	runPath := filepath.Join(dir, "run.json")
	if code != exitFailure || !strings.Contains(text, "the run is safe in its run file "+runPath) {
		t.Errorf("exit %d, want 1 with a message naming the safe run file:\n%s", code, text)
	}
	if _, err := runfile.Load(runPath); err != nil {
		t.Errorf("the run file is not there: %v", err)
	}
}
