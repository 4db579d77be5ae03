package tokenizer

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/tokenpulse/tokenpulse/internal/engine/gguf"
)

// ggufOf writes the metadata kv (key, value pairs) to a GGUF in memory and
// parses it back.
func ggufOf(t *testing.T, kv ...any) *gguf.File {
	t.Helper()
	var w gguf.Writer
	for i := 0; i < len(kv); i += 2 {
		w.Add(kv[i].(string), kv[i+1])
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func spmKV(extra ...any) []any {
	v := spmVocab(hello...)
	return append([]any{
		keyModel, "llama",
		keyTokens, v.Tokens,
		keyScores, v.Scores,
		keyTypes, v.Types,
	}, extra...)
}

func TestFromGGUFDefaults(t *testing.T) {
	tests := []struct {
		name     string
		kv       []any
		bos, eos int32
		addBOS   bool
		text     string
		want     []string
	}{
		{"SPM without keys adds BOS and a space", spmKV(), 1, 2, true, "hello", []string{"<s>", "▁hello"}},
		{"SPM add_bos_token false", spmKV(keyAddBOS, false), 1, 2, false, "hello", []string{"▁hello"}},
		{"SPM add_space_prefix false", spmKV(keyAddPrefix, false), 1, 2, true, "hello", []string{"<s>", "h", "e", "llo"}},
		{"SPM ids from keys; none stays default", spmKV(
			"tokenizer.ggml.eos_token_id", uint32(1),
			"tokenizer.ggml.bos_token_id", uint32(4294967295),
			"tokenizer.ggml.padding_token_id", uint32(4294967295),
		), 1, 1, true, "hello", []string{"<s>", "▁hello"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tok, err := FromGGUF(ggufOf(t, tt.kv...))
			if err != nil {
				t.Fatal(err)
			}
			if tok.BOS() != tt.bos || tok.EOS() != tt.eos || tok.AddBOS() != tt.addBOS {
				t.Errorf("BOS, EOS, AddBOS = %d, %d, %v; want %d, %d, %v",
					tok.BOS(), tok.EOS(), tok.AddBOS(), tt.bos, tt.eos, tt.addBOS)
			}
			got := tok.Encode(tt.text, true, false)
			if want := ids(t, tok, tt.want...); !slices.Equal(got, want) {
				t.Errorf("Encode(%q) = %v, want %v %q", tt.text, got, want, tt.want)
			}
		})
	}
}

func TestFromGGUFBPE(t *testing.T) {
	v := bpeVocab("llama-bpe", catMerges, "<|begin_of_text|>", "<|eot_id|>", "<|fim_pad|>")
	n := uint32(len(v.Tokens))
	f := ggufOf(t,
		keyModel, "gpt2",
		keyPre, "llama-bpe",
		keyTokens, v.Tokens,
		keyMerges, v.Merges,
		"tokenizer.ggml.bos_token_id", n-3,
		"tokenizer.ggml.eos_token_id", n-2,
	)
	tok, err := FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	// llama-bpe adds BOS by default and takes whole-token words as they are.
	got := tok.Encode("the cat", true, false)
	if want := ids(t, tok, "<|begin_of_text|>", "t", "he", "Ġcat"); !slices.Equal(got, want) {
		t.Errorf("Encode = %v, want %v", got, want)
	}
	if fim := int32(n - 1); !tok.IsEOG(fim) {
		t.Errorf("IsEOG(<|fim_pad|>) = false, want true")
	}
	if tok.IsEOG(int32(n - 3)) {
		t.Errorf("IsEOG(BOS) = true, want false")
	}
}

func TestFromGGUFRejects(t *testing.T) {
	v := bpeVocab("gpt-2", catMerges)
	tests := []struct {
		name        string
		kv          []any
		unsupported bool
	}{
		{"no model", []any{keyTokens, v.Tokens}, false},
		{"no tokens", []any{keyModel, "llama"}, false},
		{"tokens not strings", []any{keyModel, "llama", keyTokens, []int32{1, 2}}, false},
		{"unknown model", []any{keyModel, "t5", keyTokens, v.Tokens}, true},
		{"gpt2 without merges", []any{keyModel, "gpt2", keyPre, "gpt-2", keyTokens, v.Tokens}, false},
		{"unknown pre", []any{keyModel, "gpt2", keyPre, "tekken", keyTokens, v.Tokens, keyMerges, v.Merges}, true},
		{"short scores", spmKV(keyScores, []float32{1}), false},
		{"types not int32", spmKV(keyTypes, []string{"x"}), false},
		// two tokens: the default EOS (2) is outside the vocabulary
		{"add_eos without EOS", []any{keyModel, "llama", keyTokens, []string{"a", "b"}, keyAddEOS, true}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// "short scores" and "types not int32" repeat a key of spmKV;
			// keep only the later value.
			_, err := FromGGUF(ggufOf(t, dedupe(tt.kv)...))
			if err == nil {
				t.Fatal("FromGGUF succeeded, want an error")
			}
			if got := errors.Is(err, ErrUnsupported); got != tt.unsupported {
				t.Errorf("errors.Is(%v, ErrUnsupported) = %v, want %v", err, got, tt.unsupported)
			}
		})
	}
}

// dedupe keeps the last value of each key.
func dedupe(kv []any) []any {
	last := map[string]int{}
	for i := 0; i < len(kv); i += 2 {
		last[kv[i].(string)] = i
	}
	var out []any
	for i := 0; i < len(kv); i += 2 {
		if last[kv[i].(string)] == i {
			out = append(out, kv[i], kv[i+1])
		}
	}
	return out
}
