package tokenizer

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/internal/engine/gguf"
	"github.com/tokenpulse/tokenpulse/internal/fixture"
)

// open builds the tokenizer of a shared GGUF fixture.
func open(t testing.TB, rel string) *Tokenizer {
	t.Helper()
	f, err := gguf.Open(fixture.Path(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tok, err := FromGGUF(f)
	if err != nil {
		t.Fatalf("FromGGUF(%s): %v", rel, err)
	}
	return tok
}

// vectors reads llama.cpp's .inp/.out test vectors: the strings are split
// on the separator exactly as test-tokenizer-0 does, the ids one line per
// string.
func vectors(t *testing.T, base string) ([]string, [][]int32) {
	t.Helper()
	inp, err := os.ReadFile(base + ".inp")
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(base + ".out")
	if err != nil {
		t.Fatal(err)
	}
	const sep = "\n__ggml_vocab_test__\n"
	var texts []string
	for s := string(inp); s != ""; {
		i := strings.Index(s, sep)
		if i < 0 {
			texts = append(texts, s)
			break
		}
		texts = append(texts, s[:i])
		s = s[i+len(sep):]
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(texts) {
		t.Fatalf("%s: %d strings but %d id lines", base, len(texts), len(lines))
	}
	ids := make([][]int32, len(lines))
	for i, line := range lines {
		ids[i] = []int32{}
		for _, f := range strings.Fields(line) {
			n, err := strconv.ParseInt(f, 10, 32)
			if err != nil {
				t.Fatalf("%s line %d: %v", base, i+1, err)
			}
			ids[i] = append(ids[i], int32(n))
		}
	}
	return texts, ids
}

// TestLlamaCppVectors checks Encode id for id against llama.cpp's own
// tokenizer test vectors (no BOS, special tokens not parsed).
func TestLlamaCppVectors(t *testing.T) {
	for _, name := range []string{"llama-spm", "phi-3", "gpt-2"} {
		t.Run(name, func(t *testing.T) {
			rel := "models/tokenizers/ggml-vocab-" + name + ".gguf"
			tok := open(t, rel)
			texts, want := vectors(t, fixture.Path(t, rel))
			if len(texts) != 46 {
				t.Fatalf("got %d test strings, want 46", len(texts))
			}
			for i, text := range texts {
				got := tok.Encode(text, false, false)
				if !slices.Equal(got, want[i]) {
					t.Errorf("string %d %q:\n got %v\nwant %v", i+1, text, got, want[i])
				}
			}
		})
	}
}

// TestGreedyReference checks the prompt tokens and the decoded output of
// llama.cpp's greedy reference runs on stories260K.
func TestGreedyReference(t *testing.T) {
	tok := open(t, "models/stories260K.gguf")
	raw, err := os.ReadFile(fixture.Path(t, "models/reference/greedy.json"))
	if err != nil {
		t.Fatal(err)
	}
	var refs []struct {
		Prompt       string  `json:"prompt"`
		PromptTokens []int32 `json:"prompt_tokens"`
		OutputTokens []int32 `json:"output_tokens"`
		OutputText   string  `json:"output_text"`
	}
	if err := json.Unmarshal(raw, &refs); err != nil {
		t.Fatal(err)
	}
	if len(refs) == 0 {
		t.Fatal("no reference runs")
	}
	for i, r := range refs {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			if got := tok.Encode(r.Prompt, true, false); !slices.Equal(got, r.PromptTokens) {
				t.Errorf("Encode(%q) = %v, want %v", r.Prompt, got, r.PromptTokens)
			}
			if got := tok.Decode(r.OutputTokens); got != r.OutputText {
				t.Errorf("Decode = %q, want %q", got, r.OutputText)
			}
			dec := tok.NewStreamDecoder()
			var b strings.Builder
			for _, id := range r.OutputTokens {
				b.WriteString(dec.Next(id))
			}
			b.WriteString(dec.Flush())
			if got := b.String(); got != r.OutputText {
				t.Errorf("streamed %q, want %q", got, r.OutputText)
			}
		})
	}
}
