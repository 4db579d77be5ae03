package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runSuitesCmd runs the root command with args and returns its output.
func runSuitesCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRoot()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

func TestSuitesList(t *testing.T) {
	out, err := runSuitesCmd(t, "suites")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"SUITE", "THRESHOLDS",
		"en-assistant  en", "zh-medical    zh-CN",
		"short     45 (45%)", "long      35 (35%)", "complex   20 (20%)",
		"ttft.p95 < 250ms", "gap.p95 <= 90ms", "gap.max <= 120ms",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if got, want := strings.Count(out, "\n"), 1+3+3; got != want {
		t.Errorf("got %d lines, want %d:\n%s", got, want, out)
	}
}

func TestSuitesShow(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "mine.yaml")
	writeSuiteFile(t, good, `name: mine
language: en
categories:
  - name: quick
    weight: 2
    max_tokens: 16
    thresholds: ["ttft.p95 < 1s"]
    prompts:
      - {id: q1, text: "What is\n  up?"}
      - {id: q2, text: Hi, max_tokens: 4, language: fr}
`)
	bad := filepath.Join(dir, "bad.yaml")
	writeSuiteFile(t, bad, "name: bad\nlanguage: en\ncategories:\n  - {name: a, weight: 0, prompts: [{id: a1, text: hi}]}\n")

	t.Run("file", func(t *testing.T) {
		out, err := runSuitesCmd(t, "suites", "show", good)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"source:   " + good, "quick  weight 2 (100%)  max_tokens 16  2 prompts  thresholds: ttft.p95 < 1s", "q1  What is up?\n", "q2  Hi  [language fr, max_tokens 4]"} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
	})
	t.Run("builtin", func(t *testing.T) {
		out, err := runSuitesCmd(t, "suites", "show", "zh-medical")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, "short-child-fever") || !strings.Contains(out, "孩子发烧") {
			t.Errorf("output lacks the first prompt:\n%s", out)
		}
	})
	t.Run("sample", func(t *testing.T) {
		out, err := runSuitesCmd(t, "suites", "show", "en-assistant", "--sample", "20", "--seed", "4")
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if got, want := len(lines), 21; got != want {
			t.Fatalf("got %d lines, want a header and 20 prompts:\n%s", got, out)
		}
		counts := map[string]int{}
		for _, l := range lines[1:] {
			counts[strings.Fields(l)[1]]++
		}
		if counts["short"] != 9 || counts["long"] != 7 || counts["complex"] != 4 {
			t.Errorf("got categories %v, want short 9, long 7, complex 4", counts)
		}
	})
	t.Run("bad file is a usage error", func(t *testing.T) {
		_, err := runSuitesCmd(t, "suites", "show", bad)
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != exitUsage {
			t.Fatalf("got %v, want an exit code %d", err, exitUsage)
		}
		if want := bad + ":4: categories[0].weight: must be > 0"; err.Error() != want {
			t.Errorf("got %q, want %q", err, want)
		}
	})
	t.Run("unknown name is a usage error", func(t *testing.T) {
		_, err := runSuitesCmd(t, "suites", "show", "nope")
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != exitUsage {
			t.Fatalf("got %v, want an exit code %d", err, exitUsage)
		}
	})
}

func writeSuiteFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
