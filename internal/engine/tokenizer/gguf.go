package tokenizer

import (
	"errors"
	"fmt"

	"github.com/tokenpulse/tokenpulse/internal/engine/gguf"
)

// GGUF metadata keys read by FromGGUF.
const (
	keyModel     = "tokenizer.ggml.model"
	keyPre       = "tokenizer.ggml.pre"
	keyTokens    = "tokenizer.ggml.tokens"
	keyScores    = "tokenizer.ggml.scores"
	keyTypes     = "tokenizer.ggml.token_type"
	keyMerges    = "tokenizer.ggml.merges"
	keyAddBOS    = "tokenizer.ggml.add_bos_token"
	keyAddEOS    = "tokenizer.ggml.add_eos_token"
	keyAddPrefix = "tokenizer.ggml.add_space_prefix"
)

// FromGGUF reads the vocabulary of f and builds its tokenizer, with
// llama.cpp's defaults where a key is absent: for "llama" BOS 1, EOS 2,
// UNK 0, BOS added and a space prefix; for "gpt2" BOS and EOS 11, BOS
// added only for the llama-3 family of pre-tokenizers. A special id
// outside the vocabulary (such as 4294967295 for "none") leaves the
// default in place, and a default outside the vocabulary becomes -1.
func FromGGUF(f *gguf.File) (*Tokenizer, error) {
	v, err := vocabFromGGUF(f)
	if err != nil {
		return nil, err
	}
	return New(v)
}

func vocabFromGGUF(f *gguf.File) (Vocab, error) {
	var v Vocab
	model, ok := f.String(keyModel)
	if !ok {
		return v, errors.New("tokenizer: gguf has no " + keyModel)
	}
	v.Model = model
	v.Pre, _ = f.String(keyPre)
	v.Tokens, ok = f.Strings(keyTokens)
	if !ok {
		return v, errors.New("tokenizer: gguf has no string array " + keyTokens)
	}
	n := len(v.Tokens)
	if _, present := f.Lookup(keyScores); present {
		if v.Scores, ok = f.Float32s(keyScores); !ok {
			ints, ok := f.Int32s(keyScores)
			if !ok {
				return v, errors.New("tokenizer: " + keyScores + " is not an array of float32 or int32")
			}
			v.Scores = make([]float32, len(ints))
			for i, x := range ints {
				v.Scores[i] = float32(x)
			}
		}
		if len(v.Scores) < n {
			return v, fmt.Errorf("tokenizer: %d scores for %d tokens", len(v.Scores), n)
		}
		v.Scores = v.Scores[:n]
	}
	if _, present := f.Lookup(keyTypes); present {
		if v.Types, ok = f.Int32s(keyTypes); !ok {
			return v, errors.New("tokenizer: " + keyTypes + " is not an array of int32")
		}
		if len(v.Types) < n {
			return v, fmt.Errorf("tokenizer: %d token types for %d tokens", len(v.Types), n)
		}
		v.Types = v.Types[:n]
	}

	v.EOT = -1
	var eog []int32 // fim pad, repo and file separator end generation
	switch model {
	case "llama":
		v.BOS, v.EOS, v.UNK, v.PAD = 1, 2, 0, -1
		v.AddBOS, v.AddSpacePrefix = true, true
	case "gpt2":
		v.BOS, v.EOS, v.UNK, v.PAD = 11, 11, -1, -1
		if _, present := f.Lookup(keyMerges); !present {
			return v, errors.New("tokenizer: gguf has no " + keyMerges)
		}
		if v.Merges, ok = f.Strings(keyMerges); !ok {
			return v, errors.New("tokenizer: " + keyMerges + " is not an array of strings")
		}
		pre := v.Pre
		if pre == "" {
			pre = "default"
		}
		spec, known := preTable[pre]
		if !known {
			return v, fmt.Errorf("tokenizer: pre-tokenizer %q: %w", v.Pre, ErrUnsupported)
		}
		v.AddBOS = spec.addBOS
	default:
		return v, fmt.Errorf("tokenizer: model %q: %w", model, ErrUnsupported)
	}

	for _, s := range []struct {
		key string
		id  *int32
	}{
		{"tokenizer.ggml.bos_token_id", &v.BOS},
		{"tokenizer.ggml.eos_token_id", &v.EOS},
		{"tokenizer.ggml.eot_token_id", &v.EOT},
		{"tokenizer.ggml.unknown_token_id", &v.UNK},
		{"tokenizer.ggml.padding_token_id", &v.PAD},
	} {
		if int(*s.id) >= n {
			*s.id = -1
		}
		if x, ok := f.Uint(s.key); ok && x < uint64(n) {
			*s.id = int32(x)
		}
	}
	for _, key := range []string{
		"tokenizer.ggml.eom_token_id",
		"tokenizer.ggml.fim_pad_token_id",
		"tokenizer.ggml.fim_rep_token_id",
		"tokenizer.ggml.fim_sep_token_id",
	} {
		if x, ok := f.Uint(key); ok && x < uint64(n) {
			eog = append(eog, int32(x))
		}
	}
	found := findTexts(v.Tokens, fimNames)
	for _, names := range fimNames {
		for _, name := range names {
			if id, ok := found[name]; ok {
				eog = append(eog, id)
				break
			}
		}
	}
	v.EOG = eog

	if b, ok := f.Bool(keyAddBOS); ok {
		v.AddBOS = b
	}
	if b, ok := f.Bool(keyAddEOS); ok {
		v.AddEOS = b
	}
	if b, ok := f.Bool(keyAddPrefix); ok {
		v.AddSpacePrefix = b && model == "llama"
	}
	if v.AddBOS && v.BOS < 0 {
		return v, errors.New("tokenizer: " + keyAddBOS + " is true but there is no BOS token")
	}
	if v.AddEOS && v.EOS < 0 {
		return v, errors.New("tokenizer: " + keyAddEOS + " is true but there is no EOS token")
	}
	return v, nil
}

// fimNames are the texts llama.cpp takes for the fill-in-the-middle pad,
// repository and file-separator tokens, which end generation.
var fimNames = [][]string{
	{"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"},
	{"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"},
	{"<|file_sep|>"},
}

// findTexts returns the ids of the tokens whose text is one of groups.
func findTexts(tokens []string, groups [][]string) map[string]int32 {
	want := make(map[string]bool)
	for _, g := range groups {
		for _, name := range g {
			want[name] = true
		}
	}
	found := make(map[string]int32)
	for i, s := range tokens {
		if want[s] {
			if _, dup := found[s]; !dup {
				found[s] = int32(i)
			}
		}
	}
	return found
}
