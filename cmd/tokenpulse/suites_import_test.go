package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/suite"
)

// runImportCmd runs the root command with args, standard output and
// standard error apart.
func runImportCmd(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	root := newRoot()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	err = root.Execute()
	return out.String(), errOut.String(), err
}

func importExitCode(err error) int {
	var ee *exitError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		return ee.code
	case isUsage(err):
		return exitUsage
	}
	return exitFailure
}

func suitesImportFixture(name string) string {
	return filepath.Join("..", "..", "suite", "testdata", "import", name)
}

func TestSuitesImport(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		file   string
		format string
		want   []string // in standard error
	}{
		{"traffic.jsonl", "jsonl", []string{
			"tokenpulse: warning: " + suitesImportFixture("traffic.jsonl") + ":9: invalid JSON",
			"traffic.jsonl:13: \"prompt\" is a number, not a string",
			"traffic.jsonl:14: messages: no user turn",
			"traffic.jsonl:15: not a JSON object",
			"(jsonl): 18 rows read, 4 bad; 14 prompts, 9 kept\n",
			"dropped: 1 empty, 3 exact duplicates, 1 near duplicates (Jaccard ≥ 0.9), 4 bad rows\n",
			"masked in the kept prompts: 4 [PHONE], 1 [EMAIL], 1 [ID], 1 [CARD]\n",
			"categories by length: short 5 (55.56%), long 3 (33.33%), complex 1 (11.11%)\n",
		}},
		{"traffic.json", "sharegpt", []string{
			"traffic.json: [2] (line 11): no \"prompt\"",
			"traffic.json: [3] (line 12): conversations: a string, not a list",
			"(sharegpt): 7 rows read, 3 bad; 4 prompts, 3 kept\n", // the two-turn conversation is one prompt
			"masked in the kept prompts: 1 [PHONE], 1 [EMAIL], 0 [ID], 1 [CARD]\n",
		}},
		{"traffic.csv", "csv", []string{
			"traffic.csv:6: bare \" in non-quoted-field",
			"traffic.csv:7: 1 fields, no prompt column",
			"(csv): 9 rows read, 2 bad; 7 prompts, 5 kept\n",
		}},
	} {
		t.Run(tt.format, func(t *testing.T) {
			out := filepath.Join(dir, tt.format+".yaml")
			stdout, stderr, err := runImportCmd(t, "suites", "import", suitesImportFixture(tt.file), "-o", out, "--name", "traffic-"+tt.format)
			if err != nil {
				t.Fatalf("exit %d: %v\n%s", importExitCode(err), err, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout should be empty with -o, got %q", stdout)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			// bench loads it as it loads any suite file.
			s, err := suite.Resolve(out, suite.Validate(validateThreshold))
			if err != nil {
				t.Fatalf("bench would refuse the suite: %v", err)
			}
			if s.Name != "traffic-"+tt.format || len(s.Prompts()) == 0 {
				t.Errorf("suite %q with %d prompts", s.Name, len(s.Prompts()))
			}
			data, _ := os.ReadFile(out)
			for _, pii := range []string{"13812345678", "11010519491231002X", "4111 1111 1111 1111", "5500 0000 0000 0004", "123-45-6789", "example.com", "example.cn", "6222021234567891233", "010-12345678"} {
				if bytes.Contains(data, []byte(pii)) {
					t.Errorf("the suite file holds %q", pii)
				}
			}
			if !bytes.HasPrefix(data, []byte("# Imported by \"tokenpulse suites import\" from "+tt.file)) {
				t.Errorf("no header comment:\n%s", data)
			}
		})
	}
}

func TestSuitesImportStdoutAndAlias(t *testing.T) {
	// "suite import" works too; without -o the suite goes to stdout, the
	// summary to stderr.
	stdout, stderr, err := runImportCmd(t, "suite", "import", suitesImportFixture("traffic.csv"), "--label-field", "intent")
	if err != nil {
		t.Fatal(err)
	}
	s, err := suite.Parse("stdout.yaml", []byte(stdout), suite.Validate(validateThreshold))
	if err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if len(s.Categories) != 4 || s.Categories[0].Name != "billing" || s.Categories[0].Weight != 40 {
		t.Errorf("categories %+v", s.Categories)
	}
	if !strings.Contains(stderr, "categories by label: billing 2 (40%), account 1 (20%), shipping 1 (20%), unlabelled 1 (20%)") {
		t.Errorf("stderr:\n%s", stderr)
	}
	if strings.Contains(stdout, "warning") || strings.Contains(stderr, "name: traffic") {
		t.Error("suite and summary mixed up")
	}
}

func TestSuitesImportErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte("nope\n{\"prompt\": \"\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		code int
		want string // in the error or stderr
	}{
		{"no usable row", []string{bad}, exitFailure, "no usable prompt"},
		{"missing file", []string{filepath.Join(dir, "none.csv")}, exitFailure, "no such file"},
		{"bad format", []string{bad, "--format", "xml"}, exitUsage, `--format "xml"`},
		{"bad category-by", []string{bad, "--category-by", "colour"}, exitUsage, "--category-by"},
		{"bad turns", []string{bad, "--turns", "last"}, exitUsage, "--turns"},
		{"bad near-dup", []string{bad, "--near-dup", "2"}, exitUsage, "--near-dup"},
		{"bad name", []string{bad, "--name", "my suite"}, exitUsage, "--name"},
		{"bad buckets", []string{bad, "--long-from", "20", "--complex-from", "10"}, exitUsage, "--long-from"},
		{"bad prompt bound", []string{bad, "--max-prompt-bytes", "0"}, exitUsage, "--max-prompt-bytes"},
		{"prompt bound over the most", []string{bad, "--max-prompt-bytes", "8388609"}, exitUsage, "--max-prompt-bytes"},
		{"no file", nil, exitUsage, "accepts 1 arg"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, err := runImportCmd(t, append([]string{"suites", "import"}, tt.args...)...)
			if got := importExitCode(err); got != tt.code {
				t.Errorf("exit %d, want %d (%v)", got, tt.code, err)
			}
			if err == nil || !strings.Contains(err.Error()+stderr, tt.want) {
				t.Errorf("got %v\n%s\nwant %q", err, stderr, tt.want)
			}
		})
	}
	// The bad rows are still listed when nothing is usable.
	_, stderr, _ := runImportCmd(t, "suites", "import", bad)
	if !strings.Contains(stderr, "bad.jsonl:1: invalid JSON") || !strings.Contains(stderr, "2 rows read, 1 bad; 1 prompts, 0 kept") {
		t.Errorf("stderr:\n%s", stderr)
	}
}

