package tokenizer

import (
	"os"
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/internal/fixture"
)

// benchText is llama.cpp's own test strings (prose, code, numbers, emoji,
// CJK, Cyrillic, runs of spaces), joined, about 1.9 KB.
func benchText(b *testing.B) string {
	inp, err := os.ReadFile(fixture.Path(b, "models/tokenizers/ggml-vocab-gpt-2.gguf.inp"))
	if err != nil {
		b.Fatal(err)
	}
	return strings.ReplaceAll(string(inp), "\n__ggml_vocab_test__\n", " ")
}

// BenchmarkEncode reports encoding throughput in bytes and tokens per
// second for each real vocabulary.
func BenchmarkEncode(b *testing.B) {
	text := benchText(b)
	for _, name := range []string{"llama-spm", "gpt-2"} {
		b.Run(name, func(b *testing.B) {
			tok := open(b, "models/tokenizers/ggml-vocab-"+name+".gguf")
			n := len(tok.Encode(text, false, false))
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				tok.Encode(text, false, false)
			}
			sec := b.Elapsed().Seconds()
			b.ReportMetric(float64(len(text))*float64(b.N)/sec, "bytes/s")
			b.ReportMetric(float64(n)*float64(b.N)/sec, "tokens/s")
		})
	}
}

// BenchmarkDecodeStream reports the cost of turning one generated id into
// text with a StreamDecoder, the per-token work of a streaming server.
func BenchmarkDecodeStream(b *testing.B) {
	tok := open(b, "models/tokenizers/ggml-vocab-llama-spm.gguf")
	ids := tok.Encode(benchText(b), false, false)
	d := tok.NewStreamDecoder()
	i := 0
	for b.Loop() {
		d.Next(ids[i%len(ids)])
		i++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/token")
}
