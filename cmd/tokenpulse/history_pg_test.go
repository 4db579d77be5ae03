package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/internal/mock"
	"github.com/tokenpulse/tokenpulse/internal/pgtest"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// TestBenchHistoryServerGone: the PostgreSQL history goes away before
// bench records its run (stopped after the bench before it recorded). The
// run is safe in its run file, the message says so and names the
// history (without its password), and bench exits 1; the server back, the
// history holds the runs recorded while it was up, and --report html
// draws them.
func TestBenchHistoryServerGone(t *testing.T) {
	srv := pgtest.Start(t)
	url := srv.NewDatabase(t)
	url = strings.Replace(url, "postgres@", "postgres:s3cret@", 1) // trust auth ignores it
	target := startMock(t, mock.Profile{TTFT: 2 * time.Millisecond, ITL: 2 * time.Millisecond, Tokens: 6, TokensPerEvent: 1})
	suite := writeBenchSuite(t, "30s")
	bench := func(out string) (string, int) {
		return cliRun(t, "bench", "--url", target, "--suite", suite, "-n", "3", "--warmup", "0", "--out", out, "-q", "--history", url)
	}
	if out, code := bench(filepath.Join(t.TempDir(), "first")); code != exitOK || !strings.Contains(out, "recorded as run 1 in") {
		t.Fatalf("first bench: exit %d:\n%s", code, out)
	}
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "second")
	out, code := bench(dir)
	if code != exitFailure {
		t.Errorf("bench with the history gone: exit %d, want %d:\n%s", code, exitFailure, out)
	}
	for _, want := range []string{"the run is safe in its run file " + filepath.Join(dir, "run.json"), "recording the run in the history postgres://postgres:xxxxx@", "cannot reach the PostgreSQL history"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "s3cret") {
		t.Errorf("the password is printed:\n%s", out)
	}
	if run, err := runfile.Load(filepath.Join(dir, "run.json")); err != nil || len(run.Requests) != 3 {
		t.Errorf("run file after the history failed: %v", err)
	}
	out, code = cliRun(t, "history", "--history", url)
	if code != exitFailure || !strings.Contains(out, "cannot reach") {
		t.Errorf("history with the server gone: exit %d:\n%s", code, out)
	}
}

// TestHistoryImportAndTrendCLI: `history import` copies a SQLite history
// into PostgreSQL and says how many runs it copied and skipped; a second
// import copies nothing; `history --report html` draws the imported runs
// from PostgreSQL as from the file, and the --json listings agree.
func TestHistoryImportAndTrendCLI(t *testing.T) {
	url := pgtest.Database(t)
	file := filepath.Join(t.TempDir(), "history.db")
	target := startMock(t, mock.Profile{TTFT: 2 * time.Millisecond, ITL: 2 * time.Millisecond, Tokens: 6, TokensPerEvent: 1})
	suite := writeBenchSuite(t, "30s")
	for i := range 2 {
		if out, code := cliRun(t, "bench", "--url", target, "--suite", suite, "-n", "3", "--warmup", "0", "--out", filepath.Join(t.TempDir(), "r"), "-q", "--history", file); code != exitOK {
			t.Fatalf("bench %d: exit %d:\n%s", i, code, out)
		}
	}
	out, code := cliRun(t, "history", "import", file, "--history", url)
	if code != exitOK || !strings.Contains(out, "2 runs copied, 0 skipped") {
		t.Fatalf("import: exit %d:\n%s", code, out)
	}
	out, code = cliRun(t, "history", "import", file, "--history", url)
	if code != exitOK || !strings.Contains(out, "0 runs copied, 2 skipped") {
		t.Fatalf("second import: exit %d:\n%s", code, out)
	}
	t.Setenv("TOKENPULSE_HISTORY", url) // as a CI job sets it
	pgList, code := cliRun(t, "history", "--json")
	fileList, code2 := cliRun(t, "history", "--json", "--history", file)
	if code != exitOK || code2 != exitOK || strings.Count(pgList, `"ID"`) != 2 || strings.Count(fileList, `"ID"`) != 2 {
		t.Fatalf("listings: %d %d\n%s\n%s", code, code2, pgList, fileList)
	}
	for _, h := range []string{url, file} {
		page := filepath.Join(t.TempDir(), "trend.html")
		out, code = cliRun(t, "history", "--history", h, "--report", "html", "--out", page)
		b, err := os.ReadFile(page)
		if code != exitOK || err != nil || !strings.Contains(out, "trend of 2 runs") || strings.Count(string(b), "<figure>") != 6 {
			t.Errorf("trend page from %s: exit %d, %v:\n%s", h, code, err, out)
		}
	}
}
