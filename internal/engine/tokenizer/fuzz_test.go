package tokenizer

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzEncode shows that Encode never panics, whatever the bytes, and that
// decoding gives the text back: for SentencePiece with the leading space
// the add-space-prefix rule puts before a non-empty text (any bytes round-trip through the
// byte tokens, unless the text holds "▁" itself, which decodes as a
// space); for byte-level BPE (with each pre-tokenizer) when the text is
// valid UTF-8 (invalid bytes become U+FFFD, as in llama.cpp). It also holds
// the streamed text equal to Decode.
func FuzzEncode(f *testing.F) {
	spm := open(f, "models/tokenizers/ggml-vocab-llama-spm.gguf")
	gpt2 := open(f, "models/tokenizers/ggml-vocab-gpt-2.gguf")
	bpe := map[string]*Tokenizer{"gpt-2 vocabulary": gpt2}
	for _, pre := range []string{"default", "gpt-2", "llama-bpe", "qwen2", "smollm"} {
		bpe[pre] = mustNew(f, bpeVocab(pre, catMerges, "<|endoftext|>"))
	}
	for _, s := range []string{
		"", " ", "Hello world", " Hello  World!\n\n", "<s>hi</s>", "<|endoftext|>",
		"3333333", "don't DON'T we'll", "\t\r\n \u00a0\u3000", "Cửa Việt", "🦙🦙 ❤️‍🔥",
		"\xff\xfe", "\xe2\x82", "a\xc3(b", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\u0378x", "▁",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ids := spm.Encode(s, true, true) // must not panic
		_ = spm.Decode(ids)
		checkStream(t, spm, ids)

		ids = spm.Encode(s, false, false)
		if utf8.ValidString(s) && !strings.Contains(s, "▁") {
			want := " " + s
			if s == "" { // no text, no prefix
				want = ""
			}
			if got := spm.Decode(ids); got != want {
				t.Errorf("SPM: Decode(Encode(%q)) = %q, want %q", s, got, want)
			}
		}
		for name, tok := range bpe {
			ids := tok.Encode(s, false, false)
			if utf8.ValidString(s) {
				if got := tok.Decode(ids); got != s {
					t.Errorf("%s: Decode(Encode(%q)) = %q", name, s, got)
				}
			}
			checkStream(t, tok, ids)
			_ = tok.Encode(s, true, true)
		}
	})
}

func checkStream(t *testing.T, tok *Tokenizer, ids []int32) {
	t.Helper()
	d := tok.NewStreamDecoder()
	var b strings.Builder
	for _, id := range ids {
		b.WriteString(d.Next(id))
	}
	b.WriteString(d.Flush())
	if got, want := b.String(), tok.Decode(ids); got != want {
		t.Errorf("streamed %q, Decode %q", got, want)
	}
}
