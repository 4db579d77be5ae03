package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
)

type entry struct {
	text  string
	score float32
	typ   int32
}

// spmVocab is a small SentencePiece vocabulary: <unk>, <s>, </s>, the 256
// byte tokens (ids 3..258), then extra.
func spmVocab(extra ...entry) Vocab {
	v := Vocab{Model: "llama", BOS: 1, EOS: 2, UNK: 0, PAD: -1, EOT: -1, AddBOS: true, AddSpacePrefix: true}
	add := func(e entry) {
		v.Tokens = append(v.Tokens, e.text)
		v.Scores = append(v.Scores, e.score)
		v.Types = append(v.Types, e.typ)
	}
	add(entry{"<unk>", 0, TypeUnknown})
	add(entry{"<s>", 0, TypeControl})
	add(entry{"</s>", 0, TypeControl})
	for b := range 256 {
		add(entry{fmt.Sprintf("<0x%02X>", b), 0, TypeByte})
	}
	for _, e := range extra {
		if e.typ == 0 {
			e.typ = TypeNormal
		}
		add(e)
	}
	return v
}

var hello = []entry{
	{"▁", -5, 0}, {"h", -5, 0}, {"e", -5, 0}, {"l", -5, 0}, {"o", -5, 0},
	{"ll", -1, 0}, {"▁h", -2, 0}, {"▁he", -3, 0}, {"llo", -2, 0}, {"▁hello", -4, 0},
}

// bpeVocab is a small byte-level vocabulary: the 256 byte characters (id =
// byte), the results of merges in rank order, then extra.
func bpeVocab(pre string, merges []string, extra ...string) Vocab {
	v := Vocab{Model: "gpt2", Pre: pre, BOS: -1, EOS: -1, UNK: -1, PAD: -1, EOT: -1, Merges: merges}
	for b := range 256 {
		v.Tokens = append(v.Tokens, byteEnc[b])
	}
	for _, m := range merges {
		v.Tokens = append(v.Tokens, strings.Replace(m, " ", "", 1))
	}
	v.Tokens = append(v.Tokens, extra...)
	return v
}

var catMerges = []string{"h e", "Ġ t", "Ġt he", "a t", "c at", "Ġ cat"}

func mustNew(t testing.TB, v Vocab) *Tokenizer {
	t.Helper()
	tok, err := New(v)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return tok
}

// ids looks up the ids of vocabulary texts.
func ids(t testing.TB, tok *Tokenizer, texts ...string) []int32 {
	t.Helper()
	out := make([]int32, 0, len(texts))
	for _, s := range texts {
		id, ok := tok.Lookup(s)
		if !ok {
			t.Fatalf("no token %q", s)
		}
		out = append(out, id)
	}
	return out
}

func TestNewRejects(t *testing.T) {
	base := func() Vocab { return spmVocab(hello...) }
	tests := []struct {
		name        string
		edit        func(*Vocab)
		unsupported bool
	}{
		{"empty", func(v *Vocab) { v.Tokens, v.Scores, v.Types = nil, nil, nil }, false},
		{"unknown model", func(v *Vocab) { v.Model = "bert" }, true},
		{"unknown pre", func(v *Vocab) { *v = bpeVocab("no-such-pre", nil) }, true},
		{"short scores", func(v *Vocab) { v.Scores = v.Scores[1:] }, false},
		{"long types", func(v *Vocab) { v.Types = append(v.Types, TypeNormal) }, false},
		{"duplicate token", func(v *Vocab) { v.Tokens[len(v.Tokens)-1] = "▁" }, false},
		{"BOS out of range", func(v *Vocab) { v.BOS = int32(len(v.Tokens)) }, false},
		{"EOS below -1", func(v *Vocab) { v.EOS = -2 }, false},
		{"EOG out of range", func(v *Vocab) { v.EOG = []int32{-1} }, false},
		{"AddBOS without BOS", func(v *Vocab) { v.BOS = -1 }, false},
		{"AddEOS without EOS", func(v *Vocab) { v.AddEOS, v.EOS = true, -1 }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := base()
			tt.edit(&v)
			_, err := New(v)
			if err == nil {
				t.Fatal("New succeeded, want an error")
			}
			if got := errors.Is(err, ErrUnsupported); got != tt.unsupported {
				t.Errorf("errors.Is(%v, ErrUnsupported) = %v, want %v", err, got, tt.unsupported)
			}
		})
	}
	if _, err := New(base()); err != nil {
		t.Fatalf("the unedited vocabulary fails: %v", err)
	}
}