// TestSuitesImportOversize imports a prompt of twice the default bound
// (512 KiB) and a line of four times that again: each is refused with its
// line, the rest imported, and the suite written loads.
func TestSuitesImportOversize(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "big.jsonl")
	const bound = 512 << 10
	data := `{"prompt": "What is a heat pump?"}` + "\n" +
		`{"prompt": "` + strings.Repeat("x", 2*bound) + `"}` + "\n" +
		`{"prompt": "` + strings.Repeat("y", 8*bound) + `"}` + "\n" +
		`{"prompt": "How do I bleed a radiator?"}` + "\n"
	if err := os.WriteFile(in, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "big.yaml")
	_, stderr, err := runImportCmd(t, "suites", "import", in, "-o", out)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	for _, want := range []string{
		"big.jsonl:2: a prompt of 1048576 bytes, more than 524288 (--max-prompt-bytes)",
		"big.jsonl:3: line of 4194319 bytes, more than 2097152 (524288 a prompt, --max-prompt-bytes)",
		"4 rows read, 2 bad; 2 prompts, 2 kept",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if st, err := os.Stat(out); err != nil || st.Size() > 4096 {
		t.Errorf("suite written: %v, %v", st, err)
	}
	// A larger bound takes the long prompt.
	if _, stderr, err := runImportCmd(t, "suites", "import", in, "-o", out, "--max-prompt-bytes", "1048576"); err != nil || !strings.Contains(stderr, "4 rows read, 1 bad; 3 prompts, 3 kept") {
		t.Errorf("--max-prompt-bytes 1048576: %v\n%s", err, stderr)
	}
}
