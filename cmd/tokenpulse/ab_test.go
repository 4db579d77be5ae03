package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/internal/abtest"
	"github.com/tokenpulse/tokenpulse/internal/fixture"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// TestBenchABSameModel measures a model against itself: greedy outputs
// agree token for token, and both run files hold the same prompts.
func TestBenchABSameModel(t *testing.T) {
	q8 := fixture.Path(t, "models/stories260K-Q8_0.gguf")
	q4 := fixture.Path(t, "models/stories260K-Q4_0.gguf")
	out := t.TempDir()
	text, code := cliRun(t, "bench", "--model", q8, "--model-b", q8, "--suite", writeBenchSuite(t, "30s"), "-n", "4",
		"--warmup", "1", "--out", out, "-q")
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, text)
	}
	for _, want := range []string{"A/B: A = stories260K-Q8_0.gguf", "size: B/A = 1.000 (+0.0%)", "outputs: 4 of 4 identical (100%)", "tpot p95", "longest stall"} {
		if !strings.Contains(text, want) {
			t.Errorf("summary lacks %q:\n%s", want, text)
		}
	}
	var sum abtest.Summary
	b, err := os.ReadFile(filepath.Join(out, abtest.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.SizeRatio != 1 || sum.Agreement.Pairs != 4 || sum.Agreement.IdenticalShare != 1 || sum.A.SizeBytes == 0 {
		t.Errorf("ab.json: ratio %v, agreement %+v, size %d", sum.SizeRatio, sum.Agreement, sum.A.SizeBytes)
	}
	ra, err := runfile.Load(filepath.Join(out, "a", "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	rb, err := runfile.Load(filepath.Join(out, "b", "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ra.Requests) != len(rb.Requests) || ra.Config.Request == nil || ra.Config.Request.Temperature == nil || *ra.Config.Request.Temperature != 0 {
		t.Fatalf("run files: %d and %d requests, request options %+v: want the same count, greedy", len(ra.Requests), len(rb.Requests), ra.Config.Request)
	}
	// Each side is judged like a bench run (package runner): the suite's
	// thresholds and the error budget, with goodput.
	for _, r := range []*runfile.Run{ra, rb} {
		budget := false
		for _, v := range r.Verdicts {
			budget = budget || v.Rule == "errors.rate <= 1%"
		}
		if !budget || len(r.Verdicts) < 2 || r.Summary.Goodput == nil {
			t.Errorf("an A/B run file has verdicts %+v and goodput %v: want it judged, error budget included", r.Verdicts, r.Summary.Goodput)
		}
	}

	// Two quantisations: the summary names both sizes and their ratio.
	out2 := t.TempDir()
	text, code = cliRun(t, "bench", "--model", q8, "--model-b", q4, "--suite", writeBenchSuite(t, "30s"), "-n", "2",
		"--warmup", "0", "--out", out2, "-q")
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, text)
	}
	fa, _ := os.Stat(q8)
	fb, _ := os.Stat(q4)
	b, err = os.ReadFile(filepath.Join(out2, abtest.FileName))
	if err != nil {
		t.Fatal(err)
	}
	sum = abtest.Summary{}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if want := float64(fb.Size()) / float64(fa.Size()); sum.SizeRatio != want {
		t.Errorf("size ratio %v, want %v", sum.SizeRatio, want)
	}
}

func TestBenchABUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"bench", "--model-b", "b.gguf", "--url", "http://127.0.0.1:1"},
		{"bench", "--model-b", "/no/such/file.gguf"},
		{"bench", "--model-b", "b.gguf", "-c", "2"},
		{"bench", "--model-b", "b.gguf", "--rate", "2"},
		{"bench", "--model-b", "b.gguf", "--profile"},
		{"bench", "--model-b", "b.gguf", "--browser"},
	} {
		if text, code := cliRun(t, args...); code != exitUsage {
			t.Errorf("%q: exit %d, want %d\n%s", args, code, exitUsage, text)
		}
	}
	// --url is refused saying why and what to do instead.
	if text, code := cliRun(t, "bench", "--model-b", "b.gguf", "--url", "http://127.0.0.1:1"); code != exitUsage || !strings.Contains(text, "tokenpulse compare") {
		t.Errorf("--model-b with --url: exit %d, want %d pointing to compare:\n%s", code, exitUsage, text)
	}
	// A missing model file names the flag that gave it.
	if text, code := cliRun(t, "bench", "--model-b", "/no/such/file.gguf"); code != exitUsage || !strings.Contains(text, "--model-b: ") {
		t.Errorf("missing --model-b file: exit %d, want %d naming --model-b:\n%s", code, exitUsage, text)
	}
}
