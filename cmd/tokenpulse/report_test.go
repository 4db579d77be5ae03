package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/internal/abtest"
	"github.com/tokenpulse/tokenpulse/report/reporttest"
)

// runReportCmd runs `tokenpulse report ARGS` and returns its stdout.
func runReportCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	root := newRoot()
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append([]string{"report"}, args...))
	err := root.Execute()
	return out.String(), err
}

func writeStallRun(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "run.json")
	if err := reporttest.StallRun().Write(path); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReportFormatsToStdout(t *testing.T) {
	path := writeStallRun(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"text by default", nil, "✗ gap.max <= 120ms"},
		{"html", []string{"--format", "html"}, `class="stall"`},
		{"junit", []string{"--format", "junit"}, `<testcase name="gap.max &lt;= 120ms" classname="category:complex"`},
		{"md", []string{"--format", "md"}, "## Reproduce"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := runReportCmd(t, append([]string{path}, tt.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(got, tt.want) {
				t.Errorf("output lacks %q", tt.want)
			}
		})
	}
}

func TestReportJUnitReRendersTheRun(t *testing.T) {
	got, err := runReportCmd(t, writeStallRun(t), "--format", "junit")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Failures int `xml:"failures,attr"`
	}
	if err := xml.Unmarshal([]byte(got), &doc); err != nil {
		t.Fatalf("junit output is not XML: %v", err)
	}
	if doc.Failures != 2 {
		t.Errorf("failures = %d, want 2", doc.Failures)
	}
}

func TestReportAllWritesFiles(t *testing.T) {
	path := writeStallRun(t)
	out := filepath.Join(t.TempDir(), "reports")
	stdout, err := runReportCmd(t, path, "--format", "all", "--out", out)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"report.html", "junit.xml", "methodology.md", "report.txt", "charts/timeline-7-complex-02.svg"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	if !strings.Contains(stdout, "wrote "+filepath.Join(out, "report.html")) {
		t.Errorf("stdout does not list report.html:\n%s", stdout)
	}
}

func TestReportMissingFileIsAFailure(t *testing.T) {
	// As for compare and the README's exit table: a file that cannot be
	// read is a failure (1), not an error of use (2).
	_, code := cliRun(t, "report", filepath.Join(t.TempDir(), "nope.json"))
	if code != exitFailure {
		t.Errorf("exit %d, want %d", code, exitFailure)
	}
}