func TestSPMEncode(t *testing.T) {
	tok := mustNew(t, spmVocab(append(hello, entry{"<tool>", 0, TypeUserDefined})...))
	tests := []struct {
		name          string
		text          string
		special, pars bool
		want          []string
	}{
		{"merges by score", "hello", false, false, []string{"▁hello"}},
		{"empty", "", false, false, []string{}},
		{"empty with BOS", "", true, false, []string{"<s>"}},
		{"BOS", "hello", true, false, []string{"<s>", "▁hello"}},
		{"byte fallback", "hé", false, false, []string{"▁h", "<0xC3>", "<0xA9>"}},
		{"leading space", " hello", false, false, []string{"▁", "▁hello"}},
		{"control spelled out", "<s>hello", false, false,
			[]string{"▁", "<0x3C>", "<0x73>", "<0x3E>", "h", "e", "llo"}},
		{"control parsed, prefix after it", "<s>hello", true, true, []string{"<s>", "<s>", "▁hello"}},
		{"user-defined always parsed", "hello<tool>hello", false, false,
			[]string{"▁hello", "<tool>", "▁hello"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tok.Encode(tt.text, tt.special, tt.pars)
			if want := ids(t, tok, tt.want...); !slices.Equal(got, want) {
				t.Errorf("Encode(%q) = %v, want %v %q", tt.text, got, want, tt.want)
			}
		})
	}
}

// TestSPMTies checks the merge order: the highest score first, the
// leftmost pair among equal scores.
func TestSPMTies(t *testing.T) {
	tests := []struct {
		name   string
		ab, ba float32
		want   []string
	}{
		{"equal scores, leftmost wins", -1, -1, []string{"ab", "a"}},
		{"ab higher", -1, -2, []string{"ab", "a"}},
		{"ba higher", -2, -1, []string{"a", "ba"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := spmVocab(entry{"a", -9, 0}, entry{"b", -9, 0}, entry{"ab", tt.ab, 0}, entry{"ba", tt.ba, 0})
			v.AddSpacePrefix = false
			tok := mustNew(t, v)
			got := tok.Encode("aba", false, false)
			if want := ids(t, tok, tt.want...); !slices.Equal(got, want) {
				t.Errorf("Encode(aba) = %v, want %v %q", got, want, tt.want)
			}
		})
	}
}

func TestAddEOS(t *testing.T) {
	v := spmVocab(hello...)
	v.AddEOS = true
	tok := mustNew(t, v)
	got := tok.Encode("hello", true, false)
	if want := ids(t, tok, "<s>", "▁hello", "</s>"); !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if got := tok.Encode("hello", false, false); len(got) != 1 {
		t.Errorf("without addSpecial got %v, want one token", got)
	}
}

