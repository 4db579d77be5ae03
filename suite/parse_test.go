package suite

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/internal/didyoumean"
)

const small = `name: small
description: a small suite for tests
language: en
defaults:
  max_tokens: 100
  system: Be brief.
categories:
  - name: quick
    weight: 3
    max_tokens: 32
    description: one-liners
    thresholds:
      - "ttft.p95 < 250ms"
    prompts:
      - id: q1
        text: "  What time is it?  "
      - id: q2
        text: Why is the sky blue?
        language: en-GB
        system: Answer like a pirate.
        max_tokens: 8
  - name: slow
    weight: 1.5
    thresholds: ["gap.p95 <= 90ms", "gap.max <= 120ms"]
    prompts:
      - id: s1
        text: |
          Explain tides
          in detail.
`

func TestParseResolvesInheritance(t *testing.T) {
	s, err := Parse("small.yaml", []byte(small))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	want := &Suite{
		Name:        "small",
		Description: "a small suite for tests",
		Language:    "en",
		Defaults:    Defaults{MaxTokens: 100, System: "Be brief."},
		Source:      "small.yaml",
		Categories: []Category{
			{
				Name: "quick", Weight: 3, MaxTokens: 32, Description: "one-liners",
				Thresholds: []string{"ttft.p95 < 250ms"},
				Prompts: []Prompt{
					{ID: "q1", Text: "What time is it?", Language: "en", System: "Be brief.", MaxTokens: 32, Category: "quick"},
					{ID: "q2", Text: "Why is the sky blue?", Language: "en-GB", System: "Answer like a pirate.", MaxTokens: 8, Category: "quick"},
				},
			},
			{
				Name: "slow", Weight: 1.5, MaxTokens: 100,
				Thresholds: []string{"gap.p95 <= 90ms", "gap.max <= 120ms"},
				Prompts: []Prompt{
					{ID: "s1", Text: "Explain tides\nin detail.", Language: "en", System: "Be brief.", MaxTokens: 100, Category: "slow"},
				},
			},
		},
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("got  %+v\nwant %+v", s, want)
	}
	if got, want := len(s.Prompts()), 3; got != want {
		t.Errorf("Prompts(): got %d, want %d", got, want)
	}
	if got := s.Category("slow"); got == nil || got.Name != "slow" {
		t.Errorf("Category(slow): got %v", got)
	}
	if got := s.Category("nope"); got != nil {
		t.Errorf("Category(nope): got %v, want nil", got)
	}
}

