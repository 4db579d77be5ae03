package trace

import (
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/internal/fixture"
	"github.com/tokenpulse/tokenpulse/tokencount"
)

// vocabularies are the tokenizers prompts are checked against: the
// bundled SentencePiece one and the GGUF fixtures of other families.
func vocabularies(t *testing.T) map[string]*tokencount.Counter {
	t.Helper()
	out := map[string]*tokencount.Counter{}
	b, err := tokencount.Bundled()
	if err != nil {
		t.Fatal(err)
	}
	out["bundled"] = b
	for _, name := range []string{"ggml-vocab-gpt-2.gguf", "ggml-vocab-llama-spm.gguf", "ggml-vocab-phi-3.gguf"} {
		c, err := tokencount.Open(fixture.Path(t, "models/tokenizers/"+name))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		out[name] = c
	}
	return out
}

func TestPromptLengthsExact(t *testing.T) {
	for name, tok := range vocabularies(t) {
		p, err := NewPrompter(tok, 7)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, n := range []int{1, 2, 3, 17, 511, 512, 513, 1000, 1536, 2100} {
			e := Entry{Line: n, Input: n, HashIDs: []int64{11, 12}}
			text, err := p.Prompt(e)
			if err != nil {
				t.Fatalf("%s, %d tokens: %v", name, n, err)
			}
			if got := tok.Count(text); got != n {
				t.Errorf("%s: a prompt of %d tokens has %d", name, n, got)
			}
		}
	}
}

func TestSharedPrefixIdentity(t *testing.T) {
	for name, tok := range vocabularies(t) {
		p, err := NewPrompter(tok, 7)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := p.Prompt(Entry{Line: 1, Input: 1300, HashIDs: []int64{1, 2, 3}})
		b, _ := p.Prompt(Entry{Line: 2, Input: 1100, HashIDs: []int64{1, 2, 9}})
		c, _ := p.Prompt(Entry{Line: 3, Input: 1100, HashIDs: []int64{4, 2, 3}})
		d, _ := p.Prompt(Entry{Line: 4, Input: 1100})
		e, _ := p.Prompt(Entry{Line: 5, Input: 1100})
		// The two blocks a and b share are the same text, of 1024 tokens.
		common := commonPrefix(a, b)
		if n := tok.Count(strings.TrimRight(common, " ")); n < 2*BlockTokens {
			t.Errorf("%s: prompts sharing hash ids 1 and 2 share %d tokens of text, want ≥ %d", name, n, 2*BlockTokens)
		}
		if n := tok.Count(commonPrefix(a, c)); n > 5 {
			t.Errorf("%s: prompts with different first blocks share %d tokens", name, n)
		}
		if n := tok.Count(commonPrefix(d, e)); n > 5 {
			t.Errorf("%s: prompts without hash ids share %d tokens", name, n)
		}
		again, _ := p.Prompt(Entry{Line: 1, Input: 1300, HashIDs: []int64{1, 2, 3}})
		if again != a {
			t.Errorf("%s: the same entry gave two texts", name)
		}
	}
}

func commonPrefix(a, b string) string {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	// Back to a word's end, so a word cut in two is not counted.
	if i := strings.LastIndexByte(a[:n], ' '); i >= 0 && n < len(a) && n < len(b) {
		n = i
	}
	return a[:n]
}