func TestBPEEncode(t *testing.T) {
	tok := mustNew(t, bpeVocab("gpt-2", catMerges, "<|endoftext|>"))
	tests := []struct {
		name string
		text string
		want []string
	}{
		{"rank order", " the", []string{"Ġthe"}},
		{"no merge across words", "the cat", []string{"t", "he", "Ġcat"}},
		{"bytes of a character", "é", []string{"Ã", "©"}},
		{"invalid byte becomes U+FFFD", "\xff", []string{"ï", "¿", "½"}},
		{"special text not parsed", "<|endoftext|>", []string{"<", "|", "end", "of", "text", "|", ">"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := []int32{}
			for _, w := range tt.want {
				if w == "end" || w == "of" || w == "text" { // single letters, no merges
					for _, c := range w {
						want = append(want, ids(t, tok, string(c))...)
					}
					continue
				}
				want = append(want, ids(t, tok, w)...)
			}
			if got := tok.Encode(tt.text, false, false); !slices.Equal(got, want) {
				t.Errorf("Encode(%q) = %v, want %v", tt.text, got, want)
			}
		})
	}
	eot := ids(t, tok, "<|endoftext|>")[0]
	if got := tok.Encode("a<|endoftext|>", false, true); !slices.Equal(got, []int32{'a', eot}) {
		t.Errorf("parsed special: got %v, want [%d %d]", got, 'a', eot)
	}
	if !tok.IsEOG(eot) || tok.EOT() != eot {
		t.Errorf("<|endoftext|>: IsEOG = %v, EOT() = %d; want true, %d", tok.IsEOG(eot), tok.EOT(), eot)
	}
}

// TestIgnoreMerges: the llama-3 pre-tokenizers take a word that is a token
// as it is, even when no merges lead to it.
func TestIgnoreMerges(t *testing.T) {
	for _, tt := range []struct {
		pre  string
		want int
	}{{"llama-bpe", 1}, {"gpt-2", 3}} {
		t.Run(tt.pre, func(t *testing.T) {
			tok := mustNew(t, bpeVocab(tt.pre, nil, "xyz"))
			if got := tok.Encode("xyz", false, false); len(got) != tt.want {
				t.Errorf("Encode(xyz) = %v, want %d tokens", got, tt.want)
			}
		})
	}
}

// TestOddMerges: merges are matched by text, even when a side is not a
// token (it arose from a merge whose result is not in the vocabulary);
// what is left that is not a token falls back to one token per byte.
func TestOddMerges(t *testing.T) {
	for _, tt := range []struct {
		name   string
		merges []string
		want   []string
	}{
		{"merge through a non-token", []string{"y z", "x yz"}, []string{"xyz"}},
		{"non-token left over", []string{"y z"}, []string{"x", "y", "z"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := bpeVocab("gpt-2", nil, "xyz")
			v.Merges = tt.merges
			tok := mustNew(t, v)
			got := tok.Encode("xyz", false, false)
			if want := ids(t, tok, tt.want...); !slices.Equal(got, want) {
				t.Errorf("Encode(xyz) = %v, want %v %q", got, want, tt.want)
			}
		})
	}
}