// TestParseErrors feeds one malformed suite per case and checks the
// located message. Lines count from 1 at the first line of the text.
func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string // every error, in order
	}{
		{
			name: "zero weight",
			yaml: `name: x
language: en
categories:
  - name: a
    weight: 1
    prompts: [{id: a1, text: hi}]
  - name: b
    weight: 0
    prompts: [{id: b1, text: hi}]
`,
			want: []string{"x.yaml:8: categories[1].weight: must be > 0"},
		},
		{
			name: "negative weight",
			yaml: "name: x\nlanguage: en\ncategories:\n  - {name: a, weight: -2, prompts: [{id: a1, text: hi}]}\n",
			want: []string{"x.yaml:4: categories[0].weight: must be > 0"},
		},
		{
			name: "weight not a number",
			yaml: "name: x\nlanguage: en\ncategories:\n  - name: a\n    weight: heavy\n    prompts: [{id: a1, text: hi}]\n",
			want: []string{`x.yaml:5: categories[0].weight: must be a number, not "heavy"`},
		},
		{
			name: "weight infinite",
			yaml: "name: x\nlanguage: en\ncategories:\n  - name: a\n    weight: .inf\n    prompts: [{id: a1, text: hi}]\n",
			want: []string{`x.yaml:5: categories[0].weight: must be a finite number`},
		},
		{
			name: "weight missing",
			yaml: "name: x\nlanguage: en\ncategories:\n  - name: a\n    prompts: [{id: a1, text: hi}]\n",
			want: []string{"x.yaml:4: categories[0].weight: required"},
		},
		{
			name: "unknown field with suggestion",
			yaml: "name: x\nlanguage: en\ncategories:\n  - name: a\n    wieght: 2\n    weight: 2\n    prompts: [{id: a1, text: hi}]\n",
			want: []string{`x.yaml:5: categories[0].wieght: unknown field (did you mean "weight"?)`},
		},
		{
			name: "unknown field without suggestion",
			yaml: "name: x\nlanguage: en\ncolour: blue\ncategories:\n  - {name: a, weight: 1, prompts: [{id: a1, text: hi}]}\n",
			want: []string{"x.yaml:3: colour: unknown field"},
		},
		{
			name: "unknown prompt field",
			yaml: "name: x\nlanguage: en\ncategories:\n  - name: a\n    weight: 1\n    prompts:\n      - id: a1\n        text: hi\n        max_token: 5\n",
			want: []string{`x.yaml:9: categories[0].prompts[0].max_token: unknown field (did you mean "max_tokens"?)`},
		},
		{
			name: "duplicate field",
			yaml: "name: x\nname: y\nlanguage: en\ncategories:\n  - {name: a, weight: 1, prompts: [{id: a1, text: hi}]}\n",
			want: []string{"x.yaml:2: name: duplicate field (first at line 1)"},
		},
		{
			name: "duplicate id across categories",
			yaml: `name: x
language: en
categories:
  - name: a
    weight: 1
    prompts:
      - id: p1
        text: one
  - name: b
    weight: 1
    prompts:
      - id: p1
        text: two
`,
			want: []string{`x.yaml:12: categories[1].prompts[0].id: duplicate id "p1" (first at line 7)`},
		},
		{
			name: "duplicate category",
			yaml: "name: x\nlanguage: en\ncategories:\n  - {name: a, weight: 1, prompts: [{id: a1, text: hi}]}\n  - {name: a, weight: 1, prompts: [{id: a2, text: hi}]}\n",
			want: []string{`x.yaml:5: categories[1].name: duplicate category "a" (first at line 4)`},
		},
		{
			name: "empty prompt text",
			yaml: "name: x\nlanguage: en\ncategories:\n  - name: a\n    weight: 1\n    prompts:\n      - id: a1\n        text: \"   \"\n",
			want: []string{"x.yaml:8: categories[0].prompts[0].text: must not be empty"},
		},
		{
			name: "missing prompt text",
			yaml: "name: x\nlanguage: en\ncategories:\n  - name: a\n    weight: 1\n    prompts:\n      - id: a1\n",
			want: []string{"x.yaml:7: categories[0].prompts[0].text: required"},
		},
		{
			name: "empty prompt list",
			yaml: "name: x\nlanguage: en\ncategories:\n  - name: a\n    weight: 1\n    prompts: []\n",
			want: []string{"x.yaml:6: categories[0].prompts: must list at least one prompt"},
		},
		{
			name: "missing prompts",
			yaml: "name: x\nlanguage: en\ncategories:\n  - name: a\n    weight: 1\n",
			want: []string{"x.yaml:4: categories[0].prompts: required: a category needs at least one prompt"},
		},
		{
			name: "missing categories",
			yaml: "name: x\nlanguage: en\n",
			want: []string{"x.yaml:1: categories: required: a suite needs at least one category"},
		},
		{
			name: "empty categories",
			yaml: "name: x\nlanguage: en\ncategories: []\n",
			want: []string{"x.yaml:3: categories: must list at least one category"},
		},
		{
			name: "categories not a list",
			yaml: "name: x\nlanguage: en\ncategories:\n  short: 1\n",
			want: []string{"x.yaml:4: categories: must be a list, not a mapping"},
		},
		{
			name: "prompt not a mapping",
			yaml: "name: x\nlanguage: en\ncategories:\n  - name: a\n    weight: 1\n    prompts:\n      - What is up?\n",
			want: []string{`x.yaml:7: categories[0].prompts[0]: must be a mapping of fields, not "What is up?"`},
		},
		{
			name: "missing name and language",
			yaml: "categories:\n  - {name: a, weight: 1, prompts: [{id: a1, text: hi}]}\n",
			want: []string{"x.yaml:1: name: required", "x.yaml:1: language: required"},
		},
		{
			name: "id with spaces",
			yaml: "name: x\nlanguage: en\ncategories:\n  - {name: a, weight: 1, prompts: [{id: a 1, text: hi}]}\n",
			want: []string{`x.yaml:4: categories[0].prompts[0].id: "a 1" must not contain spaces or control characters`},
		},
		{
			name: "max_tokens zero",
			yaml: "name: x\nlanguage: en\ncategories:\n  - name: a\n    weight: 1\n    max_tokens: 0\n    prompts: [{id: a1, text: hi}]\n",
			want: []string{"x.yaml:6: categories[0].max_tokens: must be > 0"},
		},
		{
			name: "max_tokens fractional",
			yaml: "name: x\nlanguage: en\ndefaults:\n  max_tokens: 12.5\ncategories:\n  - {name: a, weight: 1, prompts: [{id: a1, text: hi}]}\n",
			want: []string{`x.yaml:4: defaults.max_tokens: must be a whole number, not "12.5"`},
		},
		{
			name: "threshold not a string",
			yaml: "name: x\nlanguage: en\ncategories:\n  - name: a\n    weight: 1\n    thresholds:\n      - {ttft: 250}\n    prompts: [{id: a1, text: hi}]\n",
			want: []string{`x.yaml:7: categories[0].thresholds[0]: must be a threshold expression such as "ttft.p95 < 250ms", not a mapping`},
		},
		{
			name: "invalid YAML",
			yaml: "name: x\nlanguage: en\ncategories:\n  - name: a\n   weight: 1\n",
			// The YAML library places a block's syntax error at the line
			// where the block starts.
			want: []string{"x.yaml:3: invalid YAML: did not find expected '-' indicator"},
		},
		{
			name: "tab indentation",
			yaml: "name: x\nlanguage: en\ncategories:\n\t- name: a\n",
			want: []string{"x.yaml:4: invalid YAML: "},
		},
		{
			name: "empty file",
			yaml: "# nothing here\n",
			want: []string{"x.yaml: empty file: a suite needs a name, a language and categories"},
		},
		{
			name: "two documents",
			yaml: "name: x\nlanguage: en\ncategories:\n  - {name: a, weight: 1, prompts: [{id: a1, text: hi}]}\n---\nname: y\n",
			want: []string{"x.yaml:6: a suite file holds one YAML document; found a second"},
		},
		{
			name: "root is a list",
			yaml: "- name: x\n",
			want: []string{"x.yaml:1: suite: must be a mapping of fields, not a list"},
		},
		{
			name: "several errors at once",
			yaml: `name: x
language: en
categories:
  - name: a
    weight: 0
    promtps: []
    prompts:
      - id: a1
        text: ""
`,
			want: []string{
				`x.yaml:6: categories[0].promtps: unknown field (did you mean "prompts"?)`,
				"x.yaml:5: categories[0].weight: must be > 0",
				"x.yaml:9: categories[0].prompts[0].text: must not be empty",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse("x.yaml", []byte(tt.yaml))
			if err == nil {
				t.Fatalf("got suite %+v, want an error", s)
			}
			if s != nil {
				t.Errorf("got a suite alongside the error: %+v", s)
			}
			got := strings.Split(err.Error(), "\n")
			if len(got) != len(tt.want) {
				t.Fatalf("got %d errors:\n%s\nwant %d:\n%s", len(got), err, len(tt.want), strings.Join(tt.want, "\n"))
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tt.want[i]) || (!strings.HasSuffix(tt.want[i], ": ") && got[i] != tt.want[i]) {
					t.Errorf("error %d: got %q, want %q", i, got[i], tt.want[i])
				}
			}
			var e *Error
			if !errors.As(err, &e) || e.File != "x.yaml" {
				t.Errorf("errors.As(*Error): got %#v, want an *Error naming x.yaml", e)
			}
		})
	}
}

