package suite

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode"
)

func TestNames(t *testing.T) {
	if got, want := Names(), []string{"en-assistant", "zh-medical"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestBuiltins checks the shape the issue asks of both builtin suites:
// three categories (short 45, long 35, complex 20) with their thresholds,
// at least 30 distinct prompts each, unique ids, the right language.
func TestBuiltins(t *testing.T) {
	type catWant struct {
		name      string
		weight    float64
		threshold string
		maxTokens int
	}
	cats := []catWant{
		{"short", 45, "ttft.p95 < 250ms", 64},
		{"long", 35, "gap.p95 <= 90ms", 256},
		{"complex", 20, "gap.max <= 120ms", 384},
	}
	tests := []struct {
		name     string
		language string
		script   func(string) bool // the prompt is written in the suite's language
	}{
		{"zh-medical", "zh-CN", hasHan},
		{"en-assistant", "en", func(s string) bool { return !hasHan(s) && strings.IndexFunc(s, unicode.IsLetter) >= 0 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var seenThresholds []string
			s, err := Builtin(tt.name, Validate(func(expr string) error {
				seenThresholds = append(seenThresholds, expr)
				return nil
			}))
			if err != nil {
				t.Fatalf("Builtin: %v", err)
			}
			if s.Name != tt.name || s.Language != tt.language || s.Source != "builtin:"+tt.name {
				t.Errorf("got name %q language %q source %q, want %q %q builtin:%s", s.Name, s.Language, s.Source, tt.name, tt.language, tt.name)
			}
			if s.Description == "" || s.Defaults.System == "" {
				t.Errorf("description %q and system prompt %q must be set", s.Description, s.Defaults.System)
			}
			if got, want := len(seenThresholds), 3; got != want {
				t.Errorf("validated %d thresholds, want %d", got, want)
			}
			if got, want := len(s.Categories), len(cats); got != want {
				t.Fatalf("got %d categories, want %d", got, want)
			}
			ids, texts := map[string]bool{}, map[string]string{}
			for i, want := range cats {
				c := s.Categories[i]
				if c.Name != want.name || c.Weight != want.weight || c.MaxTokens != want.maxTokens {
					t.Errorf("category %d: got %s weight %v max_tokens %d, want %s %v %d", i, c.Name, c.Weight, c.MaxTokens, want.name, want.weight, want.maxTokens)
				}
				if !reflect.DeepEqual(c.Thresholds, []string{want.threshold}) {
					t.Errorf("%s thresholds: got %q, want [%q]", c.Name, c.Thresholds, want.threshold)
				}
				if len(c.Prompts) < 30 {
					t.Errorf("%s: got %d prompts, want at least 30", c.Name, len(c.Prompts))
				}
				for _, p := range c.Prompts {
					if ids[p.ID] {
						t.Errorf("duplicate id %q", p.ID)
					}
					ids[p.ID] = true
					if prev, dup := texts[p.Text]; dup {
						t.Errorf("%s repeats the text of %s: %q", p.ID, prev, p.Text)
					}
					texts[p.Text] = p.ID
					if !strings.HasPrefix(p.ID, c.Name+"-") {
						t.Errorf("id %q should start with its category %q", p.ID, c.Name+"-")
					}
					if !tt.script(p.Text) {
						t.Errorf("%s: %q is not in %s", p.ID, p.Text, tt.language)
					}
					if strings.ContainsAny(p.Text, "\n\r") {
						t.Errorf("%s: prompt text spans lines", p.ID)
					}
					if p.Category != c.Name || p.MaxTokens != c.MaxTokens || p.Language != tt.language || p.System != s.Defaults.System {
						t.Errorf("%s: inherited fields wrong: %+v", p.ID, p)
					}
				}
			}
			// Short questions are short, comparisons the longest.
			if a, b, c := meanRunes(s.Categories[0]), meanRunes(s.Categories[1]), meanRunes(s.Categories[2]); !(a < b && a < c) {
				t.Errorf("mean prompt length short %.0f, long %.0f, complex %.0f: short should be shortest", a, b, c)
			}
		})
	}
}

func hasHan(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return unicode.Is(unicode.Han, r) }) >= 0
}

func meanRunes(c Category) float64 {
	total := 0
	for _, p := range c.Prompts {
		total += len([]rune(p.Text))
	}
	return float64(total) / float64(len(c.Prompts))
}

func TestBuiltinSampleHundred(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			s, err := Builtin(name)
			if err != nil {
				t.Fatal(err)
			}
			got := countBy(s.Sample(100, 1), byCategory)
			if want := map[string]int{"short": 45, "long": 35, "complex": 20}; !reflect.DeepEqual(got, want) {
				t.Errorf("got %v, want %v", got, want)
			}
		})
	}
}

func TestBuiltinUnknown(t *testing.T) {
	_, err := Builtin("fr-legal")
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("got %v, want ErrNotFound", err)
	}
	if got, want := err.Error(), `suite "fr-legal" is not a builtin (en-assistant, zh-medical): no such suite`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if _, err := Builtin("../suite"); !errors.Is(err, ErrNotFound) {
		t.Errorf("path-like name: got %v, want ErrNotFound", err)
	}
}

func TestResolve(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "mine.yaml")
	if err := os.WriteFile(file, []byte(small), 0o644); err != nil {
		t.Fatal(err)
	}
	// A file named like a builtin in the working directory.
	t.Chdir(dir)
	if err := os.WriteFile("zh-medical", []byte(small), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("plain", []byte(small), 0o644); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		arg        string
		wantSource string
		wantErr    error
	}{
		{"zh-medical", "builtin:zh-medical", nil}, // builtin wins over ./zh-medical
		{"./zh-medical", "./zh-medical", nil},     // unless written as a path
		{file, file, nil},
		{"mine.yaml", "mine.yaml", nil},
		{"plain", "plain", nil}, // not a builtin, but a file
		{"nope", "", ErrNotFound},
		{"nope.yaml", "", fs.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.arg, func(t *testing.T) {
			s, err := Resolve(tt.arg)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("got %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Source != tt.wantSource {
				t.Errorf("got source %q, want %q", s.Source, tt.wantSource)
			}
		})
	}
}

func TestResolvePassesOptions(t *testing.T) {
	_, err := Resolve("en-assistant", Validate(func(expr string) error {
		if strings.HasPrefix(expr, "gap.max") {
			return errBadThreshold
		}
		return nil
	}))
	if !errors.Is(err, errBadThreshold) {
		t.Fatalf("got %v, want errBadThreshold", err)
	}
	if !strings.HasPrefix(err.Error(), "builtin:en-assistant:") || !strings.Contains(err.Error(), "categories[2].thresholds[0]") {
		t.Errorf("got %q, want it located in builtin:en-assistant at categories[2].thresholds[0]", err)
	}
}