// TestPreTokenizers checks the hand-written splitters against what the
// expressions they stand for match.
func TestPreTokenizers(t *testing.T) {
	tests := []struct {
		kind preKind
		text string
		want []string
	}{
		{preGPT2, "Hello world", []string{"Hello", " world"}},
		{preGPT2, "I'm  fine\n\n", []string{"I", "'m", " ", " fine", "\n\n"}},
		{preGPT2, "DON'T", []string{"DON", "'", "T"}},
		{preGPT2, "\thi 123abc", []string{"\t", "hi", " 123", "abc"}},
		{preGPT2, "a ... b", []string{"a", " ...", " b"}},
		{preGPT2, "x\u0378", []string{"x", "\u0378"}},
		{preLlama3, "DON'T", []string{"DON", "'T"}},
		{preLlama3, "12345", []string{"123", "45"}},
		{preLlama3, "\thi", []string{"\thi"}},
		{preLlama3, "  hi", []string{" ", " hi"}},
		{preLlama3, "Hello\n\nworld", []string{"Hello", "\n\n", "world"}},
		{preLlama3, "a  \n b", []string{"a", "  \n", " b"}},
		{preLlama3, "ok!?\n\nnext", []string{"ok", "!?\n\n", "next"}},
		{preLlama3, "x\u0378\u0378", []string{"x", "\u0378", "\u0378"}},
		{preQwen2, "12345", []string{"1", "2", "3", "4", "5"}},
		{preQwen2, "x\u0378\u0378", []string{"x", "\u0378\u0378"}},
		{preSmolLM, "abc123 x", []string{"abc", "1", "2", "3", " x"}},
		{preDefault, "a+b=3456!", []string{"a", "+", "b", "=", "345", "6", "!"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d/%q", tt.kind, tt.text), func(t *testing.T) {
			if got := split(tt.kind, tt.text); !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// split runs the pre-tokenizer kind on text.
func split(kind preKind, text string) []string {
	cpts := decodeCpts(text, nil)
	pieces := []int{len(cpts)}
	for _, st := range kind.stages() {
		pieces = st(cpts, pieces)
	}
	var got []string
	start := 0
	for _, n := range pieces {
		got = append(got, string(cpts[start:start+n]))
		start += n
	}
	return got
}

func TestPieces(t *testing.T) {
	tok := mustNew(t, spmVocab(append(hello, entry{"<tool>", 0, TypeUserDefined})...))
	tests := []struct {
		name string
		id   int32
		want string
	}{
		{"space marker", ids(t, tok, "▁hello")[0], " hello"},
		{"byte", ids(t, tok, "<0x0A>")[0], "\n"},
		{"control", 1, ""},
		{"unknown", 0, ""},
		{"user-defined", ids(t, tok, "<tool>")[0], "<tool>"},
		{"negative", -1, ""},
		{"past the end", int32(tok.VocabSize()), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tok.Piece(tt.id); got != tt.want {
				t.Errorf("Piece(%d) = %q, want %q", tt.id, got, tt.want)
			}
		})
	}
	bpe := mustNew(t, bpeVocab("gpt-2", catMerges, "€"))
	if got, want := bpe.Decode(bpe.Encode("the cat\n", false, false)), "the cat\n"; got != want {
		t.Errorf("BPE round trip: got %q, want %q", got, want)
	}
	// A byte-level token with a character outside the byte map is written
	// out as llama.cpp writes it.
	if got, want := bpe.Piece(ids(t, bpe, "€")[0]), "[UNK_BYTE_0xe282ac€]"; got != want {
		t.Errorf("Piece(€) = %q, want %q", got, want)
	}
	if got := tok.Text(-1) + tok.Text(int32(tok.VocabSize())); got != "" {
		t.Errorf("Text outside the vocabulary = %q, want \"\"", got)
	}
	if got, want := tok.Text(3+'\n'), "<0x0A>"; got != want {
		t.Errorf("Text(13) = %q, want %q", got, want)
	}
}

func TestStreamDecoder(t *testing.T) {
	tok := mustNew(t, spmVocab(hello...))
	b := func(x byte) int32 { return 3 + int32(x) }
	tests := []struct {
		name string
		ids  []int32
		want []string // what each Next returns, then Flush
	}{
		{"two-byte character", []int32{b(0xC3), b(0xA9)}, []string{"", "é", ""}},
		{"four-byte character", []int32{b(0xF0), b(0x9F), b(0x98), b(0x80)}, []string{"", "", "", "😀", ""}},
		{"text then split character", []int32{ids(t, tok, "▁hello")[0], b(0xE2), b(0x82), b(0xAC)},
			[]string{" hello", "", "", "€", ""}},
		{"invalid byte passes", []int32{b(0xFF), b('a')}, []string{"\xff", "a", ""}},
		{"bad continuation passes", []int32{b(0xE2), b('a')}, []string{"", "\xe2a", ""}},
		{"unfinished at the end", []int32{b('a'), b(0xE2), b(0x82)}, []string{"a", "", "", "\xe2\x82"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := tok.NewStreamDecoder()
			var got []string
			for _, id := range tt.ids {
				got = append(got, d.Next(id))
			}
			got = append(got, d.Flush())
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			if all, dec := strings.Join(got, ""), tok.Decode(tt.ids); all != dec {
				t.Errorf("stream %q differs from Decode %q", all, dec)
			}
		})
	}
}

func TestEOG(t *testing.T) {
	v := spmVocab(entry{"<|im_end|>", 0, TypeNormal}, entry{"<|fim_pad|>", 0, TypeControl}, entry{"x", 0, TypeNormal})
	v.EOG = []int32{int32(len(v.Tokens) - 2)}
	tok := mustNew(t, v)
	imEnd, fim, x := ids(t, tok, "<|im_end|>")[0], ids(t, tok, "<|fim_pad|>")[0], ids(t, tok, "x")[0]
	for _, tt := range []struct {
		name string
		id   int32
		want bool
	}{{"EOS", 2, true}, {"EOT by name", imEnd, true}, {"listed in EOG", fim, true}, {"normal", x, false}, {"BOS", 1, false}, {"out of range", 1 << 20, false}} {
		if got := tok.IsEOG(tt.id); got != tt.want {
			t.Errorf("%s: IsEOG(%d) = %v, want %v", tt.name, tt.id, got, tt.want)
		}
	}
	if tok.EOT() != imEnd {
		t.Errorf("EOT() = %d, want %d", tok.EOT(), imEnd)
	}
	// <|im_end|> was typed normal; like llama.cpp, it becomes control.
	if !tok.IsControl(imEnd) || tok.Piece(imEnd) != "" {
		t.Errorf("<|im_end|>: IsControl = %v, Piece = %q; want true, \"\"", tok.IsControl(imEnd), tok.Piece(imEnd))
	}
}

// TestConcurrentEncode shares one Tokenizer between goroutines (run with
// -race to check for data races).
func TestConcurrentEncode(t *testing.T) {
	tok := mustNew(t, bpeVocab("llama-bpe", catMerges))
	text := strings.Repeat("the cat sat on 12345 mats!\n", 20)
	want := tok.Encode(text, false, false)
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for range 8 {
		wg.Go(func() {
			for range 20 {
				if got := tok.Encode(text, false, false); !slices.Equal(got, want) {
					errs <- fmt.Sprint(got)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("concurrent Encode differs: %s", e)
	}
}

// TestSplitsMatchRegex compares the hand-written pre-tokenizers (gpt-2,
// llama-3, qwen2, smollm, default) with the original Hugging Face
// expressions (lookahead included) as Python's regex module applies them,
// on llama.cpp's test strings and random mixes of letters, digits, marks,
// punctuation and kinds of whitespace (testdata/splits.json, made by
// testdata/gen_splits.py).
func TestSplitsMatchRegex(t *testing.T) {
	raw, err := os.ReadFile("testdata/splits.json")
	if err != nil {
		t.Fatal(err)
	}
	var golden struct {
		Cases []struct {
			Pre    string   `json:"pre"`
			Text   string   `json:"text"`
			Pieces []string `json:"pieces"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(raw, &golden); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]preKind{
		"gpt2": preGPT2, "llama3": preLlama3, "qwen2": preQwen2, "smollm": preSmolLM, "default": preDefault,
	}
	seen := map[string]int{}
	for _, c := range golden.Cases {
		kind, ok := kinds[c.Pre]
		if !ok {
			t.Fatalf("unknown pre %q in golden file", c.Pre)
		}
		seen[c.Pre]++
		if got := split(kind, c.Text); !slices.Equal(got, c.Pieces) && !(len(got) == 0 && len(c.Pieces) == 0) {
			t.Errorf("%s %q:\n got %q\nwant %q", c.Pre, c.Text, got, c.Pieces)
		}
	}
	for name := range kinds {
		if seen[name] < 100 {
			t.Errorf("%d golden cases for %s, want at least 100", seen[name], name)
		}
	}
}