func TestReportBadInput(t *testing.T) {
	dir := t.TempDir()
	notRun := filepath.Join(dir, "x.json")
	if err := os.WriteFile(notRun, []byte(`{"hello": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	run := writeStallRun(t)
	tests := []struct {
		name string
		args []string
	}{
		{"not a run file", []string{notRun}},
		{"unknown format", []string{run, "--format", "pdf"}},
		{"svg without out", []string{run, "--format", "svg"}},
		{"png without out", []string{run, "--png"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := runReportCmd(t, tt.args...)
			var ee *exitError
			if !errors.As(err, &ee) || ee.code != exitUsage {
				t.Errorf("err = %v, want a usage error (exit %d)", err, exitUsage)
			}
		})
	}
}

// TestReportAndCompareRefuseAbsurdRunFiles: a run file with a negative
// TTFT was reported, and compared as "ttft.p50 -5.00 ms improved", exit
// 0; both now refuse it with exit 2, naming the file and the request.
func TestReportAndCompareRefuseAbsurdRunFiles(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	if err := reporttest.StallRun().Write(good); err != nil {
		t.Fatal(err)
	}
	r := reporttest.StallRun()
	q := &r.Requests[3]
	q.TTFTNS, q.TokenTimesNS[0] = -5_000_000, -5_000_000
	bad := filepath.Join(dir, "bad.json")
	if err := r.Write(bad); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"report", bad}, {"compare", good, bad}, {"compare", bad, good}} {
		out, code := cliRun(t, args...)
		if code != exitUsage || !strings.Contains(out, bad) || !strings.Contains(out, "request 3 (id "+q.RequestID+"): ttft_ns") {
			t.Errorf("%q: exit %d (want %d), output:\n%s", args, code, exitUsage, out)
		}
	}
	if out, code := cliRun(t, "compare", good, good); code != exitOK {
		t.Errorf("compare of a sane run with itself: exit %d\n%s", code, out)
	}
}

// TestReportSaysStoredSummaryDiffers: report showed the stored summary's
// TTFT in its tables and one recomputed from the requests in the
// server's account, without saying that they differ.
func TestReportSaysStoredSummaryDiffers(t *testing.T) {
	r := reporttest.StallRun()
	path := filepath.Join(t.TempDir(), "run.json")
	if err := r.Write(path); err != nil {
		t.Fatal(err)
	}
	if out, err := runReportCmd(t, path); err != nil || strings.Contains(out, "stored summary") {
		t.Fatalf("a consistent run: err %v, output warns:\n%s", err, out)
	}
	stored := r.Summary.Overall.TTFTMs.P50
	r.Summary.Overall.TTFTMs.P50 = stored + 100
	if err := r.Write(path); err != nil {
		t.Fatal(err)
	}
	out, err := runReportCmd(t, path)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("overall ttft.p50 %.6g stored, %.6g from the requests", stored+100, stored)
	if strings.Count(out, want) < 2 { // stderr, and the report's warnings
		t.Errorf("output lacks %q on stderr and in the report:\n%s", want, out)
	}
}

// TestReportOnAnABDirectory: compare on an A/B directory points at its
// summary and its two runs instead of only saying run.json is missing.
func TestReportOnAnABDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, abtest.FileName), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	text, code := cliRun(t, "compare", dir, dir)
	if code != exitFailure || !strings.Contains(text, "is an A/B directory") || !strings.Contains(text, abtest.TextFileName) {
		t.Errorf("exit %d, want %d pointing at %s:\n%s", code, exitFailure, abtest.TextFileName, text)
	}
}

// TestReportRendersAnABDirectory: report on an A/B directory prints its
// summary and writes ab.html: B against A with each change's delta,
// p-value and the rule, readable without a script.
func TestReportRendersAnABDirectory(t *testing.T) {
	dir := t.TempDir()
	start := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	pa, ra := seededRun(t, dir, 1, 20, start)
	pb, rb := seededRun(t, dir, 2, 30, start.Add(time.Minute))
	sum := abtest.Summarize(abtest.NewSide("A", "a.gguf", pa, ra), abtest.NewSide("B", "b.gguf", pb, rb), ra, rb, abtest.Agreement{})
	if err := sum.Write(filepath.Join(dir, abtest.FileName)); err != nil {
		t.Fatal(err)
	}
	text, code := cliRun(t, "report", dir)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, text)
	}
	page, err := os.ReadFile(filepath.Join(dir, ABHTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	html := string(page)
	for _, want := range []string{"The rule applied", "a regression is worse", "b.gguf against a.gguf", "regressed", `class="chart deltas"`, "tpot"} {
		if !strings.Contains(html, want) {
			t.Errorf("ab.html lacks %q", want)
		}
	}
	if strings.Contains(html, "<script") {
		t.Error("ab.html has a script")
	}
}

// TestCompareWritesHTML: compare --report html writes the comparison's
// page beside the text it prints.
func TestCompareWritesHTML(t *testing.T) {
	dir := t.TempDir()
	start := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	base, _ := seededRun(t, dir, 1, 20, start)
	cur, _ := seededRun(t, dir, 2, 30, start.Add(time.Minute))
	out := filepath.Join(dir, "cmp.html")
	text, code := cliRun(t, "compare", base, cur, "--report", "html", "-o", out)
	if code != exitRegression {
		t.Fatalf("exit %d, want %d (gaps 20 -> 30 ms):\n%s", code, exitRegression, text)
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"The rule applied", "<th>p</th>", "<th>noise band</th>", `class="regressed"`, "comparing against " + base} {
		if !strings.Contains(string(page), want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if _, code := cliRun(t, "compare", base, cur, "--report", "pdf"); code != exitUsage {
		t.Errorf("--report pdf: exit %d, want %d", code, exitUsage)
	}
}