var errBadThreshold = errors.New("bad threshold")

func TestParseValidatesThresholds(t *testing.T) {
	var seen []string
	validate := func(expr string) error {
		seen = append(seen, expr)
		if strings.Contains(expr, "max") {
			return errBadThreshold
		}
		return nil
	}
	_, err := Parse("small.yaml", []byte(small), Validate(validate))
	if got, want := seen, []string{"ttft.p95 < 250ms", "gap.p95 <= 90ms", "gap.max <= 120ms"}; !reflect.DeepEqual(got, want) {
		t.Errorf("validated: got %q, want %q", got, want)
	}
	if got, want := err.Error(), `small.yaml:24: categories[1].thresholds[1]: "gap.max <= 120ms": bad threshold`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if !errors.Is(err, errBadThreshold) {
		t.Errorf("errors.Is(err, errBadThreshold) = false for %v", err)
	}

	if _, err := Parse("small.yaml", []byte(small), Validate(func(string) error { return nil })); err != nil {
		t.Errorf("all thresholds accepted: got %v", err)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mine.yaml")
	if err := os.WriteFile(path, []byte(small), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(path)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if s.Source != path || s.Name != "small" {
		t.Errorf("got Source %q Name %q, want %q and small", s.Source, s.Name, path)
	}

	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: x\nlanguage: en\ncategories: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Load(bad)
	if got, want := err.Error(), bad+":3: categories: must list at least one category"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}

	_, err = Load(filepath.Join(dir, "absent.yaml"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: got %v, want fs.ErrNotExist", err)
	}
}

func TestParseAliases(t *testing.T) {
	// Anchors and aliases are plain YAML and may share thresholds.
	data := `name: x
language: en
categories:
  - name: a
    weight: 1
    thresholds: &t ["ttft.p95 < 1s"]
    prompts: [{id: a1, text: hi}]
  - name: b
    weight: 1
    thresholds: *t
    prompts: [{id: b1, text: ho}]
`
	s, err := Parse("x.yaml", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.Categories[1].Thresholds, []string{"ttft.p95 < 1s"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestSuggest(t *testing.T) {
	tests := []struct{ in, want string }{
		{"wieght", "weight"},
		{"Weight", "weight"},
		{"tresholds", "thresholds"},
		{"x", ""},
		{"colour", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := didyoumean.Suggest(tt.in, categoryFields); got != tt.want {
				t.Errorf("suggest(%q): got %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestParseAliasBomb: aliases fanned out into millions of prompts are
// cut off, and the errors are capped.
func TestParseAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("name: x\nlanguage: en\ncategories:\n")
	b.WriteString("  - &c {name: a, weight: 1, thresholds: [&t x], prompts: [&p {id: a, text: hi}" + strings.Repeat(", *p", 2000) + "]}\n")
	for range 2000 {
		b.WriteString("  - *c\n")
	}
	_, err := Parse("bomb.yaml", []byte(b.String()))
	if err == nil {
		t.Fatal("got no error")
	}
	lines := strings.Split(err.Error(), "\n")
	if got, want := len(lines), maxErrors+1; got != want {
		t.Errorf("got %d error lines, want %d", got, want)
	}
	if last := lines[len(lines)-1]; !strings.HasSuffix(last, "more errors not shown") {
		t.Errorf("last line: got %q, want a count of the errors left out", last)
	}
	// The walk stops at the limit: past it, each further category costs
	// one threshold and one prompt check.
	p := &parser{file: "bomb.yaml"}
	p.suite([]byte(b.String()))
	if got, limit := p.items, maxItems+2*2001; got <= maxItems || got > limit {
		t.Errorf("walked %d prompts and thresholds, want just past %d (at most %d)", got, maxItems, limit)
	}
}

// TestDocExample keeps the example in docs/suite-format.md loadable and
// its inheritance rules true.
func TestDocExample(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "suite-format.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "```yaml\n")
	example, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("no ```yaml block in docs/suite-format.md")
	}
	s, err := Parse("suite-format.md", []byte(example))
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]Prompt{}
	for _, p := range s.Prompts() {
		byID[p.ID] = p
	}
	tests := []struct {
		id               string
		maxTokens        int
		language, system string
	}{
		{"quick-refund", 48, "en", "You are the support assistant of Example Shop. Be brief."},
		{"quick-hours", 48, "en-GB", "You are the support assistant of Example Shop. Be brief."},
		{"explain-warranty", 400, "en", "Answer in numbered steps."},
	}
	for _, tt := range tests {
		p := byID[tt.id]
		if p.MaxTokens != tt.maxTokens || p.Language != tt.language || p.System != tt.system {
			t.Errorf("%s: got max_tokens %d language %q system %q, want %d %q %q", tt.id, p.MaxTokens, p.Language, p.System, tt.maxTokens, tt.language, tt.system)
		}
	}
	if got, want := s.Category("explain").MaxTokens, 200; got != want {
		t.Errorf("explain max_tokens: got %d, want %d (from defaults)", got, want)
	}
}

// TestParseBounds holds that a suite file over MaxFileBytes, and a prompt
// or turn over MaxPromptBytes, are refused with a located error, as
// "bench --suite" loads them, instead of being parsed into gigabytes.
func TestParseBounds(t *testing.T) {
	long := strings.Repeat("x", MaxPromptBytes+1)
	for _, tc := range []struct{ data, want string }{
		{"name: x\nlanguage: en\ncategories:\n  - name: a\n    weight: 1\n    prompts:\n      - id: a1\n        text: " + long + "\n",
			"f.yaml:8: categories[0].prompts[0].text: 8388609 bytes, more than a prompt may hold (8388608)"},
		{"name: x\nlanguage: en\ncategories:\n  - name: a\n    weight: 1\n    prompts:\n      - id: a1\n        turns: [hi, " + long + "]\n",
			"f.yaml:8: categories[0].prompts[0].turns[1]: 8388609 bytes, more than a prompt may hold (8388608)"},
		{small + "# " + strings.Repeat("x", MaxFileBytes) + "\n",
			"f.yaml: more than 67108864 bytes (64 MiB): a suite file may hold no more; split it"},
	} {
		_, err := Parse("f.yaml", []byte(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want %q", err, tc.want)
		}
	}
	path := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(path, []byte(small+"# "+strings.Repeat("x", MaxFileBytes)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "a suite file may hold no more") {
		t.Errorf("Load: got %v", err)
	}
}
